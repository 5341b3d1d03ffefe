"""A long command's progress (``sapsam.cli.progress``): a bar redrawn in place on a terminal,
plain lines every ten seconds anywhere else, nothing at all off a terminal for a short run."""

from __future__ import annotations

import io

from sapsam.cli.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class TerminalStream(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_a_plain_line_every_ten_seconds_and_how_long_it_took() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = Progress("rebuilding the read models", 12_000, "event", stream, clock)
    for done, seconds in ((1_000, 4), (5_000, 11), (6_000, 15), (12_000, 22)):
        clock.now = 100.0 + seconds
        progress.update(done)
    progress.finish()
    assert stream.getvalue().splitlines() == [
        "rebuilding the read models: 5,000 of 12,000 events (42%)",
        "rebuilding the read models: 12,000 of 12,000 events (100%)",
        "rebuilding the read models: 12,000 events, done in 22.0 s",
    ]
    assert "\r" not in stream.getvalue()


def test_off_a_terminal_a_short_run_prints_nothing() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = Progress("rebuilding", 1, "event", stream, clock)
    progress.update(1)
    progress.finish()
    assert stream.getvalue() == ""


def test_on_a_terminal_a_bar_is_redrawn_in_place_and_wiped_at_the_end() -> None:
    stream, clock = TerminalStream(), Clock()
    progress = Progress("rebuilding", 200, "event", stream, clock)
    progress.update(0)
    progress.update(50)  # too soon after the first: not redrawn
    clock.now += 1
    progress.update(100)
    progress.finish()
    drawn = stream.getvalue().split("\r")[1:]
    assert drawn == [
        "rebuilding [....................]   0% 0 of 200 events\033[K",
        "rebuilding [##########..........]  50% 100 of 200 events\033[K",
        "\033[K",
    ]
    assert "\n" not in stream.getvalue()
