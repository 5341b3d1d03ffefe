"""Pineapple's discards on the client (docs/fairness.md §23): the commitment sent with a
placement, and the cards and nonce kept until ``RevealDiscards`` opens them at the end of the deal.

A discard is one of three cards the seat holds: its commitment carries a fresh secret nonce
(16 bytes), which the client keeps beside its other open commitments (a
:class:`~sapsam_client.commitment_file.CommitmentFile`, ``sapsam-bot``'s state file, or this
module's :class:`KeptDiscards` in memory): a client that loses it cannot open the discard, and
the server then opens it from the seed at the deadline, with no nonce. Written from the
specification alone (tests/clients hold it to the server's ``check_discard``).
"""

from __future__ import annotations

import hashlib
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

from sapsam_client.commitment import _length_prefixed, card_index, fresh_nonce

TAG_DISCARD: Final = b"sapsam/fairness/v3/discard-commitment"
TAG_DISCARDS_REVEAL: Final = b"sapsam/player-signature/v1/discards-reveal"


def discard_commitment(
    table_id: uuid.UUID | str,
    deal_number: int,
    seat: int,
    player_id: str,
    street: int,
    cards: Sequence[str],
    nonce: bytes,
) -> bytes:
    """The 32-byte commitment (scheme 3) to the cards discarded on ``street`` (1 to 12)."""
    if not 16 <= len(nonce) <= 64:
        raise ValueError("a nonce is 16 to 64 bytes")
    if not 1 <= street <= 12 or not cards or len(set(cards)) != len(cards):
        raise ValueError("a discard is one or more distinct cards on a street 1 to 12")
    encoded = player_id.encode("utf-8")
    if not 1 <= len(encoded) <= 128:
        raise ValueError("a player id is 1 to 128 UTF-8 bytes")
    table = table_id if isinstance(table_id, uuid.UUID) else uuid.UUID(str(table_id))
    return hashlib.sha256(
        _length_prefixed(TAG_DISCARD)
        + table.bytes
        + deal_number.to_bytes(8, "big")
        + seat.to_bytes(1, "big")
        + _length_prefixed(encoded)
        + street.to_bytes(1, "big")
        + _length_prefixed(bytes(sorted(card_index(card) for card in cards)))
        + _length_prefixed(nonce)
    ).digest()


@dataclass(frozen=True)
class KeptDiscard:
    """One street's discard as the client keeps it until the end of the deal."""

    deal_number: int
    street: int
    cards: tuple[str, ...]
    nonce: bytes
    commitment: bytes


def new_discard(
    table_id: uuid.UUID | str,
    deal_number: int,
    seat: int,
    player_id: str,
    street: int,
    cards: Sequence[str],
) -> KeptDiscard:
    """A discard with a fresh nonce and its commitment."""
    nonce = fresh_nonce()
    commitment = discard_commitment(table_id, deal_number, seat, player_id, street, cards, nonce)
    return KeptDiscard(deal_number, street, tuple(cards), nonce, commitment)


def discards_reveal_message(
    table_id: uuid.UUID | str,
    deal_number: int,
    seat: int,
    player_id: str,
    openings: Sequence[KeptDiscard],
) -> bytes:
    """What a player signs to open its discards (docs/fairness.md §19, ``discards-reveal``):
    where, then ``u8(count)`` and for each opening in street order ``u8(street) ||
    lp(cards(sorted)) || lp(nonce)``."""
    table = table_id if isinstance(table_id, uuid.UUID) else uuid.UUID(str(table_id))
    body = b"".join(
        opening.street.to_bytes(1, "big")
        + _length_prefixed(bytes(sorted(card_index(card) for card in opening.cards)))
        + _length_prefixed(opening.nonce)
        for opening in openings
    )
    return (
        _length_prefixed(TAG_DISCARDS_REVEAL)
        + table.bytes
        + deal_number.to_bytes(8, "big")
        + seat.to_bytes(1, "big")
        + _length_prefixed(player_id.encode("utf-8"))
        + len(openings).to_bytes(1, "big")
        + body
    )


def discard_json(kept: KeptDiscard) -> dict[str, Any]:
    return {
        "street": kept.street,
        "cards": list(kept.cards),
        "nonce": kept.nonce.hex(),
        "commitment": kept.commitment.hex(),
    }


def discard_from_json(deal: int, entry: dict[str, Any]) -> KeptDiscard:
    return KeptDiscard(
        deal,
        int(entry["street"]),
        tuple(str(card) for card in entry["cards"]),
        bytes.fromhex(str(entry["nonce"])),
        bytes.fromhex(str(entry["commitment"])),
    )


def discards_from_json(entries: dict[str, Any]) -> dict[int, list[KeptDiscard]]:
    """A seat's kept discards by deal number, each deal's in street order."""
    return {
        int(deal): sorted(
            (discard_from_json(int(deal), entry) for entry in rows), key=lambda d: d.street
        )
        for deal, rows in entries.items()
    }


def with_discard(entries: dict[str, Any], kept: KeptDiscard) -> None:
    """Add ``kept`` to a seat's entries (replacing one kept for the same street)."""
    rows = [
        entry
        for entry in entries.get(str(kept.deal_number), [])
        if entry.get("street") != kept.street
    ]
    entries[str(kept.deal_number)] = [*rows, discard_json(kept)]


@runtime_checkable
class DiscardKeeper(Protocol):
    """Somewhere to keep a seat's discards until they are opened (``KeptDiscards`` in memory,
    ``CommitmentFile`` and ``sapsam-bot``'s state file on disk)."""

    def load_discards(self, seat: str) -> dict[int, list[KeptDiscard]]:
        """The seat's kept discards by deal number, in street order."""
        ...

    def save_discard(self, seat: str, kept: KeptDiscard) -> None:
        """Keep a discard before its commitment is sent."""
        ...

    def forget_discards(self, seat: str, deal: int) -> None:
        """Drop a deal's discards once opened."""
        ...


class KeptDiscards:
    """Discards kept in memory (a client's default: lost with the process)."""

    def __init__(self) -> None:
        self._entries: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def load_discards(self, seat: str) -> dict[int, list[KeptDiscard]]:
        with self._lock:
            return discards_from_json(dict(self._entries.get(seat, {})))

    def save_discard(self, seat: str, kept: KeptDiscard) -> None:
        with self._lock:
            with_discard(self._entries.setdefault(seat, {}), kept)

    def forget_discards(self, seat: str, deal: int) -> None:
        with self._lock:
            self._entries.get(seat, {}).pop(str(deal), None)
