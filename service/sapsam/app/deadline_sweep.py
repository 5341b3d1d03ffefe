"""The deadline sweep: time out the seats of every table past its deadline, each table on its own.

A table whose timeout fails (for any reason but the database's own unavailability) is logged with
its id, recorded among the background failures and backed off (``sapsam.store.table_failures``);
the sweep goes on with the next table.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from sapsam.app.store_interface import DEADLINES_PROCESS, DueTable
from sapsam.app.tournament_pause import NO_HOLD, TableHold
from sapsam.domain.errors import DomainError
from sapsam.domain.table_deadlines import UnservedWindow
from sapsam.log.records import ConcurrencyConflict

if TYPE_CHECKING:
    from sapsam.app.tables import TableService

# The sweep logs under the table service's name, as it did when it was one of its methods.
_logger = logging.getLogger("sapsam.app.tables")


async def sweep_deadlines(
    service: TableService,
    limit: int = 100,
    unserved: Callable[[int], Awaitable[tuple[UnservedWindow, ...]]] | None = None,
    grace_ms: int = 0,
    holds: Callable[[uuid.UUID], Awaitable[TableHold]] | None = None,
) -> int:
    """Time out the seats of every table past its deadline; returns how many tables changed.

    Safe to run in every server process at once: the request id names the table and the
    version the deadline was seen at, so the first process to act records the timeout and the
    others get the original result back (or find nothing left to time out).

    ``unserved(since_ms)`` gives the windows when no server served since ``since_ms``: a
    deadline in one (or within ``grace_ms`` after it) is extended instead of enforced.

    ``holds(table_id)`` tells of a tournament's pause (``sapsam.app.tournament_control``): a
    paused tournament's table is left alone (and not counted in ``limit``: the sweep reads on
    past it), and the ended pauses count as such windows.

    Each table on its own: a table whose command fails for any reason but the database's own
    unavailability is logged with its id, recorded in ``background_failures`` and backed off
    (``sapsam.store.table_failures``), and the sweep goes on with the next one. A lost
    database ends the sweep (every table would fail alike; the loop tries again).
    """
    now = service.clock()
    windows: tuple[UnservedWindow, ...] | None = None
    seen: set[str] = set()
    acted_on = 0
    changed = 0
    while acted_on < limit:
        # A paused tournament's tables stay past their deadline for the whole pause and at the
        # head of the list (earliest first): they are passed over without counting towards
        # ``limit``, and the list read again past them, so that however many tables a pause
        # holds, every other table's deadline is still enforced.
        wanted = len(seen) + limit - acted_on
        async with service.store.session() as session:
            due = await session.tables_past_deadline(now, wanted)
        fresh = [table for table in due if table.table_id not in seen]
        if not fresh:
            break
        if windows is None:  # the first read holds the earliest deadline
            since = min(table.deadline_ms for table in due)
            windows = () if unserved is None else await unserved(since)
        for table in fresh:
            seen.add(table.table_id)
            result = await _sweep_table(service, table, windows, grace_ms, holds)
            if result is None:
                continue  # held by a pause: not counted
            acted_on += 1
            changed += result
        if len(due) < wanted:
            break  # no more tables past their deadline
    return changed


async def _sweep_table(
    service: TableService,
    table: DueTable,
    windows: tuple[UnservedWindow, ...],
    grace_ms: int,
    holds: Callable[[uuid.UUID], Awaitable[TableHold]] | None,
) -> int | None:
    """Time out (or extend) one table past its deadline: 1 when it changed, 0 when it did not,
    None when a paused tournament holds it (the sweep passes it over)."""
    table_id = uuid.UUID(table.table_id)
    try:
        held = NO_HOLD if holds is None else await holds(table_id)
        if held.paused:
            return None  # the operator paused its tournament: no clock runs against a player
        version = (await service.load(table_id)).version
        outcome = await service.time_out(
            table_id, f"deadline/{table_id}/{version}", (*windows, *held.pauses), grace_ms
        )
        changed = 0 if outcome.replayed else 1
    except (DomainError, ConcurrencyConflict):
        changed = 0  # another process acted first, or the deadline was met after all
    except service.store.outage_errors:
        raise  # the database, not this table: the loop logs it and tries again
    except Exception as error:  # one table's failure must not stop the others
        await _table_failed(service, table_id, error)
        return 0
    if table.failing:
        async with service.store.session() as session:
            await session.clear_failure(DEADLINES_PROCESS, table_id)
        _logger.warning("deadline sweep: table %s succeeds again", table_id)
    return changed


async def _table_failed(service: TableService, table_id: uuid.UUID, error: Exception) -> None:
    """Log and record a table the sweeper failed on, backing it off."""
    service.forget(table_id)
    try:
        async with service.store.session() as session:
            failure = await session.record_failure(
                DEADLINES_PROCESS, table_id, error, service.clock()
            )
    except service.store.database_errors as record_error:
        _logger.error(
            "deadline sweep failed at table %s: %s (and recording it failed: %s)",
            table_id,
            type(error).__name__,
            type(record_error).__name__,
        )
        return
    _logger.error(
        "deadline sweep failed at table %s: %s (failure %d in a row; next try in %d ms)",
        table_id,
        type(error).__name__,
        failure.failures,
        failure.retry_at_ms - failure.last_failed_ms,
    )
