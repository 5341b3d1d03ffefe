"""``sapsam audit verify`` and ``replay`` count in words a person reads: ``1 deal verified``,
``seats 0, 1``, never ``deal(s)`` (issue #16 item 10: correct plurals). Offline, on series made
by the pure domain (``sapsam.audit.sample_series``), through the command itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sapsam.audit import Requester, select_deal, select_table, write_lines
from sapsam.audit.sample_series import recorded_stream
from sapsam.cli import main
from sapsam.plurals import numbered, plural

ONE_AND_A_PLURAL = re.compile(
    r"(?<!seat )(?<!deal )\b1 (events|deals|checks|leaves|units|players|rows|tables|streams)\b"
)


def test_counted_nouns() -> None:
    assert [plural(n, "deal") for n in (0, 1, 2)] == ["0 deals", "1 deal", "2 deals"]
    assert plural(1, "leaf", "leaves") == "1 leaf"
    assert plural(3, "leaf", "leaves") == "3 leaves"
    assert numbered("seat", [2]) == "seat 2"
    assert numbered("seat", [0, 1]) == "seats 0, 1"


def _export(path: Path, deals: int, whole_table: bool) -> Path:
    events = recorded_stream(2, deals=deals)
    operator = Requester.operator()
    chosen = select_table(events, operator) if whole_table else select_deal(events, 1, operator)
    path.write_text("".join(line + "\n" for line in write_lines(chosen)), encoding="utf-8")
    return path


@pytest.mark.parametrize(("deals", "whole_table"), [(1, False), (1, True), (2, True)])
def test_verify_and_replay_say_no_noun_with_an_s_in_brackets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], deals: int, whole_table: bool
) -> None:
    export = _export(tmp_path / "export.jsonl", deals, whole_table)
    assert main(["audit", "verify", str(export)]) == 4  # nothing anchors it
    verified = capsys.readouterr().out
    assert main(["audit", "replay", str(export)]) == 0
    replayed = capsys.readouterr().out
    for text in (verified, replayed):
        assert "(s)" not in text
        # "1 deals", not "seat 1 deals" (the verb: the seat deals).
        assert not ONE_AND_A_PLURAL.search(text), ONE_AND_A_PLURAL.search(text)
    assert f"{plural(deals, 'deal')} verified, " in verified
