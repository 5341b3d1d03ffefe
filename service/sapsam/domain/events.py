"""The table's events: frozen dataclasses named in the past tense, serialised as canonical JSON.

Every event has a stable ``TYPE`` (its name in the log) and a ``SCHEMA_VERSION``. Field values are
JSON-native on purpose — ints, strings, booleans, ``None`` and tuples of them; bytes travel as
lowercase hex, cards in the usual notation — so an event's JSON is its exact content and an auditor
in another language reads the log without knowing our classes. There are no floats anywhere.

When a later release changes an event's shape, its ``SCHEMA_VERSION`` goes up and an upcaster
(``EventCodec.register_upcaster``) turns stored data of the old version into the new shape on read;
stored events are never rewritten.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final, TypeAlias

from sapsam.domain.event_base import Event as Event  # re-exported: every importer names it here
from sapsam.domain.event_base import JsonValue as JsonValue
from sapsam.domain.open_face.events import OPEN_FACE_EVENT_TYPES
from sapsam.domain.typed_decoding import TypedDecoder, typed_decoder
from sapsam.frozen import from_fields


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

# Nested records, by the event field that holds a tuple of them.
_NESTED: dict[tuple[str, str], type[Any]] = {
    ("DealScored", "pairs"): PairScored,
    ("DealScored", "solver_arrangements"): SeatRows,
    ("SeriesCompleted", "standings"): SeatStanding,
}

Upcaster: TypeAlias = Callable[[dict[str, JsonValue]], dict[str, JsonValue]]


class UnknownEventError(ValueError):
    """Stored data names an event type or schema version this code cannot read."""


class EventCodec:
    """Turns events into (type, schema version, data) and back, upcasting old versions on read."""

    def __init__(
        self, event_types: tuple[type[Event], ...] = EVENT_TYPES, one_call: bool = True
    ) -> None:
        self._upcasters: dict[tuple[str, int], Upcaster] = {}
        # Per type name, what decode needs in one lookup, worked out once (decode is hot): the
        # class, its schema version, each field's name and nested record type, and whether an
        # instance is made by filling its fields in one step (see _made_by_fields).
        self._decoding: dict[
            str, tuple[type[Event], int, tuple[tuple[str, type[Any] | None], ...], bool]
        ] = {
            event_type.TYPE: (
                event_type,
                event_type.SCHEMA_VERSION,
                tuple(
                    (field.name, _NESTED.get((event_type.TYPE, field.name)))
                    for field in dataclasses.fields(event_type)
                ),
                _made_by_fields(event_type),
            )
            for event_type in event_types
        }
        # Per type name, the one-call decoder where it gives the walk's instance (None: walk;
        # ``one_call=False``: always, for the tests that hold the two to each other), worked
        # out when the type is first decoded (not at start-up: a one-deal verification reads
        # few of the types).
        self._one_call = one_call
        self._typed: dict[str, TypedDecoder | None] = {}

    def _typed_decoder(
        self,
        event_type: type[Event],
        fields: tuple[tuple[str, type[Any] | None], ...],
        by_fields: bool,
    ) -> TypedDecoder | None:
        # Only a plain dataclass (the one made by its fields, see _made_by_fields): msgspec
        # fills the fields as that does, and would skip a constructor of the type's own.
        one_call = self._one_call and by_fields
        typed = typed_decoder(event_type, dict(fields)) if one_call else None
        self._typed[event_type.TYPE] = typed
        return typed

    def register_upcaster(self, type_name: str, from_version: int, upcaster: Upcaster) -> None:
        """Teach the codec to read ``type_name`` data of ``from_version`` as the next version."""
        self._upcasters[(type_name, from_version)] = upcaster

    def encode(self, event: Event) -> tuple[str, int, dict[str, JsonValue]]:
        """The event's type name, schema version and JSON-ready data."""
        return event.TYPE, event.SCHEMA_VERSION, event.to_data()

    def decode(self, type_name: str, schema_version: int, data: Mapping[str, JsonValue]) -> Event:
        """The event for stored data, upcast to the current schema version first."""
        decoding = self._decoding.get(type_name)
        if decoding is None:
            raise UnknownEventError(f"unknown event type {type_name!r}")
        event_type, current_version, fields, by_fields = decoding
        current = data
        version = schema_version
        while version < current_version:
            upcaster = self._upcasters.get((type_name, version))
            if upcaster is None:
                raise UnknownEventError(f"no upcaster for {type_name} schema version {version}")
            current = upcaster(dict(current))
            version += 1
        if version != current_version:
            raise UnknownEventError(
                f"{type_name} schema version {schema_version} is newer than this code reads"
            )
        typed = self._typed.get(type_name, _UNDECIDED)
        if typed is _UNDECIDED:
            typed = self._typed_decoder(event_type, fields, by_fields)
        if typed is not None:
            # One msgspec call where it gives what the walk below gives (typed_decoding).
            event = typed(current)
            if event is not None:
                return event  # type: ignore[no-any-return]
        values: dict[str, Any] = {}
        for name, nested in fields:
            value = current[name]
            if nested is not None:
                # A nested list may hold nulls (a seat without one) or be null as a whole.
                values[name] = (
                    None
                    if value is None
                    else tuple(
                        [None if item is None else nested(**_from_json(item)) for item in value]
                    )
                )
            elif isinstance(value, _CONTAINERS):
                values[name] = _from_json(value)
            else:
                values[name] = value
        if by_fields:
            # Every field is in ``values`` (a missing one raised KeyError above), so filling the
            # new instance's __dict__ gives what the frozen dataclass's __init__ gives, without
            # its object.__setattr__ per field (tests/domain holds the two to each other).
            return from_fields(event_type, values)
        return event_type(**values)


_UNDECIDED: Final[Any] = object()


def _made_by_fields(event_type: type[Event]) -> bool:
    """Whether an instance equal to the constructor's is made by filling its ``__dict__`` with
    every field: a dataclass without ``__slots__`` or ``__post_init__`` whose ``__init__`` is the
    one dataclass generated (made from source text) and takes exactly the fields (no
    ``InitVar``). Any other type is built by its constructor."""
    if not dataclasses.is_dataclass(event_type) or hasattr(event_type, "__post_init__"):
        return False
    if any("__slots__" in vars(klass) for klass in event_type.__mro__[:-1]):
        return False
    init = vars(event_type).get("__init__")
    code = getattr(init, "__code__", None)
    if code is None or code.co_filename != "<string>":
        return False
    parameters: tuple[str, ...] = code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]
    return parameters == tuple(field.name for field in dataclasses.fields(event_type))


def _table_created_v1_to_v2(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    return {**data, "after_series": "close"}


def _deal_scored_v1_to_v2(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    # Not recorded then (None for the whole field, not per seat): the earlier scheme.
    return {**data, "solver_arrangements": None}


def _committed_v1_to_v2(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    # Before schemes were recorded every commitment was of scheme 1.
    return {**data, "scheme": 1}


def _unsigned(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    # Recorded before players signed their moves.
    return {**data, "player_key": None, "signature": None}


def _announced_v1_to_v2(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    # Recorded before announcements (open face's moves) were signed: unsigned, and no
    # signature is expected of it.
    return {**data, "player_key": None, "signature": None, "signing_scheme": 1}


def _no_timeout_actor(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    # Recorded before a timeout named who made it (the sweep or the operator): unknown.
    return {**data, "timed_out_by": None}


def _confirmed_v1_to_v2(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    return {**data, "scheme": 1}


FAMILY_EVENT_TYPES: Final[tuple[type[Event], ...]] = OPEN_FACE_EVENT_TYPES
"""The events only a game family other than the closed game records (docs/architecture.md):
the default codec reads them beside ``EVENT_TYPES``, so a stream of any family is one log."""

DEFAULT_CODEC = EventCodec((*EVENT_TYPES, *FAMILY_EVENT_TYPES))
DEFAULT_CODEC.register_upcaster("TableCreated", 1, _table_created_v1_to_v2)
DEFAULT_CODEC.register_upcaster("DealScored", 1, _deal_scored_v1_to_v2)
DEFAULT_CODEC.register_upcaster("ArrangementCommitted", 1, _committed_v1_to_v2)
DEFAULT_CODEC.register_upcaster("ArrangementCommitted", 2, _unsigned)
DEFAULT_CODEC.register_upcaster("SeatConfirmed", 1, _confirmed_v1_to_v2)
DEFAULT_CODEC.register_upcaster("ArrangementRevealed", 1, _unsigned)
DEFAULT_CODEC.register_upcaster("SurrenderAnnounced", 1, _announced_v1_to_v2)
# Open face's own moves, signed from schema 2 on (docs/fairness.md §19): read the same way.
for _signed_move in (
    "CardsPlaced",
    "FantasylandCommitted",
    "FantasylandRevealed",
    "DiscardsRevealed",
):
    DEFAULT_CODEC.register_upcaster(_signed_move, 1, _announced_v1_to_v2)
# A timeout names who made it from CardsPlaced 3, FantasylandTimedOut 2, DiscardsRevealed 3 on.
DEFAULT_CODEC.register_upcaster("CardsPlaced", 2, _no_timeout_actor)
DEFAULT_CODEC.register_upcaster("FantasylandTimedOut", 1, _no_timeout_actor)
DEFAULT_CODEC.register_upcaster("DiscardsRevealed", 2, _no_timeout_actor)


# JSON scalar types: a list holding only these is copied into a tuple as it is.
_SCALARS: Final = frozenset({str, int, bool, float, type(None)})
# A tuple rather than ``list | dict``, which builds a new union object each time it is evaluated.
_CONTAINERS: Final = (list, dict)


def _from_json(value: JsonValue) -> Any:
    # Scalars are taken as they are without a call each; lists and dicts are walked.
    if isinstance(value, list):
        if _SCALARS.issuperset(map(type, value)):
            return tuple(value)
        return tuple(
            [_from_json(item) if isinstance(item, _CONTAINERS) else item for item in value]
        )
    if isinstance(value, dict):
        return {
            key: _from_json(item) if isinstance(item, _CONTAINERS) else item
            for key, item in value.items()
        }
    return value
