"""Automatic moves and timeouts in an open-face deal (issue #18 rule 5, sources 001 and 003):
a forced move is made for the seat, never while it has a choice; a seat whose time ran out is
placed for, under 001's policy dead for the rest of the set, under 003's kept alive."""

from __future__ import annotations

import pytest
from open_face_deals import PLAYERS, DrivenTable, PlayedDeal, new_deal, open_face_table

from sapsam import fairness
from sapsam.domain.commands import RevealSeed
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import DealScored
from sapsam.domain.open_face.commands import DealStreet, PlaceCards, PlaceForSeat
from sapsam.domain.open_face.deal_decide import decide_deal
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.events import CardsPlaced, StreetDealt
from sapsam.domain.open_face.table_state import OpenFaceTable, OpenFaceTablePhase
from sapsam.fairness.open_face_deal import street_digest
from sapsam.rules.cards import Card
from sapsam.rules.open_face.board import Board, Placement, Row, legal_placements
from sapsam.rules.open_face.parameters import AutomaticMoves, OpenFaceRules
from sapsam.rules.open_face.presets import open_face_preset

CLASSIC = open_face_preset("ofc_classic")  # timeouts: dead for the set (001)
RUSSIAN = open_face_preset("ofc_russian")  # timeouts: biggest row first, alive (003)


def _front_first(board: Board, dealt: tuple[Card, ...]) -> Placement:
    """Front, then middle, then back: after eight cards only the back has room."""
    rows: list[Row] = []
    free = list(board.free_slots)
    for _card in dealt:
        row = next(row for row in (Row.FRONT, Row.MIDDLE, Row.BACK) if free[row])
        free[row] -= 1
        rows.append(row)
    return Placement.of_rows(dealt, rows)


def _for_seat(played: PlayedDeal, now_ms: int = 0, timed_out: bool = False) -> CardsPlaced:
    seat = played.deal.turn
    assert seat is not None
    dealt = played.street_cards(played.deal.streets_dealt - 1, seat)
    (event,) = played.run(PlaceForSeat(dealt, now_ms, timed_out))
    assert isinstance(event, CardsPlaced) and event.seat == seat
    return event


def _refused(played: PlayedDeal, command: object, reason: Reason) -> DomainError:
    with pytest.raises(DomainError) as raised:
        decide_deal(played.deal, command)
    assert raised.value.reason is reason, raised.value
    return raised.value


def test_no_move_is_made_for_a_seat_with_a_choice() -> None:
    played = new_deal(CLASSIC, 2)
    played.deal_street()
    seat = played.deal.turn
    assert seat is not None
    error = _refused(played, PlaceForSeat(played.street_cards(0, seat)), Reason.WRONG_PHASE)
    assert "chooses its own placement" in error.message


def test_the_only_placement_left_is_made_for_the_seat() -> None:
    played = new_deal(CLASSIC, 2)
    for _ in range(4):  # 5 + 1 + 1 + 1 cards: front and middle full
        played.deal_street()
        while played.deal.phase is OpenFacePhase.PLACING:
            played.place_turn(_front_first)
    played.deal_street()
    assert all(board.free_slots == (0, 0, 5) for board in played.deal.boards)
    event = _for_seat(played)
    assert event.automatic == "only_option" and len(event.back) == 1


def test_automatic_moves_off_leaves_every_choice_to_the_seat() -> None:
    rules = OpenFaceRules(name="no_automatic", automatic_moves=AutomaticMoves.OFF)
    played = new_deal(rules, 2)
    for _ in range(4):
        played.deal_street()
        while played.deal.phase is OpenFacePhase.PLACING:
            played.place_turn(_front_first)
    played.deal_street()
    seat = played.deal.turn
    assert seat is not None
    _refused(played, PlaceForSeat(played.street_cards(4, seat)), Reason.WRONG_PHASE)


def test_a_timeout_waits_for_the_deadline_and_each_turn_gets_its_own() -> None:
    played = new_deal(CLASSIC, 3, dealer=0, move_seconds=30)
    (dealt,) = played.deal_street(now_ms=1_000)
    assert isinstance(dealt, StreetDealt) and dealt.deadline_ms == 31_000
    seat = played.deal.turn
    assert seat == 1
    cards = played.street_cards(0, 1)
    error = _refused(played, PlaceForSeat(cards, 30_999, True), Reason.NOTHING_TIMED_OUT)
    assert "has not run out" in error.message
    placement = legal_placements(Board(), cards)[0]
    (placed,) = played.run(PlaceCards(PLAYERS[1], 0, placement, cards, now_ms=20_000))
    assert isinstance(placed, CardsPlaced) and placed.deadline_ms == 50_000
    assert played.deal.deadline_ms == 50_000
    played.place_turn()
    played.place_turn()
    last = played.events[-1]
    assert isinstance(last, CardsPlaced) and last.seat == 0
    assert last.deadline_ms is None  # the street is complete: the next street sets the clock


def _time_out_first_seat(rules: OpenFaceRules, seats: int = 2) -> PlayedDeal:
    played = new_deal(rules, seats, dealer=seats - 1, move_seconds=10)
    played.deal_street(now_ms=0)
    event = _for_seat(played, now_ms=10_000, timed_out=True)
    assert event.seat == 0 and event.automatic == "timeout"
    return played


def test_under_001_a_timed_out_hand_is_dead_and_placed_for_to_the_end() -> None:
    played = _time_out_first_seat(CLASSIC)
    assert played.deal.declared_dead == (True, False)
    assert played.deal.automatic == (True, False)
    # Its holder may no longer place; every later street is placed for it, from the back.
    played.place_turn()
    played.deal_street()
    cards = played.street_cards(1, 0)
    error = _refused(
        played, PlaceCards("ann", 1, Placement(back=cards), cards), Reason.SEAT_TIMED_OUT
    )
    assert "placed for it" in error.message
    assert _for_seat(played).automatic == "already_dead"


def test_under_003_a_timed_out_hand_is_placed_for_but_stays_alive() -> None:
    played = _time_out_first_seat(RUSSIAN)
    assert played.deal.declared_dead == (False, False)
    assert played.deal.automatic == (True, False)
    played.place_turn()
    played.deal_street()
    assert _for_seat(played).automatic == "timeout"


@pytest.mark.parametrize(("preset", "dead"), [("ofc_classic", True), ("ofc_russian", False)])
def test_a_timed_out_seat_is_scored_and_carried_by_its_policy(preset: str, dead: bool) -> None:
    table = open_face_table(preset, 2, move_seconds=30)
    table.start_deal()
    table.state = _play_with_timeouts(table, timed_out_seat=table.state.dealer)
    scored = [event for event in table.events if isinstance(event, DealScored)]
    assert len(scored) == 1
    seat = table.state.dealer
    assert seat is not None
    if dead:
        # Dead: it pays each live opponent (all dead: nobody pays).
        assert scored[0].fouls[seat]
        assert scored[0].totals[seat] < 0 or all(scored[0].fouls)
        assert table.state.dead_for_set[seat]
        if table.state.phase is OpenFaceTablePhase.BETWEEN_DEALS:
            table.start_deal()
            play = table.state.play
            assert play is not None and play.declared_dead[seat] and play.automatic[seat]
    else:
        assert not any(table.state.dead_for_set)


def _play_with_timeouts(table: DrivenTable, timed_out_seat: int | None) -> OpenFaceTable:
    """Play the deal; ``timed_out_seat`` lets its first move time out, then everything of it
    is placed for it; the others place the first legal placement."""
    table_id = table.state.table_id
    assert table_id is not None
    key = fairness.record_key(table_id, table.state.deal_number, table.seed)
    now = 0
    while table.state.phase is OpenFaceTablePhase.PLAYING:
        play = table.state.play
        assert play is not None
        now += 60_000
        if play.phase is OpenFacePhase.DEALING:
            street = play.streets_dealt
            table.run(
                DealStreet(
                    tuple(
                        street_digest(key, street, seat, cards) if cards else b""
                        for seat, cards in enumerate(table.cards[street])
                    ),
                    now,
                )
            )
            continue
        seat = play.turn
        assert seat is not None
        street = play.streets_dealt - 1
        dealt = table.cards[street][seat]
        if seat == timed_out_seat:
            table.run(PlaceForSeat(dealt, now, timed_out=not play.automatic[seat]))
        else:
            placement = legal_placements(play.boards[seat], dealt)[0]
            table.run(PlaceCards(PLAYERS[seat], street, placement, dealt, now_ms=now))
    table.run(RevealSeed(table.seed))
    return table.state
