"""The seam for game families: a table plays the family its recorded rule set names, a rule set
that names none is the closed game's, and the closed game behind the seam is the closed game
(docs/architecture.md, "Game families")."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from sapsam.domain import families
from sapsam.domain.closed_family import CLOSED
from sapsam.domain.commands import CreateTable, SeatPlayer
from sapsam.domain.events import TableCreated
from sapsam.domain.family import (
    CLOSED_FAMILY,
    FAMILY_KEY,
    FRAME_KEYS,
    UnknownFamilyError,
    family_name_of,
    without_family,
)
from sapsam.domain.table import INITIAL_STATE, TableState, decide, evolve, fold
from sapsam.domain.table_evolve import fold as closed_fold
from sapsam.rules.presets import DEFAULT_RULE_SET, PRESETS
from sapsam.rules.ruleset import RuleSet

TABLE_ID = uuid.UUID("00000000-0000-4000-8000-0000000000f1")
LOT = bytes(32)


def _created(rule_set: dict[str, object]) -> TableCreated:
    return TableCreated(
        table_id=str(TABLE_ID),
        rule_set=rule_set,
        seat_count=2,
        lot_commitment=LOT.hex(),
        created_by="ann",
    )


def test_a_rule_set_without_the_family_key_is_the_closed_game() -> None:
    assert family_name_of({"name": "pagat"}) == CLOSED_FAMILY
    assert families.family_of_rule_set(DEFAULT_RULE_SET.to_dict()) is CLOSED


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_closed_rule_set_is_recorded_without_the_family_key(name: str) -> None:
    # Every closed rule set ever recorded lacks the key: its canonical JSON, and so every hash
    # and vector over a TableCreated, is what it was before families.
    rule_set = PRESETS[name]
    assert FAMILY_KEY not in CLOSED.record_rules(rule_set, 4)
    assert CLOSED.record_rules(rule_set, 4) == rule_set.to_dict()
    family, read = families.read_recorded_rules(rule_set.to_dict())
    assert family is CLOSED and read == rule_set


def test_create_table_is_decided_by_the_family_of_its_rule_set() -> None:
    command = CreateTable(TABLE_ID, DEFAULT_RULE_SET, 2, LOT, "ann")
    assert families.family_of_rules(DEFAULT_RULE_SET) is CLOSED
    assert decide(INITIAL_STATE, command) == CLOSED.decide(INITIAL_STATE, command)


def test_a_table_state_is_handed_to_its_own_family() -> None:
    state = evolve(INITIAL_STATE, _created(DEFAULT_RULE_SET.to_dict()))
    assert isinstance(state, TableState)
    assert families.family_of_state(state) is CLOSED
    seat = SeatPlayer("ann", None)
    assert decide(state, seat) == CLOSED.decide(state, seat)


def test_fold_through_the_seam_equals_the_closed_fold() -> None:
    created = _created(replace(DEFAULT_RULE_SET, name="pagat").to_dict())
    state = evolve(INITIAL_STATE, created)
    events = [created, *decide(state, SeatPlayer("ann", None))]
    assert fold(events) == closed_fold(events)
    assert fold(events[1:], state) == closed_fold(events[1:], state)
    assert fold([], state) is state


@pytest.mark.parametrize("named", ["draughts", "closed2", "x" * 32])
def test_a_table_of_an_unknown_family_is_not_replayed_as_another_game(named: str) -> None:
    created = _created({**DEFAULT_RULE_SET.to_dict(), FAMILY_KEY: named})
    with pytest.raises(UnknownFamilyError, match="unknown game family"):
        evolve(INITIAL_STATE, created)
    with pytest.raises(UnknownFamilyError, match="known families: closed"):
        fold([created])


@pytest.mark.parametrize("value", [None, 7, "", "y" * 33, ["closed"]])
def test_a_malformed_family_name_is_refused(value: object) -> None:
    with pytest.raises(UnknownFamilyError, match="must be a family name"):
        family_name_of({FAMILY_KEY: value})


def test_a_rules_object_of_no_family_is_refused() -> None:
    with pytest.raises(UnknownFamilyError, match="no game family's rule set"):
        families.family_of_rules({"name": "pagat"})


def test_the_family_key_is_left_out_for_the_family_reader() -> None:
    recorded = {FAMILY_KEY: "open_face", "name": "ofc_classic"}
    assert without_family(recorded) == {"name": "ofc_classic"}
    closed = DEFAULT_RULE_SET.to_dict()
    assert without_family(closed) is closed


def test_a_closed_rule_set_never_records_the_family_key_spelled_out() -> None:
    # "closed" is recorded by the key's absence; the closed reader refuses the key itself, so
    # one rule set has one recorded form.
    spelled_out = {**DEFAULT_RULE_SET.to_dict(), FAMILY_KEY: CLOSED_FAMILY}
    with pytest.raises(ValueError, match="family"):
        RuleSet.from_dict(spelled_out)
    with pytest.raises(ValueError, match="family"):
        families.read_recorded_rules(spelled_out)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_every_family_records_the_keys_the_frame_reads(seats: int) -> None:
    # The read models read these of every TableCreated (sapsam.store.projection_folds).
    for family in families.FAMILIES.values():
        rules = family.read_rules({}) if family.name != CLOSED_FAMILY else DEFAULT_RULE_SET
        recorded = family.record_rules(rules, seats)
        assert set(FRAME_KEYS) <= set(recorded)
        assert isinstance(recorded["series_length"], int) and recorded["series_length"] >= 1
        read_family, read = families.read_recorded_rules(recorded)
        assert read_family is family and read == rules


def test_every_registered_family_owns_its_state_and_rules_classes() -> None:
    states = [type(family.initial_state) for family in families.FAMILIES.values()]
    rules = [family.rules_type for family in families.FAMILIES.values()]
    assert len(set(states)) == len(states) and len(set(rules)) == len(rules)
    for name, family in families.FAMILIES.items():
        assert family.name == name
        assert family.initial_state.table_id is None and family.initial_state.version == 0
