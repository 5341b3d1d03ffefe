"""`sapsam demo` (what `make demo` runs): a fresh embedded server, four bot processes over gRPC,
an 8-deal series printed deal by deal, the standings, and every deal verified from the log."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


def test_the_demo_plays_a_series_and_verifies_every_deal() -> None:
    sapsam = Path(sys.executable).parent / "sapsam"
    completed = subprocess.run(
        [str(sapsam), "demo"], capture_output=True, text=True, timeout=300, check=False
    )
    output = completed.stdout
    assert completed.returncode == 0, output + completed.stderr
    # gRPC's fork handlers printed "skipping fork() handlers" when a child started mid-call.
    assert "fork()" not in output + completed.stderr
    # Every deal's reveal: four seats' rows, six pairs' results, the scores.
    for number in range(1, 9):
        assert re.search(rf"^deal {number}  \(dealer seat [0-3]\)$", output, re.MULTILINE)
    assert len(re.findall(r"^  seat \d v \d: front \w+, middle \w+, back \w+", output, re.M)) == 48
    assert len(re.findall(r"^  scores \(total\): ", output, re.MULTILINE)) == 8
    # The standings: four seats, places 1..4 or shared, totals summing to zero.
    standings = output.split("final standings", 1)[1].split("verifying", 1)[0]
    rows = re.findall(r"^  (\d)([= ]) seat (\d)  .+ ([+-]\d+)$", standings, re.MULTILINE)
    assert sorted(int(seat) for _, _, seat, _ in rows) == [0, 1, 2, 3]
    assert sum(int(total) for *_, total in rows) == 0
    totals = [int(total) for *_, total in rows]
    assert totals == sorted(totals, reverse=True)
    for place, shared, _, total in rows:
        # A place is one more than the number of seats strictly ahead; equal totals share it.
        assert int(place) == 1 + totals.index(int(total))
        assert (shared == "=") == (totals.count(int(total)) > 1)
    # The verdict.
    assert len(re.findall(r"^  deal \d: ok \(\d+ checks\)$", output, re.MULTILINE)) == 8
    assert "verification: PASSED (8 of 8 deals verified)" in output
    # No line is wider than a terminal.
    assert max(len(line) for line in output.splitlines()) <= 80


def _two_deal_demo(database_url: str, *rule_options: str) -> str:
    """What `sapsam demo` prints for a 2-deal series on the test's database; it must succeed."""
    sapsam = Path(sys.executable).parent / "sapsam"
    command = [str(sapsam), "demo", *rule_options, "--deals", "2", "--database-url", database_url]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout


def test_the_demo_plays_naturals_end_to_end(database_url: str) -> None:
    """With 004's naturals (four_player_bonus) every bot declares before it commits (none, or
    the strongest natural it holds), reveals its declaration with its rows, and every deal
    verifies with each seat's declaration[s] check (10 checks and 4). On the test's database
    (the demo's own embedded one is the first test's)."""
    output = _two_deal_demo(database_url, "--preset", "four_player_bonus")
    assert len(re.findall(r"^  deal \d: ok \(14 checks\)$", output, re.MULTILINE)) == 2
    assert "verification: PASSED (2 of 2 deals verified)" in output


def test_the_demo_plays_capsa_susun_as_the_issue_spells_it(database_url: str) -> None:
    """Issue #17 writes `sapsam demo --rules capsa_susun`: the same option as `--preset`. Under
    002's game every seat declares (naturals) and every seat announces play or surrender in
    every deal, shown before the deal's reveal; every deal verifies (the declaration checks
    and the announcements' included). On the test's database, as above."""
    output = _two_deal_demo(database_url, "--rules", "capsa_susun")
    announced = re.findall(r"^  announced: (.+(?:\n {13}.+)*)$", output, re.MULTILINE)
    assert len(announced) == 2, output
    for line in announced:
        said = re.findall(r"seat (\d) (plays|surrenders)", line)
        assert sorted(int(seat) for seat, _ in said) == [0, 1, 2, 3], line
    assert "verification: PASSED (2 of 2 deals verified)" in output
    assert max(len(line) for line in output.splitlines()) <= 80


def test_an_unknown_preset_is_refused_before_anything_starts() -> None:
    sapsam = Path(sys.executable).parent / "sapsam"
    for option in ("--preset", "--rules"):
        completed = subprocess.run(
            [str(sapsam), "demo", option, "capsa"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 1 and completed.stdout == ""
        assert "unknown rule set preset 'capsa' (known presets: pagat," in completed.stderr


def test_a_seat_count_or_series_the_preset_cannot_play_is_refused_before_anything_starts() -> None:
    """Bad input is one line naming the option, before a database or a server starts (the
    four-player presets seat four: CreateTable's refusal was a traceback)."""
    sapsam = Path(sys.executable).parent / "sapsam"
    for options, message in (
        (["--preset", "four_player", "--seat-count", "2"], "--seat-count must be 4 under"),
        (["--seat-count", "5"], "--seat-count must be 2 to 4 under preset 'pagat', not 5"),
        (["--deals", "0"], "--deals must be 1 to 10,000, not 0"),
    ):
        completed = subprocess.run(
            [str(sapsam), "demo", *options], capture_output=True, text=True, timeout=60, check=False
        )
        assert completed.returncode == 1 and completed.stdout == "", options
        assert completed.stderr.startswith("sapsam demo: ")
        assert message in completed.stderr and completed.stderr.count("\n") == 1, completed.stderr


def test_the_open_face_demo_shows_a_fantasyland_and_a_timeout(database_url: str) -> None:
    """`make demo-ofc`'s demo (issue #18), two seats of Turbo here: the SDK's solver bots play
    an open-face set over gRPC, one of them lets its first turn's time run out (the server's
    sweeper places for it), one earns a Fantasyland and sets it face down, and every deal
    verifies from the log."""
    output = _two_deal_demo(database_url, "--preset", "ofc_turbo", "--seat-count", "2")
    assert "seat 1 timed out: placed for it" in output
    assert re.search(r"^  0 .*  FL", output, re.MULTILINE)
    assert re.search(r"^  tables/\S+: ok \(\d+ deals verified\)$", output, re.MULTILINE)
    assert re.search(
        r"^[1-9]\d* Fantasylands?, [1-9]\d* timeouts?; verification: PASSED$", output, re.M
    )
    assert max(len(line) for line in output.splitlines()) <= 80
