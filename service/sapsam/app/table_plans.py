"""What a table command is to the runner and what it answers: the plan a handler hands it, the
outcome it returns, the errors it raises, and the names it shares with the handlers.

A handler (``sapsam.app.table_seating``, ``sapsam.app.deal_commands``,
``sapsam.app.operator_commands``) builds a ``Plan`` on the state it is given;
``sapsam.app.table_runner`` decides and appends it and answers with a ``TableOutcome``.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sapsam.app.receipts import IssuedReceipt
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.table import TableState
from sapsam.log.records import ConcurrencyConflict, RecordedEvent
from sapsam.rules.cards import Card

if TYPE_CHECKING:
    from sapsam.app.store_interface import StoreSession

STREAM_PREFIX = "table-"
CONFLICT_RETRIES = 5


@functools.lru_cache(maxsize=4096)
def stream_id_for(table_id: uuid.UUID) -> str:
    """The log stream of a table (kept for the tables used lately: a write names its stream
    several times, and ``str(uuid)`` is Python code)."""
    return f"{STREAM_PREFIX}{table_id}"


def wall_clock_ms() -> int:
    """Unix time in milliseconds: the only clock the game reads, here in the service layer."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class TableOutcome:
    """The result of a command: the table after it and what it appended.

    ``events`` are the events this request appended (for a retried request id, the events of the
    original append, read back from the log); ``replayed`` tells a retry apart. ``receipt``: the
    signed receipt of ``events`` (``sapsam.app.receipts``; the same bytes for a retry), None
    when the service signs none.
    """

    table_id: uuid.UUID
    state: TableState
    events: tuple[RecordedEvent, ...]
    replayed: bool
    receipt: IssuedReceipt | None = None

    @property
    def version(self) -> int:
        """The table's stream version after this command (its etag)."""
        return self.events[-1].version if self.events else self.state.version


class StaleVersionError(ConcurrencyConflict):
    """The caller's ``expected_version`` (its etag) is not the table's version: nothing was done."""

    reason = "VERSION_MISMATCH"


class TableNotFoundError(DomainError):
    """No table has that id."""

    def __init__(self, table_id: uuid.UUID) -> None:
        super().__init__(Reason.TABLE_NOT_FOUND, f"no table {table_id}", field="table")


@dataclass
class Plan:
    """Commands to decide in order, and a secret to keep in the append's transaction.

    ``keep_secret``: (number, seed) of a new secret (the dealer lot's, a deal's), stored with
    the append. ``seed_to_reveal``: the deal's secret seed, when the commands may make a move of
    the service's due (``sapsam.app.open_face_play.settling_step``): the seed reveal and the
    scoring once the last seat is settled, and at an open-face table the next street and the
    placements a seat has no choice in; each joins the same append.
    """

    commands: list[object]
    keep_secret: tuple[int, bytes] | None = None
    seed_to_reveal: bytes | None = None


class SecretMissingError(RuntimeError):
    """A running deal's seed is not in ``deal_secrets``: the state decided on is stale (the deal
    was settled meanwhile), or, on the log's current state, the database lost it."""


PlanFor = Callable[[TableState, "StoreSession"], Awaitable[Plan]]
"""A command's handler hands the runner this: the plan, made on the state it decides on (and with
the session it runs in, to read a secret seed)."""


@dataclass(frozen=True)
class SeatDealt:
    """What a seat's move in a deal is made with (``TableRunner._seat_move``): the running deal's
    secret seed, revealed in the move's append if the move settles the deal (None: no deal runs,
    or the move cannot be due), and the cards the seat was dealt for the move (``()`` when it
    cannot be due: the domain then refuses it, saying why)."""

    seed: bytes | None = None
    cards: tuple[Card, ...] = ()


DealtFor = Callable[[TableState, "StoreSession"], Awaitable[SeatDealt]]
"""A seat's move's :class:`SeatDealt`, read on the state it is decided on."""


def fixed_plan(command: object) -> PlanFor:
    """The plan of a command that needs nothing from the state or the store."""

    async def plan(state: TableState, session: StoreSession) -> Plan:
        return Plan([command])

    return plan


def require_holder_or_operator(state: TableState, actor: str) -> None:
    """Refuse (NOT_SEATED) an ``actor`` who is neither seated at the table nor the operator."""
    if actor != "operator" and state.seat_of(actor) is None:
        raise DomainError(Reason.NOT_SEATED, "only a seated player or the operator may do this")
