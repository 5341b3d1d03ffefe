"""Open face's deal order (sapsam.fairness.open_face_deal): the schedule of cards per street and
seat, and which cards of the cut deck each seat receives, one card at a time clockwise from the
dealer's left, street after street."""

from __future__ import annotations

import hmac

import pytest

from sapsam.fairness.encoding import FairnessError, card_bytes
from sapsam.fairness.open_face_deal import (
    OpenFaceDealError,
    deal_streets,
    street_digest,
    street_schedule,
)
from sapsam.rules.cards import DECK
from sapsam.rules.open_face.parameters import CLASSIC_STREETS, TURBO_STREETS


def test_a_normal_seat_gets_the_rule_sets_streets() -> None:
    assert street_schedule(TURBO_STREETS, (None, None)) == ((5, 5), (4, 4), (4, 4))
    classic = street_schedule(CLASSIC_STREETS, (None, None, None))
    assert classic[0] == (5, 5, 5) and all(street == (1, 1, 1) for street in classic[1:])


def test_a_fantasyland_seat_gets_all_its_cards_on_the_first_street() -> None:
    schedule = street_schedule(TURBO_STREETS, (None, 14, None))
    assert schedule == ((5, 14, 5), (4, 0, 4), (4, 0, 4))


def test_a_schedule_past_the_deck_is_refused() -> None:
    assert sum(map(sum, street_schedule(CLASSIC_STREETS, (13, 13, 13, 13)))) == 52
    with pytest.raises(OpenFaceDealError, match="deals 55 cards"):
        street_schedule(CLASSIC_STREETS, (16, 13, 13, 13))


@pytest.mark.parametrize("streets", [(), (5, 0, 8)])
def test_a_street_deals_at_least_one_card(streets: tuple[int, ...]) -> None:
    with pytest.raises(OpenFaceDealError, match="at least one card"):
        street_schedule(streets, (None, None))


def test_cards_go_one_at_a_time_clockwise_from_the_dealers_left() -> None:
    schedule = street_schedule(TURBO_STREETS, (None, None, None))
    cards = deal_streets(DECK, 1, schedule)
    # Street 0: card k of the deck goes to seat (dealer + 1 + k) mod 3 for the first 15 cards.
    assert cards[0][2] == tuple(DECK[k] for k in (0, 3, 6, 9, 12))
    assert cards[0][0] == tuple(DECK[k] for k in (1, 4, 7, 10, 13))
    assert cards[0][1] == tuple(DECK[k] for k in (2, 5, 8, 11, 14))
    # Street 1 goes on from card 15, in the same order.
    assert cards[1][2] == tuple(DECK[k] for k in (15, 18, 21, 24))
    assert cards[2][1] == tuple(DECK[k] for k in (29, 32, 35, 38))


def test_a_seat_with_its_count_is_passed_over() -> None:
    schedule = street_schedule(CLASSIC_STREETS, (None, 13))
    cards = deal_streets(DECK, 0, schedule)
    # Seat 1 (the dealer's left) and seat 0 alternate for 10 cards, then seat 1 takes 8 more.
    assert cards[0][1] == tuple(DECK[k] for k in (0, 2, 4, 6, 8, *range(10, 18)))
    assert cards[0][0] == tuple(DECK[k] for k in (1, 3, 5, 7, 9))
    assert cards[1] == ((DECK[18],), ())


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("streets", [CLASSIC_STREETS, TURBO_STREETS])
def test_every_card_is_dealt_once(seats: int, streets: tuple[int, ...]) -> None:
    cards = deal_streets(DECK[::-1], seats - 1, street_schedule(streets, (None,) * seats))
    every = [card for street in cards for hand in street for card in hand]
    assert len(every) == 13 * seats == len(set(every))
    assert set(every) == set(DECK[::-1][: 13 * seats])  # the top of the deck, nothing else
    for seat in range(seats):
        assert sum(len(street[seat]) for street in cards) == 13


def test_a_deck_that_is_not_52_distinct_cards_is_refused() -> None:
    schedule = street_schedule(TURBO_STREETS, (None, None))
    with pytest.raises(OpenFaceDealError, match="52 distinct"):
        deal_streets(DECK[:51], 0, schedule)
    with pytest.raises(OpenFaceDealError, match="52 distinct"):
        deal_streets((*DECK[:51], DECK[0]), 0, schedule)
    with pytest.raises(FairnessError):
        deal_streets(DECK, 2, schedule)


def test_a_street_digest_pins_the_cards_of_one_street_and_seat() -> None:
    key = bytes(range(32))
    cards = DECK[:5]
    digest = street_digest(key, 0, 1, cards)
    message = (
        bytes.fromhex("00000019")
        + b"sapsam/fairness/v1/street"
        + b"\x00\x01"
        + bytes.fromhex("00000005")
        + bytes(card_bytes(cards))
    )
    assert digest == hmac.digest(key, message, "sha256")
    others = {
        street_digest(key, 1, 1, cards),
        street_digest(key, 0, 0, cards),
        street_digest(key, 0, 1, cards[::-1]),
        street_digest(bytes(32), 0, 1, cards),
    }
    assert digest not in others and len(others) == 4
    with pytest.raises(OpenFaceDealError, match="street 13"):
        street_digest(key, 13, 0, cards)
