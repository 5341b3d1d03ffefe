"""The tournament aggregate: ``decide(state, command) -> events``, ``evolve(state, event)``.

A tournament's life: created (settings, one seating commitment per round) → registration →
started (round 1 seated by the draw) → each table's finished deals credited → round completed →
the next round seated (randomly or by standings) → … → completed with final standings.

Like the table, only ``decide`` validates; ``evolve`` trusts the log and never raises. Values only
the service knows (the time, the secret seating seed, the ids of the tables it will create, a
table's deal result read from the log) come in the commands.

Standings: totals are the sum of the credited deal deltas; equal totals share a place (1, 1, 3).
A tie-break applies only if the operator configured one at creation (``deals_won``: more deals
with a positive result ranks higher; players equal on both still share the place).

The operator may pause, resume and cancel a started tournament, and an entrant may forfeit (its
seat then re-seated by the operator): ``tournament_control`` holds those rules.

This module is the aggregate's public entry; the parts live beside it:

- ``tournament_state``: the state records, the phase, the settings' limits, ``rank_players``;
- ``tournament_commands``: the commands;
- ``tournament_decide``: ``decide``, one function per command;
- ``tournament_control``: pausing, cancelling, forfeiting and re-seating;
- ``tournament_evolve``: ``evolve`` and ``fold``, one function per event;
- ``tournament_events`` and ``tournament_seating``: the events and the seating draws.
"""

from __future__ import annotations

from sapsam.domain.tournament_commands import (
    CancelTournament,
    CreateTournament,
    CreditDeal,
    ForfeitPlayer,
    PauseTournament,
    RegisterPlayer,
    ReseatPlayer,
    ResumeTournament,
    SeatNextRound,
    StartTournament,
    UnregisterPlayer,
)
from sapsam.domain.tournament_decide import (
    decide,
    planned_table_count,
)
from sapsam.domain.tournament_evolve import (
    evolve,
    fold,
)
from sapsam.domain.tournament_state import (
    COMMITMENT_BYTES,
    INITIAL_STATE,
    MAX_DEALS_PER_ROUND,
    MAX_ENTRANTS,
    MAX_NAME_LENGTH,
    MAX_REASON_LENGTH,
    MAX_ROUNDS,
    PlayerStanding,
    Reseating,
    TieBreak,
    TournamentPhase,
    TournamentState,
    TournamentTable,
    rank_players,
)

__all__ = [
    "COMMITMENT_BYTES",
    "INITIAL_STATE",
    "MAX_DEALS_PER_ROUND",
    "MAX_ENTRANTS",
    "MAX_NAME_LENGTH",
    "MAX_REASON_LENGTH",
    "MAX_ROUNDS",
    "CancelTournament",
    "CreateTournament",
    "CreditDeal",
    "ForfeitPlayer",
    "PauseTournament",
    "PlayerStanding",
    "RegisterPlayer",
    "ReseatPlayer",
    "Reseating",
    "ResumeTournament",
    "SeatNextRound",
    "StartTournament",
    "TieBreak",
    "TournamentPhase",
    "TournamentState",
    "TournamentTable",
    "UnregisterPlayer",
    "decide",
    "evolve",
    "fold",
    "planned_table_count",
    "rank_players",
]
