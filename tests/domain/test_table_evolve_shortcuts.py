"""evolve's shortcuts give exactly what the plain calls give.

``evolve`` runs once per event on every replay, so it copies records without ``__init__``, reads
printed cards through a table lookup and builds parsed arrangements directly. These tests hold each
shortcut to the plain call it replaces, and a whole series' fold to the events that made it.
"""

from __future__ import annotations

import copy
import dataclasses
import uuid

import pytest

from sapsam.audit.sample_series import series_events
from sapsam.domain.table import (
    INITIAL_STATE,
    DealState,
    _parse_row,
    _parsed_arrangement,
    _replace,
    _with_deal,
    evolve,
)
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import CardError, parse_cards
from sapsam.rules.ruleset import DEFAULT_RULE_SET

ROWS = [
    ("As", "Kd", "2c"),
    ("Tc", "Jc", "Qc", "Kc", "Ac"),
    (),
    ("10h", "as", "K♠"),  # other notations: parse_cards reads them
    "As Kd 2c",  # a string, split by parse_cards
    ["2s"],
]
BAD_ROWS = [
    ("As", "As"),  # a repeat
    ("As", "Kd", "As"),
    ("Zz",),  # no such card
    ("As", ""),
    ("As", 7),  # not a token
]


@pytest.mark.parametrize("row", ROWS)
def test_a_row_reads_as_parse_cards_reads_it(row: tuple[str, ...]) -> None:
    parsed = _parse_row(row)
    assert parsed == parse_cards(row)
    assert type(parsed) is tuple
    assert [type(card) for card in parsed] == [type(card) for card in parse_cards(row)]


@pytest.mark.parametrize("row", BAD_ROWS)
def test_a_bad_row_fails_as_parse_cards_fails(row: tuple[str, ...]) -> None:
    with pytest.raises(Exception) as expected:
        parse_cards(row)
    with pytest.raises(type(expected.value)) as raised:
        _parse_row(row)
    assert str(raised.value) == str(expected.value)
    if isinstance(expected.value, CardError):
        assert "position" in str(raised.value)


def test_a_parsed_arrangement_equals_the_constructed_one() -> None:
    rows = (_parse_row(("As", "Kd", "2c")), _parse_row(ROWS[1]), _parse_row(("2d", "3d")))
    built = _parsed_arrangement(*rows)
    constructed = Arrangement(*rows)
    assert built == constructed
    assert hash(built) == hash(constructed)
    assert repr(built) == repr(constructed)
    assert vars(built) == vars(constructed)
    assert type(built) is Arrangement
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.front = ()  # type: ignore[misc]


def test_copies_equal_dataclasses_replace_and_leave_the_original_alone() -> None:
    deal = DealState(number=1, dealer=0, seed_commitment=b"c", contributions=(None, None))
    state = _replace(INITIAL_STATE, seat_count=2, deal=deal)
    assert state == dataclasses.replace(INITIAL_STATE, seat_count=2, deal=deal)
    assert INITIAL_STATE.seat_count == 0 and INITIAL_STATE.deal is None
    moved = _with_deal(state, cut_position=7, dealt=True)
    assert moved == dataclasses.replace(
        state, version=1, deal=dataclasses.replace(deal, cut_position=7, dealt=True)
    )
    assert state.version == 0 and deal.cut_position is None and not deal.dealt
    with pytest.raises(dataclasses.FrozenInstanceError):
        moved.version = 5  # type: ignore[misc]


def test_folding_a_series_never_changes_an_earlier_state() -> None:
    events = series_events(uuid.UUID(int=3), 4, DEFAULT_RULE_SET.series_length)
    state = INITIAL_STATE
    states = [state]
    snapshots = [copy.deepcopy(state)]
    for event in events:
        state = evolve(state, event)
        states.append(state)
        snapshots.append(copy.deepcopy(state))
    assert states == snapshots
    assert state.version == len(events)
    assert state.series_complete
