"""Following the log live: LISTEN for wake-ups, read the log, poll when nothing wakes us.

A server process follows live streams through one asyncio LISTEN connection
(``sapsam.api.live_feed``): :func:`listen_for_streams`, :func:`watch_streams`,
:func:`renew_feed`, :func:`unlisten` and :func:`stream_heads` are its statements;
:func:`follow_as_leader` is the background work's follower (the results process), :func:`follow`
a synchronous one for offline use.

An append sends ``NOTIFY sapsam_events`` after its commit with a payload of ``{"stream",
"position"}``, a wake-up signal, never the data, when some listener wants it: a LISTENing session
says so in ``wakeup_listeners`` (migration 0006) with its LISTEN (:func:`listen`,
:func:`listen_for_wakeups`), for every append or for appends of some event types (the results
follower wants only ``DealScored``), and renews it while it listens (every
:data:`WAKEUP_LEASE_SECONDS` / 2). The server's event feed wants the appends of the streams it has
watchers for, no more (:func:`listen_for_streams`, :func:`watch_streams`: rows of
``wakeup_streams``, migration 0012), renewed at every poll (:func:`renew_feed`); and an append
whose caller hands its events to its own process's feed itself (``handed_to``: the table
runner's appends) does not wake that feed, only other processes'. The append reads both tables
inside its own statement. With nobody else listening, appends send nothing.

A follower reads the events itself from its checkpoint, so a lost or coalesced notification costs
latency only, never an event; the timed wait is the polling fallback. Any number of server
processes can follow the same table this way.

An append that commits on its own hands its wake-up to ``send_wakeup``: a task of the event loop
(one per database) sends it on a connection of its own, so the NOTIFY costs the append no round trip
and no server time, and wake-ups that pile up while one is being sent go out together, in one
transaction. That transaction commits asynchronously: PostgreSQL serialises the commits of all
transactions that NOTIFY (a global lock held through the commit), so a NOTIFY must never wait for
a disk flush, and it writes nothing worth one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from sapsam.app.store_interface import StopSignal
from sapsam.log.records import RecordedEvent
from sapsam.store.offline_reads import read_all
from sapsam.store.queries import query

_logger = logging.getLogger("sapsam.store.subscriptions")

NOTIFY_CHANNEL = "sapsam_events"
# A notifier task with nothing to send closes its connection and ends after this long.
NOTIFIER_IDLE_SECONDS = 2.0
# At most one NOTIFY transaction per this interval and process and database: wake-ups that come
# sooner wait for the rest of it and go out together. Followers hear of an append at most this
# much later, and a busy writer pays for one NOTIFY per interval rather than one per append.
NOTIFIER_INTERVAL_SECONDS = 0.005
# How long closing a store waits for its notifier to send what it holds.
NOTIFIER_CLOSE_SECONDS = 2.0
# After a failure (server gone, say) a notifier drops what it held and waits this long.
NOTIFIER_RETRY_SECONDS = 0.5
# A listener's row in wakeup_listeners holds this long unless renewed: a process that died stops
# costing wake-ups after it. Listeners renew at least every half of it.
WAKEUP_LEASE_SECONDS = 10.0

SEND_WAKEUPS = """
SELECT set_config('synchronous_commit', 'off', true), pg_notify(%s, payload)
FROM unnest(%s::text[]) AS payload
"""


@dataclass(frozen=True)
class Wakeup:
    """A decoded notification: which stream moved and its last position."""

    stream_id: str
    position: int


_LISTEN = sql.SQL("LISTEN {}").format(sql.Identifier(NOTIFY_CHANNEL))
_UNLISTEN = sql.SQL("UNLISTEN {}").format(sql.Identifier(NOTIFY_CHANNEL))
STREAM_HEADS = """
SELECT stream, (SELECT max(version) FROM events WHERE stream_id = stream)
FROM unnest(%s::text[]) AS stream
"""


def _registration(event_types: Sequence[str] | None) -> dict[str, Any]:
    return {
        "types": None if event_types is None else list(event_types),
        "seconds": WAKEUP_LEASE_SECONDS,
    }


async def listen(
    connection: psycopg.AsyncConnection[Any], event_types: Sequence[str] | None = None
) -> None:
    """Receive on ``connection`` (autocommit) from now on the wake-ups of appends with one of
    ``event_types``, or of every append (None); called again, renews the wish."""
    # Both before the caller's first read, so an append committed after that read wakes it.
    await connection.execute(query("wakeups.register"), _registration(event_types))
    await connection.execute(_LISTEN)


async def unlisten(connection: psycopg.AsyncConnection[Any]) -> None:
    """Stop receiving wake-ups on ``connection``."""
    await connection.execute(query("wakeups.unregister"))
    await connection.execute(_UNLISTEN)


async def stream_heads(
    connection: psycopg.AsyncConnection[Any], stream_ids: Sequence[str]
) -> dict[str, int]:
    """The last version of each stream (0 for one with no events), in one round trip: one
    index probe per stream, however long the streams are."""
    cursor = await connection.execute(STREAM_HEADS, [list(stream_ids)])
    return {str(stream): int(head or 0) for stream, head in await cursor.fetchall()}


def listener_id(connection: psycopg.AsyncConnection[Any]) -> str:
    """How ``wakeup_listeners`` knows the session of ``connection`` (its backend pid): what an
    append's ``handed_to`` names."""
    return str(connection.info.backend_pid)


async def listen_for_streams(connection: psycopg.AsyncConnection[Any]) -> None:
    """Receive on ``connection`` (autocommit) the wake-ups of the streams :func:`watch_streams`
    lists, none yet: a row left by a dead session of the same pid goes first, with its streams.
    Renew it with :func:`renew_feed`; :func:`unlisten` ends it."""
    await connection.execute(query("wakeups.unregister"))
    await renew_feed(connection)
    await connection.execute(_LISTEN)


async def renew_feed(connection: psycopg.AsyncConnection[Any]) -> bool:
    """Renew the wish of :func:`listen_for_streams`; True if its row had gone (lapsed and
    deleted: its streams went with it, list them again). Also deletes listeners lapsed for a
    lease (processes that died) with their streams."""
    cursor = await connection.execute(
        query("wakeups.renew_feed"), {"seconds": WAKEUP_LEASE_SECONDS}
    )
    row = await cursor.fetchone()
    return bool(row and row[0])


async def watch_streams(
    connection: psycopg.AsyncConnection[Any], added: Sequence[str], dropped: Sequence[str]
) -> dict[str, int]:
    """Want the wake-ups of the ``added`` streams too, and no longer those of the ``dropped``
    ones, in one round trip; the last version of each added stream (0: no events), read by the
    same statement: what committed before the row could be seen sent no wake-up."""
    cursor = await connection.execute(
        query("wakeups.watch_streams"), {"added": list(added), "dropped": list(dropped)}
    )
    return {str(stream): int(head or 0) for stream, head in await cursor.fetchall()}


def listen_for_wakeups(
    connection: psycopg.Connection[Any], event_types: Sequence[str] | None = None
) -> None:
    """LISTEN for wake-ups on ``connection`` (autocommit) and say which ones are wanted: of
    appends with one of ``event_types``, or of every append (None). Renew it with
    :class:`WakeupLease` while listening."""
    connection.execute(query("wakeups.register"), _registration(event_types))
    connection.execute(_LISTEN)


class WakeupLease:
    """Keeps a synchronous listener's row alive: :meth:`renew` writes it again once half of
    :data:`WAKEUP_LEASE_SECONDS` has passed since it was last written (else does nothing)."""

    def __init__(
        self, connection: psycopg.Connection[Any], event_types: Sequence[str] | None = None
    ) -> None:
        self._connection = connection
        self._event_types = event_types
        self._written_at = time.monotonic()

    def renew(self) -> None:
        """Write the row again if half its time is gone."""
        if time.monotonic() - self._written_at < WAKEUP_LEASE_SECONDS / 2:
            return
        self._connection.execute(query("wakeups.register"), _registration(self._event_types))
        self._written_at = time.monotonic()


def parse_wakeup(payload: str) -> Wakeup:
    """Decode the payload an append sends with its NOTIFY."""
    decoded = json.loads(payload)
    return Wakeup(stream_id=str(decoded["stream"]), position=int(decoded["position"]))


def follow(
    conninfo: str,
    after_position: int = 0,
    stream_id: str | None = None,
    *,
    poll_seconds: float = 1.0,
    batch_size: int = 500,
    should_stop: Callable[[], bool] | None = None,
) -> Iterator[RecordedEvent]:
    """Yield every event after ``after_position`` in global order, then new ones as they commit.

    With ``stream_id``, only that stream's events. Opens its own connection (LISTEN is a session
    property, so it cannot come from a shared pool) and closes it when the iterator is closed.
    Between batches it waits for a notification for at most ``poll_seconds``, then reads anyway.
    ``should_stop`` is checked whenever the follower has caught up; returning True ends the
    iteration. Never skips an event: see ``sapsam.store.reads`` for why the global order is safe.
    """
    with psycopg.connect(conninfo, autocommit=True) as connection:
        # LISTEN before the first read: anything committed after that read wakes us.
        listen_for_wakeups(connection)
        lease = WakeupLease(connection)
        checkpoint = after_position
        while True:
            lease.renew()
            batch = read_all(connection, checkpoint, batch_size, stream_id)
            for event in batch:
                checkpoint = event.position
                yield event
            if len(batch) == batch_size:
                continue
            if should_stop is not None and should_stop():
                return
            for _ in connection.notifies(timeout=poll_seconds, stop_after=1):
                pass


def wakeup_payload(stream_id: str, position: int) -> str:
    """The NOTIFY payload for ``stream_id`` having reached ``position``."""
    return json.dumps({"stream": stream_id, "position": position})


class _Notifier:
    """Sends the wake-ups of one database from a task of its own, coalescing per stream."""

    def __init__(self, conninfo: str) -> None:
        self._conninfo = conninfo
        self._pending: dict[str, int] = {}
        self._arrived = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    def wake(self, stream_id: str, position: int) -> None:
        if self._pending.get(stream_id, 0) < position:
            self._pending[stream_id] = position
        self._arrived.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="sapsam-notifier")

    async def _take(self, not_before: float) -> dict[str, int] | None:
        """The pending wake-ups, waiting for some; None (and the task ends) when idle.

        Waits until ``not_before`` (a ``time.monotonic`` value) too, gathering what comes in.
        """
        if not self._pending and not self._closing:
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(NOTIFIER_IDLE_SECONDS):  # no task per wait
                    await self._arrived.wait()
        if not self._pending:
            self._task = None
            return None
        delay = not_before - time.monotonic()
        if delay > 0 and not self._closing:
            await asyncio.sleep(delay)
        pending, self._pending = self._pending, {}
        return pending

    async def _run(self) -> None:
        connection: psycopg.AsyncConnection[Any] | None = None
        try:
            sent_at = 0.0
            while (pending := await self._take(sent_at + NOTIFIER_INTERVAL_SECONDS)) is not None:
                sent_at = time.monotonic()
                payloads = [wakeup_payload(stream, last) for stream, last in pending.items()]
                try:
                    if connection is None:
                        connection = await psycopg.AsyncConnection.connect(
                            self._conninfo, autocommit=True
                        )
                    await connection.execute(SEND_WAKEUPS, [NOTIFY_CHANNEL, payloads])
                except Exception as error:
                    # Those wake-ups are lost, which followers survive (they poll); the task
                    # carries on either way, so one bad send never ends the wake-ups for good.
                    # A database error is expected in an outage; anything else is logged.
                    if not isinstance(error, psycopg.Error):
                        _logger.exception("sending wake-ups failed")
                    if connection is not None:
                        with contextlib.suppress(Exception):
                            await connection.close()
                        connection = None
                    await asyncio.sleep(NOTIFIER_RETRY_SECONDS)
        finally:
            if self._task is asyncio.current_task():
                self._task = None
            if connection is not None:
                await connection.close()

    async def close(self) -> None:
        """Send what is pending at once and end the task (cancelled if sending takes longer
        than ``NOTIFIER_CLOSE_SECONDS``: followers still poll)."""
        self._closing = True
        self._arrived.set()
        task = self._task
        if task is None:
            return
        done, _ = await asyncio.wait((task,), timeout=NOTIFIER_CLOSE_SECONDS)
        if not done:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


# One notifier per event loop (a test process runs several) and database.
_notifiers: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[bytes | None, ...], _Notifier]
] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class WakeupTarget:
    """The database a wake-up is about, as the notifiers are keyed, with what their own
    connection needs: taken once from a connection to it (``wakeup_target``), so that a writer
    without a connection in hand can still have its wake-up sent."""

    key: tuple[bytes, bytes, bytes, bytes, bytes]
    conninfo: str


def wakeup_target(connection: psycopg.AsyncConnection[Any]) -> WakeupTarget:
    """The notifiers' key and connection string for ``connection``'s database."""
    pgconn = connection.pgconn
    # The libpq view of the connection's parameters: connection.info.dsn leaves out the
    # password, which the notifier needs to connect on its own.
    return WakeupTarget(
        (pgconn.host, pgconn.port, pgconn.db, pgconn.user, pgconn.options),
        make_conninfo(connection.info.dsn, password=connection.info.password or None),
    )


def send_wakeup(connection: psycopg.AsyncConnection[Any], stream_id: str, position: int) -> None:
    """Have this loop's notifier for ``connection``'s database announce ``stream_id``.

    Returns at once; the NOTIFY goes out shortly after, from another connection. Call it after
    the events committed. A wake-up lost on the way (the process dies, the server restarts)
    delays followers until their next poll, nothing more.
    """
    pgconn = connection.pgconn
    key = (pgconn.host, pgconn.port, pgconn.db, pgconn.user, pgconn.options)
    notifier = _notifiers.setdefault(asyncio.get_running_loop(), {}).get(key)
    if notifier is None:
        send_wakeup_to(wakeup_target(connection), stream_id, position)
    else:
        notifier.wake(stream_id, position)


def send_wakeup_to(target: WakeupTarget, stream_id: str, position: int) -> None:
    """``send_wakeup`` for the database of ``target``."""
    notifiers = _notifiers.setdefault(asyncio.get_running_loop(), {})
    notifier = notifiers.get(target.key)
    if notifier is None:
        notifier = notifiers[target.key] = _Notifier(target.conninfo)
    notifier.wake(stream_id, position)


async def close_notifiers() -> None:
    """End the running loop's notifier tasks (a server stopping, a test's loop ending)."""
    for notifier in _notifiers.pop(asyncio.get_running_loop(), {}).values():
        await notifier.close()


async def follow_as_leader(
    conninfo: str,
    lock_key: int,
    stop: StopSignal,
    poll_seconds: float,
    gather_seconds: float,
    event_types: Sequence[str] | None = None,
) -> AsyncIterator[None]:
    """Yield once this process holds the session advisory lock ``lock_key`` (one follower at a
    time; another takes over when the holder's connection ends), then again after every wake-up
    or ``poll_seconds``; ends as soon as ``stop`` is set, whatever it waits for. Woken by appends
    with one of ``event_types`` (None: by every append); others are found by the poll.

    After a wake-up it waits ``gather_seconds`` so that a busy log's appends are handled by one
    read (a follower's reaction waits at most that long) instead of one read per append.
    """
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as listener:
        while True:
            if stop.is_set():
                return
            cursor = await listener.execute("SELECT pg_try_advisory_lock(%s)", [lock_key])
            row = await cursor.fetchone()
            if row is not None and row[0]:
                break
            # Another process follows: nothing to do here until it stops holding the lock.
            if await stop.wait(poll_seconds):
                return
        # LISTEN before the first read: anything committed after that read wakes us.
        await listen(listener, event_types)
        renewed_at = time.monotonic()
        while not stop.is_set():
            yield
            if time.monotonic() - renewed_at >= WAKEUP_LEASE_SECONDS / 2:
                await listen(listener, event_types)  # renews the lease (LISTEN again: a no-op)
                renewed_at = time.monotonic()
            # Every notification read so far came before the caller's read; wait for the next
            # one (or the stop, or the poll interval).
            if await stop.wait_for(_next_notification(listener), poll_seconds):
                return
            if await stop.wait(gather_seconds):
                return
            async for _ in listener.notifies(timeout=0):
                pass


async def _next_notification(connection: psycopg.AsyncConnection[Any]) -> None:
    async for _ in connection.notifies(stop_after=1):
        pass
