"""``sapsam tables awaited``, ``tables stuck --waiting-longer-than`` and ``tables time-out`` on a
real database (the commands run their own event loop: each in a thread of its own)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections.abc import AsyncIterator

import pytest
from deadline_tables import dealt_table

from sapsam.app.tables import TableService
from sapsam.cli import main
from sapsam.domain.events import SeatTimedOut
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors


@pytest.fixture
async def service(database_url: str) -> AsyncIterator[TableService]:
    store = await EventStore.connect(database_url, projectors=projectors())
    store.prepare()
    try:
        yield TableService(store)
    finally:
        await store.close()


async def run(*argv: str) -> int:
    return await asyncio.to_thread(main, list(argv))


async def test_the_operator_lists_whom_tables_await_and_times_a_seat_out(
    service: TableService, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await dealt_table(service, DEFAULT_RULE_SET, ("ann", "bob"), "cli")
    db = ("--database-url", database_url)
    assert await run("tables", "awaited", "--phase", "ARRANGING", *db) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if str(table_id) in line]
    assert "ARRANGING deal 1: waits for seat 0 (players/ann), seat 1 (players/bob)" in line
    assert "deadline" in line and "due in " in line

    # Waiting longer than a second, once a second has passed; not stuck otherwise.
    assert await run("tables", "stuck", *db) == 0
    assert str(table_id) not in capsys.readouterr().out
    time.sleep(1.1)
    assert await run("tables", "stuck", "--waiting-longer-than", "1", "--json", *db) == 0
    found = json.loads(capsys.readouterr().out)
    assert [entry["table_id"] for entry in found["waiting"]] == [str(table_id)]
    assert found["waiting"][0]["seats"] == [0, 1]

    assert await run("tables", "time-out", f"tables/{table_id}", "1", *db) == 0
    assert "seat 1 timed out; the table is now ARRANGING" in capsys.readouterr().out
    events = [service.decode(recorded) for recorded in await service.events(table_id)]
    assert [(e.seat, e.stage) for e in events if isinstance(e, SeatTimedOut)] == [(1, "arranging")]
    # Refusals record nothing and say why.
    count = len(events)
    assert await run("tables", "time-out", str(table_id), "1", *db) == 1
    assert "NOTHING_TIMED_OUT" in capsys.readouterr().err
    assert await run("tables", "time-out", str(table_id), "7", *db) == 1
    assert "UNKNOWN_SEAT" in capsys.readouterr().err
    assert await run("tables", "time-out", "not-a-table", "0", *db) == 2
    assert len(await service.events(table_id)) == count
    # The last seat awaited: the seed is revealed and the deal scored in the same append.
    assert await run("tables", "time-out", str(table_id), "0", *db) == 0
    assert "the table is now BETWEEN_DEALS" in capsys.readouterr().out


async def test_the_operator_voids_a_deal_from_the_cli(
    service: TableService, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await dealt_table(service, DEFAULT_RULE_SET, ("cid", "dee"), "void-cli")
    db = ("--database-url", database_url)
    assert await run("tables", "void", str(table_id), "--reason", "", *db) == 1
    assert "INVALID_ARGUMENT" in capsys.readouterr().err
    assert await run("tables", "void", str(table_id), "--reason", "a crash", *db) == 0
    out = capsys.readouterr().out
    assert "deal 1 voided; its seed is" in out and "BETWEEN_DEALS" in out
    events = [service.decode(recorded) for recorded in await service.events(table_id)]
    assert type(events[-1]).__name__ == "DealVoided"
    assert await run("tables", "void", str(table_id), "--reason", "again", *db) == 1
    assert "WRONG_PHASE" in capsys.readouterr().err


async def test_the_operator_replaces_a_seat_from_the_cli(
    service: TableService, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from sapsam.store.players import PlayerRecords

    table_id = await dealt_table(service, DEFAULT_RULE_SET, ("eve", "fay"), "replace-cli")
    db = ("--database-url", database_url)
    newcomer = str(uuid.uuid4())
    assert await run("tables", "replace", str(table_id), "1", newcomer, *db) == 1
    assert "no player" in capsys.readouterr().err  # not registered
    registration = await PlayerRecords(service.store.pool).register(  # type: ignore[attr-defined]
        newcomer, "newcomer", "replace-cli", None, bytes(32)
    )
    assert registration is not None
    assert await run("tables", "replace", str(table_id), "1", newcomer, *db) == 1
    assert "WRONG_PHASE" in capsys.readouterr().err  # mid-deal
    assert await run("tables", "void", str(table_id), "--reason", "to re-seat", *db) == 0
    capsys.readouterr()
    assert await run("tables", "replace", str(table_id), "1", f"players/{newcomer}", *db) == 0
    assert f"seat 1 is now played by newcomer (players/{newcomer})" in capsys.readouterr().out
    assert (await service.load(table_id)).seats[1] == newcomer


async def test_the_awaited_players_are_named_by_display_name_and_id(
    service: TableService, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from sapsam.store.players import PlayerRecords

    records = PlayerRecords(service.store.pool)  # type: ignore[attr-defined]
    ids = [str(uuid.uuid4()), str(uuid.uuid4())]
    for player, name in zip(ids, ("Ann", "Bob"), strict=True):
        token_hash = hashlib.sha256(name.encode()).digest()  # any distinct 32 bytes
        assert await records.register(player, name, f"names-{name}", None, token_hash) is not None
    table_id = await dealt_table(service, DEFAULT_RULE_SET, tuple(ids), "names-cli")
    db = ("--database-url", database_url)
    assert await run("tables", "awaited", "--phase", "ARRANGING", *db) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if str(table_id) in line]
    assert f"waits for seat 0 Ann (players/{ids[0]}), seat 1 Bob (players/{ids[1]})" in line
    time.sleep(1.1)
    assert await run("tables", "stuck", "--waiting-longer-than", "1", *db) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if str(table_id) in line]
    assert line.startswith("waiting ") and f"seat 1 Bob (players/{ids[1]})" in line
