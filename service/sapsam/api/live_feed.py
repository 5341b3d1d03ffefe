"""The process's event feed: one LISTEN connection wakes every live stream this process serves.

An append by another process sends a NOTIFY after its commit naming its stream when some
process watches that stream (``sapsam.store.subscriptions``): the feed lists the streams it has
channels for in ``wakeup_streams`` (one statement for all the channels opened and closed since
the last, sent within :data:`INTEREST_SECONDS`), under the id of its connection
(:meth:`EventFeed.listener_id`). The feed keeps that one asyncio connection listening, on the
server's event loop, and hands each wake-up to the :class:`Channel` of that stream, if this
process has one: a channel reads the stream's new events once and shares them among all its
watchers (``sapsam.api.watch``). A wake-up carries no data, so a lost or merged notification
only delays a channel, and what a watcher is sent comes from the log alone.

What this process appends itself needs no read and no wake-up: the application hands the
committed events to :meth:`EventFeed.appended`, and the stream's channel sends them at once;
the append names the feed's listener as the one it hands them to, so it sends a NOTIFY only if
another process watches the stream too (a wake-up that comes anyway names a position the channel
has sent, and is skipped). Only events appended elsewhere (another process) cost a channel a
wake-up and a read.

Lost wake-ups are caught by a poll: every ``poll_seconds`` the feed renews its listener row and
reads the last version of every stream it has a channel for, in one statement, and wakes the
channels that are behind. When it (re)starts listening it wakes every channel, so whatever
committed before the LISTEN is read at once; when it lists new streams, the same statement
answers their heads, and the channels behind them are woken (an append that committed before
the row could be seen sent no wake-up). The feed listens only while it has channels, and
deletes its listener row (with its streams) when it stops listening, :meth:`EventFeed.stop`
included.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol, TypeVar

import psycopg

from sapsam.log.records import RecordedEvent
from sapsam.store import subscriptions

APPLICATION_NAME: Final = "sapsam event feed"
"""The feed's connection as pg_stat_activity shows it."""
POLL_SECONDS: Final = 1.0
"""How often the feed checks the heads of the watched streams (lost wake-ups)."""
INTEREST_SECONDS: Final = 0.05
"""How soon the streams of channels opened (or closed) are listed in ``wakeup_streams``: the
feed waits for notifications in slices this long and lists them between two."""
DEFAULT_BUFFER_EVENTS: Final = 1024
"""Events a watcher may have waiting before it is let go (``sapsam.api.watch``, STREAM_BEHIND)."""

_logger = logging.getLogger("sapsam.api.live_feed")


class Channel(Protocol):
    """One stream's live tail in this process, as the feed sees it."""

    @property
    def stream_id(self) -> str:
        """The stream it follows."""

    @property
    def head(self) -> int:
        """The last version it has read."""

    @property
    def head_position(self) -> int:
        """The global position of the last event it has read (0: not known)."""

    def take(self, records: Sequence[RecordedEvent]) -> None:
        """Events this process appended to the stream, committed, in order (on the loop)."""

    def wake(self) -> None:
        """The stream may have new events: read them (returns at once)."""

    def close(self) -> None:
        """The feed stops: let every watcher go."""


_Channel = TypeVar("_Channel", bound=Channel)


class EventFeed:
    """Wake-ups per stream from one LISTEN connection, for every channel of this process.

    Runs on the server's event loop: :meth:`start` and :meth:`stop` are called by the server
    (``Services.feed``), the rest by the watchers, all on that loop.
    """

    def __init__(
        self,
        conninfo: str,
        poll_seconds: float = POLL_SECONDS,
        buffer_limit: int = DEFAULT_BUFFER_EVENTS,
    ) -> None:
        self._conninfo = conninfo
        self.buffer_limit = buffer_limit
        """Events each watcher may have waiting (its channel's ``buffer_limit``)."""
        self._poll_seconds = poll_seconds
        self._channels: dict[str, Channel] = {}
        self._attached = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self.listening = False
        """Whether the connection LISTENs now (only while there are channels)."""
        self._listener: str | None = None
        self._listed: set[str] = set()  # the streams wakeup_streams holds for our listener
        self._interest_changed = False  # channels came or went since the streams were listed
        self.bad_wakeups = 0
        """Notifications on our channel whose payload was not an append's (skipped)."""

    def listener_id(self) -> str | None:
        """The feed's wake-up listener while it listens (else None): an append whose events
        are handed to :meth:`appended` names it so as not to wake it (``handed_to``)."""
        return self._listener

    @property
    def stopping(self) -> bool:
        """True once the feed stops (the server is stopping)."""
        return self._stopping

    async def start(self) -> None:
        """Start following on the running loop."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._task = self._loop.create_task(self._run(), name="sapsam-feed")

    async def stop(self) -> None:
        """Stop listening and close every channel (their watchers then end)."""
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            except Exception:  # the server must still stop: say why the feed had ended
                _logger.exception("event feed had failed")
        for channel in list(self._channels.values()):
            channel.close()
        self._channels.clear()

    def channel(self, stream_id: str, create: Callable[[], _Channel]) -> _Channel:
        """The stream's channel, created (``create()``) if this process has none yet."""
        found = self._channels.get(stream_id)
        if found is None:
            found = self._channels[stream_id] = create()
            self._interest_changed = True
            self._attached.set()
            if self._stopping:
                found.close()
        return found  # type: ignore[return-value]  # one stream id, one kind of channel

    def release(self, channel: Channel) -> None:
        """Forget a channel its last watcher left."""
        if self._channels.get(channel.stream_id) is channel:
            del self._channels[channel.stream_id]
            self._interest_changed = True

    def has_events(self, stream_id: str) -> bool:
        """Whether this process follows ``stream_id`` and has read events of it (so it exists)."""
        channel = self._channels.get(stream_id)
        return channel is not None and channel.head > 0

    def appended(self, stream_id: str, records: Sequence[RecordedEvent]) -> None:
        """This process appended ``records`` to ``stream_id`` and they are committed: hand them
        to the stream's channel, if it has one, so that it sends them without reading them
        (from any thread; the channel takes them on the loop)."""
        loop = self._loop
        if loop is None or self._stopping or stream_id not in self._channels:
            return  # nobody here watches it (a channel opened meanwhile reads them itself)
        if threading.get_ident() == self._loop_thread:
            self._take(stream_id, records)
            return
        with contextlib.suppress(RuntimeError):  # the loop closed: the server has stopped
            loop.call_soon_threadsafe(self._take, stream_id, records)

    def _take(self, stream_id: str, records: Sequence[RecordedEvent]) -> None:
        channel = self._channels.get(stream_id)
        if channel is not None:
            channel.take(records)

    def _wake(self, stream_id: str, position: int) -> None:
        channel = self._channels.get(stream_id)
        if channel is not None and position > channel.head_position:
            channel.wake()  # else it has sent that event already (this process appended it)

    def _on_notification(self, payload: str) -> None:
        # Anyone who may connect can NOTIFY our channel: a payload that is not an append's is
        # skipped (the poll still catches what it may have stood for).
        try:
            wakeup = subscriptions.parse_wakeup(payload)
        except (ValueError, KeyError, TypeError):
            self.bad_wakeups += 1
            if self.bad_wakeups == 1 or self.bad_wakeups % 1000 == 0:
                _logger.warning("skipped %d notifications that were not wake-ups", self.bad_wakeups)
            return
        self._wake(wakeup.stream_id, wakeup.position)

    def _wake_all(self) -> None:
        for channel in list(self._channels.values()):
            channel.wake()

    async def _poll(self, connection: psycopg.AsyncConnection[Any]) -> None:
        """Renew the listener's row (listing every stream again if it had gone) and wake the
        channels whose stream moved on without a wake-up reaching us."""
        if not self._channels:
            return  # about to stop listening
        if await subscriptions.renew_feed(connection):
            self._listed.clear()  # deleted as lapsed, and its streams with it
            self._interest_changed = True
        self._wake_behind(await subscriptions.stream_heads(connection, list(self._channels)))

    def _wake_behind(self, heads: dict[str, int]) -> None:
        for stream_id, head in heads.items():
            channel = self._channels.get(stream_id)
            if channel is not None and head > channel.head:
                channel.wake()

    async def _list_streams(self, connection: psycopg.AsyncConnection[Any]) -> None:
        """List the streams of the channels opened since the last time, unlist those closed."""
        self._interest_changed = False
        watched = set(self._channels)
        added, dropped = watched - self._listed, self._listed - watched
        if not added and not dropped:
            return
        heads = await subscriptions.watch_streams(connection, sorted(added), sorted(dropped))
        self._listed = watched
        self._wake_behind(heads)

    async def _wait_for_wakeups(self, connection: psycopg.AsyncConnection[Any]) -> None:
        """Hand out the notifications of the next ``poll_seconds``, listing the streams of
        channels that come or go meanwhile between two slices of :data:`INTEREST_SECONDS`;
        returns early when no channel is left."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._poll_seconds
        while not self._stopping and (remaining := deadline - loop.time()) > 0:
            async for notification in connection.notifies(timeout=min(remaining, INTEREST_SECONDS)):
                self._on_notification(notification.payload)
            if not self._channels:
                return  # the last channel went: stop listening now
            if self._interest_changed:
                await self._list_streams(connection)

    async def _run(self) -> None:
        while not self._stopping:
            try:
                await self._follow()
            except (psycopg.Error, OSError) as error:  # the channels wait meanwhile
                _logger.warning(
                    "event feed lost its connection (%s); reconnecting", type(error).__name__
                )
                self._forget_listener()
                await asyncio.sleep(self._poll_seconds)
            except Exception:  # a bug must not silence every watcher of the process for good
                _logger.exception("event feed failed; reconnecting")
                self._forget_listener()
                await asyncio.sleep(self._poll_seconds)

    def _forget_listener(self) -> None:
        """Not listening (any more): nothing listed under our listener, which appends of this
        process stop naming."""
        self.listening = False
        self._listener = None
        self._listed.clear()
        self._interest_changed = True

    async def _follow(self) -> None:
        async with await psycopg.AsyncConnection.connect(
            self._conninfo, autocommit=True, application_name=APPLICATION_NAME
        ) as connection:
            self._forget_listener()
            try:
                await self._follow_on(connection)
            finally:
                if self.listening:
                    await self._unregister(connection)

    async def _unregister(self, connection: psycopg.AsyncConnection[Any]) -> None:
        """Delete our listener's row (and its streams) on the way out (:meth:`stop`, or a
        failure): else appends of every other process would go on waking a listener that no
        longer listens until its lease lapses (``WAKEUP_LEASE_SECONDS``, then a renewal by some
        feed deletes it). A connection already lost has nothing to delete: its lease lapses."""
        # Shielded: stop() cancels the task, and the cancellation must not cut the DELETE.
        with contextlib.suppress(psycopg.Error, OSError):
            await asyncio.shield(subscriptions.unlisten(connection))
        self._forget_listener()

    async def _follow_on(self, connection: psycopg.AsyncConnection[Any]) -> None:
        while not self._stopping:
            if self._channels and not self.listening:
                await subscriptions.listen_for_streams(connection)
                self.listening = True
                self._listener = subscriptions.listener_id(connection)
                await self._list_streams(connection)
                self._wake_all()  # what committed before the LISTEN: read it now
            elif self.listening and not self._channels:
                await subscriptions.unlisten(connection)  # its streams go with its row
                self._forget_listener()
            if not self.listening:
                self._attached.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._attached.wait(), self._poll_seconds)
                continue
            await self._wait_for_wakeups(connection)
            await self._poll(connection)
