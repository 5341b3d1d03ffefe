"""The per-process event feed wakes watchers on NOTIFY, without waiting for the poll."""

from __future__ import annotations

import time

from sapsam.api.watch import EventFeed
from sapsam.store.event_store import EventStore
from sapsam.store.records import NewEvent


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
        assert feed.generation("table-other") == 0
    finally:
        store.close()
        feed.stop()
