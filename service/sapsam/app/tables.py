"""The table service: every table command and query, each running against the log in one
transaction.

This is where the pure domain meets the store (``sapsam.app.store_interface``). For each request
it loads the table (the stream, folded), lets ``decide`` produce events, and appends them with the
stream version it decided on — together with the read models and the deal secrets, in the
append's transaction.

The handlers live by what they do: the queries in ``sapsam.app.table_queries`` (and the
solver's suggestion for a seat in ``sapsam.app.suggestions``), the commands that
set a table up in ``sapsam.app.table_seating``, a deal's commands in
``sapsam.app.deal_commands``, an open-face deal's players' in
``sapsam.app.open_face_commands``, the operator's in ``sapsam.app.operator_commands``; the
machinery they share (memory, retries, the append) is
``sapsam.app.table_runner``; the deadline sweep is ``sapsam.app.deadline_sweep``.
``TableService`` is all of them in one object, the one the API and the CLI hold.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from sapsam.app import deadline_sweep
from sapsam.app.deal_commands import DealCommands
from sapsam.app.natural_commands import NaturalCommands
from sapsam.app.open_face_commands import OpenFaceCommands
from sapsam.app.operator_commands import OperatorCommands
from sapsam.app.operator_queries import OperatorQueries
from sapsam.app.secret_seeds import LOT_SECRET_NUMBER
from sapsam.app.suggestions import TableSuggestions
from sapsam.app.table_memory import CACHE_SIZE
from sapsam.app.table_plans import (
    CONFLICT_RETRIES,
    STREAM_PREFIX,
    StaleVersionError,
    TableNotFoundError,
    TableOutcome,
    stream_id_for,
    wall_clock_ms,
)
from sapsam.app.table_queries import ListedTable, OwnHand
from sapsam.app.table_seating import TABLE_ID_NAMESPACE, TableSeating
from sapsam.app.tournament_pause import TableHold
from sapsam.domain.table_deadlines import UnservedWindow

__all__ = [
    "CACHE_SIZE",
    "CONFLICT_RETRIES",
    "LOT_SECRET_NUMBER",
    "STREAM_PREFIX",
    "TABLE_ID_NAMESPACE",
    "ListedTable",
    "OwnHand",
    "StaleVersionError",
    "TableNotFoundError",
    "TableOutcome",
    "TableService",
    "stream_id_for",
    "wall_clock_ms",
]


class TableService(
    TableSuggestions,
    TableSeating,
    DealCommands,
    NaturalCommands,
    OpenFaceCommands,
    OperatorCommands,
    OperatorQueries,
):
    """Runs table commands and reads tables, over a ``Store``."""

    async def sweep_deadlines(
        self,
        limit: int = 100,
        unserved: Callable[[int], Awaitable[tuple[UnservedWindow, ...]]] | None = None,
        grace_ms: int = 0,
        holds: Callable[[uuid.UUID], Awaitable[TableHold]] | None = None,
    ) -> int:
        """Time out the seats of every table past its deadline; returns how many tables changed
        (``sapsam.app.deadline_sweep.sweep_deadlines``)."""
        return await deadline_sweep.sweep_deadlines(self, limit, unserved, grace_ms, holds)
