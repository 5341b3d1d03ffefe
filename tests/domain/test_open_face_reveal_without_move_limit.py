"""A committed Fantasyland hand cannot hold a table without move limits either (docs/rules.md
§8.7, ``reveal_seconds``): every preset gives the reveals 30 s where no ``move_seconds`` run, so
at a preset table without them the last hand set still opens the reveals with a deadline, the
sweep times a hand not opened by then out (dead), and the audit re-decides it; with
``move_seconds`` the reveals have those, as before. A rule set recorded before
``reveal_seconds`` (none in it) keeps its old behaviour: no reveal deadline without
``move_seconds``."""

from __future__ import annotations

import dataclasses

import pytest
from open_face_deals import DrivenTable, export_lines, fantasyland_table
from test_open_face_reveal_deadline import _place_the_normal_hand

from sapsam.audit import verify_export
from sapsam.audit.report import Status
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import TableCreated
from sapsam.domain.open_face.commands import PlaceForSeat
from sapsam.domain.open_face.events import (
    FantasylandRevealed,
    FantasylandRevealsOpened,
    FantasylandTimedOut,
)
from sapsam.domain.table import fold
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.presets import REVEAL_SECONDS, open_face_preset


def _committed(table: DrivenTable) -> list[object]:
    table.start_deal()
    table.run_street(now_ms=1_000)
    table.commit(0)
    return list(_place_the_normal_hand(table, 5_000))


@pytest.mark.parametrize("preset", ["ofc_classic", "ofc_turbo", "ofc_mercier_deeb", "pineapple"])
def test_every_preset_has_a_reveal_deadline(preset: str) -> None:
    rules = open_face_preset(preset)
    assert rules.move_seconds is None and rules.reveal_seconds == REVEAL_SECONDS == 30
    assert rules.reveal_limit == 30
    assert dataclasses.replace(rules, move_seconds=12).reveal_limit == 12
    assert rules.to_dict()["reveal_seconds"] == 30
    # A bare rule set (as recorded before the key) records none and reads back without it.
    assert "reveal_seconds" not in OpenFaceRules().to_dict()
    assert OpenFaceRules.from_dict(OpenFaceRules().to_dict()).reveal_limit is None


def test_a_hand_never_opened_at_a_table_without_move_limits_is_timed_out_dead() -> None:
    table = fantasyland_table("ofc_classic", 2)  # no move_seconds: no placement deadline
    last = _committed(table)
    assert last[-1] == FantasylandRevealsOpened(deal_number=2, seats=(0,), deadline_ms=35_000)
    before = list(table.events)
    with pytest.raises(DomainError) as refused:
        table.run(PlaceForSeat((), 34_999, True))  # the sweep, a moment early
    assert refused.value.reason is Reason.NOTHING_TIMED_OUT and table.events == before
    [timed_out] = table.run(PlaceForSeat((), 35_000, True))
    assert timed_out == FantasylandTimedOut(deal_number=2, seat=0, timed_out_by="service")
    table.play_deal()
    [opened] = [
        e for e in table.events if isinstance(e, FantasylandRevealed) and e.deal_number == 2
    ]
    assert opened.nonce == "" and opened.dead
    report = verify_export(export_lines(table.events))
    assert not [c for c in report.checks if c.status is Status.FAILED], report


def test_a_rule_set_recorded_before_the_key_keeps_no_reveal_deadline() -> None:
    """A table whose TableCreated records no ``reveal_seconds`` (and no move limit) opens no
    reveal deadline, as before, and its deal still verifies."""
    table = fantasyland_table("ofc_classic", 2)
    created = table.events[0]
    assert isinstance(created, TableCreated)
    recorded = {k: v for k, v in created.rule_set.items() if k != "reveal_seconds"}
    old = dataclasses.replace(created, rule_set=recorded)
    # The same table as recorded then: replayed from its events with the old TableCreated.
    replayed = DrivenTable(fold([old, *table.events[1:]]))
    replayed.events = [old, *table.events[1:]]
    replayed.seed, replayed.cards = table.seed, table.cards
    last = _committed(replayed)
    assert not any(isinstance(e, FantasylandRevealsOpened) for e in last)
    replayed.run(PlaceForSeat((), 0, True, forced_seat=0))  # only the operator clears it
    replayed.play_deal()
    report = verify_export(export_lines(replayed.events))
    assert not [c for c in report.checks if c.status is Status.FAILED], report
