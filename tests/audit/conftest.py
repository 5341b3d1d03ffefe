"""Fixtures of the audit tests: a table service over a fresh database, and played series."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors
from sapsam.store.tables import TableService


@pytest.fixture
def service(database_url: str) -> Iterator[TableService]:
    """A table service on a fresh migrated database, with the game's read models."""
    store = EventStore.connect(database_url, projectors=projectors())
    store.prepare()
    try:
        yield TableService(store)
    finally:
        store.close()
