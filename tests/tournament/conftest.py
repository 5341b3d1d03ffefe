"""Tournament test fixtures: the table and tournament services over a fresh database."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from sapsam.store.event_store import EventStore
from sapsam.store.projections import registered_projectors
from sapsam.store.table_projections import projectors as table_projectors
from sapsam.store.tables import TableService
from sapsam.store.tournaments import TournamentService


@dataclass(frozen=True)
class Services:
    """What a tournament test drives."""

    store: EventStore
    tables: TableService
    tournaments: TournamentService
    database_url: str


@pytest.fixture
def services(database_url: str) -> Iterator[Services]:
    """The store with every read model, a table service and a tournament service."""
    store = EventStore.connect(
        database_url, projectors=[*table_projectors(), *registered_projectors()]
    )
    store.prepare()
    tables = TableService(store)
    try:
        yield Services(store, tables, TournamentService(store, tables), database_url)
    finally:
        store.close()
