"""The database export's proof against a tree that trails the log (docs/audit.md §2.5): with no
checkpoint at all the export carries none and says so; with a checkpoint covering only part of the
deal, the events beyond it carry no proof, are named on stderr and in the verdict (INTERNALLY
CONSISTENT ONLY); once a checkpoint covers them the same export is ANCHORED. A role that may not
read the tree's tables exports without a proof instead of failing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
import pytest
from database_roles import new_role, read_only

from sapsam.app.tables import TableService
from sapsam.app.transparency import checkpoint_signer
from sapsam.audit.sample_play import play_series
from sapsam.cli import main
from sapsam.keys import ServerKeys
from sapsam.log.signed_note import NoteSigner
from sapsam.store.transparency import TreeCache, extend_log

KEYS = ServerKeys(NoteSigner.from_seed("sapsam/test", bytes(32)), (), "test")
VKEY = KEYS.signer.verifier.vkey()


async def _turn(url: str, max_leaves: int) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        await extend_log(
            connection, TreeCache(), checkpoint_signer(KEYS), lambda: 1_800_000_000, max_leaves
        )


def _export(url: str, table: str, path: Path) -> int:
    return main(
        [
            "audit",
            "export",
            "--table",
            table,
            "--deal",
            "1",
            "-o",
            str(path),
            "--database-url",
            url,
            "--anchor-wait",
            "0",
        ]
    )


def _event_count(url: str) -> int:
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT count(*) FROM events").fetchone()
    assert row is not None
    return int(row[0])


async def test_the_export_anchors_what_the_tree_covers_and_names_the_rest(
    service: TableService, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await play_series(service, 2, deals=1)
    table, deal_file = str(table_id), tmp_path / "deal.jsonl"
    assert await asyncio.to_thread(_export, database_url, table, deal_file) == 0
    assert "no checkpoint has been signed" in capsys.readouterr().err
    code = await asyncio.to_thread(main, ["audit", "verify", str(deal_file), "--server-key", VKEY])
    assert code == 4 and "carries no checkpoint" in capsys.readouterr().out
    # A checkpoint of all but the last three events.
    await _turn(database_url, _event_count(database_url) - 3)
    assert await asyncio.to_thread(_export, database_url, table, deal_file) == 0
    assert "3 events not yet under a checkpoint" in capsys.readouterr().err
    code = await asyncio.to_thread(main, ["audit", "verify", str(deal_file), "--server-key", VKEY])
    out = capsys.readouterr().out
    assert code == 4 and "3 events are not under the checkpoint" in out
    assert out.splitlines()[-1].startswith("INTERNALLY CONSISTENT ONLY")
    await _turn(database_url, 10_000)
    assert await asyncio.to_thread(_export, database_url, table, deal_file) == 0
    assert capsys.readouterr().err == ""
    code = await asyncio.to_thread(main, ["audit", "verify", str(deal_file), "--server-key", VKEY])
    assert code == 0 and capsys.readouterr().out.splitlines()[-1].startswith("ANCHORED")


async def test_a_role_that_may_not_read_the_tree_exports_without_a_proof(
    service: TableService, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await play_series(service, 2, deals=1)
    await _turn(database_url, 10_000)
    deal_file = tmp_path / "deal.jsonl"
    with new_role(database_url, read_only) as (_, reader_url):
        assert await asyncio.to_thread(_export, reader_url, str(table_id), deal_file) == 0
    assert "the log is unreadable" in capsys.readouterr().err
    code = await asyncio.to_thread(main, ["audit", "verify", str(deal_file), "--server-key", VKEY])
    assert code == 4
