"""An open-face tournament through the real services (issue #18, "tournaments accept an open-face
rule set"): four players at two tables of two, one round, each table one set; the results
process credits every deal of each set and completes the round when both sets are over; the
standings are the sums of the tables' ``DealScored`` totals and the tournament audit verifies
it all from the log."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest
from open_face_sample import play_set

from sapsam.app.tables import TableService
from sapsam.app.tournament_control import TournamentControl
from sapsam.app.tournament_results import ResultsProcess
from sapsam.app.tournaments import TournamentSettings
from sapsam.audit.tournament_audit import verify_tournament
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import DealScored
from sapsam.domain.family import FAMILY_KEY
from sapsam.domain.open_face.table_state import OpenFaceTablePhase
from sapsam.domain.tournament import TournamentPhase
from sapsam.domain.tournament_events import TableSetCompleted, TournamentCreated
from sapsam.rules.open_face.presets import OPEN_FACE_PRESETS
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.store.event_store import EventStore
from sapsam.store.projections import registered_projectors
from sapsam.store.table_projections import projectors as table_projectors

FAR_FUTURE_MS = 4_102_444_800_000


@pytest.fixture
async def services(database_url: str) -> AsyncIterator[tuple[TableService, TournamentControl]]:
    store = await EventStore.connect(
        database_url, projectors=[*table_projectors(), *registered_projectors()]
    )
    store.prepare()
    tables = TableService(store)
    try:
        yield tables, TournamentControl(store, tables)
    finally:
        await store.close()


def ofc_settings(seats: int = 2, deals: int = 2, **changes: object) -> TournamentSettings:
    values: dict[str, object] = {
        "name": "OFC cup",
        "rule_set": OPEN_FACE_PRESETS["ofc_classic"],
        "seats_per_table": seats,
        "rounds": 1,
        "deals_per_round": deals,
        "registration_opens_ms": 0,
        "registration_closes_ms": FAR_FUTURE_MS,
        "max_entrants": 8,
    }
    values.update(changes)
    return TournamentSettings(**values)  # type: ignore[arg-type]


async def test_an_open_face_tournament_credits_each_set_and_the_audit_verifies_it(
    services: tuple[TableService, TournamentControl], database_url: str
) -> None:
    tables, tournaments = services
    created = await tournaments.create(ofc_settings(), "operator", "create-ofc")
    tournament_id = created.tournament_id
    recorded = tournaments.decode(created.events[0])
    assert isinstance(recorded, TournamentCreated)
    assert recorded.rule_set[FAMILY_KEY] == "open_face"
    assert recorded.rule_set["series_length"] == 2
    for player in ("ann", "bob", "cid", "dee"):
        await tournaments.register(tournament_id, player, f"register-{player}")
    await tournaments.start(tournament_id, "operator", "start-ofc")
    state = await tournaments.load(tournament_id)
    round_tables = state.round_tables(1)
    assert len(round_tables) == 2
    expected: dict[str, int] = dict.fromkeys(state.entrants, 0)
    for table in round_tables:
        finished = await play_set(tables, table.table_id)
        assert finished.phase is OpenFaceTablePhase.SERIES_COMPLETE
        for recorded_event in await tables.events(table.table_id):
            event = tables.decode(recorded_event)
            if isinstance(event, DealScored):
                for player, delta in zip(table.players, event.totals, strict=True):
                    expected[player] += delta
    credited = await ResultsProcess(tournaments).process_available()
    state = await tournaments.load(tournament_id)
    assert state.phase is TournamentPhase.COMPLETE
    assert credited == sum(len(table.credited) for table in state.round_tables(1)) >= 4
    assert all(table.set_completed for table in state.round_tables(1))
    assert dict(state.totals) == expected
    assert sum(expected.values()) == 0  # every deal zero-sum
    ranked = state.standings()
    assert [item.total for item in ranked] == sorted(expected.values(), reverse=True)
    ends = [
        tournaments.decode(item)
        for item in await tournaments.events(tournament_id)
        if item.type == TableSetCompleted.TYPE
    ]
    assert len(ends) == 2
    with psycopg.connect(database_url) as connection:
        report = verify_tournament(connection, tournament_id)
    assert report.holds, [check for check in report.checks if check.failed]
    names = {check.name for check in report.checks}
    assert {"table_seats[1.0]", "table_seats[1.1]", "credits", "standings"} <= names
    assert sum(name.startswith("set[1.") for name in names) == 2
    assert report.deals_verified == credited


async def test_an_open_face_round_is_one_set_and_closed_tournaments_record_as_before(
    services: tuple[TableService, TournamentControl],
) -> None:
    _tables, tournaments = services
    with pytest.raises(DomainError) as refused:
        await tournaments.create(ofc_settings(seats=2, deals=3), "operator", "bad-ofc")
    assert refused.value.reason is Reason.INVALID_ARGUMENT
    assert refused.value.field == "deals_per_round"
    assert "one set a table" in str(refused.value) and "must be 2" in str(refused.value)
    with pytest.raises(DomainError) as seats:
        await tournaments.create(ofc_settings(seats=5, deals=5), "operator", "bad-seats")
    assert seats.value.reason is Reason.BAD_SEAT_COUNT
    assert await tournaments.events(uuid.uuid5(uuid.NAMESPACE_URL, "none")) == []
    closed = await tournaments.create(
        ofc_settings(rule_set=DEFAULT_RULE_SET, seats=4, deals=3), "operator", "closed"
    )
    event = tournaments.decode(closed.events[0])
    assert isinstance(event, TournamentCreated)
    assert FAMILY_KEY not in event.rule_set
    assert dict(event.rule_set) == DEFAULT_RULE_SET.with_changes(series_length=3).to_dict()
