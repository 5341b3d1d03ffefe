"""The table's events: frozen dataclasses named in the past tense, serialised as canonical JSON.

Every event has a stable ``TYPE`` (its name in the log) and a ``SCHEMA_VERSION``. Field values are
JSON-native on purpose — ints, strings, booleans, ``None`` and tuples of them; bytes travel as
lowercase hex, cards in the usual notation — so an event's JSON is its exact content and an auditor
in another language reads the log without knowing our classes. There are no floats anywhere.

When a later release changes an event's shape, its ``SCHEMA_VERSION`` goes up and an upcaster
(``sapsam.domain.event_codec``) turns stored data of the old version into the new shape on read;
stored events are never rewritten.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from sapsam.domain.event_base import Event as Event  # re-exported: every importer names it here
from sapsam.domain.event_base import JsonValue as JsonValue


@dataclass(frozen=True)
class TableCreated(Event):
    """A table exists: its full rule set, seat count and the commitment to the dealer lot.

    ``after_series`` (schema version 2): ``close`` or ``new_series``; version 1 data reads as
    ``close``, which is what every table did then.
    """

    TYPE: ClassVar[str] = "TableCreated"
    SCHEMA_VERSION: ClassVar[int] = 2
    table_id: str
    rule_set: Mapping[str, JsonValue]
    seat_count: int
    lot_commitment: str
    created_by: str
    after_series: str = "close"


@dataclass(frozen=True)
class PlayerSeated(Event):
    """A player took a seat (seats are numbered 0.., increasing clockwise)."""

    TYPE: ClassVar[str] = "PlayerSeated"
    seat: int
    player_id: str


@dataclass(frozen=True)
class DealerChosen(Event):
    """The first dealer, drawn by lot; the lot seed is published so anyone can redo the draw."""

    TYPE: ClassVar[str] = "DealerChosen"
    dealer: int
    lot_seed: str
    lot_cards: tuple[str, ...]


@dataclass(frozen=True)
class DealStarted(Event):
    """A deal began: its number, its dealer and the commitment to its secret seed."""

    TYPE: ClassVar[str] = "DealStarted"
    deal_number: int
    dealer: int
    seed_commitment: str


@dataclass(frozen=True)
class EntropyContributed(Event):
    """A seat mixed its own randomness into this deal's shuffle (before the cut)."""

    TYPE: ClassVar[str] = "EntropyContributed"
    deal_number: int
    seat: int
    entropy: str


@dataclass(frozen=True)
class DeckCut(Event):
    """The seat on the dealer's right cut the deck at ``position`` (1..51)."""

    TYPE: ClassVar[str] = "DeckCut"
    deal_number: int
    seat: int
    position: int


@dataclass(frozen=True)
class CardsDealt(Event):
    """Thirteen cards went to each seat. The cards are not here: they follow from the secret seed.

    The digests are the deal record (docs/fairness.md): HMACs of the shuffled deck, the cut deck
    and each seat's hand under a key derived from the seed, so they reveal nothing now and pin
    every stage of the deal once the seed is published. ``arrange_deadline_ms`` is the Unix time in
    milliseconds by which every seat must confirm, or ``None`` when the rule set sets no limit.
    """

    TYPE: ClassVar[str] = "CardsDealt"
    deal_number: int
    deck_digest: str
    cut_deck_digest: str
    hand_digests: tuple[str, ...]
    arrange_deadline_ms: int | None


@dataclass(frozen=True)
class ArrangementCommitted(Event):
    """A seat committed to an arrangement by its hash; it may commit again until it confirms.

    Schema version 2: ``scheme`` is the commitment scheme (docs/fairness.md §12: 1 covers the
    seat, 2 the seat and its player id). Version 1 data reads as scheme 1.

    Schema version 3: ``player_key`` and ``signature``, the player's Ed25519 public key and its
    signature of the commit (docs/fairness.md §19), hex, or ``None`` when the player signed
    nothing. Version 2 data reads as unsigned.
    """

    TYPE: ClassVar[str] = "ArrangementCommitted"
    SCHEMA_VERSION: ClassVar[int] = 3
    deal_number: int
    seat: int
    commitment: str
    scheme: int = 1
    player_key: str | None = None
    signature: str | None = None


@dataclass(frozen=True)
class NaturalDeclared(Event):
    """A seat committed to its natural declaration (``none`` or a natural, hidden in the hash:
    docs/fairness.md §21) before its arrangement; every seat of a table with naturals does.
    ``player_key`` and ``signature`` as in ``ArrangementCommitted``."""

    TYPE: ClassVar[str] = "NaturalDeclared"
    deal_number: int
    seat: int
    commitment: str
    player_key: str | None = None
    signature: str | None = None


@dataclass(frozen=True)
class NaturalRevealed(Event):
    """A seat opened its declaration with its reveal (in the same append, before its
    ``ArrangementRevealed``): ``natural`` is what it declared, ``nonce`` the commitment's."""

    TYPE: ClassVar[str] = "NaturalRevealed"
    deal_number: int
    seat: int
    natural: str
    nonce: str


@dataclass(frozen=True)
class SeatConfirmed(Event):
    """A seat locked its last commitment; nothing changes for it after this.

    Schema version 2: ``scheme``, the locked commitment's scheme (its ``ArrangementCommitted``'s);
    version 1 data reads as scheme 1.
    """

    TYPE: ClassVar[str] = "SeatConfirmed"
    SCHEMA_VERSION: ClassVar[int] = 2
    deal_number: int
    seat: int
    commitment: str
    scheme: int = 1


@dataclass(frozen=True)
class RevealsOpened(Event):
    """Every seat is settled (confirmed or timed out): reveals may begin.

    ``reveal_deadline_ms`` is when unrevealed seats time out, or ``None`` for no limit.
    """

    TYPE: ClassVar[str] = "RevealsOpened"
    deal_number: int
    reveal_deadline_ms: int | None


@dataclass(frozen=True)
class ArrangementRevealed(Event):
    """A seat showed the arrangement behind its commitment; a foul is recorded here as a fact.

    Schema version 2: ``player_key`` and ``signature``, the player's Ed25519 public key and its
    signature of the reveal (docs/fairness.md §19), hex, or ``None`` when unsigned; version 1 data
    reads as unsigned.
    """

    TYPE: ClassVar[str] = "ArrangementRevealed"
    SCHEMA_VERSION: ClassVar[int] = 2
    deal_number: int
    seat: int
    front: tuple[str, ...]
    middle: tuple[str, ...]
    back: tuple[str, ...]
    nonce: str
    foul: bool
    foul_reason: str | None
    player_key: str | None = None
    signature: str | None = None


@dataclass(frozen=True)
class SeatTimedOut(Event):
    """A deadline passed for a seat.

    ``stage`` is ``arranging`` or ``revealing``; ``consequence`` is ``foul`` or ``solver`` (the
    seat's hand is set by the solver when the seed is revealed; only for a missed arranging
    deadline, under the rule set's option).
    """

    TYPE: ClassVar[str] = "SeatTimedOut"
    deal_number: int
    seat: int
    stage: str
    consequence: str


@dataclass(frozen=True)
class DeadlinesExtended(Event):
    """The current deadline of the deal was moved, not enforced: it expired while no server was
    serving, or within the grace period after serving resumed (``sapsam.domain.table_deadlines``).

    ``stage`` is ``arranging`` or ``revealing``; ``seats`` are the seats still due to act;
    ``reason`` is ``server_restart`` or ``database_outage``; ``unserved_from_ms`` and
    ``unserved_until_ms`` bound the time no server served (from 0 when no server was ever
    recorded serving before).
    """

    TYPE: ClassVar[str] = "DeadlinesExtended"
    deal_number: int
    stage: str
    seats: tuple[int, ...]
    previous_deadline_ms: int
    deadline_ms: int
    reason: str
    unserved_from_ms: int
    unserved_until_ms: int


@dataclass(frozen=True)
class SeedRevealed(Event):
    """The deal's seed: from now on anyone can recompute the deck and every seat's cards."""

    TYPE: ClassVar[str] = "SeedRevealed"
    deal_number: int
    seed: str


@dataclass(frozen=True)
class PairScored:
    """One pair's result: rows (front, middle, back) from ``seat_a``'s side, and its gain."""

    seat_a: int
    seat_b: int
    rows: tuple[int, int, int]
    delta: int


@dataclass(frozen=True)
class SeatRows:
    """An arrangement's three rows in card notation, as ``ArrangementRevealed`` holds them."""

    front: tuple[str, ...]
    middle: tuple[str, ...]
    back: tuple[str, ...]


@dataclass(frozen=True)
class DealScored(Event):
    """The deal's result as the rule set computes it.

    ``arrangements`` holds, per seat, the rows that were scored (``front|middle|back`` in card
    notation) or ``None`` for a fouled seat without one; ``fouls`` flags each seat scored as fouled.

    ``solver_arrangements`` (schema version 2) holds, per seat, the rows the server set on the
    seat's behalf (a seat that missed its arranging deadline under the ``solver`` policy), else
    ``None``: recorded, so that a verifier checks them for legality and identity without running
    the solver. Version 1 data reads as ``None`` for the whole field: such a deal predates the
    record, and its solver seats are checked by running ``sapsam.rules.solver`` (the earlier
    scheme, docs/fairness.md §13).
    """

    TYPE: ClassVar[str] = "DealScored"
    SCHEMA_VERSION: ClassVar[int] = 2
    deal_number: int
    pairs: tuple[PairScored, ...]
    totals: tuple[int, ...]
    fouls: tuple[bool, ...]
    arrangements: tuple[str | None, ...]
    series_totals: tuple[int, ...]
    solver_arrangements: tuple[SeatRows | None, ...] | None


@dataclass(frozen=True)
class SeatStanding:
    """A seat's place in the series; equal totals share a place."""

    seat: int
    total: int
    place: int


@dataclass(frozen=True)
class SeriesCompleted(Event):
    """The last deal of the series is scored: final totals and standings."""

    TYPE: ClassVar[str] = "SeriesCompleted"
    deals_played: int
    standings: tuple[SeatStanding, ...]


@dataclass(frozen=True)
class SeriesStarted(Event):
    """A new series began at a table created with ``after_series = new_series``: totals reset
    to zero; deal numbers go on from ``first_deal_number`` and the deal keeps passing left."""

    TYPE: ClassVar[str] = "SeriesStarted"
    series_number: int
    first_deal_number: int


@dataclass(frozen=True)
class DealVoided(Event):
    """The operator voided the deal in progress: it is not scored (no totals change) and its seed
    is published here, so that anyone can check it against the deal's commitment and recompute
    the deck. Before this event the seed was as secret as in any deal. The deal passes to the
    left as after any deal (at an open-face table it is dealt again by the same dealer, so that
    each seat still deals once in the set); a voided deal does not count towards the series."""

    TYPE: ClassVar[str] = "DealVoided"
    deal_number: int
    reason: str
    seed: str


@dataclass(frozen=True)
class SeatReplaced(Event):
    """The operator gave a seat to another player, between deals: from the next deal on the seat
    plays for ``player_id``; every deal before it stays ``previous_player_id``'s (their
    commitments, reveals and scores are untouched)."""

    TYPE: ClassVar[str] = "SeatReplaced"
    seat: int
    previous_player_id: str
    player_id: str


@dataclass(frozen=True)
class AnnouncementsOpened(Event):
    """Every seat is settled at a table with surrender (docs/rules.md §2.8): the seats in
    ``order`` (clockwise from the dealer's left, without those that missed the arranging deadline)
    announce play or surrender, one at a time; ``deadline_ms`` is the first seat's deadline, or
    ``None`` for no limit."""

    TYPE: ClassVar[str] = "AnnouncementsOpened"
    deal_number: int
    order: tuple[int, ...]
    deadline_ms: int | None


@dataclass(frozen=True)
class SurrenderAnnounced(Event):
    """The seat whose turn it was announced: ``surrender`` true to surrender, false to play.
    ``timed_out``: the seat let its deadline pass (or the operator timed it out) and plays, the
    timeout default. ``deadline_ms`` is the next seat's deadline (``None`` after the last seat,
    whose announcement is followed by ``RevealsOpened`` in the same append, or with no limit).

    Schema version 2: ``player_key`` and ``signature``, the player's Ed25519 public key and its
    signature of the announcement (docs/fairness.md §19), hex, or ``None`` when unsigned (a
    player without a key, or the server's announcement for a missed turn, which is never signed);
    and ``signing_scheme``: 2, announcements are signed (a player with a registered key signs
    every one it makes), or 1, recorded before they were (never signed, and none is expected of
    it). Version 1 data reads as unsigned, scheme 1.
    """

    TYPE: ClassVar[str] = "SurrenderAnnounced"
    SCHEMA_VERSION: ClassVar[int] = 2
    deal_number: int
    seat: int
    surrender: bool
    timed_out: bool
    deadline_ms: int | None
    player_key: str | None = None
    signature: str | None = None
    signing_scheme: int = 2


EVENT_TYPES: tuple[type[Event], ...] = (
    TableCreated,
    PlayerSeated,
    DealerChosen,
    DealStarted,
    EntropyContributed,
    DeckCut,
    CardsDealt,
    ArrangementCommitted,
    SeatConfirmed,
    RevealsOpened,
    ArrangementRevealed,
    SeatTimedOut,
    SeedRevealed,
    DealScored,
    SeriesCompleted,
    SeriesStarted,
    DeadlinesExtended,
    DealVoided,
    SeatReplaced,
    NaturalDeclared,
    NaturalRevealed,
    AnnouncementsOpened,
    SurrenderAnnounced,
)
