"""Open face's deal order: which cards of the cut deck go to which seat on which street.

The deck is shuffled and cut exactly as for the closed game (docs/fairness.md §2–§4); only the
deal differs. A deal of open face is a **schedule**: for each street, how many cards each seat
receives (``street_schedule``): a seat playing a normal hand gets its rule set's
``street_cards[s]`` on street ``s``; a seat in Fantasyland gets all of its cards on street 0 and
none after. The cards are taken from the top of the cut deck, street after street; within a
street one card at a time, clockwise from the dealer's left, a seat that has its count for the
street being passed over (``deal_streets``). So the whole deal follows from the seed, the
entropy and the cut, like the closed game's, and a verifier recomputes every street's cards once
the seed is published.

Each street's cards are pinned in the log without being shown: ``street_digest`` is the HMAC of a
seat's cards of a street under the deal's record key (docs/fairness.md §10 and §22), which
``StreetDealt`` records for each seat dealt cards.

Pure: no I/O, no randomness.
"""

from __future__ import annotations

import hmac
import uuid
from collections.abc import Sequence
from functools import lru_cache
from typing import Final

from sapsam.fairness.deal import cut_deck
from sapsam.fairness.encoding import (
    TAG_PREFIX,
    card_bytes,
    length_prefixed,
    require_seat,
    require_seat_count,
    u8,
)
from sapsam.fairness.shuffle import shuffle_deck
from sapsam.rules.cards import Card

__all__ = [
    "DECK_SIZE",
    "TAG_STREET_RECORD",
    "OpenFaceDealError",
    "deal_streets",
    "street_digest",
    "street_record_message",
    "street_schedule",
]

DECK_SIZE: Final = 52
MAX_STREETS: Final = 13
TAG_STREET_RECORD: Final = TAG_PREFIX + b"street"
_TAG_STREET_RECORD_PREFIX: Final = length_prefixed(TAG_STREET_RECORD)


class OpenFaceDealError(ValueError):
    """A schedule the deck cannot deal, or inputs out of range."""


def street_schedule(
    street_cards: Sequence[int], fantasyland: Sequence[int | None]
) -> tuple[tuple[int, ...], ...]:
    """``schedule[street][seat]``: the cards each seat receives on each street.

    ``fantasyland[seat]`` is the number of cards the seat gets at once (a Fantasyland hand), or
    None for a normal hand dealt ``street_cards`` street by street."""
    require_seat_count(len(fantasyland))
    if not street_cards or any(count < 1 for count in street_cards):
        raise OpenFaceDealError(f"streets must deal at least one card each: {list(street_cards)}")
    schedule = tuple(
        tuple(
            (count if at_once is None else (at_once if street == 0 else 0))
            for at_once in fantasyland
        )
        for street, count in enumerate(street_cards)
    )
    total = sum(map(sum, schedule))
    if total > DECK_SIZE:
        raise OpenFaceDealError(f"the schedule deals {total} cards; the deck holds {DECK_SIZE}")
    return schedule


def deal_streets(
    deck: Sequence[Card], dealer: int, schedule: Sequence[Sequence[int]]
) -> tuple[tuple[tuple[Card, ...], ...], ...]:
    """``cards[street][seat]``: the cut ``deck`` dealt by ``schedule`` (see the module
    docstring), each seat's cards of a street in the order received."""
    if len(deck) != DECK_SIZE or len(set(deck)) != DECK_SIZE:
        raise OpenFaceDealError(f"a deck is {DECK_SIZE} distinct cards")
    seat_count = len(schedule[0]) if schedule else 0
    require_seat(dealer, require_seat_count(seat_count), "dealer")
    order = [(dealer + 1 + step) % seat_count for step in range(seat_count)]
    top = 0
    streets: list[tuple[tuple[Card, ...], ...]] = []
    for counts in schedule:
        if len(counts) != seat_count:
            raise OpenFaceDealError("every street of a schedule covers every seat")
        received: list[list[Card]] = [[] for _ in range(seat_count)]
        for _round in range(max(counts, default=0)):
            for seat in order:
                if len(received[seat]) < counts[seat]:
                    if top == DECK_SIZE:
                        raise OpenFaceDealError(f"the schedule deals more than {DECK_SIZE} cards")
                    received[seat].append(deck[top])
                    top += 1
        streets.append(tuple(tuple(cards) for cards in received))
    return tuple(streets)


Streets = tuple[tuple[tuple[Card, ...], ...], ...]
"""``streets[street][seat]``: the cards each seat receives on each street of a deal."""


@lru_cache(maxsize=256)
def deal_of_seed(
    table_id: uuid.UUID,
    deal_number: int,
    seed: bytes,
    contributions: tuple[bytes | None, ...],
    cut_position: int,
    dealer: int,
    schedule: tuple[tuple[int, ...], ...],
) -> Streets:
    """Every street's cards of a deal, from its ``seed``: the deck shuffled with the
    contributions (§3), cut (§4) and dealt by ``schedule`` (:func:`deal_streets`). The one place
    a deal's streets are computed from its seed: pure, so each deal's is computed once and kept
    (the last few hundred; the service asks it at every step of an append, the verifier at
    every event of a deal)."""
    deck = shuffle_deck(seed, contributions, table_id, deal_number)
    return deal_streets(cut_deck(deck, cut_position), dealer, schedule)


def street_record_message(street: int, seat: int, cards: bytes) -> bytes:
    """What :func:`street_digest` signs: ``lp(street tag) || u8(street) || u8(seat) ||
    lp(street cards)``."""
    if not 0 <= street < MAX_STREETS:
        raise OpenFaceDealError(f"street {street} is outside 0..{MAX_STREETS - 1}")
    return _TAG_STREET_RECORD_PREFIX + u8(street) + u8(seat) + length_prefixed(cards)


def street_digest(key: bytes, street: int, seat: int, cards: Sequence[int]) -> bytes:
    """``HMAC(record_key, lp(street tag) || u8(street) || u8(seat) || lp(cards in dealt
    order))``: a seat's cards of one street, pinned and hidden until the seed is published."""
    return hmac.digest(key, street_record_message(street, seat, card_bytes(cards)), "sha256")
