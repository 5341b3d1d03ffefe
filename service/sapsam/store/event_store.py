"""The event store as one object: a connection pool plus the registered projectors.

The functions in ``appends``, ``reads``, ``projections`` and ``deal_secrets`` take a connection, so
they compose inside one transaction; ``EventStore`` is the convenient front for callers that just
want to append or read with a pooled connection.

    store = EventStore.connect(handle.url, projectors=registered_projectors())
    result = store.append("table-1", 0, [NewEvent("TableCreated", {...})], request_id="r-1")
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from sapsam.store import appends, reads
from sapsam.store.appends import ProjectCallback
from sapsam.store.projections import ProjectionReport, Projector, prepare_projections
from sapsam.store.records import AppendResult, JsonObject, JsonValue, NewEvent, RecordedEvent


def open_pool(url: str, min_size: int = 1, max_size: int = 8) -> ConnectionPool[Any]:
    """An open pool on ``url`` of autocommit connections: each call runs its own transaction."""
    pool: ConnectionPool[Any] = ConnectionPool(
        url, min_size=min_size, max_size=max_size, open=True, kwargs={"autocommit": True}
    )
    pool.wait()
    return pool


@dataclass(frozen=True)
class EventStore:
    """Append to and read from the log through a pool, applying ``projectors`` on every append."""

    pool: ConnectionPool[Any]
    projectors: tuple[Projector, ...] = ()

    @classmethod
    def connect(
        cls, url: str, projectors: Sequence[Projector] = (), max_size: int = 8
    ) -> EventStore:
        """Open a pool on ``url`` and wrap it (close with ``close()``)."""
        return cls(open_pool(url, max_size=max_size), tuple(projectors))

    def close(self) -> None:
        """Close the pool."""
        self.pool.close()

    def prepare(self) -> list[ProjectionReport]:
        """Create, rebuild or catch up the projectors' tables (call once at start-up)."""
        with self.pool.connection() as connection:
            return prepare_projections(connection, self.projectors)

    def append(
        self,
        stream_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        request_id: str,
        actor: str | None = None,
        *,
        metadata: JsonObject | None = None,
        response: JsonValue = None,
        project: ProjectCallback | None = None,
    ) -> AppendResult:
        """Append atomically with the read models; see ``sapsam.store.appends.append``."""
        with self.pool.connection() as connection:
            return appends.append(
                connection,
                stream_id,
                expected_version,
                events,
                request_id,
                actor,
                metadata=metadata,
                response=response,
                projectors=self.projectors,
                project=project,
            )

    def read_stream(
        self, stream_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        """One stream's events from ``from_version``."""
        with self.pool.connection() as connection:
            return reads.read_stream(connection, stream_id, from_version, to_version)

    def read_all(
        self, after_position: int = 0, limit: int = 1000, stream_id: str | None = None
    ) -> list[RecordedEvent]:
        """Events after a global checkpoint, in global order."""
        with self.pool.connection() as connection:
            return reads.read_all(connection, after_position, limit, stream_id)

    def stream_version(self, stream_id: str) -> int:
        """The stream's current version (0 if it has no events)."""
        with self.pool.connection() as connection:
            return reads.stream_version(connection, stream_id)

    def connection(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        """A pooled (autocommit) connection, for work that spans several calls."""
        return self.pool.connection()
