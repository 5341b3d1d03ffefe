"""The seed, its commitment, the keyed counter stream and the unbiased Fisher–Yates shuffle.

docs/fairness.md §3–§5 specify every byte. In short::

    seed_commitment = SHA-256(lp(tag) || table_id || u64(deal) || lp(seed))
    shuffle_key     = SHA-256(lp(tag) || table_id || u64(deal) || lp(seed) || u8(seats)
                              || for each seat in seat order: 0x00 | 0x01 || lp(contribution))
    block[c]        = HMAC-SHA256(shuffle_key, u64(c)),  c = 0, 1, 2, ...
    words           = the blocks' bytes read as consecutive big-endian u32
    for i = 51 down to 1: j = next accepted word mod (i + 1); swap deck[i], deck[j]

A word ``w`` is accepted for a bound ``n`` only if ``w < 2**32 - (2**32 mod n)``: the accepted
range holds every residue mod ``n`` equally often, so ``w mod n`` is exactly uniform.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import struct
import uuid
from collections.abc import Callable, Iterator, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from sapsam.fairness.encoding import (
    DECK_SIZE,
    SEED_BYTES,
    TAG_LOT_COMMITMENT,
    TAG_LOT_KEY,
    TAG_SEED_COMMITMENT,
    TAG_SHUFFLE_KEY,
    FairnessError,
    deal_seed_fields,
    keyed_hmac_sha256,
    length_prefixed,
    require_contribution,
    require_seat_count,
    require_seed,
    require_table_id,
    u8,
    u64,
)
from sapsam.rules.cards import DECK, Card

WORD_BITS: Final = 32
WORDS_PER_BLOCK: Final = 8
# 51 draws need 51 words; seven blocks give 56, so a whole shuffle almost always takes one pass.
_FIRST_BLOCKS: Final = 7
_WORD_FORMAT: Final = struct.Struct(">" + "I" * (WORDS_PER_BLOCK * _FIRST_BLOCKS))
_BLOCK_FORMAT: Final = struct.Struct(">" + "I" * WORDS_PER_BLOCK)

_Item = TypeVar("_Item")


# Each tag's length-prefixed bytes, encoded once (they are the same on every call).
_TAG_LOT_COMMITMENT_PREFIX: Final = length_prefixed(TAG_LOT_COMMITMENT)
_TAG_LOT_KEY_PREFIX: Final = length_prefixed(TAG_LOT_KEY)
_TAG_SEED_COMMITMENT_PREFIX: Final = length_prefixed(TAG_SEED_COMMITMENT)
_TAG_SHUFFLE_KEY_PREFIX: Final = length_prefixed(TAG_SHUFFLE_KEY)


def new_seed() -> bytes:
    """A fresh 32-byte seed from the operating system's CSPRNG (the only randomness here)."""
    return secrets.token_bytes(SEED_BYTES)


def seed_commitment(table_id: uuid.UUID, deal_number: int, seed: bytes) -> bytes:
    """The 32-byte SHA-256 commitment to a deal's seed, published before anyone acts on the deal."""
    return hashlib.sha256(
        _TAG_SEED_COMMITMENT_PREFIX + deal_seed_fields(table_id, deal_number, seed)
    ).digest()


def encode_contributions(contributions: Sequence[bytes | None]) -> bytes:
    """``u8(seat count)`` then, per seat in seat order, ``0x00`` (none) or ``0x01 || lp(bytes)``."""
    seat_count = require_seat_count(len(contributions))
    parts = [u8(seat_count)]
    for seat, contribution in enumerate(contributions):
        checked = require_contribution(contribution, seat)
        parts.append(b"\x00" if checked is None else b"\x01" + length_prefixed(checked))
    return b"".join(parts)


def shuffle_key(
    seed: bytes, contributions: Sequence[bytes | None], table_id: uuid.UUID, deal_number: int
) -> bytes:
    """The 32-byte HMAC key of the deal's counter stream: seed and every seat's entropy mixed."""
    return hashlib.sha256(
        _TAG_SHUFFLE_KEY_PREFIX
        + deal_seed_fields(table_id, deal_number, seed)
        + encode_contributions(contributions)
    ).digest()


def stream_block(key: bytes, counter: int) -> bytes:
    """Block ``counter`` of the stream: ``HMAC-SHA256(key, u64(counter))``."""
    return hmac.digest(key, u64(counter), "sha256")


def stream_words(key: bytes) -> Iterator[int]:
    """The stream as an endless sequence of big-endian 32-bit words (8 per block)."""
    counter = 0
    while True:
        yield from _BLOCK_FORMAT.unpack(stream_block(key, counter))
        counter += 1


def acceptance_limit(bound: int, word_bits: int = WORD_BITS) -> int:
    """Words below this limit are accepted for ``bound``: the largest multiple of ``bound``.

    ``word_bits`` is a parameter only so the tests can enumerate every word of a small size.
    """
    if not 1 <= bound <= 1 << word_bits:
        raise FairnessError(f"bound {bound} is outside 1..2**{word_bits}")
    space = 1 << word_bits
    return space - space % bound


def accept_word(word: int, bound: int, word_bits: int = WORD_BITS) -> int | None:
    """The index ``word mod bound`` if the word is accepted, ``None`` if it must be rejected."""
    if word < acceptance_limit(bound, word_bits):
        return word % bound
    return None


def draw_index(words: Iterator[int], bound: int, word_bits: int = WORD_BITS) -> int:
    """A uniform index ``0 .. bound - 1``: take words until one is accepted (rejection sampling)."""
    limit = acceptance_limit(bound, word_bits)
    for word in words:
        if word < limit:
            return word % bound
    raise FairnessError("the word stream ended before a word was accepted")


def fisher_yates(items: MutableSequence[_Item], draw: Callable[[int], int]) -> None:
    """Shuffle in place: for ``i`` from the last position down to 1, swap ``i`` with ``draw(i+1)``.

    The reference form of the loop, written for any item type and any index source; the deal
    uses the faster :func:`shuffle_deck`, which the tests show to be identical.
    """
    for position in range(len(items) - 1, 0, -1):
        other = draw(position + 1)
        items[position], items[other] = items[other], items[position]


# The u64 counters of the first blocks, encoded once.
_COUNTERS: Final = tuple(u64(counter) for counter in range(_FIRST_BLOCKS))
# Precomputed acceptance limits for the bounds a 52-card shuffle uses (index = bound).
_LIMITS: Final = (0, *(acceptance_limit(bound) for bound in range(1, DECK_SIZE + 1)))
# The draws of a shuffle, their positions in draw order, and the lowest limit any draw uses.
_DRAWS: Final = DECK_SIZE - 1
_POSITIONS: Final = tuple(range(DECK_SIZE - 1, 0, -1))
_BOUNDS: Final = tuple(position + 1 for position in _POSITIONS)
_LOWEST_LIMIT: Final = min(_LIMITS[2:])


def shuffle_words(
    first_words: Sequence[int], first_counter: int, block_words: Callable[[int], Sequence[int]]
) -> tuple[Card, ...]:
    """The canonical deck shuffled by a word stream: the loop of :func:`fisher_yates` with
    :func:`draw_index`, unrolled for speed.

    ``first_words`` are the stream's words from its start, ``block_words(c)`` the words of block
    ``c``; it is called for ``c = first_counter, first_counter + 1, …`` only when rejections use
    up ``first_words``.
    """
    words = tuple(first_words)
    if len(words) >= _DRAWS and max(words[:_DRAWS]) < _LOWEST_LIMIT:
        # No word among the first 51 can be rejected (each is below every bound's limit), so
        # word k is draw k: the same swaps as the loop below, without its acceptance tests.
        # The cards themselves are swapped (no index-to-card pass at the end), each position
        # with its bound precomputed.
        fast = list(DECK)
        for position, bound, word in zip(_POSITIONS, _BOUNDS, words, strict=False):
            other = word % bound
            fast[position], fast[other] = fast[other], fast[position]
        return tuple(fast)
    next_counter = first_counter
    used = 0
    deck = list(range(DECK_SIZE))
    limits = _LIMITS
    for position in range(DECK_SIZE - 1, 0, -1):
        bound = position + 1
        limit = limits[bound]
        while True:
            if used == len(words):
                words = words + tuple(block_words(next_counter))
                next_counter += 1
            word = words[used]
            used += 1
            if word < limit:
                break
        other = word % bound
        deck[position], deck[other] = deck[other], deck[position]
    return tuple(map(DECK.__getitem__, deck))


def shuffle_with_key(key: bytes) -> tuple[Card, ...]:
    """The canonical deck shuffled by the counter stream of ``key``."""
    # The key's HMAC states are set up once for all the blocks: the same HMAC-SHA256 values as
    # stream_block, without keying a new HMAC for each of the seven blocks.
    mac = keyed_hmac_sha256(key)

    def block(counter: int) -> bytes:
        return mac(_COUNTERS[counter] if counter < _FIRST_BLOCKS else u64(counter))

    first = _WORD_FORMAT.unpack(b"".join([mac(counter) for counter in _COUNTERS]))
    # Rejections are rare (p < 2**-26 per word); more blocks are fetched only when they happen.
    return shuffle_words(first, _FIRST_BLOCKS, lambda counter: _BLOCK_FORMAT.unpack(block(counter)))


def shuffle_deck(
    seed: bytes, contributions: Sequence[bytes | None], table_id: uuid.UUID, deal_number: int
) -> tuple[Card, ...]:
    """The deal's shuffled deck, top card first, before the cut.

    ``contributions`` holds one entry per seat (its length is the seat count, 2 .. 4); ``None``
    marks a seat that contributed nothing, which is encoded explicitly and differs from any bytes.
    """
    return shuffle_with_key(shuffle_key(seed, contributions, table_id, deal_number))


@dataclass(frozen=True)
class DealerLot:
    """The draw for the first dealer: ``cards[seat]`` is the card that seat drew.

    The highest card deals: higher rank first, and between equal ranks the higher suit in deck
    order (clubs < diamonds < hearts < spades), i.e. simply the highest card index. Two seats
    never draw the same card, so there is never a tie left to break.
    """

    cards: tuple[Card, ...]
    dealer: int


def lot_commitment(table_id: uuid.UUID, lot_seed: bytes) -> bytes:
    """The 32-byte SHA-256 commitment to the lot seed, published before the draw."""
    return hashlib.sha256(
        _TAG_LOT_COMMITMENT_PREFIX
        + require_table_id(table_id)
        + length_prefixed(require_seed(lot_seed, "lot seed"))
    ).digest()


def lot_key(table_id: uuid.UUID, lot_seed: bytes) -> bytes:
    """The stream key of the lot deck."""
    return hashlib.sha256(
        _TAG_LOT_KEY_PREFIX
        + require_table_id(table_id)
        + length_prefixed(require_seed(lot_seed, "lot seed"))
    ).digest()


def draw_dealer(lot_seed: bytes, table_id: uuid.UUID, seat_count: int) -> DealerLot:
    """Draw the first dealer by lot: the lot deck is shuffled, seat ``s`` takes card ``s`` from
    the top, and the seat with the highest card deals."""
    require_seat_count(seat_count)
    deck = shuffle_with_key(lot_key(table_id, lot_seed))
    cards = deck[:seat_count]
    dealer = max(range(seat_count), key=lambda seat: cards[seat])
    return DealerLot(cards=cards, dealer=dealer)
