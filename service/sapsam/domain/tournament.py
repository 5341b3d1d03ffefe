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
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import Event
from sapsam.domain.tournament_events import (
    DealCredited,
    PlayerRegistered,
    PlayerUnregistered,
    RoundCompleted,
    RoundSeated,
    TournamentCompleted,
    TournamentCreated,
    TournamentStarted,
)
from sapsam.domain.tournament_seating import (
    seat_by_standings,
    seat_randomly,
    seating_commitment,
    table_sizes,
)
from sapsam.fairness.encoding import SEED_BYTES
from sapsam.rules.ruleset import DEFAULT_RULE_SET, RuleSet, RuleSetError

COMMITMENT_BYTES: Final = 32
MAX_NAME_LENGTH: Final = 100
MAX_ROUNDS: Final = 50
MAX_DEALS_PER_ROUND: Final = 100
MAX_ENTRANTS: Final = 1000


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
    COMPLETE = "COMPLETE"


# -- commands ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateTournament:
    """Create a tournament; ``seating_commitments`` holds one commitment per round."""

    tournament_id: uuid.UUID
    name: str
    rule_set: RuleSet
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


@dataclass(frozen=True)
class SeatNextRound:
    """Seat the next round once the current one is complete."""

    seating_seed: bytes
    table_ids: tuple[uuid.UUID, ...]


# -- state -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TournamentTable:
    """One table of one round: its players by seat and how many of its deals are credited."""

    round: int
    index: int
    table_id: uuid.UUID
    players: tuple[str, ...]
    credited: frozenset[int] = frozenset()


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
    rule_set: RuleSet = DEFAULT_RULE_SET
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

    @property
    def phase(self) -> TournamentPhase:
        """The phase, derived from the facts."""
        if self.tournament_id is None:
            return TournamentPhase.NOT_CREATED
        if self.complete:
            return TournamentPhase.COMPLETE
        if self.started_at_ms is None:
            return TournamentPhase.REGISTRATION
        if self.rounds_completed >= self.current_round:
            return TournamentPhase.BETWEEN_ROUNDS
        return TournamentPhase.RUNNING

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


# -- decide ------------------------------------------------------------------------------------


def decide(state: TournamentState, command: Any) -> list[Event]:
    """The events a command produces, or a ``DomainError`` refusing it (then nothing happens)."""
    handler = _DECIDERS.get(type(command))
    if handler is None:
        raise DomainError(Reason.INVALID_ARGUMENT, f"unknown command {type(command).__name__}")
    if not isinstance(command, CreateTournament) and state.tournament_id is None:
        raise DomainError(Reason.TOURNAMENT_NOT_FOUND, "the tournament does not exist")
    return handler(state, command)


def _invalid(message: str, field_name: str, reason: Reason = Reason.INVALID_ARGUMENT) -> None:
    raise DomainError(reason, message, field=field_name)


def _check_range(value: int, low: int, high: int, field_name: str, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        _invalid(f"{what} must be {low} to {high}, not {value!r}", field_name)


def _decide_create(state: TournamentState, command: CreateTournament) -> list[Event]:
    if state.tournament_id is not None:
        raise DomainError(Reason.TOURNAMENT_EXISTS, "the tournament already exists")
    name = command.name
    if not name.strip() or len(name) > MAX_NAME_LENGTH or not name.isprintable():
        _invalid(f"name must be 1 to {MAX_NAME_LENGTH} printable characters", "name")
    rule_set = command.rule_set
    seats = command.seats_per_table
    if isinstance(seats, bool) or not rule_set.min_seats <= seats <= rule_set.max_seats:
        _invalid(
            f"seats per table must be {rule_set.min_seats} to {rule_set.max_seats} under rule set "
            f"{rule_set.name!r}, not {seats}",
            "seats_per_table",
            Reason.BAD_SEAT_COUNT,
        )
    _check_range(command.rounds, 1, MAX_ROUNDS, "rounds", "rounds")
    _check_range(
        command.deals_per_round, 1, MAX_DEALS_PER_ROUND, "deals_per_round", "deals per round"
    )
    _check_range(command.max_entrants, seats, MAX_ENTRANTS, "max_entrants", "max entrants")
    if command.registration_closes_ms <= command.registration_opens_ms:
        _invalid("registration must close after it opens", "registration_closes_ms")
    if command.reseating not in set(Reseating):
        allowed = ", ".join(item.value for item in Reseating)
        _invalid(f"reseating must be one of {allowed}", "reseating")
    if command.tie_break not in set(TieBreak):
        allowed = ", ".join(item.value for item in TieBreak)
        _invalid(f"tie_break must be one of {allowed}", "tie_break")
    commitments = command.seating_commitments
    if len(commitments) != command.rounds or any(
        len(item) != COMMITMENT_BYTES for item in commitments
    ):
        raise DomainError(
            Reason.BAD_COMMITMENT, "one 32-byte seating commitment per round is needed"
        )
    return [
        TournamentCreated(
            tournament_id=str(command.tournament_id),
            name=name,
            rule_set=rule_set.with_changes(series_length=command.deals_per_round).to_dict(),
            seats_per_table=seats,
            rounds=command.rounds,
            deals_per_round=command.deals_per_round,
            registration_opens_ms=command.registration_opens_ms,
            registration_closes_ms=command.registration_closes_ms,
            max_entrants=command.max_entrants,
            reseating=command.reseating,
            tie_break=command.tie_break,
            seating_commitments=tuple(item.hex() for item in commitments),
            created_by=command.created_by,
            created_at_ms=command.now_ms,
        )
    ]


def _require_registration_open(state: TournamentState, now_ms: int) -> None:
    if state.phase is not TournamentPhase.REGISTRATION:
        raise DomainError(
            Reason.REGISTRATION_CLOSED, "the tournament has started: registration is closed"
        )
    if now_ms < state.registration_opens_ms:
        raise DomainError(Reason.REGISTRATION_NOT_OPEN, "registration has not opened yet")
    if now_ms >= state.registration_closes_ms:
        raise DomainError(Reason.REGISTRATION_CLOSED, "registration has closed")


def _decide_register(state: TournamentState, command: RegisterPlayer) -> list[Event]:
    if command.player_id in state.registered or command.player_id in state.entrants:
        raise DomainError(Reason.ALREADY_REGISTERED, "you are already registered")
    _require_registration_open(state, command.now_ms)
    if len(state.registered) >= state.max_entrants:
        raise DomainError(
            Reason.TOURNAMENT_FULL, f"the tournament is full ({state.max_entrants} entrants)"
        )
    return [PlayerRegistered(player_id=command.player_id, registered_at_ms=command.now_ms)]


def _decide_unregister(state: TournamentState, command: UnregisterPlayer) -> list[Event]:
    if command.player_id in state.entrants:
        raise DomainError(
            Reason.PLAYER_SEATED,
            "the tournament has started and you are seated: you cannot unregister now",
        )
    if command.player_id not in state.registered:
        raise DomainError(Reason.NOT_REGISTERED, "you are not registered in this tournament")
    return [PlayerUnregistered(player_id=command.player_id)]


def _check_seed(state: TournamentState, round_number: int, seed: bytes) -> None:
    assert state.tournament_id is not None
    if len(seed) != SEED_BYTES:
        raise DomainError(Reason.BAD_SEED, f"a seating seed is {SEED_BYTES} bytes")
    commitment = state.seating_commitments[round_number - 1]
    if seating_commitment(state.tournament_id, round_number, seed) != commitment:
        raise DomainError(
            Reason.SEED_MISMATCH,
            f"the seating seed does not match round {round_number}'s commitment",
        )


def _round_seated(
    state: TournamentState,
    round_number: int,
    seed: bytes,
    entrants: Sequence[str],
    table_ids: Sequence[uuid.UUID],
) -> RoundSeated:
    assert state.tournament_id is not None
    method = Reseating.RANDOM if round_number == 1 else state.reseating
    if method is Reseating.RANDOM:
        seatings = seat_randomly(
            state.tournament_id, round_number, seed, entrants, state.seats_per_table
        )
    else:
        totals = {player: state.totals.get(player, 0) for player in entrants}
        seatings = seat_by_standings(
            state.tournament_id, round_number, seed, totals, state.seats_per_table
        )
    if len(table_ids) != len(seatings) or len(set(table_ids)) != len(table_ids):
        raise DomainError(
            Reason.INVALID_ARGUMENT,
            f"round {round_number} needs {len(seatings)} distinct table ids, not {len(table_ids)}",
        )
    return RoundSeated(
        round=round_number,
        method=method.value,
        seating_seed=seed.hex(),
        table_ids=tuple(str(table_id) for table_id in table_ids),
        seatings=seatings,
    )


def planned_table_count(state: TournamentState, entrant_count: int | None = None) -> int:
    """How many tables the next seating needs (the service creates that many)."""
    count = len(state.entrants or state.registered) if entrant_count is None else entrant_count
    return len(table_sizes(max(count, 2), state.seats_per_table))


def _decide_start(state: TournamentState, command: StartTournament) -> list[Event]:
    if state.phase is not TournamentPhase.REGISTRATION:
        raise DomainError(Reason.ALREADY_STARTED, "the tournament has already started")
    if len(state.registered) < state.min_entrants:
        raise DomainError(
            Reason.TOO_FEW_PLAYERS,
            f"{len(state.registered)} registered; a start needs at least {state.min_entrants}",
        )
    _check_seed(state, 1, command.seating_seed)
    entrants = tuple(sorted(state.registered, key=lambda player: player.encode()))
    return [
        TournamentStarted(entrants=entrants, started_at_ms=command.now_ms),
        _round_seated(state, 1, command.seating_seed, entrants, command.table_ids),
    ]


def _decide_credit(state: TournamentState, command: CreditDeal) -> list[Event]:
    table = state.tables.get(command.table_id)
    if table is None:
        raise DomainError(
            Reason.NOT_A_TOURNAMENT_TABLE, f"table {command.table_id} is not in this tournament"
        )
    if command.deal_number in table.credited:
        raise DomainError(
            Reason.ALREADY_CREDITED, f"deal {command.deal_number} of this table is credited"
        )
    if not 1 <= command.deal_number <= state.deals_per_round:
        raise DomainError(
            Reason.INVALID_ARGUMENT,
            f"a round plays deals 1 to {state.deals_per_round}, not {command.deal_number}",
        )
    if len(command.seat_deltas) != len(table.players):
        raise DomainError(Reason.INVALID_ARGUMENT, "one delta per seat of the table is needed")
    credited = DealCredited(
        round=table.round,
        table_id=str(command.table_id),
        deal_number=command.deal_number,
        players=table.players,
        deltas=command.seat_deltas,
        source_position=command.source_position,
    )
    events: list[Event] = [credited]
    after = evolve(state, credited)
    round_tables = after.round_tables(table.round)
    if all(len(item.credited) >= state.deals_per_round for item in round_tables):
        events.append(RoundCompleted(round=table.round))
        if table.round >= state.rounds:
            final = after.standings()
            events.append(
                TournamentCompleted(
                    players=tuple(item.player_id for item in final),
                    totals=tuple(item.total for item in final),
                    places=tuple(item.place for item in final),
                )
            )
    return events


def _decide_next_round(state: TournamentState, command: SeatNextRound) -> list[Event]:
    phase = state.phase
    if phase is TournamentPhase.COMPLETE:
        raise DomainError(Reason.TOURNAMENT_COMPLETE, "the tournament is complete")
    if phase is not TournamentPhase.BETWEEN_ROUNDS:
        raise DomainError(Reason.ROUND_NOT_COMPLETE, "the current round is not complete")
    next_round = state.current_round + 1
    _check_seed(state, next_round, command.seating_seed)
    return [
        _round_seated(state, next_round, command.seating_seed, state.entrants, command.table_ids)
    ]


_DECIDERS: dict[type[Any], Callable[[TournamentState, Any], list[Event]]] = {
    CreateTournament: _decide_create,
    RegisterPlayer: _decide_register,
    UnregisterPlayer: _decide_unregister,
    StartTournament: _decide_start,
    CreditDeal: _decide_credit,
    SeatNextRound: _decide_next_round,
}


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
    try:
        rule_set = RuleSet.from_dict(event.rule_set)
    except RuleSetError:  # pragma: no cover - decide only records valid rule sets
        rule_set = DEFAULT_RULE_SET
    return _next(
        state,
        tournament_id=uuid.UUID(event.tournament_id),
        name=event.name,
        rule_set=rule_set,
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


def _on_round_completed(state: TournamentState, event: RoundCompleted) -> TournamentState:
    return _next(state, rounds_completed=event.round)


def _on_completed(state: TournamentState, event: TournamentCompleted) -> TournamentState:
    return _next(state, complete=True)


_EVOLVERS: dict[type[Event], Callable[[TournamentState, Any], TournamentState]] = {
    TournamentCreated: _on_created,
    PlayerRegistered: _on_registered,
    PlayerUnregistered: _on_unregistered,
    TournamentStarted: _on_started,
    RoundSeated: _on_round_seated,
    DealCredited: _on_credited,
    RoundCompleted: _on_round_completed,
    TournamentCompleted: _on_completed,
}
