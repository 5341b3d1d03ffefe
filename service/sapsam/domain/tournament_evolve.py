"""The tournament aggregate's ``evolve`` and ``fold``: one function per event; trusts the log
and never raises."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from sapsam.domain.events import Event
from sapsam.domain.families import read_recorded_rules
from sapsam.domain.tournament_events import (
    DealCredited,
    PlayerForfeited,
    PlayerRegistered,
    PlayerUnregistered,
    RoundCompleted,
    RoundSeated,
    SeatReassigned,
    TableSetCompleted,
    TournamentCancelled,
    TournamentCompleted,
    TournamentCreated,
    TournamentPaused,
    TournamentResumed,
    TournamentStarted,
)
from sapsam.domain.tournament_state import (
    INITIAL_STATE,
    Reseating,
    TieBreak,
    TournamentState,
    TournamentTable,
)
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.ruleset import RuleSet

# -- evolve ------------------------------------------------------------------------------------


def evolve(state: TournamentState, event: Event) -> TournamentState:
    """The state after one event; never raises for an event ``decide`` could have produced."""
    return _EVOLVERS[type(event)](state, event)


def fold(events: Sequence[Event], state: TournamentState = INITIAL_STATE) -> TournamentState:
    """The state after a sequence of events."""
    for event in events:
        state = evolve(state, event)
    return state


def _next(state: TournamentState, **changes: Any) -> TournamentState:
    return dataclasses.replace(state, version=state.version + 1, **changes)


def _on_created(state: TournamentState, event: TournamentCreated) -> TournamentState:
    # Either family's, by the family its recorded rule set names (absent: closed, as every
    # tournament recorded before open face).
    rule_set: RuleSet | OpenFaceRules
    try:
        _family, rule_set = read_recorded_rules(event.rule_set)
    except ValueError:  # pragma: no cover - decide only records valid rule sets
        rule_set = DEFAULT_RULE_SET
    return _next(
        state,
        tournament_id=uuid.UUID(event.tournament_id),
        name=event.name,
        rule_set=rule_set,
        recorded_rule_set=dict(event.rule_set),
        seats_per_table=event.seats_per_table,
        rounds=event.rounds,
        deals_per_round=event.deals_per_round,
        registration_opens_ms=event.registration_opens_ms,
        registration_closes_ms=event.registration_closes_ms,
        max_entrants=event.max_entrants,
        reseating=Reseating(event.reseating),
        tie_break=TieBreak(event.tie_break),
        seating_commitments=tuple(bytes.fromhex(item) for item in event.seating_commitments),
        created_by=event.created_by,
        created_at_ms=event.created_at_ms,
    )


def _on_registered(state: TournamentState, event: PlayerRegistered) -> TournamentState:
    return _next(state, registered=(*state.registered, event.player_id))


def _on_unregistered(state: TournamentState, event: PlayerUnregistered) -> TournamentState:
    registered = tuple(player for player in state.registered if player != event.player_id)
    return _next(state, registered=registered)


def _on_started(state: TournamentState, event: TournamentStarted) -> TournamentState:
    zeros = {player: 0 for player in event.entrants}
    return _next(
        state,
        entrants=event.entrants,
        started_at_ms=event.started_at_ms,
        totals=zeros,
        deals_won=dict(zeros),
        deals_played=dict(zeros),
    )


def _on_round_seated(state: TournamentState, event: RoundSeated) -> TournamentState:
    tables = dict(state.tables)
    for index, (text, players) in enumerate(zip(event.table_ids, event.seatings, strict=True)):
        table_id = uuid.UUID(text)
        tables[table_id] = TournamentTable(event.round, index, table_id, tuple(players))
    return _next(state, current_round=event.round, tables=tables)


def _on_credited(state: TournamentState, event: DealCredited) -> TournamentState:
    table_id = uuid.UUID(event.table_id)
    table = state.tables[table_id]
    tables = dict(state.tables)
    tables[table_id] = dataclasses.replace(table, credited=table.credited | {event.deal_number})
    totals = dict(state.totals)
    won = dict(state.deals_won)
    played = dict(state.deals_played)
    for player, delta in zip(event.players, event.deltas, strict=True):
        totals[player] = totals.get(player, 0) + delta
        won[player] = won.get(player, 0) + (delta > 0)
        played[player] = played.get(player, 0) + 1
    return _next(state, tables=tables, totals=totals, deals_won=won, deals_played=played)


def _on_table_set_completed(state: TournamentState, event: TableSetCompleted) -> TournamentState:
    table_id = uuid.UUID(event.table_id)
    tables = dict(state.tables)
    tables[table_id] = dataclasses.replace(state.tables[table_id], set_completed=True)
    return _next(state, tables=tables)


def _on_round_completed(state: TournamentState, event: RoundCompleted) -> TournamentState:
    return _next(state, rounds_completed=event.round)


def _on_completed(state: TournamentState, event: TournamentCompleted) -> TournamentState:
    return _next(state, complete=True)


def _on_paused(state: TournamentState, event: TournamentPaused) -> TournamentState:
    return _next(state, paused_at_ms=event.paused_at_ms, pause_reason=event.reason)


def _on_resumed(state: TournamentState, event: TournamentResumed) -> TournamentState:
    pauses = (*state.pauses, (event.paused_at_ms, event.resumed_at_ms))
    return _next(state, paused_at_ms=None, pause_reason="", pauses=pauses)


def _on_cancelled(state: TournamentState, event: TournamentCancelled) -> TournamentState:
    return _next(state, cancelled=True, cancel_reason=event.reason)


def _on_forfeited(state: TournamentState, event: PlayerForfeited) -> TournamentState:
    return _next(state, forfeited={**state.forfeited, event.player_id: event.round})


def _on_reassigned(state: TournamentState, event: SeatReassigned) -> TournamentState:
    table_id = uuid.UUID(event.table_id)
    table = state.tables[table_id]
    tables = dict(state.tables)
    change = (event.seat, event.from_deal, event.player_id)
    tables[table_id] = dataclasses.replace(table, reassigned=(*table.reassigned, change))
    changes: dict[str, Any] = {"tables": tables}
    if event.player_id not in state.entrants:
        # The substitute is an entrant from now on, from a total of 0.
        changes["entrants"] = (*state.entrants, event.player_id)
        changes["totals"] = {**state.totals, event.player_id: 0}
        changes["deals_won"] = {**state.deals_won, event.player_id: 0}
        changes["deals_played"] = {**state.deals_played, event.player_id: 0}
    return _next(state, **changes)


_EVOLVERS: dict[type[Event], Callable[[TournamentState, Any], TournamentState]] = {
    TournamentCreated: _on_created,
    PlayerRegistered: _on_registered,
    PlayerUnregistered: _on_unregistered,
    TournamentStarted: _on_started,
    RoundSeated: _on_round_seated,
    DealCredited: _on_credited,
    TableSetCompleted: _on_table_set_completed,
    RoundCompleted: _on_round_completed,
    TournamentCompleted: _on_completed,
    TournamentPaused: _on_paused,
    TournamentResumed: _on_resumed,
    TournamentCancelled: _on_cancelled,
    PlayerForfeited: _on_forfeited,
    SeatReassigned: _on_reassigned,
}
