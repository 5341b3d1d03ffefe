"""WatchTable and WatchTournament: a stream's events from a version, then live, from memory.

Every stream watched in this process has one :class:`StreamChannel`, woken by the process's
event feed (``sapsam.api.live_feed``). On a wake-up the channel reads the stream's new events
once, turns each into the response every watcher is sent (plus, where the domain shows a
watcher more, such as a seat its own cards, that watcher's variant: ``Sent.variants``), and hands
them to all its watchers; no watcher reads the log for live events, and no watcher holds a
thread. Events this process appended itself reach the channel without a read
(:meth:`StreamChannel.take`): the feed hands them over once they are committed, and the
wake-up that follows them is skipped, since its position is one the channel has sent.

A channel keeps the last :data:`RECENT_EVENTS` responses, so a watcher that joins or resumes
near the head is served from memory; one that starts further back reads the part it misses
itself, once.

Each watcher has a bounded buffer (``buffer_limit`` events). A watcher that falls that far
behind (its client reads more slowly than the stream grows) is let go: its stream ends
RESOURCE_EXHAUSTED, reason ``STREAM_BEHIND``, whose ErrorInfo metadata ``after_version`` is the
last version it was sent; the client resumes with that ``after_version`` (docs/api.md).

A stream ends once its last event is sent (a series that closes, a complete tournament), when
the client leaves, or when the feed stops: the server is stopping, and ``sapsam.api.stopping``
ends the stream UNAVAILABLE (``SERVER_STOPPING``), so the client resumes from its last version
elsewhere. A stream whose reads fail :data:`MAX_READ_FAILURES` times in a row ends UNAVAILABLE
(``STREAM_UNAVAILABLE``, with ``after_version`` like STREAM_BEHIND) rather than hang.
"""

from __future__ import annotations

import abc
import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sapsam.api.api_error import ApiError
from sapsam.api.live_feed import EventFeed
from sapsam.api.stopping import SERVER_STOPPING_MESSAGE, SERVER_STOPPING_REASON
from sapsam.log.records import RecordedEvent

RECENT_EVENTS: Final = 32
"""Responses a channel keeps for watchers that join or resume near the head (a resume after a
dropped connection is a few events back; more would cost every watched table memory)."""
STREAM_BEHIND_REASON: Final = "STREAM_BEHIND"
AFTER_VERSION_KEY: Final = "after_version"
"""ErrorInfo metadata of STREAM_BEHIND: the last version sent, to resume from."""
RESUME_DELAY_SECONDS: Final = 1.0
"""The retry hint of STREAM_BEHIND and STREAM_UNAVAILABLE."""
STREAM_UNAVAILABLE_REASON: Final = "STREAM_UNAVAILABLE"
BATCH_EVENTS: Final = 64
"""Most events in one message of a stream that asked for batches (WatchTableRequest.batch_events:
the proto says 64)."""
MAX_READ_FAILURES: Final = 3
"""Reads of a stream that may fail in a row before its watchers are let go (STREAM_UNAVAILABLE)."""

_logger = logging.getLogger("sapsam.api.watch")


@dataclass(frozen=True)
class Sent:
    """One event as every watcher of its stream is sent it."""

    version: int
    response: Any
    last: bool = False
    """Nothing follows it: the stream's watchers end once it is sent."""
    position: int = 0
    """Its place in the global order (0: not known), so a wake-up for it can be skipped."""
    variants: Mapping[str, Any] | None = None
    """The response for each player whose view of the event differs from ``response`` (a seat's
    own cards, decided by the domain's views), by player id; every other watcher shares
    ``response``."""

    def response_for(self, player_id: str | None) -> Any:
        """What a watcher calling as ``player_id`` (None: the operator) is sent."""
        if self.variants is None or player_id is None:
            return self.response
        return self.variants.get(player_id, self.response)


class Watcher:
    """One open stream's place in a channel: what it has yet to send, in a bounded buffer.

    Its stream waits on a bare future (:meth:`next_wake`), not on an ``asyncio.Event``: every
    wait of every open stream would otherwise make two coroutines besides the future, and
    thousands of streams' waits are most of what the collector finds young (docs/performance.md,
    "bench/capacity.py")."""

    __slots__ = ("_limit", "_waiter", "_woken", "behind", "catch_up_through", "waiting")

    def __init__(self, buffer_limit: int) -> None:
        self.waiting: deque[Sent] = deque()
        self.behind = False
        self.catch_up_through: int | None = None
        """The last version it reads itself before what the channel hands it (None: none)."""
        self._limit = buffer_limit
        self._woken = False  # woken while its stream was not waiting
        self._waiter: asyncio.Future[None] | None = None

    def offer(self, fresh: list[Sent]) -> bool:
        """Take new events; ``False`` (and the buffer is dropped) if they would overflow it."""
        if len(self.waiting) + len(fresh) > self._limit:
            self.behind = True
            self.waiting.clear()
        else:
            self.waiting.extend(fresh)
        self.wake()
        return not self.behind

    def wake(self) -> None:
        """End the stream's wait (new events, or the channel closed), or the next one at once."""
        waiter = self._waiter
        if waiter is None:
            self._woken = True
            return
        self._waiter = None
        if not waiter.done():  # done: the stream was cancelled while it waited
            waiter.set_result(None)

    def next_wake(self) -> asyncio.Future[None] | None:
        """What the stream awaits until the channel offers events or closes; None when that
        happened since its last wait (it goes on at once)."""
        if self._woken:
            self._woken = False
            return None
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiter = waiter
        return waiter


class StreamChannel(abc.ABC):
    """One stream's live tail in this process, read once per wake-up for all its watchers."""

    def __init__(self, stream_id: str, feed: EventFeed, buffer_limit: int) -> None:
        self._stream_id = stream_id
        self._feed = feed
        self._buffer_limit = buffer_limit
        self._head = 0
        self._head_position = 0
        self._recent: deque[Sent] = deque(maxlen=max(1, min(RECENT_EVENTS, buffer_limit)))
        self._watchers: set[Watcher] = set()
        self._users = 0  # watchers joined or still waiting for the channel to open
        self._read_lock = asyncio.Lock()
        self._refreshing: asyncio.Task[None] | None = None
        self._again = False
        self._opening: asyncio.Task[None] | None = None
        self._failures = 0  # reads failed in a row
        # The last batch of the public view made (its first and last versions): the watchers
        # at the head are sent the same run of events, one message for all of them.
        self._batched_from = 0
        self._batched_through = 0
        self._batched: Any = None
        self._batched_by: Callable[[list[Any]], Any] | None = None
        self.opened = False
        self.failed = False
        """Its reads failed :data:`MAX_READ_FAILURES` times in a row: its watchers end."""
        self.finished = False
        """Its last event was read: nothing more will come."""
        self.closed = False

    @property
    def stream_id(self) -> str:
        """The stream it follows."""
        return self._stream_id

    @property
    def head(self) -> int:
        """The last version it has read."""
        return self._head

    @property
    def head_position(self) -> int:
        """The global position of the last event it has read (0: not known)."""
        return self._head_position

    @abc.abstractmethod
    async def read_after(self, version: int) -> list[Sent]:
        """The stream's events after ``version`` as sent (one read at a time)."""

    @abc.abstractmethod
    async def history(self, after: int, through: int) -> list[Sent]:
        """The events from ``after`` (excluded) to ``through`` as sent, read afresh, for a
        watcher that starts before what the channel keeps."""

    async def _read(self, opening: bool = False) -> None:
        async with self._read_lock:  # reads, and the fold some channels keep, one at a time
            if opening and self.opened:
                return
            fresh = await self.read_after(self._head)
            self.opened = True
            self._publish(fresh)

    def _publish(self, fresh: list[Sent]) -> None:
        if not fresh:
            return
        for sent in fresh:
            self._recent.append(sent)
            self._head = sent.version
            self._head_position = max(self._head_position, sent.position)
            self.finished = self.finished or sent.last
        for watcher in list(self._watchers):
            if not watcher.offer(fresh):
                self._watchers.discard(watcher)  # behind: it ends STREAM_BEHIND

    def sent_for(self, records: Sequence[RecordedEvent]) -> list[Sent] | None:
        """``records`` (the events after the head, in order) as sent, folded on as a read
        would; None if this channel cannot take events it did not read (it reads them)."""
        return None

    def take(self, records: Sequence[RecordedEvent]) -> None:
        """Events this process appended to the stream, committed, in order (on the loop): sent
        at once, without a read, when they follow the head; otherwise (a gap, a read under way,
        a channel not open yet) read as on a wake-up, so nothing is sent twice or out of order.
        """
        if self.closed or not records:
            return
        if not self.opened or self._read_lock.locked() or records[0].version != self._head + 1:
            if records[-1].version > self._head:
                self.wake()
            return
        try:
            fresh = self.sent_for(records)
        except Exception:  # a fold that fails here fails on the read too, which counts it
            fresh = None
        if fresh is None:
            self.wake()
            return
        self._publish(fresh)

    async def open(self) -> None:
        """Read the stream up to now, unless done already (the first watcher waits for it).

        The read is the channel's own task, which a watcher leaving meanwhile does not cancel:
        cancelled midway, it would release the read lock with the fold half done, and the
        next opener would start a second read on the same fold."""
        if self.opened:
            return
        if self._opening is None or (self._opening.done() and not self.opened):
            self._opening = asyncio.get_running_loop().create_task(self._read(opening=True))
        await asyncio.shield(self._opening)

    def wake(self) -> None:
        """Read what is new, in a task of its own; a wake-up during a read reads again."""
        if self.closed:
            return
        if self._refreshing is not None:
            self._again = True
            return
        self._refreshing = asyncio.get_running_loop().create_task(self._refresh())

    async def _refresh(self) -> None:
        try:
            self._again = True
            while self._again and not self.closed:
                self._again = False
                try:
                    await self._read()
                    self._failures = 0
                except Exception as error:  # the feed's poll wakes us again
                    self._failures += 1
                    _logger.warning(
                        "reading %s failed (%d in a row): %s",
                        self._stream_id,
                        self._failures,
                        type(error).__name__,
                    )
                    if self._failures >= MAX_READ_FAILURES:
                        self._fail()
                    return
        finally:
            self._refreshing = None

    def _fail(self) -> None:
        """Let every watcher go (STREAM_UNAVAILABLE): they resume, maybe on another process,
        rather than wait for a read that keeps failing."""
        self.failed = True
        self.closed = True  # no more reads; the next watcher of the stream opens a new channel
        self._feed.release(self)
        for watcher in self._watchers:
            watcher.wake()

    def enter(self) -> Watcher:
        """A new watcher; it is sent nothing until it joins (once the channel is open)."""
        self._users += 1
        return Watcher(self._buffer_limit)

    def join(self, watcher: Watcher, after_version: int) -> None:
        """Send ``watcher`` the events after ``after_version``: what the channel keeps now, and
        every event it reads from now on (the rest it reads itself, ``catch_up_through``)."""
        oldest = self._recent[0].version if self._recent else self._head + 1
        if after_version + 1 < oldest:
            watcher.catch_up_through = oldest - 1
        watcher.waiting.extend(sent for sent in self._recent if sent.version > after_version)
        self._watchers.add(watcher)

    def leave(self, watcher: Watcher) -> None:
        """A watcher's stream ended; the feed forgets the channel once nobody watches."""
        self._watchers.discard(watcher)
        self._users -= 1
        if self._users == 0:
            self.closed = True
            self._feed.release(self)

    def message(
        self, run: list[Sent], player_id: str | None, batch: Callable[[list[Any]], Any] | None
    ) -> Any:
        """One message of ``run`` (events it published, in order) for a watcher calling as
        ``player_id``: the run's one event (no ``batch``) or all of them in one. A batch of
        the public view is made once for every watcher sent the same run (each its own made
        a message object per watcher per write, alive while the watcher waited)."""
        if batch is None or (
            player_id is not None
            and any(sent.variants is not None and player_id in sent.variants for sent in run)
        ):
            return _response(run, player_id, batch)
        first, through = run[0].version, run[-1].version
        if (
            self._batched_by is not batch
            or self._batched_from != first
            or self._batched_through != through
        ):
            self._batched = batch([sent.response for sent in run])
            self._batched_by, self._batched_from, self._batched_through = batch, first, through
        return self._batched

    def close(self) -> None:
        """The feed stops: every watcher ends once it has sent what it holds."""
        self.closed = True
        if self._refreshing is not None:
            self._refreshing.cancel()
        for watcher in self._watchers:
            watcher.wake()


def stream_unavailable(last_version: int) -> ApiError:
    """The error that ends the watchers of a channel whose reads kept failing."""
    return ApiError(
        STREAM_UNAVAILABLE_REASON,
        "this server could not read the stream; watch again from the version in ErrorInfo"
        f" metadata {AFTER_VERSION_KEY!r}",
        metadata={AFTER_VERSION_KEY: str(last_version)},
        retry_delay=RESUME_DELAY_SECONDS,
    )


def stream_behind(last_version: int) -> ApiError:
    """The error that ends a watcher whose buffer overflowed (by default
    :data:`DEFAULT_BUFFER_EVENTS` events; ``EventFeed.buffer_limit``)."""
    return ApiError(
        STREAM_BEHIND_REASON,
        "this stream fell too far behind the table; watch again from the version in"
        f" ErrorInfo metadata {AFTER_VERSION_KEY!r}",
        metadata={AFTER_VERSION_KEY: str(last_version)},
        retry_delay=RESUME_DELAY_SECONDS,
    )


async def watch(
    feed: EventFeed,
    stream_id: str,
    create: Callable[[], StreamChannel],
    after_version: int,
    player_id: str | None = None,
    batch: Callable[[list[Any]], Any] | None = None,
    opening: Callable[[], Awaitable[object]] | None = None,
) -> AsyncIterator[Any]:
    """The responses for the stream's events after ``after_version``, then live (see the
    module's docstring for how it ends), each as the watcher calling as ``player_id`` (None:
    the operator, or anyone the stream shows only its public view) is sent it.

    ``batch`` (None: one response per event) makes one response of the responses ready at once
    (at most :data:`BATCH_EVENTS`): one message per append while the client keeps up, so a
    stream's writes, each of which costs the server and the client a round through grpc, fall
    from one per event to one per append. ``opening`` runs before anything else (a servicer's
    check that the stream exists: its error ends the call before any message).

    One generator from the channel to grpc: each level a response passes through is a
    resumption per message and a live object per waiting stream, for thousands of streams."""
    if opening is not None:
        await opening()
    most = 1 if batch is None else BATCH_EVENTS
    channel = feed.channel(stream_id, create)
    # What made the channel and checked the stream (closures) need not live as long as the
    # stream does: thousands of open streams, each walked by every full collection.
    del create, opening
    watcher = channel.enter()
    try:
        await channel.open()
        channel.join(watcher, after_version)
        last = after_version
        if watcher.catch_up_through is not None:
            history = await channel.history(after_version, watcher.catch_up_through)
            ends = next((i + 1 for i, sent in enumerate(history) if sent.last), len(history))
            ended = ends > 0 and history[ends - 1].last
            for start in range(0, ends, most):
                through = min(start + most, ends)
                last = history[through - 1].version
                yield _response(history[start:through], player_id, batch)
            del history  # not kept while the stream waits
            if ended:
                return
        while True:
            while watcher.waiting:
                run = _next_run(watcher.waiting, last, most)
                if run is None:
                    continue
                last, ended = run[-1].version, run[-1].last
                response = channel.message(run, player_id, batch)
                run = None  # neither kept while the stream waits
                yield response
                response = None
                if ended:
                    return
            if watcher.behind:
                raise stream_behind(last)
            if channel.failed:
                raise stream_unavailable(last)
            if channel.finished:
                return
            if channel.closed:  # the feed stopped: the server is stopping
                raise ApiError(SERVER_STOPPING_REASON, SERVER_STOPPING_MESSAGE)
            waiter = watcher.next_wake()
            if waiter is not None:
                await waiter
    finally:
        channel.leave(watcher)


def _next_run(waiting: deque[Sent], last: int, most: int) -> list[Sent] | None:
    """The next events of a watcher's buffer to send in one message (at most ``most``, none
    after a stream's last), taken from it; those at or before ``last`` (an ``after_version``
    past the head when it joined) are dropped. None if none is left."""
    run: list[Sent] = []
    while waiting and len(run) < most:
        sent = waiting.popleft()
        if sent.version <= last:
            continue
        last = sent.version
        run.append(sent)
        if sent.last:
            break
    return run or None


def _response(
    run: list[Sent], player_id: str | None, batch: Callable[[list[Any]], Any] | None
) -> Any:
    """One message: the run's one event (no ``batch``) or all of them in one."""
    if batch is None:
        return run[0].response_for(player_id)
    return batch([sent.response_for(player_id) for sent in run])
