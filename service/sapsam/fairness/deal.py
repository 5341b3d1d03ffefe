"""Seats and directions, the cut, the deal, and the dealer's record of each stage.

Seats are numbered ``0 .. n-1`` and the numbers increase **clockwise**. "Left" of a seat is the
next seat clockwise (``seat + 1 mod n``), "right" the previous one (``seat - 1 mod n``). The seat
on the dealer's right cuts; the deal starts on the dealer's left and goes clockwise, one card at a
time, 13 cards to each seat; with fewer than four seats the rest of the deck is not used.

The *deal record* holds keyed digests of the deck after the shuffle, after the cut, and of each
seat's hand after the deal. The server publishes it when it deals (it reveals nothing while the
seed is secret, because the key comes from the seed); once the seed is public, it lets a verifier
say which published fact was altered, stage by stage (docs/fairness.md §7, §9).
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from sapsam.fairness.encoding import (
    DECK_SIZE,
    HAND_SIZE,
    MAX_SEATS,
    TAG_CUT_DECK_RECORD,
    TAG_DECK_RECORD,
    TAG_HAND_RECORD,
    TAG_RECORD_KEY,
    FairnessError,
    card_bytes,
    deal_seed_fields,
    length_prefixed,
    require_cards,
    require_seat,
    require_seat_count,
    u8,
)
from sapsam.fairness.shuffle import shuffle_deck
from sapsam.rules.cards import DECK, Card

# Each tag's length-prefixed bytes, encoded once (they are the same on every call).
_TAG_CUT_DECK_RECORD_PREFIX: Final = length_prefixed(TAG_CUT_DECK_RECORD)
_TAG_DECK_RECORD_PREFIX: Final = length_prefixed(TAG_DECK_RECORD)
_TAG_HAND_RECORD_PREFIX: Final = length_prefixed(TAG_HAND_RECORD)
_TAG_RECORD_KEY_PREFIX: Final = length_prefixed(TAG_RECORD_KEY)
# lp(hand tag) || u8(seat) for each seat of a table.
_HAND_RECORD_PREFIXES: Final = tuple(
    _TAG_HAND_RECORD_PREFIX + u8(seat) for seat in range(MAX_SEATS)
)


def left_of(seat: int, seat_count: int) -> int:
    """The seat on ``seat``'s left: the next seat clockwise, ``seat + 1 mod seat_count``."""
    require_seat(seat, require_seat_count(seat_count))
    return (seat + 1) % seat_count


def right_of(seat: int, seat_count: int) -> int:
    """The seat on ``seat``'s right: the previous seat clockwise, ``seat - 1 mod seat_count``."""
    require_seat(seat, require_seat_count(seat_count))
    return (seat - 1) % seat_count


def cutter_for(dealer: int, seat_count: int) -> int:
    """The seat that cuts: the one on the dealer's right."""
    return right_of(dealer, seat_count)


def _require_deck(deck: Sequence[int]) -> bytes:
    cards = require_cards(deck, "deck")
    if len(cards) != DECK_SIZE or len(set(cards)) != DECK_SIZE:
        raise FairnessError(
            f"a deck is 52 distinct cards, got {len(cards)} ({len(set(cards))} distinct)"
        )
    return cards


def require_cut_position(position: int) -> int:
    """A cut position is an integer 1 .. 51 (0 or 52 would be no cut at all)."""
    if isinstance(position, bool) or not isinstance(position, int):
        raise FairnessError(f"cut position must be an integer, not {position!r}")
    if not 1 <= position <= DECK_SIZE - 1:
        raise FairnessError(f"cut position {position} is outside 1..51")
    return position


def cut_deck(deck: Sequence[int], position: int) -> tuple[Card, ...]:
    """Cut at ``position`` (1 .. 51): the top ``position`` cards go to the bottom.

    ``result = deck[position:] + deck[:position]``, so the card that was at ``position`` (0-based,
    from the top) becomes the top card. Position 0 or 52 would be no cut at all and is refused.
    """
    require_cut_position(position)
    cards = _require_deck(deck)
    return tuple(map(DECK.__getitem__, cards[position:] + cards[:position]))


def _deal_bytes(cards: bytes, dealer: int, seat_count: int) -> tuple[bytes, ...]:
    first = (dealer + 1) % seat_count
    hands: list[bytes] = [b""] * seat_count
    for offset in range(seat_count):
        hands[(first + offset) % seat_count] = cards[offset : HAND_SIZE * seat_count : seat_count]
    return tuple(hands)


def deal_hands(deck: Sequence[int], dealer: int, seat_count: int) -> tuple[tuple[Card, ...], ...]:
    """Deal 13 cards to each seat from the top, one at a time, clockwise from the dealer's left.

    Card ``k`` (0-based from the top) goes to seat ``(dealer + 1 + k) mod seat_count``; each hand
    lists its cards in the order received; ``result[seat]`` is that seat's hand.
    """
    require_seat(dealer, require_seat_count(seat_count), "dealer")
    cards = _require_deck(deck)
    return tuple(
        tuple(map(DECK.__getitem__, hand)) for hand in _deal_bytes(cards, dealer, seat_count)
    )


def deal_hand_bytes(cards: bytes, dealer: int, seat_count: int) -> tuple[bytes, ...]:
    """:func:`deal_hands` as card bytes, from the card bytes of a deck the caller made (a shuffle
    and a cut of the canonical deck, so 52 distinct cards: the deck is not checked again here)."""
    require_seat(dealer, require_seat_count(seat_count), "dealer")
    return _deal_bytes(cards, dealer, seat_count)


def hands_for_deal(
    seed: bytes,
    contributions: Sequence[bytes | None],
    table_id: uuid.UUID,
    deal_number: int,
    cut_position: int,
    dealer: int,
    seat_count: int,
) -> tuple[tuple[Card, ...], ...]:
    """Each seat's 13 cards: shuffle, cut, deal. The one function the server and verifier share."""
    _require_matching_seats(contributions, seat_count)
    deck = shuffle_deck(seed, contributions, table_id, deal_number)
    return deal_hands(cut_deck(deck, cut_position), dealer, seat_count)


def remembered_hands_for_deal(
    seed: bytes,
    contributions: Sequence[bytes | None],
    table_id: uuid.UUID,
    deal_number: int,
    cut_position: int,
    dealer: int,
    seat_count: int,
) -> tuple[tuple[Card, ...], ...]:
    """``hands_for_deal``, the hands of the last deals kept: a server deals a deck for each
    seat's hand, each reveal and the score (~120 us a time); the same inputs give the same
    hands, so it deals once. (The seeds are the server's secrets, which it keeps anyway.)"""
    return _remembered_hands(
        seed, tuple(contributions), table_id, deal_number, cut_position, dealer, seat_count
    )


_remembered_hands = lru_cache(maxsize=256)(hands_for_deal)


def _require_matching_seats(contributions: Sequence[bytes | None], seat_count: int) -> None:
    require_seat_count(seat_count)
    if len(contributions) != seat_count:
        raise FairnessError(
            f"contributions must have one entry per seat ({seat_count}), got {len(contributions)}"
        )


@dataclass(frozen=True)
class DealRecord:
    """Keyed digests of each stage of a deal, published by the dealer when it deals.

    ``deck`` is the shuffled deck before the cut, ``cut_deck`` the deck after the cut, and
    ``hands[seat]`` each seat's hand; all are 32-byte HMAC-SHA256 values under the record key.
    """

    deck: bytes
    cut_deck: bytes
    hands: tuple[bytes, ...]


def record_key(table_id: uuid.UUID, deal_number: int, seed: bytes) -> bytes:
    """The HMAC key of the deal record; it depends on the seed alone, not on the contributions."""
    return hashlib.sha256(
        _TAG_RECORD_KEY_PREFIX + deal_seed_fields(table_id, deal_number, seed)
    ).digest()


def deck_record_message(cards: bytes) -> bytes:
    """What :func:`deck_digest` signs: ``lp(deck tag) || 52 card bytes``."""
    return _TAG_DECK_RECORD_PREFIX + cards


def cut_deck_record_message(cards: bytes) -> bytes:
    """What :func:`cut_deck_digest` signs: ``lp(cut-deck tag) || 52 card bytes``."""
    return _TAG_CUT_DECK_RECORD_PREFIX + cards


def hand_record_message(seat: int, cards: bytes) -> bytes:
    """What :func:`hand_digest` signs: ``lp(hand tag) || u8(seat) || lp(hand cards)``."""
    if type(seat) is int and 0 <= seat < MAX_SEATS and type(cards) is bytes:
        # A table's seat and card bytes (every hand of every deal): its prefix made once.
        return _HAND_RECORD_PREFIXES[seat] + len(cards).to_bytes(4, "big") + cards
    return _TAG_HAND_RECORD_PREFIX + u8(seat) + length_prefixed(cards)


def deck_digest(key: bytes, deck: Sequence[int]) -> bytes:
    """``HMAC(key, lp(deck tag) || 52 card bytes)`` for the shuffled deck, top first."""
    return hmac.digest(key, deck_record_message(card_bytes(deck)), "sha256")


def cut_deck_digest(key: bytes, deck: Sequence[int]) -> bytes:
    """``HMAC(key, lp(cut-deck tag) || 52 card bytes)`` for the deck after the cut, top first."""
    return hmac.digest(key, cut_deck_record_message(card_bytes(deck)), "sha256")


def hand_digest(key: bytes, seat: int, hand: Sequence[int]) -> bytes:
    """``HMAC(key, lp(hand tag) || u8(seat) || lp(hand cards in dealt order))``."""
    return hmac.digest(key, hand_record_message(seat, card_bytes(hand)), "sha256")


def deal_record(
    seed: bytes,
    contributions: Sequence[bytes | None],
    table_id: uuid.UUID,
    deal_number: int,
    cut_position: int,
    dealer: int,
    seat_count: int,
) -> DealRecord:
    """The record the dealer publishes with the deal (same inputs as :func:`hands_for_deal`)."""
    _require_matching_seats(contributions, seat_count)
    key = record_key(table_id, deal_number, seed)
    deck = shuffle_deck(seed, contributions, table_id, deal_number)
    after_cut = cut_deck(deck, cut_position)
    hands = deal_hands(after_cut, dealer, seat_count)
    return DealRecord(
        deck=deck_digest(key, deck),
        cut_deck=cut_deck_digest(key, after_cut),
        hands=tuple(hand_digest(key, seat, hand) for seat, hand in enumerate(hands)),
    )
