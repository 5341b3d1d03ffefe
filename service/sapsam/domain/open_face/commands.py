"""Open face's commands for the play of a deal: plain frozen records, judged by ``deal_decide``.

Cards a seat was dealt come from the secret seed, which the domain never reads: the application
computes them and passes them in (``dealt``), as it does for the closed game's reveal; the
domain checks moves against them and records only what may be recorded.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sapsam.domain.commands import PlayerSignature
from sapsam.domain.table_deadlines import UnservedWindow
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card
from sapsam.rules.open_face.board import Placement
from sapsam.rules.open_face.parameters import OpenFaceRules

__all__ = [
    "CommitFantasyland",
    "CreateOpenFaceTable",
    "DealStreet",
    "PlaceCards",
    "PlaceForSeat",
    "RevealDiscards",
    "RevealFantasyland",
    "TimeOutDiscards",
    "TimeOutFantasyland",
]


@dataclass(frozen=True)
class DealStreet:
    """Deal the next street: ``digests[seat]`` is the HMAC of the seat's cards of the street
    under the deal's record key (empty for a seat dealt none), as the application computed it."""

    digests: tuple[bytes, ...]
    now_ms: int = 0


@dataclass(frozen=True)
class PlaceCards:
    """Place this seat's cards of ``street``; ``dealt`` are those cards, from the seed.

    On a Pineapple street after the first the dealt cards not placed are discarded, and
    ``discard_commitment`` (32 bytes, docs/fairness.md §23) binds them until the deal ends;
    it is refused on a street that discards nothing."""

    player_id: str
    street: int
    placement: Placement
    dealt: tuple[Card, ...]
    deal_number: int | None = None
    now_ms: int = 0
    discard_commitment: bytes | None = None
    signature: PlayerSignature | None = None
    """The player's signature of the move (docs/fairness.md §19), required once it has a key."""
    player_keys: tuple[bytes, ...] = ()
    """The player's registered keys (``CommitArrangement.player_keys``)."""


@dataclass(frozen=True)
class RevealDiscards:
    """Open every discard this seat committed, at the end of the deal: ``cards[i]`` and
    ``nonces[i]`` for its ``i``-th commitment (street order); ``dealt[street]`` are the seat's
    cards of each street, from the seed (the application passes them, as for a reveal)."""

    player_id: str
    cards: tuple[tuple[Card, ...], ...]
    nonces: tuple[bytes, ...]
    dealt: tuple[tuple[Card, ...], ...]
    deal_number: int | None = None
    signature: PlayerSignature | None = None
    """The player's signature of the ``discards-reveal`` message (docs/fairness.md §19),
    required once it has a key."""
    player_keys: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class PlaceForSeat:
    """The service places the cards of the seat on turn (``dealt``, from the seed): a forced
    move (``automatic_moves``), a hand whose moves are all made for it after a timeout, or,
    with ``timed_out``, the move of a seat whose deadline has passed (``timeout_policy``). With
    ``timed_out``, every Fantasyland seat past the first street's deadline without setting its
    hand is timed out first (``FantasylandTimedOut``, as ``TimeOutFantasyland``), and that
    alone: the seat on turn, if overdue too, is placed for by the next such command.

    ``unserved`` and ``grace_ms`` (with ``timed_out``): the windows when no server served and
    the grace after each, as in the closed game's ``TimeOutSeats``: a passed deadline such a
    window makes unfair is extended instead (``DeadlinesExtended``;
    ``sapsam.domain.open_face.deal_deadlines``), and nothing is timed out by that command."""

    dealt: tuple[Card, ...]
    now_ms: int = 0
    timed_out: bool = False
    unserved: tuple[UnservedWindow, ...] = ()
    grace_ms: int = 0
    forced_seat: int | None = None
    """The operator's ``ForceSeatTimeout`` (with ``timed_out``): time this one seat out now,
    whether or not its deadline passed, with the events its deadline would have recorded (the
    seat on turn placed for, or its Fantasyland hand timed out); nothing is extended then."""


@dataclass(frozen=True)
class CommitFantasyland:
    """Set a Fantasyland hand face down: the 32-byte commitment to its rows and a nonce."""

    player_id: str
    commitment: bytes
    deal_number: int | None = None
    now_ms: int = 0
    """When it is made: the last hand set opens the reveals, due ``move_seconds`` after it (at a
    table without them, ``reveal_seconds``)."""
    signature: PlayerSignature | None = None
    """The player's signature of the move (docs/fairness.md §19), required once it has a key."""
    player_keys: tuple[bytes, ...] = ()
    """The player's registered keys (``CommitArrangement.player_keys``)."""


@dataclass(frozen=True)
class RevealFantasyland:
    """Open the Fantasyland hand committed; ``dealt`` are the seat's cards, from the seed."""

    player_id: str
    arrangement: Arrangement
    nonce: bytes
    dealt: tuple[Card, ...]
    deal_number: int | None = None
    signature: PlayerSignature | None = None
    """The player's signature of the move (docs/fairness.md §19), required once it has a key."""
    player_keys: tuple[bytes, ...] = ()
    """The player's registered keys (``CommitArrangement.player_keys``)."""


@dataclass(frozen=True)
class TimeOutDiscards:
    """The seat ``seat`` has not opened its discards by the deadline set when the last
    placement was made (``move_seconds``): the service opens them for it, each street's dealt
    cards (``dealt[street]``, from the seed) left off its board, with no nonce; refused before
    the deadline (``now_ms``)."""

    seat: int
    dealt: tuple[tuple[Card, ...], ...]
    now_ms: int
    unserved: tuple[UnservedWindow, ...] = ()
    """When no server served (``PlaceForSeat.unserved``): a deadline that fell in one, or within
    ``grace_ms`` after it, is extended (stage ``discarding``) instead of enforced."""
    grace_ms: int = 0
    forced: bool = False
    """The operator's ``ForceSeatTimeout``: opened now, whether or not the deadline passed (or
    the table has none); no extension."""


@dataclass(frozen=True)
class TimeOutFantasyland:
    """The Fantasyland ``seat`` has not set its hand by the first street's deadline: the service
    takes it over (``timeout_policy``); refused before the deadline (``now_ms``). The hand is
    set and opened when the seed is revealed (``RevealSeed``, which deals its cards again)."""

    seat: int
    now_ms: int


@dataclass(frozen=True)
class CreateOpenFaceTable:
    """Create an open-face table: its rule set, seat count and the commitment to the dealer lot
    (the closed game's ``CreateTable``, with an open-face rule set)."""

    table_id: uuid.UUID
    rules: OpenFaceRules
    seat_count: int
    lot_commitment: bytes
    created_by: str
