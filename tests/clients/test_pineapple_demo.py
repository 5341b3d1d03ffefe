"""``make demo-pineapple`` (``sapsam demo --preset pineapple``, issue #19): three solver bots play
a Pineapple set over gRPC, every discard committed and opened, seat 0 earns a Fantasyland from
deal 1's chosen seed and sets it (14 cards, 13 set), and every deal verifies; it exits 0, run
after run (the Fantasyland is foreseen from the seed, not hoped for)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest


def _demo(database_url: str, *options: str) -> str:
    sapsam = Path(sys.executable).parent / "sapsam"
    command = [str(sapsam), "demo", *options, "--database-url", database_url]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout


@pytest.mark.parametrize("preset", ["pineapple", "pineapple_2_7"])
def test_the_pineapple_demo_plays_a_fantasyland_and_verifies(
    database_url: str, preset: str
) -> None:
    output = _demo(database_url, "--preset", preset)
    assert f"({preset}, 3 seats)" in output
    assert "deal 1's seed is chosen so that seat 0 earns a Fantasyland" in output
    assert re.search(r"^  0 .*  FL", output, re.MULTILINE), output  # seat 0's, in deal 2
    assert re.search(r"^    discarded \S\S \S\S \S\S \S\S \(4 committed\)$", output, re.M), output
    assert re.search(r"^  tables/\S+: ok \(\d+ deals verified\)$", output, re.MULTILINE)
    assert re.search(
        r"^[1-9]\d* Fantasylands?, \d+ discards committed, \d+ opened; verification: PASSED$",
        output,
        re.MULTILINE,
    ), output
    assert "set over: " in output
    assert max(len(line) for line in output.splitlines()) <= 80


def test_the_pineapple_demo_refuses_four_seats_given(database_url: str) -> None:
    sapsam = Path(sys.executable).parent / "sapsam"
    completed = subprocess.run(
        [str(sapsam), "demo", "--preset", "pineapple", "--seat-count", "5"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 1 and "--seat-count must be 2 to 3" in completed.stderr
