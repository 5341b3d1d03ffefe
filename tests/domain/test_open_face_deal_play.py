"""The play of an open-face deal, decided and evolved without I/O: streets dealt in order, cards
placed face up in turn from the dealer's left, Fantasyland hands set face down and opened at the
end (issue #18 rule 1 and 4). Given a deal, when a command, then these events or this refusal."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from open_face_deals import (
    PLAYERS,
    RECORD_KEY,
    PlayedDeal,
    first_legal,
    new_deal,
    random_legal,
)

from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.open_face.commands import (
    CommitFantasyland,
    DealStreet,
    PlaceCards,
    RevealFantasyland,
)
from sapsam.domain.open_face.deal_decide import decide_deal
from sapsam.domain.open_face.deal_evolve import fold_deal
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.events import (
    CardsPlaced,
    FantasylandCommitted,
    FantasylandRevealed,
    StreetDealt,
)
from sapsam.fairness.open_face_deal import street_digest
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.open_face.board import Placement
from sapsam.rules.open_face.fantasyland_setting import biggest_row_first
from sapsam.rules.open_face.parameters import FantasylandCards, OpenFaceRules
from sapsam.rules.open_face.presets import OPEN_FACE_PRESETS, open_face_preset
from sapsam.rules.open_face.scoring import score_open_face_deal

CLASSIC = open_face_preset("ofc_classic")
TURBO = open_face_preset("ofc_turbo")
PLAYED_PRESETS = sorted(OPEN_FACE_PRESETS)
CODEC = DEFAULT_CODEC  # it reads every family's events


def _refused(played: PlayedDeal, command: object, reason: Reason) -> DomainError:
    before = played.deal
    with pytest.raises(DomainError) as raised:
        decide_deal(played.deal, command)
    assert raised.value.reason is reason, raised.value
    assert played.deal is before
    return raised.value


# -- streets ----------------------------------------------------------------------------------


def test_the_first_street_deals_five_cards_to_every_seat() -> None:
    played = new_deal(CLASSIC, 3, dealer=2, move_seconds=30)
    assert played.deal.phase is OpenFacePhase.DEALING and played.deal.turn is None
    (event,) = played.deal_street(now_ms=1_000)
    assert isinstance(event, StreetDealt)
    assert event.street == 0 and event.card_counts == (5, 5, 5)
    assert event.digests == tuple(
        street_digest(RECORD_KEY, 0, seat, played.street_cards(0, seat)).hex() for seat in range(3)
    )
    assert event.deadline_ms == 31_000
    # The first to place sits on the dealer's left.
    assert played.deal.phase is OpenFacePhase.PLACING and played.deal.turn == 0


def test_no_cards_are_in_the_dealing_event() -> None:
    played = new_deal(CLASSIC, 2)
    (event,) = played.deal_street()
    shown = str(event.to_data())
    for card in played.street_cards(0, 0) + played.street_cards(0, 1):
        assert str(card) not in shown.split("'")


@pytest.mark.parametrize(("preset", "streets"), [("ofc_classic", 9), ("ofc_turbo", 3)])
def test_streets_follow_the_rule_set(preset: str, streets: int) -> None:
    played = new_deal(open_face_preset(preset), 2)
    played.play_out()
    dealt = [event for event in played.events if isinstance(event, StreetDealt)]
    assert [event.street for event in dealt] == list(range(streets))
    assert [event.card_counts[0] for event in dealt] == list(played.deal.rules.street_cards)


def test_a_street_is_not_dealt_while_a_seat_owes_its_placement() -> None:
    played = new_deal(CLASSIC, 2)
    played.deal_street()
    _refused(played, DealStreet((b"x" * 32, b"y" * 32)), Reason.WRONG_PHASE)
    played.place_turn()
    _refused(played, DealStreet((b"x" * 32, b"y" * 32)), Reason.WRONG_PHASE)
    played.place_turn()
    assert played.deal.phase is OpenFacePhase.DEALING


@pytest.mark.parametrize(
    "digests", [(), (b"x" * 32,), (b"x" * 32, b"y" * 31), (b"x" * 32, b""), (b"x" * 32,) * 3]
)
def test_a_street_needs_one_digest_per_seat_dealt_cards(digests: tuple[bytes, ...]) -> None:
    played = new_deal(CLASSIC, 2)
    _refused(played, DealStreet(digests), Reason.INVALID_ARGUMENT)


def test_no_street_after_the_last() -> None:
    played = new_deal(TURBO, 2)
    played.play_out()
    assert played.deal.phase is OpenFacePhase.COMPLETE
    _refused(played, DealStreet((b"x" * 32, b"y" * 32)), Reason.WRONG_PHASE)


# -- placements -------------------------------------------------------------------------------


def test_a_placement_is_recorded_face_up_and_final() -> None:
    played = new_deal(CLASSIC, 2, dealer=1)
    played.deal_street()
    dealt = played.street_cards(0, 0)
    placement = Placement(dealt[:1], dealt[1:3], dealt[3:])
    (event,) = played.run(PlaceCards("ann", 0, placement, dealt))
    assert event == CardsPlaced(
        deal_number=1,
        seat=0,
        street=0,
        front=tuple(map(str, dealt[:1])),
        middle=tuple(map(str, dealt[1:3])),
        back=tuple(map(str, dealt[3:])),
    )
    assert played.deal.boards[0].rows == (dealt[:1], dealt[1:3], dealt[3:])
    assert played.deal.turn == 1


def test_seats_place_in_turn_clockwise_from_the_dealers_left() -> None:
    played = new_deal(CLASSIC, 4, dealer=1)
    played.deal_street()
    order = []
    while played.deal.phase is OpenFacePhase.PLACING:
        order.append(played.deal.turn)
        played.place_turn()
    assert order == [2, 3, 0, 1]


def test_out_of_turn_is_refused() -> None:
    played = new_deal(CLASSIC, 3, dealer=0)
    played.deal_street()
    dealt = played.street_cards(0, 2)
    error = _refused(
        played,
        PlaceCards("cid", 0, first_legal(played.deal.boards[2], dealt), dealt),
        Reason.NOT_YOUR_TURN,
    )
    assert "seat 1 places now" in error.message


def test_a_placement_before_the_deal_or_after_it_is_refused() -> None:
    played = new_deal(CLASSIC, 2)
    dealt = parse_cards("As Ks Qs Js Ts")
    _refused(played, PlaceCards("bob", 0, Placement(back=dealt), dealt), Reason.WRONG_PHASE)
    played.play_out()
    _refused(played, PlaceCards("bob", 8, Placement(back=dealt[:1]), dealt[:1]), Reason.WRONG_PHASE)


def test_a_placement_for_another_street_or_deal_is_refused() -> None:
    played = new_deal(CLASSIC, 2)
    played.deal_street()
    dealt = played.street_cards(0, 1)
    placement = first_legal(played.deal.boards[1], dealt)
    _refused(played, PlaceCards("bob", 1, placement, dealt), Reason.INVALID_ARGUMENT)
    _refused(played, PlaceCards("bob", 0, placement, dealt, deal_number=2), Reason.WRONG_DEAL)
    _refused(played, PlaceCards("zed", 0, placement, dealt), Reason.NOT_SEATED)


def _illegal(dealt: tuple[Card, ...]) -> list[Placement]:
    stranger = next(card for card in parse_cards("2c 2d 2h 2s 3c 3d") if card not in dealt)
    return [
        Placement(back=dealt[:4]),  # a card not placed
        Placement(front=dealt[:4], back=dealt[4:]),  # the front holds 3
        Placement(middle=dealt[:4], back=(dealt[4], dealt[0])),  # a card placed twice
        Placement(back=(*dealt[:4], stranger)),  # a card not dealt
    ]


def test_an_illegal_placement_is_refused_saying_why() -> None:
    played = new_deal(CLASSIC, 2)
    played.deal_street()
    dealt = played.street_cards(0, 1)
    messages = []
    for placement in _illegal(dealt):
        error = _refused(played, PlaceCards("bob", 0, placement, dealt), Reason.BAD_CARDS)
        assert error.field == "placement"
        messages.append(error.message)
    assert any("not placed" in text for text in messages)
    assert any("front row has room for 3" in text for text in messages)
    assert any("placed twice" in text for text in messages)
    assert any("not dealt" in text for text in messages)


def test_a_full_row_takes_no_more() -> None:
    played = new_deal(CLASSIC, 2)
    played.deal_street()
    for seat in (1, 0):
        dealt = played.street_cards(0, seat)
        played.run(PlaceCards(PLAYERS[seat], 0, Placement(front=dealt[:3], back=dealt[3:]), dealt))
    played.deal_street()
    dealt = played.street_cards(1, 1)
    error = _refused(played, PlaceCards("bob", 1, Placement(front=dealt), dealt), Reason.BAD_CARDS)
    assert "front row has room for 0 more" in error.message


# -- whole deals ------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    preset=st.sampled_from(PLAYED_PRESETS),
    seats=st.integers(2, 4),
    dealer=st.integers(0, 3),
    seed=st.integers(0, 2**32),
)
def test_every_deal_played_to_its_end_is_consistent(
    preset: str, seats: int, dealer: int, seed: int
) -> None:
    rules = open_face_preset(preset)
    played = new_deal(rules, seats, dealer % seats, seed=seed)
    played.play_out(random_legal(random.Random(seed)))
    deal = played.deal
    assert deal.phase is OpenFacePhase.COMPLETE
    # Every seat placed exactly the cards dealt to it, on the street they were dealt.
    for seat in deal.seats:
        assert sorted(deal.boards[seat].cards) == sorted(played.dealt_to(seat))
        for event in played.events:
            if isinstance(event, CardsPlaced) and event.seat == seat:
                placed = parse_cards((*event.front, *event.middle, *event.back))
                assert sorted(placed) == sorted(played.street_cards(event.street, seat))
    # The log replays to the same state, through the codec, from the deal's start.
    start = new_deal(rules, seats, dealer % seats, seed=seed).deal
    decoded = [CODEC.decode(*CODEC.encode(event)) for event in played.events]
    assert decoded == played.events
    assert fold_deal(start, decoded) == deal
    # The finished boards score, zero-sum.
    score = score_open_face_deal(rules, deal.boards)
    assert sum(score.totals) == 0


# -- Fantasyland ------------------------------------------------------------------------------


def test_a_fantasyland_seat_gets_all_its_cards_at_once_and_places_no_street() -> None:
    played = new_deal(CLASSIC, 3, dealer=0, fantasyland=(None, 13, None))
    (event,) = played.deal_street()
    assert isinstance(event, StreetDealt) and event.card_counts == (5, 13, 5)
    assert event.digests[1] != ""
    assert played.deal.turn == 2  # seat 1, the dealer's left, sets its hand instead
    dealt = played.street_cards(0, 1)
    error = _refused(
        played, PlaceCards("bob", 0, Placement(back=dealt[:5]), dealt[:5]), Reason.WRONG_PHASE
    )
    assert "Fantasyland" in error.message
    played.place_turn()
    played.place_turn()
    (second,) = played.deal_street()
    assert isinstance(second, StreetDealt) and second.card_counts == (1, 0, 1)
    assert second.digests[1] == ""


def test_a_fantasyland_hand_is_committed_once_then_opened_at_the_end() -> None:
    played = new_deal(CLASSIC, 2, dealer=1, fantasyland=(13, None))
    _refused(played, CommitFantasyland("ann", b"c" * 32), Reason.WRONG_PHASE)  # not dealt yet
    played.deal_street()
    _refused(played, CommitFantasyland("bob", b"c" * 32), Reason.WRONG_PHASE)  # a normal seat
    _refused(played, CommitFantasyland("ann", b"c" * 31), Reason.BAD_COMMITMENT)
    _refused(
        played,
        RevealFantasyland("ann", *_setting(played, 0), played.street_cards(0, 0)),
        Reason.NO_COMMITMENT,
    )
    (committed,) = played.commit_fantasyland(0)
    assert isinstance(committed, FantasylandCommitted) and committed.seat == 0
    _refused(played, CommitFantasyland("ann", b"c" * 32), Reason.ALREADY_CONFIRMED)
    # Opened only once every normal hand is complete.
    _refused(
        played,
        RevealFantasyland("ann", *_setting(played, 0), played.street_cards(0, 0)),
        Reason.WRONG_PHASE,
    )
    while played.deal.phase is not OpenFacePhase.FANTASYLAND:
        if played.deal.phase is OpenFacePhase.DEALING:
            played.deal_street()
        else:
            played.place_turn()
    (revealed,) = played.reveal_fantasyland(0)
    assert isinstance(revealed, FantasylandRevealed)
    assert not revealed.dead and revealed.discards == ()
    assert played.deal.phase is OpenFacePhase.COMPLETE
    assert played.deal.boards[0].complete
    _refused(
        played,
        RevealFantasyland("ann", *_setting(played, 0), played.street_cards(0, 0)),
        Reason.ALREADY_REVEALED,
    )


def _setting(played: PlayedDeal, seat: int) -> tuple[Arrangement, bytes]:
    arrangement, _ = biggest_row_first(played.street_cards(0, seat))
    nonce = played.nonces.get(seat, b"n" * 16)
    return arrangement, nonce


def _at_fantasyland_end(fantasyland: tuple[int | None, ...]) -> PlayedDeal:
    played = new_deal(CLASSIC, len(fantasyland), fantasyland=fantasyland)
    played.deal_street()
    for seat in played.deal.seats:
        if played.deal.is_fantasyland(seat):
            played.commit_fantasyland(seat)
    while played.deal.phase is not OpenFacePhase.FANTASYLAND:
        if played.deal.phase is OpenFacePhase.DEALING:
            played.deal_street()
        else:
            played.place_turn()
    return played


def test_a_reveal_that_does_not_match_the_commitment_is_refused() -> None:
    played = _at_fantasyland_end((None, 13))
    arrangement, nonce = _setting(played, 1)
    dealt = played.street_cards(0, 1)
    _refused(
        played, RevealFantasyland("bob", arrangement, b"o" * 16, dealt), Reason.COMMITMENT_MISMATCH
    )
    front, middle = arrangement.front, arrangement.middle
    swapped = replace(arrangement, front=middle[:3], middle=(*front, *middle[3:]))
    _refused(played, RevealFantasyland("bob", swapped, nonce, dealt), Reason.COMMITMENT_MISMATCH)
    _refused(played, RevealFantasyland("bob", arrangement, b"n", dealt), Reason.BAD_NONCE)
    other = played.street_cards(0, 0) + played.street_cards(1, 0)
    _refused(played, RevealFantasyland("bob", arrangement, nonce, other[:13]), Reason.BAD_CARDS)
    played.reveal_fantasyland(1)
    assert played.deal.phase is OpenFacePhase.COMPLETE


def test_a_progressive_fantasyland_discards_the_cards_beyond_thirteen() -> None:
    rules = OpenFaceRules(
        name="progressive", fantasyland_cards=FantasylandCards.PROGRESSIVE, max_seats=3
    )
    played = new_deal(rules, 2, fantasyland=(15, None))
    played.deal_street()
    assert len(played.street_cards(0, 0)) == 15
    played.commit_fantasyland(0)
    played.play_out()
    (revealed,) = [e for e in played.events if isinstance(e, FantasylandRevealed)]
    assert len(revealed.discards) == 2
    shown = parse_cards((*revealed.front, *revealed.middle, *revealed.back, *revealed.discards))
    assert sorted(shown) == sorted(played.street_cards(0, 0))


def test_when_every_seat_plays_fantasyland_one_street_is_dealt() -> None:
    played = new_deal(CLASSIC, 2, fantasyland=(13, 13))
    played.play_out()
    assert [type(e).__name__ for e in played.events] == [
        "StreetDealt",
        "FantasylandCommitted",
        "FantasylandCommitted",
        # The preset's reveal deadline (no move limit: reveal_seconds, docs/rules.md §8.7).
        "FantasylandRevealsOpened",
        "FantasylandRevealed",
        "FantasylandRevealed",
    ]
    assert played.deal.phase is OpenFacePhase.COMPLETE
    assert sum(score_open_face_deal(CLASSIC, played.deal.boards).totals) == 0


def test_an_unknown_command_is_refused() -> None:
    _refused(new_deal(CLASSIC, 2), object(), Reason.INVALID_ARGUMENT)
