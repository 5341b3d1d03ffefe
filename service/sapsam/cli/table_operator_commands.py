"""``sapsam tables awaited``, ``time-out``, ``void``, ``replace``: the operator's console.

Like ``sapsam tournament``, these work on the database directly (``--database-url`` or the
embedded one), as the operator who runs the server; the same commands are RPCs of the
OperatorService (docs/api.md, "Operator commands").

- ``awaited``: every table not complete (or in the ``--phase`` given), longest waiting first:
  whom it waits for (seats and their players, anyone seated, or the server itself), since when,
  and its deadline.
- ``time-out TABLE SEAT``: time the seat out now, with the events its deadline would have
  recorded (the seed is revealed and the deal scored when it was the last seat awaited).
- ``void TABLE --reason TEXT``: void the deal in progress: unscored, its seed published in the
  ``DealVoided`` event; the next deal may start (docs/fairness.md, "A voided deal").
- ``replace TABLE SEAT PLAYER``: give the seat to another registered player, between deals
  (``SeatReplaced``); the deals before stay the previous player's.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from sapsam.cli.store_commands import add_database_options

FAILED = 1
PHASES = (
    "SEATING",
    "AWAITING_DEALER",
    "BETWEEN_DEALS",
    "AWAITING_CUT",
    "DEALING",
    "ARRANGING",
    "ANNOUNCING",
    "REVEALING",
    "AWAITING_SEED",
    "SERIES_COMPLETE",
    "PLAYING",  # an open-face deal in play (issue #18)
)


_DIRECT = (
    "It works on the database directly (--database-url, else the embedded one), as the operator"
    " who runs the server; the same command is an RPC of the OperatorService (docs/api.md,"
    ' "Operator commands").'
)
AWAITED = (
    "List every table not complete (or in the --phase given), longest waiting first: whom it"
    " waits for (seats and their players, anyone seated, or the server itself), since when, and"
    " its deadline. Reads only.\n\n" + _DIRECT
)
TIME_OUT = (
    "Time a seat out now, recording what its deadline would have: while arranging, what the"
    " table's arrange_timeout_policy says (the solver's rows, or a foul); while revealing, a"
    " foul. When it was the last seat the deal waited for, the seed is revealed and the deal"
    " scored.\n\n" + _DIRECT
)
VOID = (
    "Void the deal in progress: no points change, the deal does not count towards the series,"
    " and its seed is published in the DealVoided event so anyone can check the deck"
    ' (docs/fairness.md, "A voided deal"). The next deal may then start. The seated players'
    " are told, with the reason.\n\n" + _DIRECT
)
REPLACE = (
    "Give a seat to another registered player, between deals (SeatReplaced): the new player"
    " plays it from the next deal on. The deals before stay the previous player's; the seat's"
    " series total carries on (a series total is the seat's, not the player's). Not at a"
    " tournament's table.\n\n" + _DIRECT
)


def add_actions(actions: Any) -> None:
    """Add ``awaited`` and ``time-out`` to the ``tables`` subcommand."""
    awaited = actions.add_parser(
        "awaited",
        help="tables by phase, whom each waits for and since when",
        description=AWAITED,
    )
    add_database_options(awaited)
    awaited.add_argument(
        "--phase",
        action="append",
        choices=PHASES,
        help="only tables in this phase (repeatable; default: every phase but SERIES_COMPLETE)",
    )
    awaited.add_argument(
        "--limit", type=int, default=1000, help="most tables to list, 1 to 1000 (default 1000)"
    )
    awaited.add_argument("--json", action="store_true", help="print one JSON object")
    awaited.set_defaults(handler=_awaited)
    time_out = actions.add_parser(
        "time-out",
        help="time a seat out now, as its deadline would",
        description=TIME_OUT,
    )
    add_database_options(time_out)
    time_out.add_argument("table", help="the table (its id or tables/{id})")
    time_out.add_argument("seat", type=int, help="the seat number, from 0")
    time_out.set_defaults(handler=_time_out)
    void = actions.add_parser(
        "void",
        help="void the deal in progress (unscored, its seed published)",
        description=VOID,
    )
    add_database_options(void)
    void.add_argument("table", help="the table (its id or tables/{id})")
    void.add_argument(
        "--reason", required=True, help="why, for the record: 1 to 200 printable characters"
    )
    void.set_defaults(handler=_void)
    replace = actions.add_parser(
        "replace",
        help="give a seat to another player, between deals",
        description=REPLACE,
    )
    add_database_options(replace)
    replace.add_argument("table", help="the table (its id or tables/{id})")
    replace.add_argument("seat", type=int, help="the seat number, from 0")
    replace.add_argument("player", help="the player who takes it (its id or players/{id})")
    replace.set_defaults(handler=_replace)


def _time(milliseconds: int) -> str:
    return datetime.fromtimestamp(milliseconds / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def describe(table: Any, now_ms: int, names: Mapping[str, str] | None = None) -> str:
    """One line for an ``AwaitedTable``: its phase, whom it waits for (each seat's player by
    display name, from ``names``, and id), since when, its deadline."""
    from sapsam.app.operator_queries import ANYONE, SERVICE

    def player(player_id: str | None) -> str:
        if not player_id:
            return " (free)"
        name = (names or {}).get(player_id)
        return f" {name} (players/{player_id})" if name else f" (players/{player_id})"

    if table.awaiting == ANYONE:
        whom = "anyone seated (or the operator)"
    elif table.awaiting == SERVICE:
        whom = "the server"
    else:
        held = [
            f"seat {seat}{player(player_id)}"
            for seat, player_id in zip(table.seats, table.players, strict=True)
        ]
        whom = ", ".join(held) or "nobody"
    waited = (now_ms - table.waiting_since_ms) // 1000
    deal = f" deal {table.deal_number}" if table.deal_number else ""  # none dealt yet
    line = (
        f"tables/{table.table_id}  {table.phase}{deal}: waits for {whom}"
        f" since {_time(table.waiting_since_ms)} ({waited} s)"
    )
    if table.deadline_ms is not None:
        if table.past_deadline(now_ms):
            state = f"passed {(now_ms - table.deadline_ms) // 1000} s ago"
        else:
            state = f"due in {(table.deadline_ms - now_ms + 999) // 1000} s"
        line += f"; deadline {_time(table.deadline_ms)} {state}"
    return line


async def awaited_names(connection: Any, tables: Iterable[Any]) -> dict[str, str]:
    """The display names of the players the ``AwaitedTable`` lines await, by id."""
    from sapsam.store.queries import query

    ids = sorted({player for table in tables for player in table.players if _is_uuid(player)})
    if not ids:
        return {}
    rows = await (
        await connection.execute(query("players.display_names"), {"players": ids})
    ).fetchall()
    return {str(row[0]): str(row[1]) for row in rows}


def _is_uuid(text: str | None) -> bool:
    """Whether ``text`` is a player id the directory gives (a table made without the directory,
    a sample or a test's, seats other ids, which have no display name)."""
    try:
        uuid.UUID(str(text))
    except ValueError:
        return False
    return True


def _as_json(table: Any, now_ms: int) -> dict[str, Any]:
    data = dataclasses.asdict(table)
    data["table_id"] = str(table.table_id)
    data["past_deadline"] = table.past_deadline(now_ms)
    return data


def _awaited(arguments: argparse.Namespace) -> int:
    """List the tables with whom they wait for."""
    if not 1 <= arguments.limit <= 1000:
        print("sapsam tables awaited: --limit must be 1 to 1000", file=sys.stderr)
        return 2
    from sapsam.app.operator_queries import awaited_table
    from sapsam.log.records import DatabaseOpenError
    from sapsam.store.embedded import async_database_connection
    from sapsam.store.table_queries import waiting_tables

    async def read() -> tuple[list[Any], dict[str, str]]:
        async with async_database_connection(
            arguments.database_url, arguments.data_dir, migrate=False
        ) as connection:
            rows = await waiting_tables(connection, arguments.phase, arguments.limit)
            tables = [awaited_table(row) for row in rows]
            return tables, await awaited_names(connection, tables)

    try:
        tables, names = asyncio.run(read())
    except DatabaseOpenError as error:
        print(error, file=sys.stderr)
        return FAILED
    now_ms = time.time_ns() // 1_000_000
    if arguments.json:
        print(json.dumps({"tables": [_as_json(t, now_ms) for t in tables]}, sort_keys=True))
        return 0
    if not tables:
        print("no tables")
    for table in tables:
        print(describe(table, now_ms, names))
    return 0


def _table_id(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(text).removeprefix("tables/"))
    except ValueError:
        return None


def _on_table(
    arguments: argparse.Namespace, command: str, act: Callable[[Any, uuid.UUID], Awaitable[Any]]
) -> Any:
    """Run ``act(tables, table_id)`` with a table service on the chosen database; the table's
    state afterwards, or an exit code after saying why not."""
    from sapsam.app.tables import TableService
    from sapsam.domain.errors import DomainError
    from sapsam.log.records import DatabaseOpenError
    from sapsam.store.embedded import open_database
    from sapsam.store.event_store import EventStore
    from sapsam.store.projections import registered_projectors
    from sapsam.store.table_projections import projectors as table_projectors

    table_id = _table_id(arguments.table)
    if table_id is None:
        print(f"sapsam tables {command}: {arguments.table!r} is not a table id", file=sys.stderr)
        return 2

    async def run(url: str) -> Any:
        store = EventStore.unopened(url, projectors=[*table_projectors(), *registered_projectors()])
        store.prepare()
        await store.open()
        try:
            tables = TableService(store)
            await act(tables, table_id)
            return await tables.load(table_id)
        finally:
            await store.close()

    try:
        with open_database(arguments.database_url, arguments.data_dir, migrate=True) as handle:
            return asyncio.run(run(handle.url))
    except DatabaseOpenError as error:
        print(error, file=sys.stderr)
        return FAILED
    except DomainError as error:
        print(f"sapsam tables {command}: {error.reason.value}: {error.message}", file=sys.stderr)
        return FAILED


def _time_out(arguments: argparse.Namespace) -> int:
    """Time one seat out now."""
    state = _on_table(
        arguments,
        "time-out",
        lambda tables, table_id: tables.force_time_out(
            table_id, arguments.seat, f"cli-{uuid.uuid4()}"
        ),
    )
    if isinstance(state, int):
        return state
    print(
        f"tables/{state.table_id}: seat {arguments.seat} timed out; the table is now"
        f" {state.phase.value}"
    )
    return 0


def _void(arguments: argparse.Namespace) -> int:
    """Void the deal in progress."""
    state = _on_table(
        arguments,
        "void",
        lambda tables, table_id: tables.void_deal(
            table_id, arguments.reason, f"cli-{uuid.uuid4()}"
        ),
    )
    if isinstance(state, int):
        return state
    assert state.deal is not None and state.deal.seed is not None
    print(
        f"tables/{state.table_id}: deal {state.deal.number} voided; its seed is"
        f" {state.deal.seed.hex()}; the table is now {state.phase.value}"
    )
    return 0


def _replace(arguments: argparse.Namespace) -> int:
    """Give a seat to another player."""
    player = str(arguments.player).removeprefix("players/")
    try:
        player_id = str(uuid.UUID(player))
    except ValueError:
        print(f"sapsam tables replace: {arguments.player!r} is not a player id", file=sys.stderr)
        return 2

    named: list[str] = []

    async def act(tables: Any, table_id: uuid.UUID) -> None:
        from sapsam.domain.errors import DomainError, Reason
        from sapsam.store.players import PlayerRecords

        profile = await PlayerRecords(tables.store.pool).profile(player_id)
        if profile is None:
            raise DomainError(Reason.INVALID_ARGUMENT, f"no player players/{player_id}")
        named.append(profile[0])
        await tables.replace_seat(table_id, arguments.seat, player_id, f"cli-{uuid.uuid4()}")

    state = _on_table(arguments, "replace", act)
    if isinstance(state, int):
        return state
    who = f"{named[0]} (players/{player_id})" if named and named[0] else f"players/{player_id}"
    print(f"tables/{state.table_id}: seat {arguments.seat} is now played by {who}")
    return 0
