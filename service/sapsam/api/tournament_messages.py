"""Tournaments on the wire: a ``Tournament`` message from a tournament's state and seated rounds.

Everything about a tournament is public (the seating seeds are revealed as each round is seated),
so every caller gets the same message.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Final

from sapsam.api import resources
from sapsam.api.common_messages import rule_set_message, timestamp_from_ms
from sapsam.api.open_face_messages import open_face_rule_set_message
from sapsam.domain.tournament import Reseating, TieBreak, TournamentPhase, TournamentState
from sapsam.domain.tournament_events import RoundSeated
from sapsam.rules.ruleset import RuleSet
from sapsam_proto.v1 import tournament_pb2

_STATUS: Final = {
    TournamentPhase.REGISTRATION: tournament_pb2.TOURNAMENT_STATUS_REGISTRATION,
    TournamentPhase.RUNNING: tournament_pb2.TOURNAMENT_STATUS_RUNNING,
    TournamentPhase.BETWEEN_ROUNDS: tournament_pb2.TOURNAMENT_STATUS_RUNNING,
    TournamentPhase.PAUSED: tournament_pb2.TOURNAMENT_STATUS_PAUSED,
    TournamentPhase.COMPLETE: tournament_pb2.TOURNAMENT_STATUS_COMPLETE,
    TournamentPhase.CANCELLED: tournament_pb2.TOURNAMENT_STATUS_CANCELLED,
}


def tournament_name(tournament_id: uuid.UUID) -> str:
    """``tournaments/{tournament}``."""
    return f"tournaments/{tournament_id}"


def _reseating(method: str) -> tournament_pb2.Reseating.ValueType:
    if method == Reseating.STANDINGS.value:
        return tournament_pb2.RESEATING_STANDINGS
    return tournament_pb2.RESEATING_RANDOM


def tournament_message(
    state: TournamentState, seated_rounds: Sequence[RoundSeated]
) -> tournament_pb2.Tournament:
    """A tournament on the wire; ``seated_rounds`` are its RoundSeated events, in order."""
    assert state.tournament_id is not None
    message = tournament_pb2.Tournament(
        name=tournament_name(state.tournament_id),
        display_name=state.name,
        seats_per_table=state.seats_per_table,
        rounds=state.rounds,
        deals_per_round=state.deals_per_round,
        registration_open_time=timestamp_from_ms(state.registration_opens_ms),
        registration_close_time=timestamp_from_ms(state.registration_closes_ms),
        max_entrants=state.max_entrants,
        reseating=_reseating(state.reseating.value),
        tie_break=(
            tournament_pb2.TIE_BREAK_DEALS_WON
            if state.tie_break.value == TieBreak.DEALS_WON.value
            else tournament_pb2.TIE_BREAK_NONE
        ),
        status=_STATUS[state.phase],
        players=[resources.player_name(p) for p in (state.entrants or state.registered)],
        seating_commitments=list(state.seating_commitments),
        seated_rounds=[round_message(state, seated) for seated in seated_rounds],
        current_round=state.current_round,
        rounds_completed=state.rounds_completed,
        create_time=timestamp_from_ms(state.created_at_ms),
        version=state.version,
        forfeited_players=[resources.player_name(player) for player in state.forfeited],
        status_reason=state.cancel_reason if state.cancelled else state.pause_reason,
    )
    if isinstance(state.rule_set, RuleSet):
        message.rule_set.CopyFrom(rule_set_message(state.rule_set))
    else:  # open face: the set's length at a full table, as TournamentCreated recorded it
        message.open_face_rule_set.CopyFrom(
            open_face_rule_set_message(state.rule_set, state.deals_per_round)
        )
    if state.started_at_ms is not None:
        message.start_time.CopyFrom(timestamp_from_ms(state.started_at_ms))
    if state.phase is TournamentPhase.PAUSED and state.paused_at_ms is not None:
        message.pause_time.CopyFrom(timestamp_from_ms(state.paused_at_ms))
    return message


def round_message(state: TournamentState, seated: RoundSeated) -> tournament_pb2.TournamentRound:
    """One seated round: its draw and its tables, with how many deals each has credited."""
    tables = []
    for text, players in zip(seated.table_ids, seated.seatings, strict=True):
        table = state.tables.get(uuid.UUID(text))
        holders = players if table is None else table.holders
        tables.append(
            tournament_pb2.TournamentTable(
                table=resources.table_name(uuid.UUID(text)),
                players=[resources.player_name(player) for player in holders],
                deals_credited=0 if table is None else len(table.credited),
                drawn_players=[resources.player_name(player) for player in players],
            )
        )
    return tournament_pb2.TournamentRound(
        round=seated.round,
        method=_reseating(seated.method),
        seating_seed=bytes.fromhex(seated.seating_seed),
        tables=tables,
    )
