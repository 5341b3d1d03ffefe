"""Open face's rules over a set (issue #18, rules 4 and 5; docs/rules.md §8.6-§8.8): a
Fantasyland seat that lets its time run out, 003's set ending after a timed-out hand, heads-up
online play while a Fantasyland hand is set, and the operator's voiding and seat replacement
at an open-face table, all through the family seam as the application drives them."""

from __future__ import annotations

import dataclasses

import pytest
from open_face_deals import (
    PLAYERS,
    SPECTATOR_VIEW,
    TABLE_ID,
    DrivenTable,
    fantasyland_table,
    new_deal,
    open_face_table,
    seeded,
)

from sapsam import fairness
from sapsam.domain.commands import ReplaceSeat, StartDeal, VoidDeal
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import (
    DealScored,
    DealStarted,
    DealVoided,
    Event,
    SeatReplaced,
    SeedRevealed,
    SeriesCompleted,
)
from sapsam.domain.open_face.commands import (
    CommitFantasyland,
    PlaceForSeat,
    RevealFantasyland,
    TimeOutFantasyland,
)
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.deal_views import deal_view_for
from sapsam.domain.open_face.events import (
    CardsPlaced,
    FantasylandRevealed,
    FantasylandTimedOut,
)
from sapsam.domain.open_face.table_state import OpenFaceTablePhase, next_deal
from sapsam.domain.table import decide
from sapsam.rules.open_face.board import Board
from sapsam.rules.open_face.fantasyland_setting import biggest_row_first
from sapsam.rules.open_face.presets import open_face_preset

CLASSIC = open_face_preset("ofc_classic")


def _refused(table: DrivenTable, command: object, reason: Reason) -> DomainError:
    before = list(table.events)
    with pytest.raises(DomainError) as raised:
        table.run(command)
    assert raised.value.reason is reason, raised.value
    assert table.events == before  # a refused command writes nothing
    return raised.value


def _of(events: list[Event], kind: type[Event]) -> list[Event]:
    return [event for event in events if isinstance(event, kind)]


def _play_set(table: DrivenTable) -> None:
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        table.play_deal()


# -- a Fantasyland seat's timeout ------------------------------------------------------------


def _fantasyland_deal(preset: str) -> DrivenTable:
    """Deal 2 of a heads-up table with 30 s a move, seat 0 in Fantasyland, its first street
    dealt at t = 1 s (so the Fantasyland hand is due at 31 s)."""
    table = fantasyland_table(preset, 2, move_seconds=30)
    table.start_deal()
    play = table.state.play
    assert play is not None and play.is_fantasyland(0)
    return table


@pytest.mark.parametrize(("preset", "dead"), [("ofc_classic", True), ("ofc_russian", False)])
def test_a_fantasyland_seat_that_does_not_set_its_hand_in_time_is_set_by_its_policy(
    preset: str, dead: bool
) -> None:
    table = _fantasyland_deal(preset)
    table.play_deal(late={0})
    deal_events = table.events[table.events.index(_of(table.events, DealStarted)[-1]) :]
    [timed_out] = _of(deal_events, FantasylandTimedOut)
    assert timed_out == FantasylandTimedOut(deal_number=2, seat=0, timed_out_by="service")
    [revealed] = _of(deal_events, FantasylandRevealed)
    assert isinstance(revealed, FantasylandRevealed) and revealed.nonce == ""
    cards = table.cards[0][0]
    if dead:
        # 001: "placed left to right from the back row": the cards in the order dealt, back,
        # middle, front; the hand dead for the rest of the set.
        assert revealed.back == tuple(map(str, cards[:5]))
        assert revealed.middle == tuple(map(str, cards[5:10]))
        assert revealed.front == tuple(map(str, cards[10:13]))
    else:
        # 003: from the biggest row down, and never dead.
        arrangement, _ = biggest_row_first(cards)
        assert revealed.back == tuple(map(str, arrangement.back))
        assert not revealed.dead
    [scored] = _of(deal_events, DealScored)
    assert isinstance(scored, DealScored)
    assert scored.fouls[0] is dead
    assert table.state.dead_for_set[0] is dead
    assert table.state.next_fantasyland[0] is None or not dead  # a dead hand earns none


def test_a_fantasyland_timeout_waits_for_the_first_streets_deadline() -> None:
    table = _fantasyland_deal("ofc_classic")
    table.run_street(now_ms=1_000)
    play = table.state.play
    assert play is not None and play.fantasyland_deadline_ms == 31_000
    _refused(table, TimeOutFantasyland(0, 30_999), Reason.NOTHING_TIMED_OUT)
    _refused(table, TimeOutFantasyland(1, 31_000), Reason.WRONG_PHASE)  # a normal hand
    _refused(table, TimeOutFantasyland(5, 31_000), Reason.UNKNOWN_SEAT)
    table.run(TimeOutFantasyland(0, 31_000))
    _refused(table, TimeOutFantasyland(0, 99_000), Reason.NOTHING_TIMED_OUT)
    # The seat can no longer set its hand itself, and the service opens it only at the end.
    _refused(table, CommitFantasyland(PLAYERS[0], bytes(32)), Reason.SEAT_TIMED_OUT)
    arrangement, _ = biggest_row_first(table.cards[0][0])
    _refused(
        table,
        RevealFantasyland(PLAYERS[0], arrangement, bytes(16), table.cards[0][0]),
        Reason.SEAT_TIMED_OUT,
    )


def test_a_fantasyland_set_in_time_is_not_timed_out() -> None:
    table = _fantasyland_deal("ofc_classic")
    table.run_street(now_ms=1_000)
    table.commit(0)
    _refused(table, TimeOutFantasyland(0, 10**9), Reason.NOTHING_TIMED_OUT)


def test_the_deadline_sweeps_move_times_the_fantasyland_out_before_the_seat_on_turn() -> None:
    # The application's sweep sends PlaceForSeat(timed_out) when a deadline passes: past the
    # first street's, the unset Fantasyland hands are timed out first, then the seat on turn.
    table = _fantasyland_deal("ofc_classic")
    table.run_street(now_ms=1_000)
    play = table.state.play
    assert play is not None and play.turn == 1
    dealt = table.cards[0][1]
    _refused(table, PlaceForSeat(dealt, 30_999, timed_out=True), Reason.NOTHING_TIMED_OUT)
    [event] = table.run(PlaceForSeat(dealt, 31_000, timed_out=True))
    assert event == FantasylandTimedOut(deal_number=2, seat=0, timed_out_by="service")
    [placed] = table.run(PlaceForSeat(dealt, 31_000, timed_out=True))
    assert isinstance(placed, CardsPlaced) and placed.seat == 1 and placed.automatic == "timeout"


def test_a_timed_out_fantasyland_is_opened_with_the_seed() -> None:
    table = _fantasyland_deal("ofc_russian")
    table.play_deal(late={0})
    at = next(i for i, e in enumerate(table.events) if isinstance(e, FantasylandRevealed))
    assert isinstance(table.events[at + 1], SeedRevealed)  # decided with the seed's reveal
    assert isinstance(table.events[at + 2], DealScored)


def test_a_timed_out_fantasyland_hand_stays_face_down_until_the_end() -> None:
    table = _fantasyland_deal("ofc_russian")
    table.run_street(now_ms=1_000)
    table.run(TimeOutFantasyland(0, 31_000))
    play = table.state.play
    assert play is not None and not play.fantasyland_hidden  # the others' moves are shown
    for viewer in (0, 1, None):
        seat = deal_view_for(play, viewer).seats[0]
        assert seat.board is None and seat.timed_out


def test_when_every_seat_plays_fantasyland_the_hands_are_still_due() -> None:
    # A deal of Fantasylands only deals one street; its deadline is the hands' deadline (before,
    # no move was due on it, so a seat could hold the table forever).
    played = new_deal(CLASSIC, 2, fantasyland=(13, 13), move_seconds=30)
    played.deal_street(now_ms=5_000)
    assert played.deal.fantasyland_deadline_ms == 35_000
    [event] = played.run(TimeOutFantasyland(1, 35_000))
    assert event == FantasylandTimedOut(deal_number=1, seat=1, timed_out_by="service")


# -- 003: the set ends after a timed-out hand ------------------------------------------------


@pytest.mark.parametrize(("preset", "deals"), [("ofc_classic", 3), ("ofc_russian", 1)])
def test_under_003_the_set_ends_right_after_the_timed_out_hand(preset: str, deals: int) -> None:
    # 003: «În alte cazuri, jocul se termină imediat după mâna în care jucătorul a trecut la
    # „Timeout"»; 001 kills the hand for the set instead, and the set goes on.
    table = open_face_table(preset, 3, move_seconds=30)
    table.start_deal()
    table.play_deal(late={1})
    if deals == 1:
        assert table.state.phase is OpenFaceTablePhase.SERIES_COMPLETE
    _play_set(table)
    [completed] = _of(table.events, SeriesCompleted)
    assert isinstance(completed, SeriesCompleted) and completed.deals_played == deals
    assert len(_of(table.events, DealScored)) == deals


def test_under_003_a_fantasyland_earned_in_the_timed_out_hand_is_played_first() -> None:
    # 003: «jocul continuă până când toate „Fantezie" disponibile au fost jucate»: seat 0 earns
    # Fantasyland in the hand seat 1 timed out in; the set ends after that Fantasyland deal.
    table = fantasyland_table("ofc_russian", 2, move_seconds=30, late={1})
    assert table.state.phase is OpenFaceTablePhase.BETWEEN_DEALS
    assert table.state.timeout_ends_set
    table.start_deal()
    table.play_deal()
    if table.state.next_fantasyland[0] is None:
        assert table.state.phase is OpenFaceTablePhase.SERIES_COMPLETE
    _play_set(table)
    [completed] = _of(table.events, SeriesCompleted)
    assert isinstance(completed, SeriesCompleted)
    assert completed.deals_played == len(_of(table.events, DealScored)) >= 2


# -- heads-up online (001) -------------------------------------------------------------------


def test_heads_up_the_other_seat_plays_its_whole_hand_while_the_fantasyland_is_set() -> None:
    # 001: «в игре один-на-один выкладывание карт игрока без «фантазии» начинается одновременно
    # с раздачей карт игроку с «фантазией». Однако ходы первого совершаются в закрытом режиме,
    # пока второй не закончит расклад своих карт в закрытую.»
    played = new_deal(CLASSIC, 2, dealer=1, fantasyland=(13, None))
    while played.deal.phase is not OpenFacePhase.FANTASYLAND:
        if played.deal.phase is OpenFacePhase.DEALING:
            played.deal_street()
        else:
            played.place_turn()
            for viewer in (0, SPECTATOR_VIEW):
                assert deal_view_for(played.deal, viewer).seats[1].board is None
            assert deal_view_for(played.deal, 1).seats[1].board == played.deal.boards[1]
    assert played.deal.boards[1].complete and played.deal.fantasyland_hidden
    played.commit_fantasyland(0)
    assert deal_view_for(played.deal, 0).seats[1].board == played.deal.boards[1]
    assert deal_view_for(played.deal, 1).seats[0].board is None  # face down until opened
    played.reveal_fantasyland(0)
    assert played.deal.phase is OpenFacePhase.COMPLETE


# -- voiding a deal and replacing a seat -----------------------------------------------------


def test_a_voided_deal_is_dealt_again_by_the_same_dealer_and_does_not_count() -> None:
    table = fantasyland_table("ofc_classic", 2)
    before = table.state
    table.start_deal()
    table.run_street(now_ms=1_000)
    _refused(table, VoidDeal("", table.seed), Reason.INVALID_ARGUMENT)
    _refused(table, VoidDeal("fault", seeded("another")), Reason.SEED_MISMATCH)
    _refused(table, VoidDeal("fault", table.seed, deal_number=1), Reason.WRONG_DEAL)
    [voided] = table.run(VoidDeal("a fault", table.seed))
    assert voided == DealVoided(deal_number=2, reason="a fault", seed=table.seed.hex())
    state = table.state
    assert state.phase is OpenFaceTablePhase.BETWEEN_DEALS and state.voided
    assert state.series_totals == before.series_totals
    assert state.next_fantasyland == before.next_fantasyland  # still earned
    assert state.button_moves == before.button_moves
    _refused(table, VoidDeal("again", table.seed), Reason.WRONG_PHASE)
    table.start_deal()
    assert table.state.dealer == before.dealer and table.state.deal_number == 3
    play = table.state.play
    assert play is not None and play.is_fantasyland(0)
    table.play_deal()
    _play_set(table)
    [completed] = _of(table.events, SeriesCompleted)
    scored = len(_of(table.events, DealScored))
    assert isinstance(completed, SeriesCompleted) and completed.deals_played == scored


def test_a_deal_is_voided_only_while_in_progress() -> None:
    table = open_face_table("ofc_turbo", 2)
    _refused(table, VoidDeal("nothing runs", seeded("x")), Reason.WRONG_PHASE)
    table.start_deal()
    table.play_deal()
    _refused(table, VoidDeal("scored", table.seed), Reason.WRONG_PHASE)


def test_a_seat_is_replaced_between_deals_keeping_its_totals_and_fantasyland() -> None:
    table = fantasyland_table("ofc_classic", 2, move_seconds=30, late={1})
    assert table.state.dead_for_set[1]  # 001: seat 1's player timed out: dead for the set
    _refused(table, ReplaceSeat(2, "eve"), Reason.UNKNOWN_SEAT)
    _refused(table, ReplaceSeat(1, PLAYERS[0]), Reason.ALREADY_SEATED)
    totals = table.state.series_totals
    [replaced] = table.run(ReplaceSeat(1, "eve"))
    assert replaced == SeatReplaced(seat=1, previous_player_id=PLAYERS[1], player_id="eve")
    state = table.state
    assert state.seats == (PLAYERS[0], "eve") and state.series_totals == totals
    assert state.next_fantasyland[0] == 13
    assert not state.dead_for_set[1]  # the penalty was the previous player's
    table.start_deal()
    _refused(table, ReplaceSeat(0, "fay"), Reason.WRONG_PHASE)
    play = table.state.play
    assert play is not None and play.players == (PLAYERS[0], "eve")
    assert not play.automatic[1]


def test_no_seat_is_replaced_before_the_first_deal() -> None:
    table = open_face_table("ofc_classic", 2)
    _refused(table, ReplaceSeat(0, "eve"), Reason.WRONG_PHASE)


def test_a_voided_deal_publishes_its_seed_against_the_commitment() -> None:
    table = open_face_table("ofc_classic", 2)
    table.start_deal()
    started = _of(table.events, DealStarted)[-1]
    assert isinstance(started, DealStarted)
    table.run(VoidDeal("fault", table.seed))
    commitment = fairness.seed_commitment(TABLE_ID, 1, table.seed)
    assert bytes.fromhex(started.seed_commitment) == commitment
    # The next deal's seed is a new one under a new commitment.
    produced = decide(table.state, StartDeal(fairness.seed_commitment(TABLE_ID, 2, seeded("2"))))
    assert isinstance(produced[0], DealStarted) and produced[0].deal_number == 2


# -- several Fantasylands at once, and the limit in a row -------------------------------------


def test_several_fantasylands_are_set_at_the_same_time_while_the_other_seat_places() -> None:
    # 001: «Фантазии раскладываются в одно время» — "fantasies are laid out at the same time".
    played = new_deal(CLASSIC, 3, dealer=0, fantasyland=(None, 13, 13))
    played.deal_street()
    assert played.deal.turn == 0  # the one normal seat places at once
    played.place_turn()
    assert deal_view_for(played.deal, 1).seats[0].board is None  # hidden while they are set
    played.commit_fantasyland(2)  # in any order
    assert played.deal.fantasyland_hidden
    played.commit_fantasyland(1)
    assert not played.deal.fantasyland_hidden
    assert deal_view_for(played.deal, 1).seats[0].board == played.deal.boards[0]
    played.play_out()
    assert all(played.deal.revealed[seat] for seat in (1, 2))


@pytest.mark.parametrize(
    ("preset", "in_a_row_before", "again"),
    [
        ("ofc_classic", 0, True),  # the first Fantasyland re-enters on front trips
        ("ofc_classic", 1, False),  # 001: «не более, чем два раза подряд»
        ("ofc_russian", 1, False),  # 003: «nu este permisă mai mult de o repetare»
        ("ofc_mercier_deeb", 5, True),  # unlimited
    ],
)
def test_a_fantasyland_repeats_within_the_limit_counted_in_a_row(
    preset: str, in_a_row_before: int, again: bool
) -> None:
    rules = open_face_preset(preset)
    deal = new_deal(rules, 2, fantasyland=(13, None)).deal
    # Seat 0's Fantasyland hand: front trips, a middle full house, back quads (a re-entry under
    # every preset's condition), seat 1 a plain live hand.
    boards = (
        Board.parse("Qc Qd Qh", "2c 2d 2h 3s 3c", "Ac Ad As Ah 5s"),
        Board.parse("2s 7s 9d", "6c 6d 8h 8s Tc", "Jc Jd Jh 4d 4h"),
    )
    played = dataclasses.replace(deal, boards=boards, revealed=(True, False))
    after = next_deal(played, (in_a_row_before, 0))
    assert after.in_a_row == (in_a_row_before + 1, 0)
    assert (after.fantasyland[0] is not None) is again
    assert after.button_moves is not again


def test_when_the_other_seat_finishes_first_the_last_deadline_is_the_fantasylands() -> None:
    # Heads-up (001) the normal seat may finish its hand before the Fantasyland is set: the
    # deal's last event then names the Fantasyland's deadline, for a sweep that reads it.
    played = new_deal(CLASSIC, 2, dealer=1, fantasyland=(13, None), move_seconds=30)
    played.deal_street(now_ms=1_000)
    while played.deal.phase is not OpenFacePhase.FANTASYLAND:
        if played.deal.phase is OpenFacePhase.DEALING:
            played.deal_street(now_ms=2_000)
        else:
            played.place_turn()
    last = played.events[-1]
    assert isinstance(last, CardsPlaced) and last.deadline_ms == 31_000
    [timed_out] = played.run(PlaceForSeat((), 31_000, timed_out=True))
    assert timed_out == FantasylandTimedOut(deal_number=1, seat=0, timed_out_by="service")
    assert played.deal.phase is OpenFacePhase.COMPLETE  # the seed's reveal opens the hand
