"""Cards and arrangement commitments, computed on the client (docs/fairness.md §3 and §12).

A seat commits to its rows before anyone shows a card, by sending only::

    SHA-256( lp("sapsam/fairness/v1/arrangement-commitment") || uuid(table_id) || u64(deal)
             || u8(seat) || lp(sorted front) || lp(sorted middle) || lp(sorted back) || lp(nonce) )

where ``lp(b) = u32(len(b)) || b`` (big-endian) and each row is its cards' index bytes
(``rank * 4 + suit``) in ascending order. That is scheme 1; scheme 2 (docs/fairness.md §12.1, what
the SDK sends) binds the player too: tag ``sapsam/fairness/v2/arrangement-commitment`` and
``lp(utf8(player_id))`` right after ``u8(seat)``. The nonce is fresh CSPRNG output kept secret
until the reveal. This module is written from the specification alone; the tests hold it to the
published vectors and to the server's own implementation.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

RANKS: Final = "23456789TJQKA"
SUITS: Final = "cdhs"
SUIT_SYMBOLS: Final = {"♣": "c", "♦": "d", "♥": "h", "♠": "s"}
TAG: Final = b"sapsam/fairness/v1/arrangement-commitment"
TAG_V2: Final = b"sapsam/fairness/v2/arrangement-commitment"
NONCE_BYTES: Final = 32
ROW_SIZES: Final = {"front": 3, "middle": 5, "back": 5}


class CardError(ValueError):
    """A card that cannot be read."""


def card_index(text: str) -> int:
    """The index ``rank * 4 + suit`` of a card written ``"As"``, ``"td"``, ``"10h"`` or ``"Q♠"``."""
    token = text.strip()
    if token[:2] == "10":
        token = "T" + token[2:]
    if len(token) != 2:
        raise CardError(f"not a card: {text!r}")
    rank = RANKS.find(token[0].upper())
    suit = SUITS.find(SUIT_SYMBOLS.get(token[1], token[1]).lower())
    if rank < 0 or suit < 0:
        raise CardError(f"not a card: {text!r}")
    return rank * 4 + suit


def card_text(index: int) -> str:
    """The two-character form of a card index (``51`` -> ``"As"``)."""
    if not 0 <= index < 52:
        raise CardError(f"no card has index {index}")
    return RANKS[index // 4] + SUITS[index % 4]


def canonical(cards: Iterable[str]) -> tuple[str, ...]:
    """Cards in canonical deck order (2c 2d 2h 2s 3c … As), in the server's notation."""
    return tuple(card_text(index) for index in sorted(card_index(card) for card in cards))


@dataclass(frozen=True)
class Rows:
    """An arrangement as the API carries it: three rows of card strings."""

    front: tuple[str, ...]
    middle: tuple[str, ...]
    back: tuple[str, ...]

    @classmethod
    def of(cls, front: Iterable[str], middle: Iterable[str], back: Iterable[str]) -> Rows:
        """Rows from any iterables of card strings, normalised to the server's notation."""
        return cls(
            tuple(card_text(card_index(card)) for card in front),
            tuple(card_text(card_index(card)) for card in middle),
            tuple(card_text(card_index(card)) for card in back),
        )

    @property
    def cards(self) -> tuple[str, ...]:
        """All 13 cards, front then middle then back."""
        return self.front + self.middle + self.back

    def __str__(self) -> str:
        return " / ".join(" ".join(row) for row in (self.front, self.middle, self.back))


def _length_prefixed(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def encode_rows(rows: Rows) -> bytes:
    """``lp(front) || lp(middle) || lp(back)``, each row's index bytes in ascending order."""
    return b"".join(
        _length_prefixed(bytes(sorted(card_index(card) for card in row)))
        for row in (rows.front, rows.middle, rows.back)
    )


def arrangement_commitment(
    table_id: uuid.UUID | str,
    deal_number: int,
    seat: int,
    rows: Rows,
    nonce: bytes,
    *,
    scheme: int = 1,
    player_id: str | None = None,
) -> bytes:
    """The 32-byte commitment a seat sends before confirming (docs/fairness.md §12): scheme 1,
    or scheme 2, which needs the seat's ``player_id`` (the id, not ``players/{id}``)."""
    if not 16 <= len(nonce) <= 64:
        raise ValueError("a nonce is 16 to 64 bytes")
    if not 0 <= seat <= 255 or not 0 <= deal_number < 2**64:
        raise ValueError("seat or deal number out of range")
    table = table_id if isinstance(table_id, uuid.UUID) else uuid.UUID(str(table_id))
    if scheme == 1:
        tag, player = TAG, b""
    elif scheme == 2:
        encoded = (player_id or "").encode("utf-8")
        if not 1 <= len(encoded) <= 128:
            raise ValueError("scheme 2 needs the player id, 1 to 128 UTF-8 bytes")
        tag, player = TAG_V2, _length_prefixed(encoded)
    else:
        raise ValueError(f"commitment scheme must be 1 or 2, not {scheme}")
    return hashlib.sha256(
        _length_prefixed(tag)
        + table.bytes
        + deal_number.to_bytes(8, "big")
        + seat.to_bytes(1, "big")
        + player
        + encode_rows(rows)
        + _length_prefixed(nonce)
    ).digest()


TAG_DECLARATION: Final = b"sapsam/fairness/v1/natural-declaration"
DECLARATION_NONE: Final = "none"


def declaration_commitment(
    table_id: uuid.UUID | str,
    deal_number: int,
    seat: int,
    player_id: str,
    declaration: str,
    nonce: bytes,
) -> bytes:
    """The 32-byte commitment to a natural declaration (``none`` or a natural's name) a seat
    sends with ``DeclareNatural`` before its arrangement's (docs/fairness.md §21)."""
    if not 16 <= len(nonce) <= 64:
        raise ValueError("a nonce is 16 to 64 bytes")
    if not 0 <= seat <= 255 or not 0 <= deal_number < 2**64:
        raise ValueError("seat or deal number out of range")
    player = player_id.encode("utf-8")
    name = declaration.encode("utf-8")
    if not 1 <= len(player) <= 128 or not 1 <= len(name) <= 32:
        raise ValueError("the player id is 1 to 128 UTF-8 bytes, the declaration 1 to 32")
    table = table_id if isinstance(table_id, uuid.UUID) else uuid.UUID(str(table_id))
    return hashlib.sha256(
        _length_prefixed(TAG_DECLARATION)
        + table.bytes
        + deal_number.to_bytes(8, "big")
        + seat.to_bytes(1, "big")
        + _length_prefixed(player)
        + _length_prefixed(name)
        + _length_prefixed(nonce)
    ).digest()


def fresh_nonce() -> bytes:
    """A new secret nonce: 32 bytes from the operating system's CSPRNG."""
    return secrets.token_bytes(NONCE_BYTES)


def row_problem(rows: Rows, dealt: Sequence[str]) -> str:
    """Why ``rows`` cannot be a hand of the ``dealt`` cards (sizes, repeats, strangers); ``""`` if
    they can. Row order (front <= middle <= back) needs the rules: see ``sapsam_client.rules``."""
    for name, row in (("front", rows.front), ("middle", rows.middle), ("back", rows.back)):
        if len(row) != ROW_SIZES[name]:
            return f"the {name} row has {len(row)} cards, it needs {ROW_SIZES[name]}"
    placed = [card_index(card) for card in rows.cards]
    if len(set(placed)) != len(placed):
        return "a card is placed twice"
    strangers = set(placed) - {card_index(card) for card in dealt}
    if strangers:
        return "not in your hand: " + " ".join(card_text(card) for card in sorted(strangers))
    return ""
