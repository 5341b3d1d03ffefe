"""The event store as one object: a connection pool plus the registered projectors.

The functions in ``appends``, ``reads``, ``projections`` and ``deal_secrets`` take a connection, so
they compose inside one transaction; ``EventStore`` is the convenient front for callers that just
want to append or read with a pooled connection.

    store = await EventStore.connect(handle.url, projectors=registered_projectors())
    result = await store.append("table-1", 0, [NewEvent("TableCreated", {...})], request_id="r-1")

The pool is psycopg's ``AsyncConnectionPool``: it belongs to the event loop that opened it.
"""

from __future__ import annotations

import contextlib
import contextvars
import select
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Final

import psycopg
from psycopg import pq
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool
from psycopg_pool.base import AttemptWithBackoff

from sapsam.app.store_interface import StopSignal
from sapsam.log.records import AppendResult, JsonObject, JsonValue, NewEvent, RecordedEvent
from sapsam.store import appends, reads, write_stamps
from sapsam.store.append_statement import ProjectCallback
from sapsam.store.commit_group import CommitGroup, enabled_by_environment
from sapsam.store.projections import ProjectionReport, Projector, prepare_projections
from sapsam.store.session import KnownDatabase, PostgresSession
from sapsam.store.subscriptions import close_notifiers, follow_as_leader


@dataclass(frozen=True)
class PoolPolicy:
    """How the service's pool waits, reconnects and gives up: the one place these are set.

    Why it matters: after a database outage the pool's stock policy (psycopg_pool) retried a lost
    connection after 1, 2, 4, 8 … seconds, so a database back after 20 s was used again only at
    the next attempt, ~9 s later, and every call waited up to 30 s for a connection, well past
    its own deadline. Here reconnection never waits more than ``reconnect_delay_max``, a call
    waits no longer than its own remaining time, and while the database is known to be out of
    reach a call waits at most ``outage_wait`` before it is told to retry.
    """

    min_size: int = 1
    max_size: int = 8
    wait: float = 10.0
    """Longest wait for a free connection when nothing else bounds it (background work)."""
    outage_wait: float = 0.5
    """Longest wait for a connection while the last attempt to connect failed."""
    reconnect_delay_max: float = 0.25
    """Longest pause between two attempts to replace a lost connection."""
    deadline_reserve: float = 0.05
    """Kept back from a call's remaining time, so its refusal still reaches the caller in time."""
    connect_timeout: int = 5
    """Seconds one connection attempt may take (unless the URL sets ``connect_timeout``)."""


DEFAULT_POOL_POLICY: Final = PoolPolicy()


class _SessionBlock(AbstractAsyncContextManager[PostgresSession]):
    """``EventStore.session``'s block: the session, its pooled connection (if it took one)
    given back at the end, with the error that ended the block if one did. A class, not an
    ``asynccontextmanager`` generator: every call opens one (~1 us less each)."""

    __slots__ = ("_session",)

    def __init__(self, session: PostgresSession) -> None:
        self._session = session

    async def __aenter__(self) -> PostgresSession:
        return self._session

    async def __aexit__(
        self,
        error_type: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._session.release(error_type, error, traceback)


TimeRemaining = Callable[[], float]
"""Seconds left to the call being served (its deadline, or the server's stop, if sooner)."""

_time_remaining: contextvars.ContextVar[TimeRemaining | None] = contextvars.ContextVar(
    "sapsam_time_remaining", default=None
)


@contextlib.contextmanager
def waits_bounded_by(time_remaining: TimeRemaining) -> Iterator[None]:
    """Within this block (and the tasks it starts), waiting for a pooled connection ends before
    ``time_remaining()`` does.

    The API sets it around each call, so a call that cannot get a connection is refused
    (``PoolTimeout``: the database is unavailable) while its caller still listens.
    """
    token = bound_waits(time_remaining)
    try:
        yield
    finally:
        unbound_waits(token)


def bound_waits(time_remaining: TimeRemaining) -> contextvars.Token[TimeRemaining | None]:
    """:func:`waits_bounded_by`'s start, for code that keeps no block open (a stream's
    interceptor): undone by :func:`unbound_waits` with what it returns."""
    return _time_remaining.set(time_remaining)


def unbound_waits(token: contextvars.Token[TimeRemaining | None]) -> None:
    """Undo :func:`bound_waits`."""
    # A stream's generator may be closed in another context (a cancelled call): then there is
    # nothing of ours to reset.
    with contextlib.suppress(ValueError):
        _time_remaining.reset(token)


class _CappedBackoff(AttemptWithBackoff):
    """psycopg_pool's reconnection backoff, but never pausing longer than ``max_delay``."""

    def __init__(self, *, timeout: float, max_delay: float) -> None:
        super().__init__(timeout=timeout)
        self.max_delay = max_delay

    def update_delay(self, now: float) -> None:
        super().update_delay(now)
        self.delay = min(self.delay, self.max_delay)


class ServicePool(AsyncConnectionPool[Any]):
    """A connection pool that follows a :class:`PoolPolicy` and can cut off work in progress.

    Two hooks into psycopg_pool's internals (``_connect``, ``_add_connection``; the recovery
    test in tests/api/test_database_recovery.py fails should they change): one records whether
    the last connection attempt failed, the other caps the reconnection backoff.
    """

    def __init__(self, url: str, policy: PoolPolicy = DEFAULT_POOL_POLICY) -> None:
        kwargs: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in conninfo_to_dict(url):
            kwargs["connect_timeout"] = policy.connect_timeout
        self.policy = policy
        self._unreachable = False
        self._lent: set[psycopg.AsyncConnection[Any]] = set()
        super().__init__(
            url,
            min_size=policy.min_size,
            max_size=policy.max_size,
            # Opened on the loop that will use it (``EventStore.open``): an asyncio pool
            # belongs to one loop.
            open=False,
            kwargs=kwargs,
            timeout=policy.wait,
        )

    @property
    def unreachable(self) -> bool:
        """True while the last attempt to open a connection failed."""
        return self._unreachable

    async def getconn(self, timeout: float | None = None) -> psycopg.AsyncConnection[Any]:
        """A live connection, waiting no longer than the policy and the call's remaining time."""
        wait = self.policy.wait if timeout is None else timeout
        if self._unreachable:
            wait = min(wait, self.policy.outage_wait)
        time_remaining = _time_remaining.get()
        if time_remaining is not None:
            wait = min(wait, time_remaining() - self.policy.deadline_reserve)
        deadline = time.monotonic() + wait
        while True:
            # A timeout of 0 or less raises PoolTimeout at once: the caller is told to retry.
            connection: psycopg.AsyncConnection[Any] = await super().getconn(
                deadline - time.monotonic()
            )
            if _still_connected(connection):
                break
            await super().putconn(connection)  # closed: discarded, and a replacement is opened
        self._lent.add(connection)
        return connection

    async def putconn(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """Take a connection back."""
        self._lent.discard(conn)
        await super().putconn(conn)

    async def cancel_work_in_progress(self) -> int:
        """Cancel the statement running on every connection now lent out; how many there were.

        Called when a stopping server's grace period ends: the calls still waiting on the
        database then fail at once (and are answered UNAVAILABLE) instead of being cut off.
        """
        lent = list(self._lent)
        for connection in lent:
            with contextlib.suppress(Exception):
                await connection.cancel_safe(timeout=1.0)
        return len(lent)

    async def _connect(self, timeout: float | None = None) -> psycopg.AsyncConnection[Any]:
        try:
            connection: psycopg.AsyncConnection[Any] = await super()._connect(timeout)
        except Exception:
            self._unreachable = True
            raise
        self._unreachable = False
        return connection

    async def _add_connection(
        self, attempt: AttemptWithBackoff | None, growing: bool = False
    ) -> None:
        if attempt is None:
            attempt = _CappedBackoff(
                timeout=self.reconnect_timeout, max_delay=self.policy.reconnect_delay_max
            )
        await super()._add_connection(attempt, growing)


def _still_connected(connection: psycopg.AsyncConnection[Any]) -> bool:
    """Whether an idle pooled connection is still alive, without a round trip to the server.

    An idle connection receives nothing unless the server ended it (a restart, an administrator
    terminating it): then its socket reads the farewell or end of file. Reading that marks the
    connection bad; anything else that arrived (a notice) is consumed and the connection kept.
    """
    if connection.closed:
        return False
    pgconn = connection.pgconn
    try:
        readable, _, _ = select.select([pgconn.socket], [], [], 0)
        if readable:
            pgconn.consume_input()
    except (OSError, psycopg.OperationalError):
        return False
    return pgconn.status == pq.ConnStatus.OK


async def open_pool(url: str, min_size: int = 1, max_size: int = 8) -> ServicePool:
    """An open pool on ``url`` of autocommit connections: each call runs its own transaction."""
    pool = ServicePool(url, PoolPolicy(min_size=min_size, max_size=max_size))
    await pool.open(wait=True)
    return pool


@dataclass(frozen=True)
class EventStore:
    """Append to and read from the log through a pool, applying ``projectors`` on every append."""

    pool: ServicePool
    projectors: tuple[Projector, ...] = ()
    commit_group: CommitGroup | None = None
    """Commits the appends in flight together (``sapsam.store.commit_group``); None: each on
    its own."""
    known_database: KnownDatabase = field(default_factory=KnownDatabase, compare=False)
    """What the sessions learnt of the database (``PostgresSession``)."""

    @classmethod
    def unopened(
        cls,
        url: str,
        projectors: Sequence[Projector] = (),
        max_size: int = 8,
        group_commit: bool | None = None,
    ) -> EventStore:
        """A store on ``url`` whose pool opens later, on its loop (``open``). ``group_commit``:
        whether appends share commits (None: as ``SAPSAM_GROUP_COMMIT`` says, on by default)."""
        pool = ServicePool(url, PoolPolicy(max_size=max_size))
        if group_commit is None:
            group_commit = enabled_by_environment()
        options: dict[str, Any] = {}
        if "connect_timeout" not in conninfo_to_dict(url):
            options["connect_timeout"] = pool.policy.connect_timeout
        group = CommitGroup(url, connect_options=options) if group_commit else None
        return cls(pool, tuple(projectors), group)

    @classmethod
    async def connect(
        cls,
        url: str,
        projectors: Sequence[Projector] = (),
        max_size: int = 8,
        group_commit: bool | None = None,
    ) -> EventStore:
        """Open a pool on ``url`` and wrap it (close with ``close()``)."""
        store = cls.unopened(url, projectors, max_size, group_commit)
        await store.open()
        return store

    async def open(self) -> None:
        """Open the pool on the running loop and wait for its first connection."""
        await self.pool.open(wait=True, timeout=self.pool.policy.wait)

    async def close(self) -> None:
        """Close the commit group, the pool (and the loop's wake-up notifier)."""
        if self.commit_group is not None:
            await self.commit_group.close()
        await close_notifiers()
        await self.pool.close()

    async def cancel_work_in_progress(self) -> int:
        """Cancel the statements running for calls (``ServicePool.cancel_work_in_progress``),
        the commit group's batch in flight included; how many pooled connections were lent."""
        if self.commit_group is not None:
            await self.commit_group.cancel_in_flight()
        return await self.pool.cancel_work_in_progress()

    def prepare(self) -> list[ProjectionReport]:
        """Create, rebuild or catch up the projectors' tables (call once at start-up, before
        serving: on a synchronous connection of its own)."""
        conninfo = self.pool.conninfo
        assert isinstance(conninfo, str)  # the pool was opened with a connection string
        with psycopg.connect(conninfo, autocommit=True) as connection:
            return prepare_projections(connection, self.projectors)

    async def append(
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
        async with self.pool.connection() as connection:
            return await appends.append(
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
                commit_group=self.commit_group,
            )

    async def read_stream(
        self, stream_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        """One stream's events from ``from_version``."""
        async with self.pool.connection() as connection:
            return await reads.read_stream(connection, stream_id, from_version, to_version)

    async def read_all(
        self, after_position: int = 0, limit: int = 1000, stream_id: str | None = None
    ) -> list[RecordedEvent]:
        """Events after a global checkpoint, in global order."""
        async with self.pool.connection() as connection:
            return await reads.read_all(connection, after_position, limit, stream_id)

    async def stream_version(self, stream_id: str) -> int:
        """The stream's current version (0 if it has no events)."""
        async with self.pool.connection() as connection:
            return await reads.stream_version(connection, stream_id)

    def connection(self) -> AbstractAsyncContextManager[psycopg.AsyncConnection[Any]]:
        """A pooled (autocommit) connection, for work that spans several calls."""
        return self.pool.connection()

    # -- the application layer's interface (``sapsam.app.store_interface.Store``) ---------------

    @property
    def outage_errors(self) -> tuple[type[Exception], ...]:
        """The database is out of reach (psycopg's OperationalError)."""
        return (psycopg.OperationalError,)

    @property
    def database_errors(self) -> tuple[type[Exception], ...]:
        """Anything the database or psycopg raises."""
        return (psycopg.Error,)

    def session(self) -> AbstractAsyncContextManager[PostgresSession]:
        """Store operations on one pooled connection (``sapsam.store.session``)."""
        # The pooled connection is taken when an operation first needs one: a write the commit
        # group commits needs none (``PostgresSession.append``).
        return _SessionBlock(
            PostgresSession(
                None,
                self.projectors,
                self.commit_group,
                pool=self.pool,
                known=self.known_database,
            )
        )

    def write_stamp(self, stream_id: str) -> int:
        """The stream's write stamp now (``sapsam.store.write_stamps``)."""
        return write_stamps.stamps().current(stream_id)

    def stamp_after_own_write(self, stream_id: str, before: int) -> int | None:
        """The stamp of a copy made by this process's own append (None: not current)."""
        return write_stamps.stamps().after_own_write(stream_id, before)

    def bump_write_stamp(self, stream_id: str) -> None:
        """Make every copy of the stream made so far not current."""
        write_stamps.stamps().bump(stream_id)

    def follow_log(
        self,
        lock_key: int,
        stop: StopSignal,
        poll_seconds: float,
        gather_seconds: float,
        event_types: Sequence[str] | None = None,
    ) -> AsyncIterator[None]:
        """Follow the log as its one follower (``subscriptions.follow_as_leader``), on a
        connection of its own outside the pool."""
        conninfo = self.pool.conninfo
        assert isinstance(conninfo, str)  # the pool was opened with a connection string
        return follow_as_leader(conninfo, lock_key, stop, poll_seconds, gather_seconds, event_types)
