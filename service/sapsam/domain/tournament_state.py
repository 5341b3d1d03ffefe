"""The tournament aggregate's state: its settings, phase, tables and standings.

``sapsam.domain.tournament`` is the aggregate's entry; this module holds the records it folds
into, the settings' limits and enums, and ``rank_players``, which orders standings.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from sapsam.domain.families import family_of_rules
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.ruleset import RuleSet

COMMITMENT_BYTES: Final = 32
MAX_NAME_LENGTH: Final = 100
MAX_ROUNDS: Final = 50
MAX_DEALS_PER_ROUND: Final = 100
MAX_ENTRANTS: Final = 1000
MAX_REASON_LENGTH: Final = 200
"""A pause's, a cancellation's or a forfeit's reason: 1 to this many printable characters."""


class Reseating(StrEnum):
    """How players are seated from round 2 on."""

    RANDOM = "random"
    """A fresh seeded draw each round."""
    STANDINGS = "standings"
    """Strongest together: by total, equal totals in the round's drawn order."""


class TieBreak(StrEnum):
    """What separates equal totals in the standings."""

    NONE = "none"
    """Nothing: equal totals share a place."""
    DEALS_WON = "deals_won"
    """More deals with a positive result first; equal on both still share a place."""


class TournamentPhase(StrEnum):
    """Where a tournament stands."""

    NOT_CREATED = "NOT_CREATED"
    REGISTRATION = "REGISTRATION"
    RUNNING = "RUNNING"
    BETWEEN_ROUNDS = "BETWEEN_ROUNDS"
    PAUSED = "PAUSED"
    COMPLETE = "COMPLETE"
    CANCELLED = "CANCELLED"


# -- state -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TournamentTable:
    """One table of one round: its players by seat and how many of its deals are credited."""

    round: int
    index: int
    table_id: uuid.UUID
    players: tuple[str, ...]
    credited: frozenset[int] = frozenset()
    reassigned: tuple[tuple[int, int, str], ...] = ()
    """Re-seated seats in order: (seat, from deal, player)."""
    set_completed: bool = False
    """Open face: the table's set is over (``TableSetCompleted``)."""

    def players_in_deal(self, deal_number: int) -> tuple[str, ...]:
        """Who held each seat in deal ``deal_number``: the drawn players, re-seats applied."""
        holders = list(self.players)
        for seat, from_deal, player in self.reassigned:
            if from_deal <= deal_number:
                holders[seat] = player
        return tuple(holders)

    @property
    def holders(self) -> tuple[str, ...]:
        """Who holds each seat now (after every re-seat)."""
        return self.players_in_deal(2**31)


@dataclass(frozen=True)
class PlayerStanding:
    """A player's place: equal totals (and equal tie-break, if configured) share a place."""

    player_id: str
    total: int
    deals_won: int
    deals_played: int
    place: int


@dataclass(frozen=True)
class TournamentState:
    """A tournament as its events describe it; ``version`` counts the events folded in."""

    version: int = 0
    tournament_id: uuid.UUID | None = None
    name: str = ""
    rule_set: RuleSet | OpenFaceRules = DEFAULT_RULE_SET
    """Either family's rule set, as ``TournamentCreated`` recorded it (read back)."""
    recorded_rule_set: Mapping[str, object] = field(default_factory=dict)
    """``TournamentCreated.rule_set`` as recorded: what every table of the tournament records
    in its ``TableCreated`` (the audit compares them)."""
    seats_per_table: int = 0
    rounds: int = 0
    deals_per_round: int = 0
    registration_opens_ms: int = 0
    registration_closes_ms: int = 0
    max_entrants: int = 0
    reseating: Reseating = Reseating.RANDOM
    tie_break: TieBreak = TieBreak.NONE
    seating_commitments: tuple[bytes, ...] = ()
    created_by: str = ""
    created_at_ms: int = 0
    registered: tuple[str, ...] = ()
    entrants: tuple[str, ...] = ()
    started_at_ms: int | None = None
    current_round: int = 0
    rounds_completed: int = 0
    tables: Mapping[uuid.UUID, TournamentTable] = field(default_factory=dict)
    totals: Mapping[str, int] = field(default_factory=dict)
    deals_won: Mapping[str, int] = field(default_factory=dict)
    deals_played: Mapping[str, int] = field(default_factory=dict)
    complete: bool = False
    paused_at_ms: int | None = None
    pause_reason: str = ""
    pauses: tuple[tuple[int, int], ...] = ()
    """The pauses that ended, as (paused at, resumed at) in Unix ms."""
    cancelled: bool = False
    cancel_reason: str = ""
    forfeited: Mapping[str, int] = field(default_factory=dict)
    """Each forfeited player's round of leaving."""

    @property
    def phase(self) -> TournamentPhase:
        """The phase, derived from the facts."""
        if self.tournament_id is None:
            return TournamentPhase.NOT_CREATED
        if self.cancelled:
            return TournamentPhase.CANCELLED
        if self.complete:
            return TournamentPhase.COMPLETE
        if self.paused_at_ms is not None:
            return TournamentPhase.PAUSED
        if self.started_at_ms is None:
            return TournamentPhase.REGISTRATION
        if self.rounds_completed >= self.current_round:
            return TournamentPhase.BETWEEN_ROUNDS
        return TournamentPhase.RUNNING

    @property
    def round_complete(self) -> bool:
        """Whether every round seated so far is complete (between rounds, paused or not)."""
        return self.started_at_ms is not None and self.rounds_completed >= self.current_round

    @property
    def plays_sets(self) -> bool:
        """Whether a round is one open-face set a table (``TableSetCompleted`` ends it) rather
        than ``deals_per_round`` credited deals (the closed game)."""
        return isinstance(self.rule_set, OpenFaceRules)

    def table_rule_set(self, seat_count: int) -> dict[str, object]:
        """The rule set a table of the tournament with ``seat_count`` seats records in its
        ``TableCreated``: the closed one as ``TournamentCreated`` has it; an open-face one with
        its set's length at that table (a table one seat short plays one deal fewer)."""
        recorded: dict[str, object] = family_of_rules(self.rule_set).record_rules(
            self.rule_set, seat_count
        )
        return recorded

    def table_done(self, table: TournamentTable) -> bool:
        """Whether the table has played its round: its set is over (open face), or
        ``deals_per_round`` of its deals are credited (closed)."""
        if self.plays_sets:
            return table.set_completed
        return len(table.credited) >= self.deals_per_round

    @property
    def seating_pool(self) -> tuple[str, ...]:
        """The entrants a next round seats: every entrant (substitutes included) but those who
        forfeited."""
        return tuple(player for player in self.entrants if player not in self.forfeited)

    @property
    def min_entrants(self) -> int:
        """Fewest entrants a start accepts: one full table."""
        return self.seats_per_table

    def round_tables(self, round_number: int) -> list[TournamentTable]:
        """The tables of a round, by index."""
        found = [table for table in self.tables.values() if table.round == round_number]
        return sorted(found, key=lambda table: table.index)

    def standings(self) -> tuple[PlayerStanding, ...]:
        """Every entrant (or registered player, before the start) by place."""
        players = self.entrants or self.registered
        return rank_players(players, self.totals, self.deals_won, self.deals_played, self.tie_break)


INITIAL_STATE: Final = TournamentState()


def rank_players(
    players: Sequence[str],
    totals: Mapping[str, int],
    deals_won: Mapping[str, int],
    deals_played: Mapping[str, int],
    tie_break: TieBreak = TieBreak.NONE,
) -> tuple[PlayerStanding, ...]:
    """Players by total, highest first; equal keys share a place (1, 1, 3).

    The key is the total, plus deals won under ``TieBreak.DEALS_WON``. Players sharing a place are
    listed by id only so the list has a stable order; the order carries no meaning.
    """

    def key(player: str) -> tuple[int, ...]:
        total = totals.get(player, 0)
        if tie_break is TieBreak.DEALS_WON:
            return (total, deals_won.get(player, 0))
        return (total,)

    ordered = sorted(players, key=lambda player: (tuple(-part for part in key(player)), player))
    result: list[PlayerStanding] = []
    previous_key: tuple[int, ...] | None = None
    for position, player in enumerate(ordered):
        player_key = key(player)
        place = result[-1].place if player_key == previous_key else position + 1
        previous_key = player_key
        result.append(
            PlayerStanding(
                player_id=player,
                total=totals.get(player, 0),
                deals_won=deals_won.get(player, 0),
                deals_played=deals_played.get(player, 0),
                place=place,
            )
        )
    return tuple(result)
