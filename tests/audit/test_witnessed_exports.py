"""A witnessed anchor from the export alone (docs/audit.md §2.5, §4.5): when a checkpoint a
witness cosigned covers every exported event, the export carries that one, so ``sapsam audit
verify FILE --server-key K --witness-key W`` says ANCHORED and witnessed, with no ``--checkpoint``
of the reader's and no ``--known-tree-size``. An export of events past the newest witnessed
checkpoint carries the latest one, not witnessed; ``--known-tree-size`` still links a reader's
larger tree to the witnessed one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import psycopg
import pytest

from sapsam.app.tables import TableService
from sapsam.app.transparency import checkpoint_signer
from sapsam.audit.sample_play import play_series
from sapsam.cli import main
from sapsam.keys import ServerKeys
from sapsam.log.cosignature import check_cosignature, cosign
from sapsam.log.signed_note import COSIGNATURE_V1, NoteSigner, parse_note
from sapsam.store.transparency import TreeCache, extend_log

KEYS = ServerKeys(NoteSigner.from_seed("sapsam/test", bytes(32)), (), "test")
VKEY = KEYS.signer.verifier.vkey()
WITNESS = NoteSigner.from_seed("witness.test/w", bytes([5]) * 32, COSIGNATURE_V1)
WITNESS_VKEY = WITNESS.verifier.vkey()


async def _turn(url: str) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        await extend_log(connection, TreeCache(), checkpoint_signer(KEYS), lambda: 1_800_000_000)


def _cosign_latest(url: str) -> int:
    """The witness cosigns the latest checkpoint (as AddCheckpointCosignature keeps it)."""
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT size, note FROM log_checkpoints ORDER BY size DESC LIMIT 1"
        ).fetchone()
        assert row is not None
        size, note = int(row[0]), str(row[1])
        line = cosign(note, WITNESS, 1_800_000_100).line()[:-1]
        checked = check_cosignature(parse_note(note).text, KEYS.origin, WITNESS_VKEY, line)
        connection.execute(
            "INSERT INTO checkpoint_cosignatures (size, witness_key, line, cosigned_at)"
            " VALUES (%s, %s, %s, %s)",
            [size, WITNESS_VKEY, checked.line, checked.time],
        )
    return size


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def _export(url: str, table: str, path: Path, *extra: str) -> None:
    argv = ["audit", "export", "--table", table, "--deal", "1", "-o", str(path)]
    assert main([*argv, "--database-url", url, "--anchor-wait", "0", *extra]) == 0


def _carried_size(path: Path) -> int:
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    return int(parse_note(header["transparency"]["checkpoint"]).text.splitlines()[1])


async def test_the_export_alone_anchors_to_a_witnessed_checkpoint(
    service: TableService, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = str(await play_series(service, 2, deals=1))
    await _turn(database_url)
    witnessed = _cosign_latest(database_url)
    second = str(await play_series(service, 2, deals=1))  # the log grows past the witness
    await _turn(database_url)
    deal_file, later_file = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    await asyncio.to_thread(_export, database_url, first, deal_file)
    await asyncio.to_thread(_export, database_url, second, later_file)
    capsys.readouterr()
    assert _carried_size(deal_file) == witnessed

    pins = ("--server-key", VKEY, "--witness-key", WITNESS_VKEY)
    code, out = await asyncio.to_thread(_run, capsys, "audit", "verify", str(deal_file), *pins)
    verdict = out.splitlines()[-1]
    assert code == 0 and verdict.startswith("ANCHORED"), out
    assert f"witnessed by {WITNESS.verifier.label}" in verdict, verdict
    # Events past the newest witnessed checkpoint: the latest one, anchored, not witnessed.
    code, out = await asyncio.to_thread(_run, capsys, "audit", "verify", str(later_file), *pins)
    verdict = out.splitlines()[-1]
    assert code == 0 and verdict.startswith("ANCHORED") and "not witnessed" in verdict, out
    assert _carried_size(later_file) > witnessed

    # A reader holding the latest checkpoint still links it to the witnessed one.
    with psycopg.connect(database_url) as connection:
        row = connection.execute(
            "SELECT size, note FROM log_checkpoints ORDER BY size DESC LIMIT 1"
        ).fetchone()
    assert row is not None
    latest, note = int(row[0]), str(row[1])
    mine = tmp_path / "mine.note"
    mine.write_text(note, encoding="utf-8")
    await asyncio.to_thread(
        _export, database_url, first, deal_file, "--known-tree-size", str(latest)
    )
    code, out = await asyncio.to_thread(
        _run, capsys, "audit", "verify", str(deal_file), *pins, "--checkpoint", str(mine)
    )
    assert code == 0 and "✓ consistency" in out, out
    assert f"witnessed by {WITNESS.verifier.label}" in out.splitlines()[-1]
