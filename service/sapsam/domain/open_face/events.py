"""Open face's events: a deal's streets, face-up placements and Fantasyland's commit and reveal.

Frozen dataclasses named in the past tense, JSON-native like every table event
(``sapsam.domain.events``): cards in the usual notation, bytes as lowercase hex. Cards dealt are
never in an event: they follow from the secret seed, and a ``StreetDealt`` holds only each
receiving seat's digest under the deal's record key (docs/fairness.md), which reveals nothing
before ``SeedRevealed`` and pins the cards after it. Cards placed face up are in the event: they
are public from the moment they are placed (sources 001 and 003: every placement is made in the
open), except while a Fantasyland hand is being set (``sapsam.domain.open_face.deal_views``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final

from sapsam.domain.event_base import Event

TIMED_OUT_BY_SERVICE: Final = "service"
"""``timed_out_by`` of a timeout the deadline sweep made: the seat's deadline had passed (the
actor the sweep's events are recorded under)."""
TIMED_OUT_BY_OPERATOR: Final = "operator"
"""``timed_out_by`` of the operator's ``ForceSeatTimeout``, deadline or not (the actor the
operator's commands are recorded under; the service has one operator credential)."""
TIMED_OUT_BY: Final = (TIMED_OUT_BY_SERVICE, TIMED_OUT_BY_OPERATOR)

__all__ = [
    "OPEN_FACE_EVENT_TYPES",
    "TIMED_OUT_BY",
    "TIMED_OUT_BY_OPERATOR",
    "TIMED_OUT_BY_SERVICE",
    "CardsPlaced",
    "DiscardCommitted",
    "DiscardsRevealed",
    "FantasylandCommitted",
    "FantasylandRevealed",
    "FantasylandRevealsOpened",
    "FantasylandTimedOut",
    "StreetDealt",
]


@dataclass(frozen=True)
class StreetDealt(Event):
    """Street ``street`` (0 first) was dealt: ``card_counts[seat]`` cards to each seat (0 for a
    seat that gets none on it: a Fantasyland seat after street 0) and, for each seat dealt
    cards, the HMAC digest of its cards under the deal's record key ("" for the others).
    ``deadline_ms``: by when the first seat to place must have placed, or None (no limit)."""

    TYPE: ClassVar[str] = "StreetDealt"
    deal_number: int
    street: int
    card_counts: tuple[int, ...]
    digests: tuple[str, ...]
    deadline_ms: int | None
    """On the first street, also by when each Fantasyland seat must have set its hand."""


@dataclass(frozen=True)
class CardsPlaced(Event):
    """A seat placed its cards of ``street`` face up, for good: what each row gained.

    ``automatic`` is None for the seat's own move, else why the service placed them
    (``sapsam.rules.open_face.automatic.AutomaticReason``'s values: ``only_option``,
    ``already_dead``, ``every_option_kills``, ``timeout``). ``deadline_ms``: by when the next
    seat to place must have placed; when none is due this street, by when a Fantasyland hand
    still being set must be (None: no limit, or nobody is due).

    Schema version 2: ``player_key`` and ``signature``, the player's Ed25519 public key and its
    signature of the ``place`` message (docs/fairness.md §19; with the ``DiscardCommitted``
    recorded right after it, if any), hex, or ``None`` when unsigned (a player without a key, or
    a placement the service made: ``automatic`` set, never signed); ``signing_scheme`` 2:
    placements are signed, 1: recorded before they were (version 1 data reads as unsigned, 1).

    Schema version 3: ``timed_out_by``, who timed the seat out when this is the placement of its
    timeout (``automatic`` ``timeout`` made by the timeout itself): ``service`` (the deadline
    sweep, once the seat's deadline had passed) or ``operator`` (``ForceSeatTimeout``); None for
    every other placement, the later moves made for a timed-out hand included, and in data of
    versions 1 and 2 (recorded before it was; the audit then checks the timeout as before)."""

    TYPE: ClassVar[str] = "CardsPlaced"
    SCHEMA_VERSION: ClassVar[int] = 3
    deal_number: int
    seat: int
    street: int
    front: tuple[str, ...]
    middle: tuple[str, ...]
    back: tuple[str, ...]
    automatic: str | None = None
    deadline_ms: int | None = None
    player_key: str | None = None
    signature: str | None = None
    signing_scheme: int = 2
    timed_out_by: str | None = None


@dataclass(frozen=True)
class FantasylandCommitted(Event):
    """A Fantasyland seat set its hand face down: a hash of its rows and a secret nonce
    (docs/fairness.md §12, scheme 2: bound to the seat's player), final once made.

    Schema version 2: ``player_key``, ``signature`` (of the ``fantasyland-commit`` message,
    docs/fairness.md §19) and ``signing_scheme``, as in ``CardsPlaced``."""

    TYPE: ClassVar[str] = "FantasylandCommitted"
    SCHEMA_VERSION: ClassVar[int] = 2
    deal_number: int
    seat: int
    commitment: str
    player_key: str | None = None
    signature: str | None = None
    signing_scheme: int = 2


@dataclass(frozen=True)
class FantasylandTimedOut(Event):
    """A Fantasyland seat did not set its hand by the first street's deadline: the service sets
    it for the seat under the rule set's ``timeout_policy`` (001: dead for the rest of the set,
    its cards from the back row to the front in the order dealt; 003: from the biggest row down,
    never dead), and opens it with the seed's reveal (``FantasylandRevealed`` with an empty
    ``nonce``, just before ``SeedRevealed``: no commitment was made). No card is in this event:
    the hand stays face down until then.

    After the seat's ``FantasylandCommitted``: it did not open its hand by the reveal deadline
    (``FantasylandRevealsOpened``). The hand is dead (its rows cannot be opened without the
    nonce; under 001's policy for the rest of the set too); the seed's reveal sets its cards by
    the policy, as above, only so that the dead hand has rows to score (``dead`` true).

    Schema version 2: ``timed_out_by``, ``service`` (the deadline sweep: the first street's or
    the reveal deadline had passed) or ``operator`` (``ForceSeatTimeout``), as in
    ``CardsPlaced``; None in version 1 data (recorded before it was)."""

    TYPE: ClassVar[str] = "FantasylandTimedOut"
    SCHEMA_VERSION: ClassVar[int] = 2
    deal_number: int
    seat: int
    timed_out_by: str | None = None


@dataclass(frozen=True)
class FantasylandRevealsOpened(Event):
    """Every normal hand is complete and every Fantasyland hand set: the ``seats`` that committed
    theirs are to open them by ``deadline_ms`` (``move_seconds`` on; at a table without a move
    limit, ``reveal_seconds``). Recorded with the move that made it so (the last placement, the
    last commitment, the last Fantasyland timeout), only at a table with such a limit (every
    preset has one). A hand not opened by then is timed out (``FantasylandTimedOut``
    after its ``FantasylandCommitted``): dead, as it cannot be opened without its nonce
    (docs/rules.md §8.7)."""

    TYPE: ClassVar[str] = "FantasylandRevealsOpened"
    deal_number: int
    seats: tuple[int, ...]
    deadline_ms: int | None


@dataclass(frozen=True)
class FantasylandRevealed(Event):
    """A Fantasyland hand opened at the end of the deal: its rows and nonce, checked against
    the seat's commitment and its dealt cards; the dealt cards not in a row (a progressive
    Fantasyland's) are ``discards``; ``dead``: its rows are out of order. A hand the service set
    after a timeout (``FantasylandTimedOut``) has an empty ``nonce``: its rows are what the rule
    set's policy sets of the dealt cards, which anyone can recompute once the seed is out.

    Schema version 2: ``player_key``, ``signature`` (of the ``fantasyland-reveal`` message,
    docs/fairness.md §19) and ``signing_scheme``, as in ``CardsPlaced``; a hand the service
    opened (empty ``nonce``) is never signed."""

    TYPE: ClassVar[str] = "FantasylandRevealed"
    SCHEMA_VERSION: ClassVar[int] = 2
    deal_number: int
    seat: int
    front: tuple[str, ...]
    middle: tuple[str, ...]
    back: tuple[str, ...]
    discards: tuple[str, ...]
    nonce: str
    dead: bool
    player_key: str | None = None
    signature: str | None = None
    signing_scheme: int = 2


@dataclass(frozen=True)
class DiscardCommitted(Event):
    """With a Pineapple placement (right after its ``CardsPlaced``): the seat discarded the
    dealt cards it did not place, unseen, bound by ``commitment`` (docs/fairness.md §23,
    scheme 3). No card is in this event: the others learn only that a card was discarded."""

    TYPE: ClassVar[str] = "DiscardCommitted"
    deal_number: int
    seat: int
    street: int
    commitment: str


@dataclass(frozen=True)
class DiscardsRevealed(Event):
    """A seat opened its discards at the end of the deal: ``cards[i]`` (each street's discards,
    space-separated) and ``nonces[i]`` for street ``streets[i]``, each checked against its
    ``DiscardCommitted`` and the cards the seat was dealt on that street.

    Schema version 2: ``player_key``, ``signature`` (of the ``discards-reveal`` message,
    docs/fairness.md §19) and ``signing_scheme``, as in ``CardsPlaced``; discards the service
    opened (every nonce empty) are never signed.

    Schema version 3: ``timed_out_by``, who had the service open them (every nonce empty):
    ``service`` (the deadline sweep) or ``operator`` (``ForceSeatTimeout``), as in
    ``CardsPlaced``; None for the seat's own opening, and in data of versions 1 and 2."""

    TYPE: ClassVar[str] = "DiscardsRevealed"
    SCHEMA_VERSION: ClassVar[int] = 3
    deal_number: int
    seat: int
    streets: tuple[int, ...]
    cards: tuple[str, ...]
    nonces: tuple[str, ...]
    player_key: str | None = None
    signature: str | None = None
    signing_scheme: int = 2
    timed_out_by: str | None = None


OPEN_FACE_EVENT_TYPES: Final[tuple[type[Event], ...]] = (
    StreetDealt,
    CardsPlaced,
    FantasylandCommitted,
    FantasylandRevealed,
    FantasylandTimedOut,
    FantasylandRevealsOpened,
    DiscardCommitted,
    DiscardsRevealed,
)
"""The events only open face records (``GameFamily.event_types``)."""
