"""The table aggregate's ``evolve(state, event) -> state``: one function per event.

``evolve`` trusts the log and never raises, so any stored stream replays to the state it describes.
It runs once per event on every replay, hence the copying shortcuts below.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sapsam.domain.events import (
    AnnouncementsOpened,
    ArrangementCommitted,
    ArrangementRevealed,
    CardsDealt,
    DeadlinesExtended,
    DealerChosen,
    DealScored,
    DealStarted,
    DealVoided,
    DeckCut,
    EntropyContributed,
    Event,
    NaturalDeclared,
    NaturalRevealed,
    PlayerSeated,
    RevealsOpened,
    SeatConfirmed,
    SeatReplaced,
    SeatTimedOut,
    SeedRevealed,
    SeriesCompleted,
    SeriesStarted,
    SurrenderAnnounced,
    TableCreated,
)
from sapsam.domain.table_state import INITIAL_STATE, DealState, Reveal, SeatTimeout, TableState
from sapsam.domain.table_surrender import announced, opened
from sapsam.frozen import from_fields
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.ruleset import RuleSet, RuleSetError

_Record = TypeVar("_Record")


def _replace(record: _Record, **changes: Any) -> _Record:
    """``dataclasses.replace`` without re-running ``__init__``: evolve runs once per event on every
    replay, and the copy is a third of its cost. The records here have no ``__post_init__``.

    The fields are copied with ``dict.copy`` (a block copy) and then changed: about half the cost
    of building the new ``__dict__`` key by key."""
    fields = record.__dict__.copy()
    fields.update(changes)
    return from_fields(type(record), fields)


_Field = TypeVar("_Field")


def _replace_at(values: tuple[_Field, ...], index: int, value: _Field) -> tuple[_Field, ...]:
    return (*values[:index], value, *values[index + 1 :])


def _with_deal(state: TableState, **changes: Any) -> TableState:
    """The state one event on, its deal changed: both copies inline (most events take this)."""
    deal = state.deal
    assert deal is not None
    deal_fields = deal.__dict__.copy()
    deal_fields.update(changes)
    state_fields = state.__dict__.copy()
    state_fields["version"] = state.version + 1
    state_fields["deal"] = from_fields(type(deal), deal_fields)
    return from_fields(type(state), state_fields)


def evolve(state: TableState, event: Event) -> TableState:
    """The state after one event. Never raises for an event ``decide`` could have produced."""
    return _EVOLVERS[type(event)](state, event)


def fold(events: Sequence[Event], state: TableState = INITIAL_STATE) -> TableState:
    """The state after a sequence of events."""
    for event in events:
        state = _EVOLVERS[type(event)](state, event)
    return state


def _on_table_created(state: TableState, event: TableCreated) -> TableState:
    try:
        rule_set = RuleSet.from_dict(event.rule_set)
    except RuleSetError:  # pragma: no cover - decide only records valid rule sets
        rule_set = DEFAULT_RULE_SET
    return _replace(
        state,
        version=state.version + 1,
        table_id=uuid.UUID(event.table_id),
        rule_set=rule_set,
        seat_count=event.seat_count,
        seats=(None,) * event.seat_count,
        lot_commitment=bytes.fromhex(event.lot_commitment),
        series_totals=(0,) * event.seat_count,
        after_series=event.after_series,
    )


def _on_player_seated(state: TableState, event: PlayerSeated) -> TableState:
    return _replace(
        state,
        version=state.version + 1,
        seats=_replace_at(state.seats, event.seat, event.player_id),
    )


def _on_dealer_chosen(state: TableState, event: DealerChosen) -> TableState:
    return _replace(state, version=state.version + 1, first_dealer=event.dealer)


def _on_deal_started(state: TableState, event: DealStarted) -> TableState:
    seats = state.seat_count
    return _replace(
        state,
        version=state.version + 1,
        deal=DealState(
            number=event.deal_number,
            dealer=event.dealer,
            seed_commitment=bytes.fromhex(event.seed_commitment),
            contributions=(None,) * seats,
            commitments=(None,) * seats,
            commitment_schemes=(1,) * seats,
            confirmed=(False,) * seats,
            timeouts=(None,) * seats,
            reveals=(None,) * seats,
            declarations=(None,) * seats,
            naturals=(None,) * seats,
        ),
    )


def _on_entropy(state: TableState, event: EntropyContributed) -> TableState:
    assert state.deal is not None
    contributions = _replace_at(state.deal.contributions, event.seat, bytes.fromhex(event.entropy))
    return _with_deal(state, contributions=contributions)


def _on_deck_cut(state: TableState, event: DeckCut) -> TableState:
    return _with_deal(state, cut_position=event.position)


def _set_at(deadline_ms: int | None, seconds: int | None) -> int | None:
    # A deadline is set ``seconds`` before it expires (decide adds them to the time of setting).
    return None if deadline_ms is None or seconds is None else deadline_ms - seconds * 1000


def _on_cards_dealt(state: TableState, event: CardsDealt) -> TableState:
    return _with_deal(
        state,
        dealt=True,
        deck_digest=bytes.fromhex(event.deck_digest),
        cut_deck_digest=bytes.fromhex(event.cut_deck_digest),
        hand_digests=tuple(map(bytes.fromhex, event.hand_digests)),
        arrange_deadline_ms=event.arrange_deadline_ms,
        deadline_set_ms=_set_at(event.arrange_deadline_ms, state.rule_set.arrange_seconds),
    )


def _on_committed(state: TableState, event: ArrangementCommitted) -> TableState:
    assert state.deal is not None
    commitments = _replace_at(state.deal.commitments, event.seat, bytes.fromhex(event.commitment))
    schemes = _replace_at(state.deal.commitment_schemes, event.seat, event.scheme)
    return _with_deal(state, commitments=commitments, commitment_schemes=schemes)


def _on_natural_declared(state: TableState, event: NaturalDeclared) -> TableState:
    assert state.deal is not None
    declarations = _replace_at(state.deal.declarations, event.seat, bytes.fromhex(event.commitment))
    return _with_deal(state, declarations=declarations)


def _on_natural_revealed(state: TableState, event: NaturalRevealed) -> TableState:
    assert state.deal is not None
    return _with_deal(state, naturals=_replace_at(state.deal.naturals, event.seat, event.natural))


def _on_confirmed(state: TableState, event: SeatConfirmed) -> TableState:
    assert state.deal is not None
    return _with_deal(state, confirmed=_replace_at(state.deal.confirmed, event.seat, True))


def _on_reveals_opened(state: TableState, event: RevealsOpened) -> TableState:
    return _with_deal(
        state,
        reveals_open=True,
        reveal_deadline_ms=event.reveal_deadline_ms,
        deadline_set_ms=_set_at(event.reveal_deadline_ms, state.rule_set.reveal_seconds),
    )


def _on_deadlines_extended(state: TableState, event: DeadlinesExtended) -> TableState:
    deal = state.deal
    assert deal is not None
    if event.stage == "announcing" and deal.announcements is not None:
        announcements = _replace(deal.announcements, deadline_ms=event.deadline_ms)
        return _with_deal(
            state, announcements=announcements, deadline_set_ms=event.unserved_until_ms
        )
    moved = "arrange_deadline_ms" if event.stage == "arranging" else "reveal_deadline_ms"
    return _with_deal(state, **{moved: event.deadline_ms}, deadline_set_ms=event.unserved_until_ms)


def _on_announcements_opened(state: TableState, event: AnnouncementsOpened) -> TableState:
    return _with_deal(
        state,
        announcements=opened(event, state.seat_count),
        deadline_set_ms=_set_at(event.deadline_ms, state.rule_set.surrender_seconds),
    )


def _on_surrender_announced(state: TableState, event: SurrenderAnnounced) -> TableState:
    deal = state.deal
    assert deal is not None and deal.announcements is not None
    return _with_deal(
        state,
        announcements=announced(deal.announcements, event),
        deadline_set_ms=_set_at(event.deadline_ms, state.rule_set.surrender_seconds),
    )


def _on_revealed(state: TableState, event: ArrangementRevealed) -> TableState:
    assert state.deal is not None
    reveal = Reveal(
        arrangement=Arrangement.of_card_rows(
            parse_cards(event.front), parse_cards(event.middle), parse_cards(event.back)
        ),
        nonce=bytes.fromhex(event.nonce),
        foul=event.foul,
    )
    return _with_deal(state, reveals=_replace_at(state.deal.reveals, event.seat, reveal))


def _on_timed_out(state: TableState, event: SeatTimedOut) -> TableState:
    assert state.deal is not None
    timeout = SeatTimeout(event.consequence)
    return _with_deal(state, timeouts=_replace_at(state.deal.timeouts, event.seat, timeout))


def _on_seed_revealed(state: TableState, event: SeedRevealed) -> TableState:
    return _with_deal(state, seed=bytes.fromhex(event.seed))


def _on_deal_scored(state: TableState, event: DealScored) -> TableState:
    assert state.deal is not None
    return _replace(
        state,
        version=state.version + 1,
        deal=_replace(state.deal, scored=True),
        deals_scored=event.deal_number,
        series_totals=event.series_totals,
    )


def _on_deal_voided(state: TableState, event: DealVoided) -> TableState:
    assert state.deal is not None
    return _replace(
        state,
        version=state.version + 1,
        deal=_replace(state.deal, voided=True, seed=bytes.fromhex(event.seed)),
        voided_in_series=state.voided_in_series + 1,
    )


def _on_seat_replaced(state: TableState, event: SeatReplaced) -> TableState:
    return _replace(
        state,
        version=state.version + 1,
        seats=_replace_at(state.seats, event.seat, event.player_id),
    )


def _on_series_completed(state: TableState, event: SeriesCompleted) -> TableState:
    return _replace(state, version=state.version + 1, series_complete=True)


def _on_series_started(state: TableState, event: SeriesStarted) -> TableState:
    return _replace(
        state,
        version=state.version + 1,
        series_complete=False,
        series_totals=(0,) * state.seat_count,
        series_number=event.series_number,
        series_first_deal=event.first_deal_number,
        voided_in_series=0,
    )


_EVOLVERS: dict[type[Event], Callable[[TableState, Any], TableState]] = {
    TableCreated: _on_table_created,
    PlayerSeated: _on_player_seated,
    DealerChosen: _on_dealer_chosen,
    DealStarted: _on_deal_started,
    EntropyContributed: _on_entropy,
    DeckCut: _on_deck_cut,
    CardsDealt: _on_cards_dealt,
    ArrangementCommitted: _on_committed,
    SeatConfirmed: _on_confirmed,
    RevealsOpened: _on_reveals_opened,
    ArrangementRevealed: _on_revealed,
    SeatTimedOut: _on_timed_out,
    SeedRevealed: _on_seed_revealed,
    DealScored: _on_deal_scored,
    SeriesCompleted: _on_series_completed,
    SeriesStarted: _on_series_started,
    DeadlinesExtended: _on_deadlines_extended,
    DealVoided: _on_deal_voided,
    SeatReplaced: _on_seat_replaced,
    NaturalDeclared: _on_natural_declared,
    NaturalRevealed: _on_natural_revealed,
    AnnouncementsOpened: _on_announcements_opened,
    SurrenderAnnounced: _on_surrender_announced,
}
