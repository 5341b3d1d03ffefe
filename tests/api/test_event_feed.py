"""The per-process event feed wakes watchers on NOTIFY, without waiting for the poll, and listens
only while someone watches."""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg
import pytest

from sapsam.api import watch
from sapsam.api.watch import EventFeed
from sapsam.log.records import NewEvent
from sapsam.store.event_store import EventStore


def test_an_append_wakes_the_feed_for_its_stream(database_url: str) -> None:
    # The feed's generations change only on a notification (watchers poll on their own).
    feed = EventFeed(database_url)
    feed.start()
    store = EventStore.connect(database_url)
    try:
        seen = feed.generation("table-x")
        deadline = time.monotonic() + 30
        # The feed may not be listening yet when the first append commits; append until woken.
        version = 0
        while feed.generation("table-x") == seen:
            assert time.monotonic() < deadline, "no wake-up arrived"
            store.append("table-x", version, [NewEvent("Ping", {"n": version})], f"r{version}")
            version += 1
            feed.wait("table-x", seen, timeout=1)
        # Once listening, another stream's appends leave this one's generation alone.
        other = feed.generation("table-other")
        woken = feed.generation("table-x")
        store.append("table-x", version, [NewEvent("Ping", {"n": version})], "last")
        feed.wait("table-x", woken, timeout=10)
        assert feed.generation("table-x") != woken
        assert feed.generation("table-other") == other
    finally:
        store.close()
        feed.stop()


def _feed_statement(database_url: str) -> str | None:
    """The last statement of the feed's own connection (the only one that LISTENs)."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT query FROM pg_stat_activity WHERE query ILIKE '%%LISTEN%%sapsam_events%%'"
            " AND pid <> pg_backend_pid()"
        ).fetchone()
    return None if row is None else str(row[0])


def _eventually(check: Callable[[], bool], seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the feed never got there"
        time.sleep(0.05)


def test_the_feed_listens_only_while_watched(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch, "INTEREST_SECONDS", 0.5)
    feed = EventFeed(database_url, poll_seconds=0.1)
    feed.start()
    try:
        time.sleep(0.5)
        assert _feed_statement(database_url) is None  # nobody watches: no LISTEN at all
        seen = feed.generation("table-y")  # a watcher looks
        # The feed starts listening, and wakes every watcher so it reads what came before.
        _eventually(lambda: feed.generation("table-y") != seen)
        assert (_feed_statement(database_url) or "").startswith("LISTEN")
        # Nobody looks again: the feed stops listening.
        _eventually(lambda: (_feed_statement(database_url) or "").startswith("UNLISTEN"))
    finally:
        feed.stop()
