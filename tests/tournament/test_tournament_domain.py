"""The tournament aggregate: given these events, when this command, then events or a reason."""

from __future__ import annotations

import uuid

import pytest

from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.tournament import (
    CreateTournament,
    CreditDeal,
    RegisterPlayer,
    SeatNextRound,
    StartTournament,
    TieBreak,
    TournamentPhase,
    TournamentState,
    UnregisterPlayer,
    decide,
    fold,
    rank_players,
)
from sapsam.domain.tournament_events import (
    TOURNAMENT_CODEC,
    DealCredited,
    RoundCompleted,
    RoundSeated,
    TournamentCompleted,
    TournamentStarted,
)
from sapsam.domain.tournament_seating import (
    draw_order,
    seat_randomly,
    seating_commitment,
    table_sizes,
)
from sapsam.rules.presets import DEFAULT_RULE_SET

TOURNAMENT = uuid.UUID("00000000-0000-4000-8000-000000000001")
SEEDS = [bytes([round_number]) * 32 for round_number in (1, 2)]
OPENS, CLOSES = 1_000, 2_000


def create(
    reseating: str = "random", tie_break: str = "none", **changes: object
) -> CreateTournament:
    values: dict[str, object] = {
        "tournament_id": TOURNAMENT,
        "name": "Spring cup",
        "rule_set": DEFAULT_RULE_SET,
        "seats_per_table": 4,
        "rounds": 2,
        "deals_per_round": 2,
        "registration_opens_ms": OPENS,
        "registration_closes_ms": CLOSES,
        "max_entrants": 16,
        "reseating": reseating,
        "tie_break": tie_break,
        "seating_commitments": tuple(
            seating_commitment(TOURNAMENT, number, seed) for number, seed in enumerate(SEEDS, 1)
        ),
        "created_by": "operator",
        "now_ms": 500,
    }
    values.update(changes)
    return CreateTournament(**values)  # type: ignore[arg-type]


def run(state: TournamentState, command: object) -> TournamentState:
    events = decide(state, command)
    for event in events:  # every event survives its codec unchanged
        assert TOURNAMENT_CODEC.decode(*TOURNAMENT_CODEC.encode(event)) == event
    return fold(events, state)


def registered(count: int, **changes: object) -> TournamentState:
    state = run(TournamentState(), create(**changes))
    for index in range(count):
        state = run(state, RegisterPlayer(f"p{index:02}", OPENS + index))
    return state


def table_ids(count: int, round_number: int = 1) -> tuple[uuid.UUID, ...]:
    return tuple(uuid.uuid5(TOURNAMENT, f"{round_number}/{index}") for index in range(count))


def started(count: int = 12, **changes: object) -> TournamentState:
    state = registered(count, **changes)
    return run(state, StartTournament(CLOSES, SEEDS[0], table_ids(-(-count // 4))))


def refused(state: TournamentState, command: object) -> Reason:
    with pytest.raises(DomainError) as caught:
        decide(state, command)
    return caught.value.reason


def test_start_seats_every_entrant_once_by_the_committed_draw() -> None:
    state = registered(12)
    events = decide(state, StartTournament(CLOSES, SEEDS[0], table_ids(3)))
    assert isinstance(events[0], TournamentStarted) and isinstance(events[1], RoundSeated)
    seated = events[1]
    assert seated.seating_seed == SEEDS[0].hex()
    assert [len(players) for players in seated.seatings] == [4, 4, 4]
    assert sorted(p for table in seated.seatings for p in table) == sorted(state.registered)
    # Anyone can redo the draw from the revealed seed and the entrants in the log.
    assert seated.seatings == seat_randomly(TOURNAMENT, 1, SEEDS[0], events[0].entrants, 4)
    assert fold(events, state).phase is TournamentPhase.RUNNING


def test_refusals_name_their_reason() -> None:
    state = registered(3)
    assert refused(state, StartTournament(CLOSES, SEEDS[0], table_ids(1))) is Reason.TOO_FEW_PLAYERS
    assert refused(state, RegisterPlayer("p00", OPENS)) is Reason.ALREADY_REGISTERED
    assert refused(state, RegisterPlayer("late", CLOSES)) is Reason.REGISTRATION_CLOSED
    assert refused(state, RegisterPlayer("early", OPENS - 1)) is Reason.REGISTRATION_NOT_OPEN
    assert refused(state, UnregisterPlayer("nobody")) is Reason.NOT_REGISTERED
    state = run(state, RegisterPlayer("p03", OPENS))
    wrong_seed = StartTournament(CLOSES, SEEDS[1], table_ids(1))
    assert refused(state, wrong_seed) is Reason.SEED_MISMATCH
    running = run(state, StartTournament(CLOSES, SEEDS[0], table_ids(1)))
    assert (
        refused(running, StartTournament(CLOSES, SEEDS[0], table_ids(1))) is Reason.ALREADY_STARTED
    )
    assert refused(running, RegisterPlayer("late", OPENS)) is Reason.REGISTRATION_CLOSED
    assert refused(running, UnregisterPlayer("p00")) is Reason.PLAYER_SEATED
    assert refused(running, SeatNextRound(SEEDS[1], table_ids(1, 2))) is Reason.ROUND_NOT_COMPLETE
    assert refused(TournamentState(), RegisterPlayer("x", OPENS)) is Reason.TOURNAMENT_NOT_FOUND
    assert refused(running, create()) is Reason.TOURNAMENT_EXISTS


def test_create_validates_each_setting() -> None:
    empty = TournamentState()
    assert refused(empty, create(seats_per_table=5)) is Reason.BAD_SEAT_COUNT
    assert refused(empty, create(rounds=0)) is Reason.INVALID_ARGUMENT
    assert refused(empty, create(registration_closes_ms=OPENS)) is Reason.INVALID_ARGUMENT
    assert refused(empty, create(reseating="alphabetical")) is Reason.INVALID_ARGUMENT
    assert refused(empty, create(tie_break="player_id")) is Reason.INVALID_ARGUMENT
    assert refused(empty, create(name=" ")) is Reason.INVALID_ARGUMENT
    assert refused(empty, create(seating_commitments=(b"x" * 32,))) is Reason.BAD_COMMITMENT
    full = registered(4, max_entrants=4)
    assert refused(full, RegisterPlayer("fifth", OPENS)) is Reason.TOURNAMENT_FULL
    unregistered = run(full, UnregisterPlayer("p01"))
    assert "p01" not in unregistered.registered


def credit_round(state: TournamentState, round_number: int, deltas: list[int]) -> TournamentState:
    for table in state.round_tables(round_number):
        for deal in range(1, state.deals_per_round + 1):
            state = run(state, CreditDeal(table.table_id, deal, tuple(deltas), 100 + deal))
    return state


def test_rounds_complete_reseat_by_standings_and_finish_with_shared_places() -> None:
    state = started(reseating="standings")
    assert refused(state, CreditDeal(uuid.uuid4(), 1, (0, 0, 0, 0), 1)) is (
        Reason.NOT_A_TOURNAMENT_TABLE
    )
    first = state.round_tables(1)[0]
    once = run(state, CreditDeal(first.table_id, 1, (3, -1, -1, -1), 7))
    assert refused(once, CreditDeal(first.table_id, 1, (3, -1, -1, -1), 7)) is (
        Reason.ALREADY_CREDITED
    )
    state = credit_round(state, 1, [3, 1, -1, -3])
    assert state.phase is TournamentPhase.BETWEEN_ROUNDS
    events = decide(state, SeatNextRound(SEEDS[1], table_ids(3, 2)))
    seated = events[0]
    assert isinstance(seated, RoundSeated) and seated.method == "standings"
    # Strongest together: the three leaders (6 each) fill table 0 with one of the 2s.
    leaders = {player for player, total in state.totals.items() if total == 6}
    assert leaders < set(seated.seatings[0])
    state = fold(events, state)
    last_table = state.round_tables(2)[-1]
    for table in state.round_tables(2):
        for deal in (1, 2):
            command = CreditDeal(table.table_id, deal, (1, 1, -1, -1), 200 + deal)
            produced = decide(state, command)
            state = fold(produced, state)
    assert isinstance(produced[-2], RoundCompleted)
    assert isinstance(produced[-1], TournamentCompleted) and table == last_table
    assert state.phase is TournamentPhase.COMPLETE
    final = state.standings()
    assert sum(standing.total for standing in final) == 0
    places = [standing.place for standing in final]
    totals = [standing.total for standing in final]
    for index in range(1, len(final)):
        if totals[index] == totals[index - 1]:
            assert places[index] == places[index - 1]
        else:
            assert places[index] == index + 1
    assert refused(state, SeatNextRound(SEEDS[1], table_ids(3, 3))) is Reason.TOURNAMENT_COMPLETE


def test_tie_break_only_when_configured() -> None:
    totals = {"a": 4, "b": 4, "c": 1}
    won = {"a": 1, "b": 2, "c": 1}
    plain = rank_players(["a", "b", "c"], totals, won, {})
    assert [(s.player_id, s.place) for s in plain] == [("a", 1), ("b", 1), ("c", 3)]
    broken = rank_players(["a", "b", "c"], totals, won, {}, TieBreak.DEALS_WON)
    assert [(s.player_id, s.place) for s in broken] == [("b", 1), ("a", 2), ("c", 3)]


def test_table_sizes_and_draw() -> None:
    assert table_sizes(12, 4) == (4, 4, 4)
    assert table_sizes(10, 4) == (4, 3, 3)
    assert table_sizes(5, 4) == (3, 2)
    assert table_sizes(3, 2) == (3,)
    assert table_sizes(7, 3) == (3, 2, 2)
    players = [f"p{index}" for index in range(9)]
    order = draw_order(TOURNAMENT, 1, SEEDS[0], players)
    assert sorted(order) == players
    assert order == draw_order(TOURNAMENT, 1, SEEDS[0], list(reversed(players)))
    assert order != draw_order(TOURNAMENT, 2, SEEDS[0], players)


def test_credited_deal_keeps_its_players_and_source() -> None:
    state = started(8)
    table = state.round_tables(1)[0]
    events = decide(state, CreditDeal(table.table_id, 2, (2, 0, -1, -1), 42))
    credited = events[0]
    assert isinstance(credited, DealCredited)
    assert credited.players == table.players and credited.source_position == 42
