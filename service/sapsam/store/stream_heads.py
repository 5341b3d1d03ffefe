"""A per-process memory of each stream's last known (version, hash): a hint that saves a query.

To chain a new event, an append needs the hash of the event at its expected version. Events never
change, so "version V of stream S has hash H" stays true for ever once seen; the append's insert
checks it anyway (it inserts nothing unless that event exists with that hash) and falls back to
reading the stream's head when the hint is missing or wrong. A wrong hint (say, a database that
was emptied and refilled under the same connection string) therefore costs a retry, never a bad
chain. Bounded, least recently used first out.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import psycopg

CAPACITY = 50_000

_heads: OrderedDict[tuple[bytes, bytes, bytes, str], tuple[int, bytes]] = OrderedDict()
_lock = threading.Lock()


DatabaseKey = tuple[bytes, bytes, bytes]
"""Host, port and database name: what the remembered heads are about."""


def database_key(connection: psycopg.BaseConnection[Any]) -> DatabaseKey:
    """The database ``connection`` is to, as the heads are keyed: two pools on one database
    share entries, which is right (the fact is about the database, not the connection). A
    writer without a connection in hand (``sapsam.store.group_appends.append_by_group``) keeps the
    key of one it held before."""
    # Read from libpq directly: ``connection.info.dsn`` costs a conninfo parse per call.
    pgconn = connection.pgconn
    return pgconn.host, pgconn.port, pgconn.db


def remember(
    connection: psycopg.BaseConnection[Any], stream_id: str, version: int, hash_: bytes
) -> None:
    """Note that ``version`` of ``stream_id`` has hash ``hash_`` (kept if it is the newest seen)."""
    remember_in(database_key(connection), stream_id, version, hash_)


def remember_in(database: DatabaseKey, stream_id: str, version: int, hash_: bytes) -> None:
    """``remember`` by the database's key."""
    key = (*database, stream_id)
    with _lock:
        known = _heads.get(key)
        if known is None or known[0] <= version:
            _heads[key] = (version, hash_)
            _heads.move_to_end(key)
            while len(_heads) > CAPACITY:
                _heads.popitem(last=False)


def recall(connection: psycopg.BaseConnection[Any], stream_id: str, version: int) -> bytes | None:
    """The remembered hash of ``version`` of ``stream_id`` if that is the newest seen, else None."""
    return recall_in(database_key(connection), stream_id, version)


def recall_in(database: DatabaseKey, stream_id: str, version: int) -> bytes | None:
    """``recall`` by the database's key."""
    with _lock:
        known = _heads.get((*database, stream_id))
    if known is None or known[0] != version:
        return None
    return known[1]


def forget(connection: psycopg.BaseConnection[Any], stream_id: str) -> None:
    """Drop what is remembered about a stream (after a hint turned out wrong)."""
    with _lock:
        _heads.pop((*database_key(connection), stream_id), None)
