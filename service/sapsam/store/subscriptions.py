"""Following the log live: LISTEN for wake-ups, read the log, poll when nothing wakes us.

A server process follows live streams through one asyncio LISTEN connection
(``sapsam.api.live_feed``): :func:`listen`, :func:`unlisten` and :func:`stream_heads` are its
statements; :func:`follow` is the synchronous follower of background work.

An append sends ``NOTIFY sapsam_events`` after its commit with a payload of ``{"stream",
"position"}``, a wake-up signal, never the data, when some listener wants it: a LISTENing session
says so in ``wakeup_listeners`` (migration 0006) with its LISTEN (:func:`listen`,
:func:`listen_for_wakeups`), for every append or for appends of some event types (the results
follower wants only ``DealScored``), and renews it while it listens (the event feed at every poll,
:func:`stream_heads`; the others every :data:`WAKEUP_LEASE_SECONDS` / 2). The append reads that
table inside its own statement. With nobody listening, appends send nothing.

A follower reads the events itself from its checkpoint, so a lost or coalesced notification costs
latency only, never an event; the timed wait is the polling fallback. Any number of server
processes can follow the same table this way.

An append that commits on its own hands its wake-up to ``send_wakeup``: a per-process thread (one
per database) sends it on a connection of its own, so the NOTIFY costs the append no round trip
and no server time, and wake-ups that pile up while one is being sent go out together, in one
transaction. That transaction commits asynchronously: PostgreSQL serialises the commits of all
transactions that NOTIFY (a global lock held through the commit), so a NOTIFY must never wait for
a disk flush, and it writes nothing worth one.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from sapsam.app.store_interface import StopSignal
from sapsam.log.records import RecordedEvent
from sapsam.store.queries import query
from sapsam.store.reads import read_all

NOTIFY_CHANNEL = "sapsam_events"
# A notifier thread with nothing to send closes its connection and ends after this long.
NOTIFIER_IDLE_SECONDS = 2.0
# At most one NOTIFY transaction per this interval and process and database: wake-ups that come
# sooner wait for the rest of it and go out together. Followers hear of an append at most this
# much later, and a busy writer pays for one NOTIFY per interval rather than one per append.
NOTIFIER_INTERVAL_SECONDS = 0.005
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


async def listen(connection: psycopg.AsyncConnection[Any]) -> None:
    """Receive the wake-ups of every append on ``connection`` (autocommit) from now on."""
    # Both before the caller's first read, so an append committed after that read wakes it.
    await connection.execute(query("wakeups.register"), _registration(None))
    await connection.execute(_LISTEN)


async def unlisten(connection: psycopg.AsyncConnection[Any]) -> None:
    """Stop receiving wake-ups on ``connection``."""
    await connection.execute(query("wakeups.unregister"))
    await connection.execute(_UNLISTEN)


async def stream_heads(
    connection: psycopg.AsyncConnection[Any], stream_ids: Sequence[str]
) -> dict[str, int]:
    """The last version of each stream (0 for one with no events), in one round trip: one
    index probe per stream, however long the streams are. First, on a connection that LISTENs
    (the event feed's poll), renews its wish for every append's wake-up."""
    await connection.execute(
        query("wakeups.renew_if_listening"),
        {"channel": NOTIFY_CHANNEL, "seconds": WAKEUP_LEASE_SECONDS},
    )
    cursor = await connection.execute(STREAM_HEADS, [list(stream_ids)])
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
    """Sends the wake-ups of one database from a thread of its own, coalescing per stream."""

    def __init__(self, conninfo: str) -> None:
        self._conninfo = conninfo
        self._pending: dict[str, int] = {}
        self._condition = threading.Condition()
        self._thread: threading.Thread | None = None

    def wake(self, stream_id: str, position: int) -> None:
        with self._condition:
            if self._pending.get(stream_id, 0) < position:
                self._pending[stream_id] = position
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="sapsam-notifier", daemon=True
                )
                self._thread.start()
            else:
                self._condition.notify()

    def _take(self, not_before: float) -> dict[str, int] | None:
        """The pending wake-ups, waiting for some; None (and the thread ends) when idle.

        Waits until ``not_before`` (a ``time.monotonic`` value) too, gathering what comes in.
        """
        with self._condition:
            if not self._pending:
                self._condition.wait(NOTIFIER_IDLE_SECONDS)
            if not self._pending:
                self._thread = None
                return None
        delay = not_before - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        with self._condition:
            pending, self._pending = self._pending, {}
            return pending

    def _run(self) -> None:
        connection: psycopg.Connection[Any] | None = None
        try:
            sent_at = 0.0
            while (pending := self._take(sent_at + NOTIFIER_INTERVAL_SECONDS)) is not None:
                sent_at = time.monotonic()
                payloads = [wakeup_payload(stream, last) for stream, last in pending.items()]
                try:
                    if connection is None:
                        connection = psycopg.connect(self._conninfo, autocommit=True)
                    connection.execute(SEND_WAKEUPS, [NOTIFY_CHANNEL, payloads])
                except psycopg.Error:
                    # Those wake-ups are lost, which followers survive (they poll).
                    if connection is not None:
                        connection.close()
                        connection = None
                    threading.Event().wait(NOTIFIER_RETRY_SECONDS)
        finally:
            if connection is not None:
                connection.close()
            with self._condition:
                if self._thread is threading.current_thread():
                    self._thread = None


_notifiers: dict[tuple[bytes | None, ...], _Notifier] = {}
_notifiers_lock = threading.Lock()


def send_wakeup(connection: psycopg.Connection[Any], stream_id: str, position: int) -> None:
    """Have this process's notifier for ``connection``'s database announce ``stream_id``.

    Returns at once; the NOTIFY goes out shortly after, from another connection. Call it after
    the events committed. A wake-up lost on the way (the process dies, the server restarts)
    delays followers until their next poll, nothing more.
    """
    pgconn = connection.pgconn
    key = (pgconn.host, pgconn.port, pgconn.db, pgconn.user, pgconn.options)
    with _notifiers_lock:
        notifier = _notifiers.get(key)
        if notifier is None:
            # The libpq view of the connection's parameters: connection.info.dsn leaves out
            # the password, which the notifier needs to connect on its own.
            conninfo = make_conninfo(connection.info.dsn, password=connection.info.password or None)
            notifier = _notifiers[key] = _Notifier(conninfo)
    notifier.wake(stream_id, position)


def follow_as_leader(
    conninfo: str,
    lock_key: int,
    stop: StopSignal,
    poll_seconds: float,
    gather_seconds: float,
    event_types: Sequence[str] | None = None,
) -> Iterator[None]:
    """Yield once this process holds the session advisory lock ``lock_key`` (one follower at a
    time; another takes over when the holder's connection ends), then again after every wake-up
    or ``poll_seconds``; ends as soon as ``stop`` is set, whatever it waits for. Woken by appends
    with one of ``event_types`` (None: by every append); others are found by the poll.

    After a wake-up it waits ``gather_seconds`` so that a busy log's appends are handled by one
    read (a follower's reaction waits at most that long) instead of one read per append.
    """
    with psycopg.connect(conninfo, autocommit=True) as listener:
        while True:
            if stop.is_set():
                return
            row = listener.execute("SELECT pg_try_advisory_lock(%s)", [lock_key]).fetchone()
            if row is not None and row[0]:
                break
            # Another process follows: nothing to do here until it stops holding the lock.
            stop.wait(poll_seconds)
        # LISTEN before the first read: anything committed after that read wakes us.
        listen_for_wakeups(listener, event_types)
        lease = WakeupLease(listener, event_types)
        while not stop.is_set():
            yield
            lease.renew()
            # Every notification read so far came before the caller's read; wait for the next
            # one on the socket (or the stop, or the poll interval).
            if stop.wait_readable(listener.fileno(), poll_seconds):
                return
            if stop.wait(gather_seconds):
                return
            for _ in listener.notifies(timeout=0):
                pass
