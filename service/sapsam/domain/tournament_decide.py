"""The tournament aggregate's ``decide``: one function per command; it refuses a command with a
``DomainError`` and then produces no events."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import Event
from sapsam.domain.families import family_of_rules
from sapsam.domain.family import FRAME_KEYS
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
from sapsam.domain.tournament_control import (
    decide_cancel,
    decide_forfeit,
    decide_pause,
    decide_reseat,
)
from sapsam.domain.tournament_events import (
    DealCredited,
    PlayerRegistered,
    PlayerUnregistered,
    RoundCompleted,
    RoundSeated,
    TableSetCompleted,
    TournamentCompleted,
    TournamentCreated,
    TournamentResumed,
    TournamentStarted,
)
from sapsam.domain.tournament_evolve import evolve
from sapsam.domain.tournament_seating import (
    seat_by_standings,
    seat_randomly,
    seating_commitment,
    table_sizes,
)
from sapsam.domain.tournament_state import (
    COMMITMENT_BYTES,
    MAX_DEALS_PER_ROUND,
    MAX_ENTRANTS,
    MAX_NAME_LENGTH,
    MAX_ROUNDS,
    Reseating,
    TieBreak,
    TournamentPhase,
    TournamentState,
)
from sapsam.fairness.encoding import SEED_BYTES
from sapsam.rules.ruleset import RuleSet

SERIES_LENGTH = FRAME_KEYS[1]
"""The key of a recorded rule set holding the deals a table's series (a set) counts."""

# -- decide ------------------------------------------------------------------------------------


def decide(state: TournamentState, command: Any) -> list[Event]:
    """The events a command produces, or a ``DomainError`` refusing it (then nothing happens)."""
    handler = _DECIDERS.get(type(command))
    if handler is None:
        raise DomainError(Reason.INVALID_ARGUMENT, f"unknown command {type(command).__name__}")
    if not isinstance(command, CreateTournament) and state.tournament_id is None:
        raise DomainError(Reason.TOURNAMENT_NOT_FOUND, "the tournament does not exist")
    if state.phase is TournamentPhase.CANCELLED and not isinstance(command, CreateTournament):
        raise DomainError(Reason.TOURNAMENT_CANCELLED, "the tournament is cancelled")
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
    # Through the family interface: a closed rule set records its series length itself (a round
    # is deals_per_round deals a table); open face records one set at a table of that many seats
    # (as many deals as seats, Fantasyland deals added: docs/tournaments.md).
    if isinstance(rule_set, RuleSet):
        rule_set = rule_set.with_changes(series_length=command.deals_per_round)
    recorded = family_of_rules(rule_set).record_rules(rule_set, seats)
    if recorded.get(SERIES_LENGTH) != command.deals_per_round:
        _invalid(
            f"a round of {rule_set.name!r} is one set a table: {recorded.get(SERIES_LENGTH)}"
            f" deals at {seats} seats (Fantasyland deals added), so deals_per_round must be"
            f" {recorded.get(SERIES_LENGTH)}, not {command.deals_per_round}",
            "deals_per_round",
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
            rule_set=recorded,
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
    pool = state.seating_pool if state.started_at_ms is not None else state.registered
    count = len(pool) if entrant_count is None else entrant_count
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
    # A table's deal numbers count its voided deals too (a voided deal does not count towards
    # the series, so the round's last scored deal may be numbered past deals_per_round): what
    # is bounded is how many deals are credited.
    if state.plays_sets:
        if command.deal_number < 1 or table.set_completed:
            raise DomainError(
                Reason.INVALID_ARGUMENT,
                f"the table's set is over; deal {command.deal_number} is one too many",
            )
    elif command.deal_number < 1 or len(table.credited) >= state.deals_per_round:
        raise DomainError(
            Reason.INVALID_ARGUMENT,
            f"a round credits {state.deals_per_round} deals a table; deal {command.deal_number}"
            " is one too many",
        )
    elif command.set_over:
        raise DomainError(Reason.INVALID_ARGUMENT, "a closed tournament's tables play no sets")
    if len(command.seat_deltas) != len(table.players):
        raise DomainError(Reason.INVALID_ARGUMENT, "one delta per seat of the table is needed")
    credited = DealCredited(
        round=table.round,
        table_id=str(command.table_id),
        deal_number=command.deal_number,
        players=table.players_in_deal(command.deal_number),
        deltas=command.seat_deltas,
        source_position=command.source_position,
    )
    events: list[Event] = [credited]
    after = evolve(state, credited)
    if command.set_over and state.plays_sets:
        finished = TableSetCompleted(
            round=table.round,
            table_id=str(command.table_id),
            last_deal=command.deal_number,
            deals_credited=len(table.credited) + 1,
        )
        events.append(finished)
        after = evolve(after, finished)
    round_tables = after.round_tables(table.round)
    if all(after.table_done(item) for item in round_tables):
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
    if phase is TournamentPhase.PAUSED:
        raise DomainError(Reason.TOURNAMENT_PAUSED, "the tournament is paused: no round starts")
    if phase is not TournamentPhase.BETWEEN_ROUNDS:
        raise DomainError(Reason.ROUND_NOT_COMPLETE, "the current round is not complete")
    next_round = state.current_round + 1
    _check_seed(state, next_round, command.seating_seed)
    return [
        _round_seated(
            state, next_round, command.seating_seed, state.seating_pool, command.table_ids
        )
    ]


def _decide_resume(state: TournamentState, command: ResumeTournament) -> list[Event]:
    if state.phase is TournamentPhase.COMPLETE:
        raise DomainError(Reason.TOURNAMENT_COMPLETE, "the tournament is complete")
    if state.phase is not TournamentPhase.PAUSED or state.paused_at_ms is None:
        raise DomainError(Reason.TOURNAMENT_NOT_PAUSED, "the tournament is not paused")
    resumed = TournamentResumed(paused_at_ms=state.paused_at_ms, resumed_at_ms=command.now_ms)
    events: list[Event] = [resumed]
    after = evolve(state, resumed)
    if after.phase is TournamentPhase.BETWEEN_ROUNDS:
        # The round that completed during the pause: its successor is seated now.
        if command.next_round is None:
            raise DomainError(
                Reason.INVALID_ARGUMENT, "resuming between rounds needs the next round's seating"
            )
        events += _decide_next_round(after, command.next_round)
    return events


_DECIDERS: dict[type[Any], Callable[[TournamentState, Any], list[Event]]] = {
    CreateTournament: _decide_create,
    RegisterPlayer: _decide_register,
    UnregisterPlayer: _decide_unregister,
    StartTournament: _decide_start,
    CreditDeal: _decide_credit,
    SeatNextRound: _decide_next_round,
    PauseTournament: decide_pause,
    ResumeTournament: _decide_resume,
    CancelTournament: decide_cancel,
    ForfeitPlayer: decide_forfeit,
    ReseatPlayer: decide_reseat,
}
