"""The tournament aggregate's commands: what the service asks ``decide`` to do.

Values only the service knows (the time, the secret seating seed, the ids of the tables it will
create, a table's deal result read from the log) come in the commands.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.ruleset import RuleSet

# -- commands ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateTournament:
    """Create a tournament; ``seating_commitments`` holds one commitment per round.

    ``rule_set`` is either family's (``sapsam.domain.families``): a closed ``RuleSet`` (a round
    is ``deals_per_round`` deals a table) or ``OpenFaceRules`` (a round is one set a table, as
    many deals as seats, so ``deals_per_round`` must equal ``seats_per_table``)."""

    tournament_id: uuid.UUID
    name: str
    rule_set: RuleSet | OpenFaceRules
    seats_per_table: int
    rounds: int
    deals_per_round: int
    registration_opens_ms: int
    registration_closes_ms: int
    max_entrants: int
    reseating: str
    tie_break: str
    seating_commitments: tuple[bytes, ...]
    created_by: str
    now_ms: int


@dataclass(frozen=True)
class RegisterPlayer:
    """Enter a player (inside the registration window, before the start)."""

    player_id: str
    now_ms: int


@dataclass(frozen=True)
class UnregisterPlayer:
    """Withdraw a player before the start."""

    player_id: str


@dataclass(frozen=True)
class StartTournament:
    """Close registration and seat round 1 with its (secret until now) seating seed."""

    now_ms: int
    seating_seed: bytes
    table_ids: tuple[uuid.UUID, ...]


@dataclass(frozen=True)
class CreditDeal:
    """Count a finished deal of a tournament table (issued by the results process)."""

    table_id: uuid.UUID
    deal_number: int
    seat_deltas: tuple[int, ...]
    source_position: int
    set_over: bool = False
    """Whether this deal ended its table's set (open face: the table's ``SeriesCompleted``
    came with it), which completes the table's round; the closed game counts deals instead."""


@dataclass(frozen=True)
class SeatNextRound:
    """Seat the next round once the current one is complete."""

    seating_seed: bytes
    table_ids: tuple[uuid.UUID, ...]


@dataclass(frozen=True)
class PauseTournament:
    """Stop the clocks and the rounds of a started tournament (the operator's)."""

    reason: str
    now_ms: int


@dataclass(frozen=True)
class ResumeTournament:
    """End the pause; ``next_round`` seats the round that completed meanwhile, if any (the
    service supplies it whenever the tournament is between rounds)."""

    now_ms: int
    next_round: SeatNextRound | None = None


@dataclass(frozen=True)
class CancelTournament:
    """End the tournament before its last round, its standings as they stand."""

    reason: str
    now_ms: int


@dataclass(frozen=True)
class ForfeitPlayer:
    """An entrant leaves the started tournament (the player itself or the operator)."""

    player_id: str
    reason: str
    now_ms: int


@dataclass(frozen=True)
class ReseatPlayer:
    """Give a forfeited player's seat at a current-round table to ``player_id`` from deal
    ``from_deal`` on (the table's next deal, read by the service)."""

    table_id: uuid.UUID
    seat: int
    player_id: str
    from_deal: int
