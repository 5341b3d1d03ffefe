"""A Pineapple deal in the domain: each discard committed with its placement, hidden from the
others as "a card was discarded", opened at the end against its commitment and the dealt cards
(docs/fairness.md §23, docs/rules.md §8.12)."""

from __future__ import annotations

import dataclasses

import pytest
from open_face_deals import CODEC, PLAYERS, TABLE_ID, PlayedDeal, new_deal

from sapsam import fairness
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.open_face.commands import (
    PlaceCards,
    PlaceForSeat,
    RevealDiscards,
    TimeOutDiscards,
)
from sapsam.domain.open_face.deal_decide import decide_deal
from sapsam.domain.open_face.deal_evolve import fold_deal
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.deal_views import deal_view_for
from sapsam.domain.open_face.events import (
    CardsPlaced,
    DiscardCommitted,
    DiscardsRevealed,
    FantasylandRevealed,
)
from sapsam.fairness.discard_commitments import discard_commitment
from sapsam.rules.cards import parse_cards
from sapsam.rules.open_face.board import Placement
from sapsam.rules.open_face.presets import open_face_preset
from sapsam.rules.open_face.scoring import score_open_face_deal

PINEAPPLE = open_face_preset("pineapple")
TWO_SEVEN = open_face_preset("pineapple_2_7")


def _refused(played: PlayedDeal, command: object, reason: Reason) -> DomainError:
    before = played.deal
    with pytest.raises(DomainError) as raised:
        decide_deal(played.deal, command)
    assert raised.value.reason is reason, raised.value
    assert played.deal is before
    return raised.value


def _to_the_end_of_placing(played: PlayedDeal) -> None:
    while played.deal.phase in (OpenFacePhase.DEALING, OpenFacePhase.PLACING):
        if played.deal.phase is OpenFacePhase.DEALING:
            played.deal_street()
        else:
            played.place_turn()


@pytest.mark.parametrize("rules", [PINEAPPLE, TWO_SEVEN], ids=["pineapple", "2-7"])
@pytest.mark.parametrize("seed", [1, 19, 2026])
def test_a_three_seat_deal_commits_each_discard_and_opens_them_at_the_end(
    rules: object, seed: int
) -> None:
    assert rules in (PINEAPPLE, TWO_SEVEN)
    played = new_deal(PINEAPPLE if rules is PINEAPPLE else TWO_SEVEN, 3, seed=seed)
    _to_the_end_of_placing(played)
    deal = played.deal
    assert deal.phase is OpenFacePhase.DISCARDS
    assert deal.discards_made == (4, 4, 4)
    committed = [e for e in played.events if isinstance(e, DiscardCommitted)]
    assert sorted((e.seat, e.street) for e in committed) == [
        (seat, street) for seat in range(3) for street in range(1, 5)
    ]
    for seat in deal.seats:
        played.reveal_discards(seat)
    deal = played.deal
    assert deal.phase is OpenFacePhase.COMPLETE
    for seat in deal.seats:
        opened = deal.discards[seat]
        assert opened is not None
        thrown = [card for _, cards in opened for card in cards]
        # Every dealt card was placed or discarded, once.
        assert sorted([*deal.boards[seat].cards, *thrown]) == sorted(played.dealt_to(seat))
    decoded = [CODEC.decode(*CODEC.encode(event)) for event in played.events]
    assert decoded == played.events
    start = new_deal(deal.rules, 3, seed=seed).deal
    assert fold_deal(start, decoded) == deal
    assert sum(score_open_face_deal(deal.rules, deal.boards).totals) == 0


def test_at_most_three_seats_play_pineapple() -> None:
    with pytest.raises(ValueError, match="68 cards"):
        new_deal(dataclasses.replace(PINEAPPLE, max_seats=3), 4)


def test_a_placement_on_a_discarding_street_needs_its_commitment() -> None:
    played = new_deal(PINEAPPLE, 2)
    played.deal_street()
    dealt = played.street_cards(0, 1)
    # The first street discards nothing: a commitment there is refused.
    error = _refused(
        played,
        PlaceCards("bob", 0, Placement(back=dealt), dealt, discard_commitment=b"c" * 32),
        Reason.INVALID_ARGUMENT,
    )
    assert error.field == "discard_commitment"
    played.place_turn()
    played.place_turn()
    played.deal_street()
    dealt = played.street_cards(1, 1)
    keep = Placement(middle=dealt[:2])
    error = _refused(played, PlaceCards("bob", 1, keep, dealt), Reason.NO_COMMITMENT)
    assert "commitment" in error.message
    every = PlaceCards("bob", 1, Placement(middle=dealt[:2], front=dealt[2:]), dealt)
    error = _refused(played, every, Reason.BAD_CARDS)
    assert "discards 1 card of the 3 dealt, not 0" in error.message
    short = PlaceCards("bob", 1, keep, dealt, discard_commitment=b"c" * 31)
    _refused(played, short, Reason.BAD_COMMITMENT)


def test_the_others_see_only_that_a_card_was_discarded_until_the_end() -> None:
    played = new_deal(PINEAPPLE, 3, seed=7)
    _to_the_end_of_placing(played)
    deal = played.deal
    dealt = [played.dealt_to(seat) for seat in deal.seats]
    for viewer in (None, 0, 1):
        view = deal_view_for(deal, viewer, [list(cards) for cards in dealt])
        seat = view.seats[2]
        assert seat.discards_made == 4 and seat.discards is None
        assert seat.dealt is None  # another seat's cards, discards included, stay hidden
    # No event before the opening names a discarded card.
    thrown = {card for street in played.cards[1:] for seats in street for card in seats}
    thrown -= {card for board in deal.boards for card in board.cards}
    assert len(thrown) == 12
    shown = {
        card
        for event in played.events
        if isinstance(event, CardsPlaced)
        for card in parse_cards((*event.front, *event.middle, *event.back))
    }
    assert not shown & thrown
    # A DiscardCommitted holds a hash, no card.
    fields = {field.name for field in dataclasses.fields(DiscardCommitted)}
    assert fields == {"deal_number", "seat", "street", "commitment"}
    for seat in deal.seats:
        played.reveal_discards(seat)
    view = deal_view_for(played.deal, None)
    assert {card for seat in view.seats for card in seat.discards or ()} == thrown


def test_an_opening_that_does_not_match_is_refused() -> None:
    played = new_deal(PINEAPPLE, 2, seed=3)
    played.deal_street()
    played.place_turn()
    played.place_turn()
    played.deal_street()
    played.place_turn()
    seat = 1
    dealt = tuple(street[seat] for street in played.cards)
    honest = played.discards.reveal(played.deal, seat, dealt)
    _refused(played, honest, Reason.WRONG_PHASE)  # not before the end
    _to_the_end_of_placing(played)
    honest = played.discards.reveal(played.deal, seat, dealt)
    wrong_nonce = dataclasses.replace(honest, nonces=(b"x" * 16, *honest.nonces[1:]))
    _refused(played, wrong_nonce, Reason.COMMITMENT_MISMATCH)
    # A nonce of a size no commitment takes (a client could commit with any): refused before
    # hashing, so a DiscardsRevealed never records one.
    for size in (fairness.MIN_NONCE_BYTES - 1, fairness.MAX_NONCE_BYTES + 1):
        sized = dataclasses.replace(honest, nonces=(b"x" * size, *honest.nonces[1:]))
        _refused(played, sized, Reason.BAD_NONCE)
    # A card placed, not discarded: refused against the dealt cards and the board.
    placed = played.deal.boards[seat].back[:1]
    _refused(
        played, dataclasses.replace(honest, cards=(placed, *honest.cards[1:])), Reason.BAD_CARDS
    )
    # Another street's dealt card that was not placed: the commitment does not match.
    swapped = dataclasses.replace(
        honest, cards=(honest.cards[1], honest.cards[0], *honest.cards[2:])
    )
    _refused(played, swapped, Reason.BAD_CARDS)
    _refused(played, dataclasses.replace(honest, nonces=honest.nonces[:3]), Reason.INVALID_ARGUMENT)
    _refused(played, RevealDiscards("zed", (), (), dealt), Reason.NOT_SEATED)
    played.run(honest)
    _refused(played, honest, Reason.ALREADY_REVEALED)


def test_a_commitment_binds_the_street_and_the_player() -> None:
    cards = parse_cards("7d")
    nonce = b"n" * 16
    base = discard_commitment(TABLE_ID, 1, 0, PLAYERS[0], 1, cards, nonce)
    assert base != discard_commitment(TABLE_ID, 1, 0, PLAYERS[0], 2, cards, nonce)
    assert base != discard_commitment(TABLE_ID, 1, 0, PLAYERS[1], 1, cards, nonce)
    assert base != discard_commitment(TABLE_ID, 1, 0, PLAYERS[0], 1, parse_cards("7h"), nonce)


def test_a_move_made_for_the_seat_discards_without_a_commitment() -> None:
    played = new_deal(PINEAPPLE, 2, seed=5)
    played.deal = dataclasses.replace(played.deal, automatic=(True, True))
    played.deal = dataclasses.replace(played.deal, declared_dead=(True, True))
    while played.deal.phase in (OpenFacePhase.DEALING, OpenFacePhase.PLACING):
        if played.deal.phase is OpenFacePhase.DEALING:
            played.deal_street()
        else:
            seat = played.deal.turn
            assert seat is not None
            street = played.deal.streets_dealt - 1
            played.run(PlaceForSeat(played.street_cards(street, seat)))
    assert played.deal.phase is OpenFacePhase.COMPLETE
    assert played.deal.discards_made == (4, 4)
    assert not [e for e in played.events if isinstance(e, DiscardCommitted)]


def test_a_pineapple_fantasyland_sets_13_of_14_and_discards_one() -> None:
    played = new_deal(PINEAPPLE, 3, fantasyland=(14, None, None), seed=11)
    played.play_out()
    (revealed,) = [e for e in played.events if isinstance(e, FantasylandRevealed)]
    assert len(revealed.discards) == 1
    assert any(isinstance(e, DiscardsRevealed) for e in played.events)
    assert played.deal.phase is OpenFacePhase.COMPLETE


def test_discards_not_opened_by_the_deadline_are_opened_by_the_service() -> None:
    played = new_deal(PINEAPPLE, 2, seed=9, move_seconds=30)
    now = 0
    while played.deal.phase in (OpenFacePhase.DEALING, OpenFacePhase.PLACING):
        now += 1_000
        if played.deal.phase is OpenFacePhase.DEALING:
            played.deal_street(now)
        else:
            played.place_turn_at(now)
    deal = played.deal
    assert deal.phase is OpenFacePhase.DISCARDS
    assert deal.deadline_ms == now + 30_000  # set by the last placement
    dealt = tuple(street[1] for street in played.cards)
    _refused(played, TimeOutDiscards(1, dealt, now + 29_999), Reason.NOTHING_TIMED_OUT)
    _refused(played, TimeOutDiscards(5, dealt, now + 30_000), Reason.UNKNOWN_SEAT)
    (opened,) = played.run(TimeOutDiscards(1, dealt, now + 30_000))
    assert isinstance(opened, DiscardsRevealed) and opened.nonces == ("",) * 4
    thrown = {card for cards in opened.cards for card in parse_cards(cards)}
    assert thrown | set(played.deal.boards[1].cards) == set(played.dealt_to(1))
    _refused(played, TimeOutDiscards(1, dealt, now + 30_000), Reason.ALREADY_REVEALED)
    played.reveal_discards(0)
    assert played.deal.phase is OpenFacePhase.COMPLETE


def test_the_operators_forced_timeout_opens_a_seats_discards_before_any_deadline() -> None:
    """``ForceSeatTimeout`` in the discards phase (``TimeOutDiscards`` with ``forced``): the
    seat's discards opened from the seed now, at a table with no deadline, unsigned; a seat
    that owes no opening is refused."""
    played = new_deal(PINEAPPLE, 2, seed=9)
    _to_the_end_of_placing(played)
    assert played.deal.phase is OpenFacePhase.DISCARDS and played.deal.deadline_ms is None
    dealt = tuple(street[1] for street in played.cards)
    _refused(played, TimeOutDiscards(1, dealt, 5), Reason.NOTHING_TIMED_OUT)
    (opened,) = played.run(TimeOutDiscards(1, dealt, 5, forced=True))
    assert isinstance(opened, DiscardsRevealed) and opened.nonces == ("",) * 4
    assert opened.signature is None and opened.player_key is None
    thrown = {card for cards in opened.cards for card in parse_cards(cards)}
    assert thrown | set(played.deal.boards[1].cards) == set(played.dealt_to(1))
    _refused(played, TimeOutDiscards(1, dealt, 5, forced=True), Reason.ALREADY_REVEALED)
    # The operator's ForceSeatTimeout of a seat that owes no opening: nothing timed out.
    _refused(played, PlaceForSeat((), 5, True, forced_seat=1), Reason.NOTHING_TIMED_OUT)
    played.reveal_discards(0)
    assert played.deal.phase is OpenFacePhase.COMPLETE
