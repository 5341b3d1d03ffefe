"""A game family: the one interface every kind of Chinese poker the service plays is reached by.

The closed game (13 cards set face down, committed, revealed; ``sapsam.domain.closed_family``)
and open face (cards placed face up street by street) share a table's frame -- seats, a dealer
by lot, a secret seed under a commitment, the cut, an event log, scores and a series -- and
differ in everything between the deal and the score. A :class:`GameFamily` bundles the pure
functions that differ: reading the family's rule set, ``decide`` and ``evolve`` over its own
state, what each caller may see, and what a bot does. The registry
(``sapsam.domain.families``) picks the family a table plays from its ``TableCreated``'s rule set,
so the store, the transport and the audit's framework never name a family
(docs/architecture.md, "Game families").

**Which family a table plays** is recorded in its rule set under ``FAMILY_KEY``. The key is
absent from every closed rule set ever recorded, and an absent key means ``closed``
(``CLOSED_FAMILY``), so old logs replay unchanged and a closed rule set's canonical JSON (and
therefore every hash and vector over it) is what it always was. Another family records the key.

This module names the interface only; it imports no family, so any family can import it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, Generic, Protocol, TypeVar

from sapsam.domain.events import Event

FAMILY_KEY: Final = "family"
"""The key of a recorded rule set that names its family; absent means ``CLOSED_FAMILY``."""
CLOSED_FAMILY: Final = "closed"
"""The closed game's family name: the default, and every table recorded before families."""
MAX_FAMILY_NAME: Final = 32
FRAME_KEYS: Final = ("name", "series_length")
"""What the frame reads of every recorded rule set, whatever its family: its label, and the
deals a series counts (the read models show both; docs/architecture.md)."""


class FramePhase(StrEnum):
    """The phases of a table's frame, which every family's table passes through under these
    names (each family's phase enum holds them, and its own for the play of a deal between
    ``AWAITING_CUT`` and ``AWAITING_SEED``): what the frame around a table reads of its phase
    without knowing its game (a tournament seating its tables, for one)."""

    NOT_CREATED = "NOT_CREATED"
    SEATING = "SEATING"
    AWAITING_DEALER = "AWAITING_DEALER"
    BETWEEN_DEALS = "BETWEEN_DEALS"
    AWAITING_CUT = "AWAITING_CUT"
    AWAITING_SEED = "AWAITING_SEED"
    SERIES_COMPLETE = "SERIES_COMPLETE"


class TableStage(StrEnum):
    """A table's coarse stage, whatever its family: what the API's ``TableStatus`` and the
    ListTables filter show. ``open``: seats still to fill; ``playing``: from a full table to the
    end of the series; ``completed``: the series (open face: the set) is over."""

    OPEN = "open"
    PLAYING = "playing"
    COMPLETED = "completed"


def frame_stage(phase: str) -> TableStage:
    """The stage of a phase: the frame's ``NOT_CREATED`` and ``SEATING`` are open,
    ``SERIES_COMPLETE`` completed, every other phase (the frame's between them, and every
    family's own for the play of a deal) playing."""
    if phase in (FramePhase.NOT_CREATED, FramePhase.SEATING):
        return TableStage.OPEN
    if phase == FramePhase.SERIES_COMPLETE:
        return TableStage.COMPLETED
    return TableStage.PLAYING


class UnknownFamilyError(ValueError):
    """A rule set names a family this code does not play; the message lists the known ones."""


class FamilyState(Protocol):
    """What the frame around any family's table state reads of it: the application's runner,
    the seating, the read models' callers. Every family's state has these; the rest is the
    family's own."""

    @property
    def version(self) -> int:
        """Events folded in (the stream version the state stands at)."""
        ...

    @property
    def table_id(self) -> uuid.UUID | None:
        """None until ``TableCreated``."""
        ...

    @property
    def seat_count(self) -> int: ...

    @property
    def seats(self) -> tuple[str | None, ...]:
        """Each seat's player id, None while free."""
        ...

    def seat_of(self, player_id: str) -> int | None:
        """The seat ``player_id`` holds here, if any."""
        ...

    @property
    def phase(self) -> str:
        """Where the table stands (the family's phase enum, a ``StrEnum``: its name)."""
        ...

    @property
    def next_deal_number(self) -> int:
        """The number the next deal takes (a tournament's re-seating names the deal a newcomer
        plays from)."""
        ...


State = TypeVar("State", bound=FamilyState)
Rules = TypeVar("Rules")


@dataclass(frozen=True)
class GameFamily(Generic[State, Rules]):
    """One family's pure functions, as the registry hands them to the frame around a table.

    Each is a plain function of recorded data, like the rest of the domain: no I/O, no clock,
    no hidden randomness. ``decide`` alone validates (a ``DomainError`` refuses a command and
    produces nothing); ``evolve`` trusts the log and never raises.
    """

    name: str
    """The family's name, as recorded under ``FAMILY_KEY`` (``closed`` is never recorded)."""
    rules_type: type[Rules]
    """The family's rule-set class."""
    create_command: type[Any]
    """The command that creates a table of this family (the closed game's ``CreateTable``)."""
    read_rules: Callable[[Mapping[str, Any]], Rules]
    """A recorded rule set (``TableCreated.rule_set`` without ``FAMILY_KEY``) read strictly;
    raises ``ValueError`` naming the bad key."""
    record_rules: Callable[[Rules, int], dict[str, Any]]
    """The rule set as ``TableCreated`` records it at a table of that many seats:
    ``FAMILY_KEY`` included unless closed, and the keys the frame reads of every table
    (``FRAME_KEYS``)."""
    initial_state: State
    """The state before ``TableCreated``; ``evolve(initial_state, created)`` starts a table."""
    decide: Callable[[State, Any], list[Event]]
    """The events a command produces on this family's table, or a ``DomainError``."""
    evolve: Callable[[State, Event], State]
    """The state after one event of this family's table."""
    fold_events: Callable[[Sequence[Event], State], State]
    """The state after a run of events (``evolve`` in a loop, or the family's faster own)."""
    view_for: Callable[..., Any]
    """What one caller may see of the table (``view_for(state, viewer, dealt_hands)``): the one
    place the family withholds hidden information."""
    automatic_move: Callable[..., Any]
    """What a bot (and a timeout, and a hint) plays: a pure, seeded function of what one seat
    may see and the rule set; the closed game's is the solver's arrangement of a hand."""
    event_types: tuple[type[Event], ...] = ()
    """Events only this family records (the frame's events are every family's)."""
    phases: tuple[str, ...] = tuple(FramePhase)
    """Every phase a table of this family may be in (``state.phase``; the read models record
    its name): the frame's (``FramePhase``) and the family's own."""
    stage_of: Callable[[str], TableStage] = frame_stage
    """The stage of each of ``phases`` (the frame's mapping unless the family has its own)."""
    decide_folded: Callable[[State, Any], tuple[list[Event], State]] | None = None
    """``decide`` and the state after the events, for a family whose decision folds them
    anyway (open face's, to see whether a move makes the reveals due): the runner then folds
    each command's events once. None: ``decide``, then ``fold_events``."""


def family_name_of(rule_set: Mapping[str, Any]) -> str:
    """The family a recorded rule set names (``closed`` when it names none).

    Raises :class:`UnknownFamilyError` for a value that is not a short name; whether the name
    is known is the registry's question."""
    name = rule_set.get(FAMILY_KEY, CLOSED_FAMILY)
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_FAMILY_NAME:
        raise UnknownFamilyError(
            f"rule set key {FAMILY_KEY!r} must be a family name of 1 to {MAX_FAMILY_NAME} "
            f"characters, got {type(name).__name__}"
        )
    return name


def without_family(rule_set: Mapping[str, Any]) -> Mapping[str, Any]:
    """The recorded rule set as its family's reader takes it: ``FAMILY_KEY`` left out. A closed
    rule set passes through as it is, uncopied: it never holds the key, and the closed reader
    refuses one spelled out (``"family": "closed"``), so one closed rule set has one recorded
    form and one hash."""
    if rule_set.get(FAMILY_KEY, CLOSED_FAMILY) == CLOSED_FAMILY:
        return rule_set
    return {key: value for key, value in rule_set.items() if key != FAMILY_KEY}
