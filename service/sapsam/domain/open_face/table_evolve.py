"""``evolve`` for an open-face table: the frame's events here, a deal's play handed to
``deal_evolve``. It trusts the log and never raises for an event ``table_decide`` produced."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from sapsam.domain.events import (
    DeadlinesExtended,
    DealerChosen,
    DealScored,
    DealStarted,
    DealVoided,
    DeckCut,
    EntropyContributed,
    Event,
    PlayerSeated,
    SeatReplaced,
    SeedRevealed,
    SeriesCompleted,
    TableCreated,
)
from sapsam.domain.family import without_family
from sapsam.domain.open_face.deal_evolve import evolve_deal
from sapsam.domain.open_face.deal_state import open_deal
from sapsam.domain.open_face.events import OPEN_FACE_EVENT_TYPES
from sapsam.domain.open_face.table_decide import read_recorded_rules
from sapsam.domain.open_face.table_state import (
    INITIAL_OPEN_FACE_TABLE,
    OpenFaceTable,
    next_deal,
    set_progress,
)

__all__ = ["evolve_table", "fold_table"]


def _at(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return (*values[:index], value, *values[index + 1 :])


def evolve_table(state: OpenFaceTable, event: Event) -> OpenFaceTable:
    """The table after one event."""
    changed = _EVOLVERS[type(event)](state, event)
    return dataclasses.replace(changed, version=state.version + 1)


def fold_table(
    events: Sequence[Event], state: OpenFaceTable = INITIAL_OPEN_FACE_TABLE
) -> OpenFaceTable:
    """The table after a run of events."""
    for event in events:
        state = evolve_table(state, event)
    return state


def _on_created(state: OpenFaceTable, event: TableCreated) -> OpenFaceTable:
    seats = event.seat_count
    return dataclasses.replace(
        state,
        table_id=uuid.UUID(event.table_id),
        rules=read_recorded_rules(without_family(event.rule_set)),
        seat_count=seats,
        seats=(None,) * seats,
        lot_commitment=bytes.fromhex(event.lot_commitment),
        series_totals=(0,) * seats,
        next_fantasyland=(None,) * seats,
        fantasylands_in_a_row=(0,) * seats,
        dead_for_set=(False,) * seats,
    )


def _on_seated(state: OpenFaceTable, event: PlayerSeated) -> OpenFaceTable:
    return dataclasses.replace(state, seats=_at(state.seats, event.seat, event.player_id))


def _on_dealer(state: OpenFaceTable, event: DealerChosen) -> OpenFaceTable:
    return dataclasses.replace(state, first_dealer=event.dealer)


def _on_started(state: OpenFaceTable, event: DealStarted) -> OpenFaceTable:
    assert state.table_id is not None
    players = tuple(player or "" for player in state.seats)
    play = open_deal(
        state.table_id,
        players,
        state.rules,
        event.deal_number,
        event.dealer,
        state.next_fantasyland,
        state.rules.move_seconds,
        dead_for_set=state.dead_for_set,
    )
    return dataclasses.replace(
        state,
        deal_number=event.deal_number,
        dealer=event.dealer,
        seed_commitment=bytes.fromhex(event.seed_commitment),
        contributions=(None,) * state.seat_count,
        cut_position=None,
        play=play,
        seed=None,
        scored=False,
        voided=False,
    )


def _on_entropy(state: OpenFaceTable, event: EntropyContributed) -> OpenFaceTable:
    entropy = bytes.fromhex(event.entropy)
    return dataclasses.replace(state, contributions=_at(state.contributions, event.seat, entropy))


def _on_cut(state: OpenFaceTable, event: DeckCut) -> OpenFaceTable:
    return dataclasses.replace(state, cut_position=event.position)


def _on_play(state: OpenFaceTable, event: Event) -> OpenFaceTable:
    assert state.play is not None
    return dataclasses.replace(state, play=evolve_deal(state.play, event))


def _on_seed(state: OpenFaceTable, event: SeedRevealed) -> OpenFaceTable:
    return dataclasses.replace(state, seed=bytes.fromhex(event.seed))


def _on_scored(state: OpenFaceTable, event: DealScored) -> OpenFaceTable:
    assert state.play is not None
    after = next_deal(state.play, state.fantasylands_in_a_row)
    progress = set_progress(state, state.play, after)
    return dataclasses.replace(
        state,
        scored=True,
        series_totals=event.series_totals,
        next_fantasyland=after.fantasyland,
        fantasylands_in_a_row=after.in_a_row,
        button_moves=progress.button_moves,
        button_stays=not after.button_moves,
        timeout_ends_set=progress.timeout_ends_set,
        ended_early=progress.ended_early,
        # 001: a hand a timeout declared dead stays dead until the set ends.
        dead_for_set=state.play.declared_dead,
    )


def _on_voided(state: OpenFaceTable, event: DealVoided) -> OpenFaceTable:
    # Not scored and dealt again by the same dealer; what the deal decided does not count.
    return dataclasses.replace(
        state,
        seed=bytes.fromhex(event.seed),
        scored=True,
        voided=True,
        button_stays=True,
        deals_voided=state.deals_voided + 1,
    )


def _on_replaced(state: OpenFaceTable, event: SeatReplaced) -> OpenFaceTable:
    return dataclasses.replace(
        state,
        seats=_at(state.seats, event.seat, event.player_id),
        dead_for_set=_at(state.dead_for_set, event.seat, False),
    )


def _on_series_completed(state: OpenFaceTable, event: SeriesCompleted) -> OpenFaceTable:
    return state  # the phase follows from the button's moves (set_is_over)


_EVOLVERS: dict[type[Event], Callable[[OpenFaceTable, Any], OpenFaceTable]] = {
    TableCreated: _on_created,
    PlayerSeated: _on_seated,
    DealerChosen: _on_dealer,
    DealStarted: _on_started,
    EntropyContributed: _on_entropy,
    DeckCut: _on_cut,
    SeedRevealed: _on_seed,
    DealScored: _on_scored,
    SeriesCompleted: _on_series_completed,
    DealVoided: _on_voided,
    SeatReplaced: _on_replaced,
    # An outage's extension (sapsam.domain.open_face.deal_deadlines) moves a deal's deadline.
    DeadlinesExtended: _on_play,
    **dict.fromkeys(OPEN_FACE_EVENT_TYPES, _on_play),
}
