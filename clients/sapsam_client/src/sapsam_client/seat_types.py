"""What a :class:`~sapsam_client.seat.Seat` is given and gives back: the choosers a program plugs
in (arranger, declarer, announcer, event handler), the commitment it keeps secret until the reveal
and where it keeps it across restarts, the errors that end a deal or the play loop, and what a
series came to.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from sapsam_client.client import Hand
from sapsam_client.commitment import Rows
from sapsam_proto.v1 import rule_set_pb2, table_event_pb2, table_pb2

COMMITMENT_SCHEME = 2
"""The commitment scheme the SDK uses: 2, which binds the player id (docs/fairness.md §12.1)."""

Arranger = Callable[[Hand, table_pb2.Table], Rows]
"""Chooses the rows for a hand; given the hand and the table as it stands."""
EventHandler = Callable[[table_event_pb2.TableEvent], None]
Declarer = Callable[[Hand, table_pb2.Table], str]
"""Chooses a hand's natural declaration at a table with naturals: ``none`` or a natural's name
(docs/rules.md §2.9)."""
Announcer = Callable[["Commitment | None", table_pb2.Table], bool]
"""Decides a seat's play-or-surrender announcement (docs/rules.md §2.8) from the rows it
committed (None when this client does not hold them) and the table as read: True to surrender."""


def always_play(committed: Commitment | None, table: table_pb2.Table) -> bool:
    """The default :data:`Announcer`: play every hand (what a seat whose turn passes does)."""
    return False


@dataclass(frozen=True)
class Commitment:
    """What a seat committed to in one deal: kept secret until the reveal."""

    deal_number: int
    rows: Rows
    nonce: bytes
    commitment: bytes
    natural: str = ""
    """The natural declaration made before it (``none`` or a natural), at a table with
    naturals; opened with the reveal."""
    natural_nonce: bytes = b""


class CommitmentKeeper(Protocol):
    """Somewhere to keep open commitments across restarts (e.g. ``CommitmentFile``)."""

    def load(self, seat: str) -> dict[int, Commitment]:
        """The seat's open commitments by deal number."""
        ...

    def save(self, seat: str, committed: Commitment) -> None:
        """Keep a commitment before it is sent."""
        ...

    def forget(self, seat: str, deal: int) -> None:
        """Drop a commitment once revealed (and the deal's declaration with it)."""
        ...

    def load_declarations(self, seat: str) -> dict[int, tuple[str, bytes]]:
        """The seat's kept natural declarations by deal number: (declaration, nonce)."""
        ...

    def save_declaration(self, seat: str, deal: int, declaration: str, nonce: bytes) -> None:
        """Keep a natural declaration and its nonce before it is sent: a client that dies
        between ``DeclareNatural`` and ``CommitArrangement`` must still open it at the reveal
        (the declaration is final for the deal, so it cannot declare again)."""
        ...


class DealEndedError(Exception):
    """An arranger's way to say it has no rows to send: the deal ended while they were being
    chosen (the operator voided it, or the seat ran out of time). The seat sends nothing for
    that deal, and its play loop goes on with the next event."""


class SeatReplacedError(Exception):
    """The operator gave the seat to another player between deals (``SeatReplaced``): this
    client's player no longer plays it, so its play loop stops here (docs/events.md #19)."""

    def __init__(self, seat: str, previous_player: str, player: str) -> None:
        self.seat = seat
        self.previous_player = previous_player
        self.player = player
        super().__init__(
            f"the operator gave {seat} to {player} (it was {previous_player}):"
            " this client no longer plays it"
        )


@dataclass
class SeriesOutcome:
    """What a seat saw of a series: every scored deal's result and the final standings."""

    results: list[table_pb2.DealResult] = field(default_factory=list)
    standings: list[table_pb2.Standing] = field(default_factory=list)


def plays_naturals(table: table_pb2.Table) -> bool:
    """Whether the table's rule set has naturals: every seat declares before committing."""
    return table.rule_set.naturals in (
        rule_set_pb2.NATURALS_TABLE_CLASSIC,
        rule_set_pb2.NATURALS_TABLE_EXTENDED,
    )


def default_declarer(hand: Hand, table: table_pb2.Table) -> str:
    """The natural the hand holds when declaring it pays at least what the solver's rows are
    expected to (``sapsam_client.rules.best_declaration``, with the rules extra); ``none``
    without it or without a natural."""
    from sapsam_client.rules import best_declaration, rules_available  # the rules import this

    return best_declaration(hand, table) if rules_available() else "none"
