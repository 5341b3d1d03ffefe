"""What each caller may see of an open-face deal (issue #18: every face-up placement to everyone
as it happens, nothing face down; a seat sees its own dealt cards; while a Fantasyland hand is
being set, the others' placements are shown to their own seats only)."""

from __future__ import annotations

import pytest
from open_face_deals import PlayedDeal, new_deal

from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.deal_views import deal_view_for, may_see_board, may_see_dealt
from sapsam.rules.open_face.board import Board
from sapsam.rules.open_face.presets import open_face_preset

CLASSIC = open_face_preset("ofc_classic")
SPECTATOR = None


def _dealt_so_far(played: PlayedDeal) -> list[tuple[int, ...]]:
    return [played.dealt_to(seat) for seat in played.deal.seats]


def test_placements_are_face_up_to_everyone() -> None:
    played = new_deal(CLASSIC, 3)
    played.deal_street()
    played.place_turn()  # seat 1, on the dealer's left
    for viewer in (0, 1, 2, SPECTATOR):
        view = deal_view_for(played.deal, viewer)
        assert view.seats[1].board == played.deal.boards[1] and view.seats[1].placed
        assert view.seats[2].board == Board() and not view.seats[2].placed
        assert view.turn == 2 and view.phase is OpenFacePhase.PLACING and view.street == 0


@pytest.mark.parametrize("viewer", [0, 1, 2, SPECTATOR])
def test_each_seat_sees_only_its_own_dealt_cards(viewer: int | None) -> None:
    played = new_deal(CLASSIC, 3)
    assert all(
        seat.dealt is None for seat in deal_view_for(played.deal, viewer, [(), (), ()]).seats
    )
    played.deal_street()
    view = deal_view_for(played.deal, viewer, _dealt_so_far(played))
    for seat in view.seats:
        if seat.seat == viewer:
            assert seat.dealt == played.street_cards(0, seat.seat)
        else:
            assert seat.dealt is None


def test_every_dealt_card_is_shown_once_the_seed_is_published() -> None:
    played = new_deal(CLASSIC, 2)
    played.play_out()
    view = deal_view_for(played.deal, SPECTATOR, _dealt_so_far(played), seed_revealed=True)
    assert [seat.dealt for seat in view.seats] == _dealt_so_far(played)
    assert may_see_dealt(played.deal, SPECTATOR, 0, seed_revealed=True)
    assert not may_see_dealt(played.deal, SPECTATOR, 0, seed_revealed=False)


def test_while_a_fantasyland_hand_is_set_the_others_placements_are_their_own() -> None:
    played = new_deal(CLASSIC, 3, dealer=2, fantasyland=(13, None, None))
    played.deal_street()
    assert played.deal.fantasyland_hidden
    played.place_turn()  # seat 1 (seat 0, the dealer's left, sets its Fantasyland hand)
    placed = played.deal.boards[1]
    assert placed.placed == 5
    assert deal_view_for(played.deal, 1).seats[1].board == placed
    for viewer in (0, 2, SPECTATOR):
        assert deal_view_for(played.deal, viewer).seats[1].board is None
        assert not may_see_board(played.deal, viewer, 1)
    # Public all the same: that seat 1 placed, and whose turn it is.
    assert deal_view_for(played.deal, 0).seats[1].placed
    assert deal_view_for(played.deal, 0).turn == 2
    played.commit_fantasyland(0)
    assert not played.deal.fantasyland_hidden
    for viewer in (0, 1, 2, SPECTATOR):
        assert deal_view_for(played.deal, viewer).seats[1].board == placed


def test_a_fantasyland_hand_is_face_down_until_it_is_opened() -> None:
    played = new_deal(CLASSIC, 2, fantasyland=(None, 13))
    played.deal_street()
    played.commit_fantasyland(1)
    while played.deal.phase is not OpenFacePhase.FANTASYLAND:
        if played.deal.phase is OpenFacePhase.DEALING:
            played.deal_street()
        else:
            played.place_turn()
    for viewer in (0, 1, SPECTATOR):
        seat = deal_view_for(played.deal, viewer).seats[1]
        assert seat.fantasyland and seat.committed and not seat.revealed
        assert seat.board is None
    played.reveal_fantasyland(1)
    for viewer in (0, 1, SPECTATOR):
        seat = deal_view_for(played.deal, viewer).seats[1]
        assert seat.revealed and seat.board is not None and seat.board.complete


def test_nothing_hidden_is_in_the_view_of_another_seat_at_any_moment() -> None:
    # Step through a whole deal with a Fantasyland seat: at every state, what seat 2 is shown of
    # seats 0 and 1 is either nothing or exactly what those seats have placed face up, and never
    # a card dealt to them but not yet placed.
    played = new_deal(CLASSIC, 3, dealer=0, fantasyland=(None, 13, None))
    played.play_out()
    assert len(played.states) > 20
    for deal in played.states:
        dealt = [
            tuple(card for street in played.cards[: deal.streets_dealt] for card in street[seat])
            for seat in deal.seats
        ]
        view = deal_view_for(deal, 2, dealt)
        for seat in (0, 1):
            shown = view.seats[seat]
            assert shown.dealt is None
            if shown.board is not None:
                assert shown.board == deal.boards[seat]
                assert not deal.is_fantasyland(seat) or deal.revealed[seat]
