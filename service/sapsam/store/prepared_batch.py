"""The commit group's batch statement sent through libpq's prepared-statement calls directly.

Why: the batch statement (``sapsam.store.batch_statement``) is one text of ~8-10 KB with one
text parameter, sent on the group's own connection for every batch. Through psycopg's
``execute`` each send costs ~75 us of the server's CPU: the text is longer than psycopg's query
cache takes (4,096 characters), so it is converted, encoded and hashed again on every batch, and
the execution goes through psycopg's generic machinery (cursor, transformer, prepared-statement
manager, generators). Prepared once per connection and text, and sent with
``PQsendQueryPrepared`` on the connection's own ``pgconn``, the same round trip costs ~25 us
(bench, docs/performance.md "2026-12-03 (afternoon)"). The database sees the same statement
with the same parameter: the same plan (the connection plans generically), the same rows.

Only this statement takes the path: one text parameter, rows of four integers and a boolean
read back as psycopg reads them. Any failure (an error result, a lost connection) raises a
``psycopg.Error`` after every result of the statement is read, so the group answers it as any
failed batch: its members run alone.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
from psycopg import pq

Row = tuple[Any, ...]


class PreparedBatches:
    """The batch statement texts prepared on one connection, by text (one name each)."""

    __slots__ = ("_connection", "_names")

    def __init__(self, connection: psycopg.AsyncConnection[Any]) -> None:
        self._connection = connection
        self._names: dict[str, bytes] = {}

    def serves(self, connection: psycopg.AsyncConnection[Any]) -> bool:
        """Whether these are ``connection``'s (a new connection has none prepared)."""
        return connection is self._connection

    async def rows(self, text: str, parameter: str) -> list[Row]:
        """The rows of the batch statement ``text`` (``%(members)s`` its one parameter) run
        with ``parameter``, on the connection (autocommit, idle: its own transaction)."""
        pgconn = self._connection.pgconn
        name = self._names.get(text)
        if name is None:
            name = f"sapsam_batch_{len(self._names)}".encode()
            pgconn.send_prepare(name, _numbered(text))
            await _results(pgconn)
            self._names[text] = name
        pgconn.send_query_prepared(name, [parameter.encode("utf-8")])
        return _rows(await _results(pgconn))


def _numbered(text: str) -> bytes:
    """The statement as PostgreSQL takes it: ``$1`` for its one named parameter, ``%`` for the
    ``%%`` psycopg's placeholder syntax needs."""
    numbered = text.replace("%(members)s", "$1")
    if "%(" in numbered or "%s" in numbered or "%b" in numbered:
        raise ValueError("the batch statement has one parameter, %(members)s")
    return numbered.replace("%%", "%").encode("utf-8")


async def _results(pgconn: pq.abc.PGconn) -> list[pq.abc.PGresult]:
    """Every result of the command just sent, once it has finished; raises ``psycopg.Error``
    for an error result (after reading them all, so the connection is idle again)."""
    loop = asyncio.get_running_loop()
    fileno = pgconn.socket
    while pgconn.flush():  # the rest of the message, as the socket takes it
        await _ready(loop, fileno, writing=True)
    results = []
    while True:
        pgconn.consume_input()
        if pgconn.is_busy():
            await _ready(loop, fileno, writing=False)
            continue
        result = pgconn.get_result()
        if result is None:
            break
        results.append(result)
    for result in results:
        if result.status not in (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK):
            message = (result.error_message or b"").decode("utf-8", "replace").strip()
            status = pq.ExecStatus(result.status).name
            raise psycopg.DatabaseError(message or f"the batch statement ended {status}")
    return results


async def _ready(loop: asyncio.AbstractEventLoop, fileno: int, writing: bool) -> None:
    ready: asyncio.Future[None] = loop.create_future()
    if writing:
        loop.add_writer(fileno, _resolve, ready)
    else:
        loop.add_reader(fileno, _resolve, ready)
    try:
        await ready
    finally:
        if writing:
            loop.remove_writer(fileno)
        else:
            loop.remove_reader(fileno)


def _resolve(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


def _rows(results: list[pq.abc.PGresult]) -> list[Row]:
    """The statement's rows ``(i, position, version, wanted)`` as psycopg reads them (text: ints
    and a boolean ``t``/``f``)."""
    rows: list[Row] = []
    for result in results:
        value = result.get_value
        for row in range(result.ntuples):
            index, position, version, wanted = (value(row, column) for column in range(4))
            rows.append(
                (
                    _integer(index),
                    _integer(position),
                    _integer(version),
                    None if wanted is None else wanted == b"t",
                )
            )
    return rows


def _integer(value: bytes | None) -> int | None:
    return None if value is None else int(value)
