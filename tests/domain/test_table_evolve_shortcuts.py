"""evolve's shortcuts give exactly what the plain calls give.

``evolve`` runs once per event on every replay, so it copies records without ``__init__`` and builds
parsed arrangements directly (printed cards take ``parse_cards``' quick path, tested with the
cards). These tests hold each shortcut to the plain call it replaces, and a whole series' fold to
the events that made it.
"""

from __future__ import annotations

import copy
import dataclasses
import uuid

import pytest

from sapsam.audit.sample_series import series_events
from sapsam.domain.table import INITIAL_STATE, DealState, evolve
from sapsam.domain.table_evolve import _replace, _with_deal
from sapsam.rules.presets import DEFAULT_RULE_SET


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
