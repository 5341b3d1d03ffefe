"""Fixtures of the audit tests: a table service over a fresh database, and played series."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sapsam.app.tables import TableService
from sapsam.audit.projection_audit import default_projectors
from sapsam.store.event_store import EventStore


@pytest.fixture
async def service(database_url: str) -> AsyncIterator[TableService]:
    """A table service on a fresh migrated database, with every read model the server keeps."""
    store = await EventStore.connect(database_url, projectors=default_projectors())
    store.prepare()
    try:
        yield TableService(store)
    finally:
        await store.close()
