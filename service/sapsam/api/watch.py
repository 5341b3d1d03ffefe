"""WatchTable: a table's public events from a version, then live, in any server process.

Each server process keeps one ``LISTEN sapsam_events`` connection (:class:`EventFeed`). An append
anywhere, by any process, sends a NOTIFY on commit naming the stream; the feed wakes the watchers
of that table, and each reads the new events from the log itself. A wake-up carries no data, so a
lost or merged notification only delays a watcher until its next poll (every second), and the
order and completeness of what it sends come from the log alone.

The feed listens only while someone watches (a watcher asks for a generation or waits at least
every second): a process nobody watches does not receive a notification for every append. When
it starts listening again it wakes every watcher, so anything committed before the LISTEN is read
at once.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Final

import psycopg
from psycopg import sql

from sapsam.api import views
from sapsam.domain import events as domain_events
from sapsam.domain.table import INITIAL_STATE, evolve
from sapsam.store.appends import NOTIFY_CHANNEL
from sapsam.store.subscriptions import parse_wakeup
from sapsam.store.tables import TableService, stream_id_for
from sapsam_proto.v1 import table_event_pb2

POLL_SECONDS: Final = 1.0
# How long a watcher's last look keeps the feed listening.
INTEREST_SECONDS: Final = 3 * POLL_SECONDS

_logger = logging.getLogger("sapsam.api.watch")


class EventFeed:
    """Wake-ups per stream from one LISTEN connection, for every watcher in this process."""

    def __init__(self, conninfo: str, poll_seconds: float = POLL_SECONDS) -> None:
        self._conninfo = conninfo
        self._poll_seconds = poll_seconds
        self._generations: dict[str, int] = {}
        # Bumped when the feed (re)starts listening: every stream's generation changes then.
        self._restarts = 0
        self._condition = threading.Condition()
        self._stopping = threading.Event()
        self._interest_until = 0.0
        self._interested = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="sapsam-event-feed", daemon=True)

    def start(self) -> None:
        """Start listening in a background thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop listening and release every waiting watcher (their streams then end)."""
        self._stopping.set()
        self._interested.set()
        with self._condition:
            self._condition.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    @property
    def stopping(self) -> bool:
        """True once the server is stopping."""
        return self._stopping.is_set()

    def generation(self, stream_id: str) -> int:
        """A counter that changes whenever the stream may have new events."""
        self._note_interest()
        with self._condition:
            # Both terms only grow, so the sum changes whenever either does.
            return self._restarts + self._generations.get(stream_id, 0)

    def wait(self, stream_id: str, seen: int, timeout: float) -> None:
        """Block until the stream's generation differs from ``seen``, the feed stops, or timeout."""
        self._note_interest()
        with self._condition:
            self._condition.wait_for(
                lambda: (
                    self._stopping.is_set()
                    or self._restarts + self._generations.get(stream_id, 0) != seen
                ),
                timeout,
            )

    def _note_interest(self) -> None:
        self._interest_until = time.monotonic() + INTEREST_SECONDS
        if not self._interested.is_set():
            self._interested.set()

    def _wake(self, stream_id: str) -> None:
        with self._condition:
            self._generations[stream_id] = self._generations.get(stream_id, 0) + 1
            self._condition.notify_all()

    def _wake_all(self) -> None:
        with self._condition:
            self._restarts += 1
            self._condition.notify_all()

    def _listen(self) -> None:
        channel = sql.Identifier(NOTIFY_CHANNEL)
        while not self._stopping.is_set():
            try:
                with psycopg.connect(self._conninfo, autocommit=True) as connection:
                    listening = False
                    while not self._stopping.is_set():
                        watched = time.monotonic() < self._interest_until
                        if watched and not listening:
                            connection.execute(sql.SQL("LISTEN {}").format(channel))
                            listening = True
                            self._wake_all()  # what committed before the LISTEN: read it now
                        elif listening and not watched:
                            connection.execute(sql.SQL("UNLISTEN {}").format(channel))
                            listening = False
                        if not listening:
                            self._interested.clear()
                            if time.monotonic() >= self._interest_until:  # still nobody
                                self._interested.wait(self._poll_seconds)
                            continue
                        for notification in connection.notifies(timeout=self._poll_seconds):
                            self._wake(parse_wakeup(notification.payload).stream_id)
            except Exception as error:  # the watchers keep polling meanwhile
                if self._stopping.is_set():
                    return
                _logger.warning(
                    "event feed lost its connection (%s); reconnecting", type(error).__name__
                )
                self._stopping.wait(self._poll_seconds)


def watch_table(
    tables: TableService,
    feed: EventFeed,
    table_id: uuid.UUID,
    after_version: int,
    is_active: Callable[[], bool],
) -> Iterator[table_event_pb2.TableEvent]:
    """The table's events with a version above ``after_version``, public part only, then live.

    Ends once the series-complete event is sent, when ``is_active`` turns false (the client left),
    or when the feed stops: the server is stopping, and ``sapsam.api.stopping`` ends the stream
    UNAVAILABLE (``SERVER_STOPPING``), so the client resumes from its last version elsewhere.
    """
    stream_id = stream_id_for(table_id)
    state = INITIAL_STATE
    deal: views.DealFacts | None = None
    next_version = 1
    while True:
        seen = feed.generation(stream_id)
        complete = False
        for recorded in tables.events(table_id, next_version):
            event = tables.decode(recorded)
            if isinstance(event, domain_events.DealStarted):
                deal = views.DealFacts(event.deal_number)
            if deal is not None and getattr(event, "deal_number", None) == deal.deal_number:
                deal.add(event)
            state = evolve(state, event)
            next_version = recorded.version + 1
            if recorded.version > after_version:
                yield views.table_event_message(table_id, recorded, event, state.seats, deal)
            # A table that starts a new series after this one (after_series) plays on.
            ends = (
                isinstance(event, domain_events.SeriesCompleted) and state.after_series == "close"
            )
            complete = complete or ends
        if complete or feed.stopping or not is_active():
            return
        feed.wait(stream_id, seen, POLL_SECONDS)
