"""Commands to a table: what someone asks for. ``decide`` accepts or refuses each one.

A command that acts for a seat names the *player* asking; the table finds that player's seat, so
nobody can act for a seat they do not hold. Values only the service knows — a fresh seed's
commitment, a seat's dealt cards (from the secret seed), the current time — are filled in by the
service, never by a client, and never read from a clock or a database inside the domain.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sapsam.domain.table_deadlines import UnservedWindow
from sapsam.fairness import DealRecord
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card
from sapsam.rules.ruleset import RuleSet


@dataclass(frozen=True)
class CreateTable:
    """Open a table with a rule set and a seat count; ``lot_commitment`` binds the dealer lot."""

    table_id: uuid.UUID
    rule_set: RuleSet
    seat_count: int
    lot_commitment: bytes
    created_by: str
    after_series: str = "close"
    """``close`` (the table is done) or ``new_series`` (totals reset, play goes on)."""


@dataclass(frozen=True)
class SeatPlayer:
    """Seat a player: at ``seat`` if given, else at the lowest free seat."""

    player_id: str
    seat: int | None = None


@dataclass(frozen=True)
class ChooseDealer:
    """Draw the first dealer by lot with the seed committed at table creation."""

    lot_seed: bytes


@dataclass(frozen=True)
class StartDeal:
    """Begin the next deal; the service holds the seed and passes only its commitment."""

    seed_commitment: bytes


@dataclass(frozen=True)
class ContributeEntropy:
    """Mix a seat's own random bytes into this deal's shuffle (before the cut)."""

    player_id: str
    entropy: bytes


@dataclass(frozen=True)
class CutDeck:
    """Cut the deck at ``position`` (1..51); only the seat on the dealer's right may.

    The service follows an accepted cut at once with ``DealCards`` in the same append.
    """

    player_id: str
    position: int


@dataclass(frozen=True)
class DealCards:
    """Deal after the cut (issued by the service, which alone can compute the deal record).

    ``deal_record`` holds the keyed digests of the deck, the cut deck and each hand, computed from
    the secret seed; ``now_ms`` (Unix milliseconds) starts the arranging clock.
    """

    deal_record: DealRecord
    now_ms: int


@dataclass(frozen=True)
class PlayerSignature:
    """A player's Ed25519 signature of a move and the key that made it (docs/fairness.md §19)."""

    public_key: bytes
    signature: bytes


@dataclass(frozen=True)
class CommitArrangement:
    """Commit to an arrangement by its 32-byte hash (of ``scheme``); repeatable until the seat
    confirms.

    ``deal_number``, when given, must be the current deal's: a late commitment for a past deal
    is refused rather than taken for the current one (the same for confirm and reveal).
    """

    player_id: str
    commitment: bytes
    deal_number: int | None = None
    scheme: int = 1
    """The commitment's scheme (docs/fairness.md §12): 1 covers the seat, 2 also the player id."""
    signature: PlayerSignature | None = None
    player_keys: tuple[bytes, ...] = ()
    """The player's registered public keys, filled in by the service: with any, the move must be
    signed by one of them."""


@dataclass(frozen=True)
class DeclareNatural:
    """Commit to the seat's natural declaration (``none`` or a natural; docs/rules.md §2.9.1) by
    its 32-byte hash (docs/fairness.md §21), before the seat's first arrangement commitment, at a
    table whose rule set plays naturals. Once per deal."""

    player_id: str
    commitment: bytes
    deal_number: int | None = None
    signature: PlayerSignature | None = None
    player_keys: tuple[bytes, ...] = ()
    """As :attr:`CommitArrangement.player_keys`."""


@dataclass(frozen=True)
class ConfirmArrangement:
    """Lock the seat's last commitment. ``now_ms`` starts the reveal clock when it is the last."""

    player_id: str
    now_ms: int
    deal_number: int | None = None


@dataclass(frozen=True)
class RevealArrangement:
    """Show the arrangement and nonce behind the seat's commitment.

    ``dealt`` is the seat's 13 dealt cards, computed by the service from the secret seed, so the
    reveal can be checked against them before the seed is published.
    """

    player_id: str
    arrangement: Arrangement
    nonce: bytes
    dealt: tuple[Card, ...]
    deal_number: int | None = None
    signature: PlayerSignature | None = None
    player_keys: tuple[bytes, ...] = ()
    """As :attr:`CommitArrangement.player_keys`."""
    natural: str | None = None
    """The declaration the seat committed to (``DeclareNatural``), opened with the arrangement;
    required at a table with naturals, refused elsewhere."""
    natural_nonce: bytes = b""
    """The declaration commitment's nonce."""


@dataclass(frozen=True)
class AnnounceSurrender:
    """The seat whose turn it is announces play (``surrender`` false) or surrender
    (docs/rules.md §2.8). ``now_ms`` starts the next seat's turn, or the reveal clock. Signed like
    a commit: required once the player has a key."""

    player_id: str
    surrender: bool
    now_ms: int
    deal_number: int | None = None
    signature: PlayerSignature | None = None
    """The player's signature of the announcement (docs/fairness.md §19)."""
    player_keys: tuple[bytes, ...] = ()
    """As :attr:`CommitArrangement.player_keys`."""


@dataclass(frozen=True)
class TimeOutSeats:
    """Record every seat whose deadline has passed by ``now_ms`` (issued by the service).

    ``unserved`` are the windows when no server served, and ``grace_ms`` the grace period after
    each: a passed deadline that such a window makes unfair is extended instead
    (``DeadlinesExtended``; see ``sapsam.domain.table_deadlines``).
    """

    now_ms: int
    unserved: tuple[UnservedWindow, ...] = ()
    grace_ms: int = 0
    forced_seat: int | None = None
    """An operator's order: time out this one seat now, whether or not its deadline passed, with
    the events the deadline would have recorded (``SeatTimedOut``, ``RevealsOpened`` when it was
    the last seat arranging; while seats announce, the seat whose turn it is plays). Nothing is
    extended then."""


@dataclass(frozen=True)
class RevealSeed:
    """Publish the deal's seed once every seat has revealed or timed out, and score the deal."""

    seed: bytes


@dataclass(frozen=True)
class VoidDeal:
    """Void the deal in progress (an operator's command): ``seed`` is its secret seed, published
    with the voiding; ``reason`` says why, for the record."""

    reason: str
    seed: bytes
    deal_number: int | None = None
    """The deal meant (None: whichever is in progress); another one's is WRONG_DEAL."""


@dataclass(frozen=True)
class ReplaceSeat:
    """Give ``seat`` to ``player_id`` between deals (an operator's command)."""

    seat: int
    player_id: str


Command = (
    CreateTable
    | SeatPlayer
    | ChooseDealer
    | StartDeal
    | ContributeEntropy
    | CutDeck
    | DealCards
    | CommitArrangement
    | DeclareNatural
    | ConfirmArrangement
    | RevealArrangement
    | AnnounceSurrender
    | TimeOutSeats
    | RevealSeed
    | VoidDeal
    | ReplaceSeat
)
