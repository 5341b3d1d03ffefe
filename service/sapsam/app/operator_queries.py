"""The operator's view of the tables: what each waits for, for whom, and since when.

Read from the tables' read model (``table_state``, kept in each append's transaction) and the
time of each table's last event: since then the table has waited. ``awaited_seats`` says whom a
phase waits for, from the same public facts a lobby sees.

A table is *stuck* (``sapsam tables stuck``, the health detail, the metric) when it is past its
deadline (a deadline passed and nobody timed its seats out) or, when a threshold is given, has
waited longer than that for anything at all, **unless it is held**: a table of a paused
tournament waits on purpose (no deal starts and no deadline runs out there until the operator
resumes it, ``sapsam.app.tournament_pause``), so it is listed apart, as held (:data:`HELD_PAUSED`),
and never counted or alerted on.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from sapsam import fairness
from sapsam.app.store_interface import WaitingTable
from sapsam.app.table_runner import TableRunner
from sapsam.domain.table_surrender import announcing_order

MAX_LISTED: Final = 1000
"""Most tables one list returns (a caller-controlled bound; docs/api.md)."""

SERVICE: Final = "service"
"""Whom a table waits for when no seat acts next: the server itself (dealing, the seed)."""
ANYONE: Final = "anyone"
"""Whom a table waits for when any seated player or the operator may act (draw the dealer,
start the next deal)."""
SEATS: Final = "seats"
"""The table waits for the seats listed (join, cut, confirm, reveal)."""
HELD_PAUSED: Final = "tournament paused"
"""Why a table is held rather than stuck: its tournament is paused."""


@dataclass(frozen=True)
class AwaitedTable:
    """A table, whom it waits for (``awaiting``: ``seats``, ``anyone`` or ``service``; the
    seats and their players when ``seats``), since when, and its current deadline."""

    table_id: uuid.UUID
    phase: str
    deal_number: int
    awaiting: str
    seats: tuple[int, ...]
    players: tuple[str | None, ...]
    waiting_since_ms: int
    deadline_ms: int | None
    held: str | None = None
    """Why the table waits on purpose (:data:`HELD_PAUSED`), None when nothing holds it."""

    def past_deadline(self, now_ms: int) -> bool:
        """Whether its deadline passed by ``now_ms`` with the seats still awaited."""
        return self.deadline_ms is not None and self.deadline_ms <= now_ms


def awaited_seats(table: WaitingTable) -> tuple[str, tuple[int, ...]]:
    """Whom ``table``'s phase waits for: (``seats``, the seats), or (``anyone``/``service``, ())."""
    status = table.seat_status
    seats = range(table.seat_count)
    if table.phase == "SEATING":
        return SEATS, tuple(seat for seat in seats if table.players[seat] is None)
    if table.phase == "AWAITING_CUT" and table.dealer is not None:
        return SEATS, (fairness.cutter_for(table.dealer, table.seat_count),)
    if table.phase == "ARRANGING":
        return SEATS, tuple(
            seat
            for seat in seats
            if not status[seat].get("confirmed") and status[seat].get("timed_out") is None
        )
    if table.phase == "ANNOUNCING" and table.dealer is not None:
        # The seat whose turn it is: the first in the order (docs/rules.md §2.8) to announce.
        skipped = {seat for seat in seats if status[seat].get("timed_out") is not None}
        order = announcing_order(table.dealer, table.seat_count, skipped)
        turn = next((seat for seat in order if not status[seat].get("announced")), None)
        return SEATS, () if turn is None else (turn,)
    if table.phase == "REVEALING":
        return SEATS, tuple(
            seat
            for seat in seats
            if not status[seat].get("revealed") and status[seat].get("timed_out") is None
        )
    if table.phase in ("AWAITING_DEALER", "BETWEEN_DEALS"):
        return ANYONE, ()
    if table.phase == "PLAYING":
        # An open-face deal in play: a seat places (the read model does not say which; the
        # table's Table.open_face.turn_seat does) or sets its Fantasyland hand.
        return SEATS, ()
    return SERVICE, ()


def _milliseconds(recorded_at: str) -> int:
    return int(datetime.fromisoformat(recorded_at.replace("Z", "+00:00")).timestamp() * 1000)


def awaited_table(table: WaitingTable) -> AwaitedTable:
    """The operator's line for one read-model row."""
    awaiting, seats = awaited_seats(table)
    return AwaitedTable(
        table_id=table.table_id,
        phase=table.phase,
        deal_number=table.deal_number,
        awaiting=awaiting,
        seats=seats,
        players=tuple(table.players[seat] for seat in seats),
        waiting_since_ms=_milliseconds(table.waiting_since),
        deadline_ms=table.deadline_ms,
    )


def waiting_longer(
    tables: Sequence[AwaitedTable], now_ms: int, threshold_ms: int
) -> list[AwaitedTable]:
    """The tables whose last event is more than ``threshold_ms`` old at ``now_ms``."""
    return [table for table in tables if now_ms - table.waiting_since_ms > threshold_ms]


def stuck(
    tables: Sequence[AwaitedTable],
    now_ms: int,
    waiting_longer_than_ms: int | None,
    deadline_slack_ms: int = 0,
) -> list[AwaitedTable]:
    """The tables past their deadline by more than ``deadline_slack_ms``, or (with a threshold)
    waiting longer than it."""
    longer = (
        set()
        if waiting_longer_than_ms is None
        else {t.table_id for t in waiting_longer(tables, now_ms, waiting_longer_than_ms)}
    )
    overdue_at = now_ms - deadline_slack_ms
    return [
        table for table in tables if table.past_deadline(overdue_at) or table.table_id in longer
    ]


@dataclass(frozen=True)
class StuckTables:
    """The stuck tables, and apart from them those that would be but are held (each with
    ``held`` set): a paused tournament's."""

    stuck: list[AwaitedTable]
    held: list[AwaitedTable]


class OperatorQueries(TableRunner):
    """The operator's table queries."""

    async def awaited_tables(
        self, phases: Sequence[str] | None = None, limit: int = MAX_LISTED
    ) -> list[AwaitedTable]:
        """Up to ``limit`` tables in ``phases`` (None: every one not complete), longest waiting
        first, each with whom it waits for and since when."""
        async with self.store.session() as session:
            rows = await session.waiting_tables(phases, limit)
        return [awaited_table(row) for row in rows]

    async def stuck_tables(
        self,
        waiting_longer_than_ms: int | None = None,
        limit: int = MAX_LISTED,
        *,
        at_ms: int | None = None,
        deadline_slack_ms: int = 0,
    ) -> StuckTables:
        """Up to ``limit`` tables past their deadline by more than ``deadline_slack_ms`` at
        ``at_ms`` (None: now) or waiting longer than the threshold (see :func:`stuck`), longest
        waiting first: the stuck ones, and apart the held ones (a paused tournament's).

        The tables past their deadline are read by their deadline: they would be missed if
        looked for only among the ``limit`` longest waiting (lobbies that wait for players for
        ever come first there)."""
        now = self.clock() if at_ms is None else at_ms
        async with self.store.session() as session:
            rows = list(await session.waiting_past_deadline(now - deadline_slack_ms, limit))
            if waiting_longer_than_ms is not None:
                rows.extend(await session.waiting_tables(None, limit))
            tables = {row.table_id: awaited_table(row) for row in rows}
            ordered = sorted(tables.values(), key=lambda table: table.waiting_since_ms)
            found = stuck(ordered, now, waiting_longer_than_ms, deadline_slack_ms)[:limit]
            paused = await session.tables_of_paused_tournaments(
                [str(table.table_id) for table in found]
            )
        return StuckTables(
            stuck=[table for table in found if str(table.table_id) not in paused],
            held=[
                dataclasses.replace(table, held=HELD_PAUSED)
                for table in found
                if str(table.table_id) in paused
            ],
        )
