"""Pause, resume, cancel, forfeit and re-seat: given these events, when this command, then
these events or this reason (``sapsam.domain.tournament_control``)."""

from __future__ import annotations

import uuid

from test_tournament_domain import (
    CLOSES,
    SEEDS,
    credit_round,
    refused,
    registered,
    run,
    started,
    table_ids,
)

from sapsam.domain.errors import Reason
from sapsam.domain.tournament import (
    CancelTournament,
    CreditDeal,
    ForfeitPlayer,
    PauseTournament,
    RegisterPlayer,
    ReseatPlayer,
    ResumeTournament,
    SeatNextRound,
    StartTournament,
    TournamentPhase,
    decide,
)
from sapsam.domain.tournament_events import (
    DealCredited,
    PlayerForfeited,
    RoundSeated,
    SeatReassigned,
    TournamentCancelled,
    TournamentResumed,
)
from sapsam.domain.tournament_seating import seat_randomly

NEXT_ROUND = SeatNextRound(SEEDS[1], table_ids(3, 2))


def test_a_pause_holds_the_next_round_until_the_resume_seats_it() -> None:
    state = started()
    paused = run(state, PauseTournament("power cut in hall B", 5_000))
    assert paused.phase is TournamentPhase.PAUSED and paused.pause_reason == "power cut in hall B"
    assert refused(paused, PauseTournament("again", 5_001)) is Reason.TOURNAMENT_PAUSED
    # Deals finished during the pause are credited; the round completes but no round is seated.
    paused = credit_round(paused, 1, [1, 1, -1, -1])
    assert paused.rounds_completed == 1 and paused.current_round == 1
    assert paused.phase is TournamentPhase.PAUSED
    assert refused(paused, NEXT_ROUND) is Reason.TOURNAMENT_PAUSED
    # Resuming between rounds seats the next round in the same decision.
    assert refused(paused, ResumeTournament(9_000)) is Reason.INVALID_ARGUMENT
    events = decide(paused, ResumeTournament(9_000, NEXT_ROUND))
    assert events[0] == TournamentResumed(paused_at_ms=5_000, resumed_at_ms=9_000)
    assert isinstance(events[1], RoundSeated) and events[1].round == 2
    resumed = run(paused, ResumeTournament(9_000, NEXT_ROUND))
    assert resumed.phase is TournamentPhase.RUNNING and resumed.pauses == ((5_000, 9_000),)
    assert refused(resumed, ResumeTournament(9_001)) is Reason.TOURNAMENT_NOT_PAUSED


def test_a_pause_in_the_middle_of_a_round_resumes_without_seating() -> None:
    state = run(started(), PauseTournament("lunch", 5_000))
    assert decide(state, ResumeTournament(6_000)) == [
        TournamentResumed(paused_at_ms=5_000, resumed_at_ms=6_000)
    ]


def test_pause_and_forfeit_need_a_started_tournament() -> None:
    state = registered(4)
    assert refused(state, PauseTournament("why", 1)) is Reason.WRONG_PHASE
    assert refused(state, ForfeitPlayer("p00", "ill", 1)) is Reason.WRONG_PHASE
    assert refused(state, ResumeTournament(1)) is Reason.TOURNAMENT_NOT_PAUSED
    for bad in ("", "   ", "x" * 201, "tab\there"):
        assert refused(started(), PauseTournament(bad, 1)) is Reason.INVALID_ARGUMENT
        assert refused(started(), CancelTournament(bad, 1)) is Reason.INVALID_ARGUMENT


def test_cancel_keeps_the_standings_and_refuses_everything_after() -> None:
    state = started()
    first = state.round_tables(1)[0]
    state = run(state, CreditDeal(first.table_id, 1, (3, 1, -1, -3), 7))
    events = decide(state, CancelTournament("venue closed", 8_000))
    cancelled = events[0]
    assert isinstance(cancelled, TournamentCancelled)
    assert cancelled.totals[0] == 3 and cancelled.places[0] == 1
    assert len(cancelled.players) == 12
    state = run(state, CancelTournament("venue closed", 8_000))
    assert state.phase is TournamentPhase.CANCELLED
    for command in (
        CreditDeal(first.table_id, 2, (0, 0, 0, 0), 9),
        PauseTournament("x", 1),
        ResumeTournament(1),
        CancelTournament("again", 1),
        ForfeitPlayer("p00", "x", 1),
        RegisterPlayer("late", CLOSES),
    ):
        assert refused(state, command) is Reason.TOURNAMENT_CANCELLED
    # Before the start a cancellation is allowed too (nothing was played).
    before_start = decide(registered(2), CancelTournament("no one came", 1))
    assert isinstance(before_start[0], TournamentCancelled)


def test_a_forfeited_player_keeps_its_credits_and_sits_in_no_later_round() -> None:
    state = started()
    leaver = "p05"
    table = next(t for t in state.round_tables(1) if leaver in t.players)
    events = decide(state, ForfeitPlayer(leaver, "flight home", 7_000))
    assert events == [
        PlayerForfeited(player_id=leaver, round=1, reason="flight home", forfeited_at_ms=7_000)
    ]
    state = run(state, ForfeitPlayer(leaver, "flight home", 7_000))
    assert refused(state, ForfeitPlayer(leaver, "again", 7_001)) is Reason.PLAYER_FORFEITED
    assert refused(state, ForfeitPlayer("stranger", "x", 7_001)) is Reason.NOT_REGISTERED
    # Its seat this round is still its own: deal 2 of its table is credited to it.
    state = credit_round(state, 1, [1, 1, -1, -1])
    seat = table.players.index(leaver)
    assert state.totals[leaver] == [1, 1, -1, -1][seat] * 2
    # Round 2 seats the 11 others; anyone can redo the draw without the forfeited player.
    seated = decide(state, SeatNextRound(SEEDS[1], table_ids(3, 2)))[0]
    assert isinstance(seated, RoundSeated)
    pool = [player for player in state.entrants if player != leaver]
    assert seated.seatings == seat_randomly(state.tournament_id, 2, SEEDS[1], pool, 4)
    assert [len(players) for players in seated.seatings] == [4, 4, 3]
    # It stays in the standings, by its total.
    assert leaver in [line.player_id for line in state.standings()]


def test_a_forfeit_never_leaves_fewer_than_two_players_for_a_later_round() -> None:
    state = run(registered(3, seats_per_table=2), StartTournament(CLOSES, SEEDS[0], table_ids(1)))
    state = run(state, ForfeitPlayer("p00", "x", 1))
    assert refused(state, ForfeitPlayer("p01", "x", 2)) is Reason.TOO_FEW_PLAYERS


def test_a_forfeited_seat_is_reseated_and_later_deals_credit_the_newcomer() -> None:
    state = started()
    table = state.round_tables(1)[0]
    leaver, stayer = table.players[2], table.players[0]
    reseat = ReseatPlayer(table.table_id, 2, "newcomer", 2)
    assert refused(state, reseat) is Reason.PLAYER_SEATED  # not forfeited yet
    state = run(state, ForfeitPlayer(leaver, "left", 1))
    assert refused(state, ReseatPlayer(uuid.uuid4(), 2, "newcomer", 2)) is Reason.TABLE_NOT_FOUND
    assert refused(state, ReseatPlayer(table.table_id, 4, "newcomer", 2)) is Reason.UNKNOWN_SEAT
    assert refused(state, ReseatPlayer(table.table_id, 2, "newcomer", 1)) is Reason.WRONG_PHASE
    assert refused(state, ReseatPlayer(table.table_id, 2, stayer, 2)) is Reason.ALREADY_REGISTERED
    assert refused(state, ReseatPlayer(table.table_id, 2, leaver, 2)) is Reason.PLAYER_FORFEITED
    events = decide(state, reseat)
    assert events == [
        SeatReassigned(
            round=1,
            table_id=str(table.table_id),
            seat=2,
            previous_player_id=leaver,
            player_id="newcomer",
            from_deal=2,
        )
    ]
    state = run(state, CreditDeal(table.table_id, 1, (1, 1, -1, -1), 7))
    state = run(state, reseat)
    assert "newcomer" in state.entrants and state.totals["newcomer"] == 0
    credited = decide(state, CreditDeal(table.table_id, 2, (1, 1, 5, -7), 8))[0]
    assert isinstance(credited, DealCredited)
    assert credited.players[2] == "newcomer" and credited.players[0] == stayer
    state = run(state, CreditDeal(table.table_id, 2, (1, 1, 5, -7), 8))
    assert state.totals["newcomer"] == 5 and state.totals[leaver] == -1
    # The table has played its round (2 deals credited): too late to re-seat anything there.
    assert refused(state, ReseatPlayer(table.table_id, 3, "third", 3)) is Reason.WRONG_PHASE
    # The seat is not re-seated twice from under the newcomer, who has not forfeited.
    state = run(state, ForfeitPlayer(table.players[3], "x", 1))
    assert refused(state, ReseatPlayer(table.table_id, 2, "third", 3)) is Reason.WRONG_PHASE


def test_a_voided_deal_does_not_stop_the_round_from_completing() -> None:
    # A table of two deals that voided deal 2: its deals 1 and 3 are the round's two.
    state = started(4)
    table = state.round_tables(1)[0]
    state = run(state, CreditDeal(table.table_id, 1, (1, 1, -1, -1), 7))
    events = decide(state, CreditDeal(table.table_id, 3, (1, 1, -1, -1), 9))
    assert isinstance(events[0], DealCredited) and events[0].deal_number == 3
    state = run(state, CreditDeal(table.table_id, 3, (1, 1, -1, -1), 9))
    assert state.rounds_completed == 1
    assert refused(state, CreditDeal(table.table_id, 4, (0, 0, 0, 0), 11)) is (
        Reason.INVALID_ARGUMENT
    )
