"""Progress of a long-running command, on stderr: a bar redrawn in place on a terminal, plain
lines now and then anywhere else (a log file, a pipe, CI), where a redrawn bar would be a mess of
carriage returns.

::

    progress = Progress("rebuilding the read models", total, "event")
    for done in ...:
        progress.update(done)
    progress.finish()

On a terminal: ``rebuilding the read models [########............] 41% 41,000 of 100,000 events``,
redrawn at most ten times a second and wiped at the end (the command's own output follows). Else:
``rebuilding the read models: 41,000 of 100,000 events (41%)`` every ``PLAIN_EVERY_SECONDS``, and
a last line with the time taken once any line was printed; a command done sooner prints nothing.

Not tqdm: it would be a new dependency of the server for one bar, and off a terminal it still
writes carriage-return bars, not the plain lines wanted there; this is the little both need.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Final, TextIO

from sapsam.cli.wording import plural

PLAIN_EVERY_SECONDS: Final = 10.0
"""How often a line is printed off a terminal."""
REDRAW_SECONDS: Final = 0.1
"""How often the bar is redrawn on a terminal, at most."""
BAR_WIDTH: Final = 20


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """How far a command is through ``total`` units (``unit``: the singular noun)."""

    def __init__(
        self,
        what: str,
        total: int,
        unit: str,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what = what
        self.total = total
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.live = _is_terminal(self.stream)
        self.started = clock()
        self._shown_at = self.started
        self._lines = 0  # plain lines printed
        self._drawn = False  # a bar is on the terminal's current line

    def update(self, done: int) -> None:
        """``done`` units of ``total`` are done."""
        now = self.clock()
        if self.live:
            if now - self._shown_at >= REDRAW_SECONDS or not self._drawn:
                self._write(f"\r{self.bar(done)}\033[K")
                self._drawn = True
                self._shown_at = now
        elif now - self._shown_at >= PLAIN_EVERY_SECONDS:
            self._write(f"{self.line(done)}\n")
            self._lines += 1
            self._shown_at = now

    def finish(self, done: int | None = None) -> None:
        """The work is over: wipe the bar, or say how long it took when lines were printed."""
        if self.live and self._drawn:
            self._write("\r\033[K")
            self._drawn = False
        elif self._lines:
            counted = self._count(self.total if done is None else done)
            self._write(f"{self.what}: {counted}, done in {self.clock() - self.started:.1f} s\n")

    def bar(self, done: int) -> str:
        """The terminal's bar for ``done`` units."""
        share = min(done / self.total, 1.0) if self.total > 0 else 1.0
        filled = round(share * BAR_WIDTH)
        return (
            f"{self.what} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {share:4.0%}"
            f" {done:,} of {self._count(self.total)}"
        )

    def line(self, done: int) -> str:
        """A plain progress line for ``done`` units."""
        share = min(done / self.total, 1.0) if self.total > 0 else 1.0
        return f"{self.what}: {done:,} of {self._count(self.total)} ({share:.0%})"

    def _count(self, count: int) -> str:
        """``"1 event"``, ``"41,000 events"``."""
        return plural(count, self.unit).replace(str(count), f"{count:,}", 1)

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
