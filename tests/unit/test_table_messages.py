"""A table view on the wire (``sapsam.api.table_messages``): the names it spells and the rule set
it carries, made once per rule set and copied into each message."""

from __future__ import annotations

import dataclasses
import uuid

from sapsam.api import resources
from sapsam.api.common_messages import rule_set_message
from sapsam.api.table_messages import TableFacts, table_view_message
from sapsam.domain.table_state import TablePhase
from sapsam.domain.table_views import SeatView, TableView
from sapsam.rules.presets import preset
from sapsam.rules.ruleset import RuleSet

TABLE_ID = uuid.UUID("5b0e8c7e-1111-4222-8333-444455556666")
FACTS = TableFacts(created_by="operator", create_time="2026-12-03T18:00:00.123456Z")


def _view(rule_set: RuleSet, **changes: object) -> TableView:
    view = TableView(
        table_id=TABLE_ID,
        phase=TablePhase.ARRANGING,
        rule_set=rule_set,
        seat_count=2,
        version=7,
        seats=(SeatView(0, "p0", 3), SeatView(1, None, -3)),
        dealer=1,
        deal_number=4,
        seed_commitment=b"\x01" * 32,
        cutter=0,
        deadline_ms=None,
        announcing=1,
    )
    return dataclasses.replace(view, **changes)


def test_the_names_are_the_resources_names() -> None:
    table = table_view_message(_view(preset("pagat")), FACTS, {"p0": "Ann"})
    assert table.name == resources.table_name(TABLE_ID)
    assert [seat.name for seat in table.seats] == [resources.seat_name(TABLE_ID, s) for s in (0, 1)]
    assert table.seats[0].display_name == "Ann"
    assert table.dealer_seat == resources.seat_name(TABLE_ID, 1)
    assert table.cutter_seat == resources.seat_name(TABLE_ID, 0)
    assert table.announcing_seat == resources.seat_name(TABLE_ID, 1)
    assert table.current_deal == resources.deal_name(TABLE_ID, 4)


def test_each_message_carries_its_own_copy_of_the_rule_set() -> None:
    pagat = preset("pagat")
    first = table_view_message(_view(pagat), FACTS, {})
    assert first.rule_set == rule_set_message(pagat)
    first.rule_set.name = "changed in one answer"
    second = table_view_message(_view(pagat), FACTS, {})
    assert second.rule_set == rule_set_message(pagat)
    other = dataclasses.replace(pagat, series_length=pagat.series_length + 1)
    third = table_view_message(_view(other), FACTS, {})
    assert third.rule_set == rule_set_message(other) != rule_set_message(pagat)
