"""``sapsam audit``: export → verify round trips, tampered files, online and whole-database runs."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from database_roles import new_role, read_only

from sapsam.app.tables import TableService
from sapsam.audit.sample_play import play_series, seated_table, start_and_deal
from sapsam.cli import main
from sapsam.cli.progress import Progress
from sapsam.store import schema


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def _export_deal(table_id: object, deal: int, path: Path, database_url: str) -> None:
    """``sapsam audit export --table ID --deal N -o PATH`` as the operator; it exits 0."""
    argv = ["audit", "export", "--table", str(table_id), "--deal", str(deal), "-o", str(path)]
    assert await asyncio.to_thread(main, [*argv, "--database-url", database_url]) == 0


async def test_export_then_verify_round_trip_exits_zero(
    service: TableService, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await play_series(service, 3, deals=2)
    deal_file = tmp_path / "deal.jsonl"
    code, out, err = _run(
        capsys,
        "audit",
        "export",
        "--table",
        f"tables/{table_id}",
        "--deal",
        "2",
        "-o",
        str(deal_file),
        "--player",
        "players/bob",  # the resource name, as the API and sapsam-play write it, or the bare id
        "--database-url",
        database_url,
    )
    assert (code, out) == (0, "") and "the export carries no proof: no checkpoint" in err
    # Every check holds; no server signed a checkpoint in this database, and no key is pinned:
    # INTERNALLY CONSISTENT ONLY, exit 4 (tests/audit/test_export_proofs_db.py anchors one).
    code, out, _ = _run(capsys, "audit", "verify", str(deal_file))
    assert code == 4
    assert "✓ chain" in out and "✓ deal 2 · scores" in out and "OK" not in out
    assert out.splitlines()[-1].startswith("INTERNALLY CONSISTENT ONLY: every check")
    code, out, _ = _run(capsys, "audit", "verify", str(deal_file), "--json")
    verified = json.loads(out)
    assert code == 4 and verified["ok"] is True
    assert verified["verdict"] == "internally_consistent_only"
    # The whole table to stdout, verified from stdin-like file.
    code, out, _ = _run(
        capsys, "audit", "export", "--table", str(table_id), "--database-url", database_url
    )
    assert code == 0
    table_file = tmp_path / "table.jsonl"
    table_file.write_text(out, encoding="utf-8")
    code, out, _ = _run(capsys, "audit", "verify", str(table_file), "--json")
    assert code == 4 and json.loads(out)["deals_verified"] == 2


async def test_a_tampered_file_exits_non_zero_naming_the_check(
    service: TableService, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await play_series(service, 2, deals=1)
    deal_file = tmp_path / "deal.jsonl"
    await _export_deal(table_id, 1, deal_file, database_url)
    lines = deal_file.read_text(encoding="utf-8").splitlines()
    cut_line = next(i for i, line in enumerate(lines) if '"type":"DeckCut"' in line)
    event = json.loads(lines[cut_line])
    event["data"]["position"] = event["data"]["position"] % 51 + 1
    lines[cut_line] = json.dumps(event)
    deal_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, _ = _run(capsys, "audit", "verify", str(deal_file))
    assert code == 1
    assert "✗ chain: segment 1, the DeckCut event at version" in out
    assert "First divergence: chain" in out
    assert "FAILED" in out.splitlines()[-1]
    code, out, _ = _run(capsys, "audit", "verify", str(deal_file), "--json")
    assert code == 1
    assert json.loads(out)["first_divergence"]["name"] == "chain"


async def test_online_verification_and_the_whole_database(
    service: TableService, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await play_series(service, 2, deals=2)
    code, out, _ = _run(
        capsys,
        "audit",
        "verify",
        "--table",
        str(table_id),
        "--deal",
        "2",
        "--database-url",
        database_url,
    )
    assert code == 0 and "✓ stored_chain" in out
    # For a person, as for a file: the players first, the deal's account after the checks.
    assert out.splitlines()[1].startswith("Players (the export carries no display names")
    assert "ann v bob: ann " in out and "running totals after deal 2" in out
    code, out, _ = _run(
        capsys, "audit", "verify", "--table", str(table_id), "--database-url", database_url
    )
    assert code == 0 and "✓ deal 2 · series_totals" in out
    assert "running totals after deal 1:" in out and "running totals after deal 2:" in out
    code, out, _ = _run(
        capsys, "audit", "verify", "--table", str(table_id), "--database-url", database_url,
        "--json",
    )  # fmt: skip
    assert code == 0 and json.loads(out)["ok"] is True  # JSON: the report alone, as before
    code, out, err = _run(capsys, "audit", "verify", "--all", "--database-url", database_url)
    assert code == 0, out
    assert "✓ projection table_state" in out and "2 of 2 finished deals" in out
    assert err == ""  # no progress bar when stderr is not a terminal


async def test_refusals_and_bad_input_exit_two_with_one_line(
    service: TableService, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await seated_table(service, 2)
    await start_and_deal(service, table_id, 1)
    code, out, err = _run(
        capsys,
        "audit",
        "export",
        "--table",
        str(table_id),
        "--deal",
        "1",
        "--player",
        "ann",
        "--database-url",
        database_url,
    )
    assert code == 2 and out == ""
    assert err.startswith("sapsam audit: deal 1 is still being played") and err.count("\n") == 1
    code, _, err = _run(
        capsys,
        "audit",
        "export",
        "--table",
        str(table_id),
        "--deal",
        "1",
        "--player",
        "zed",
        "--database-url",
        database_url,
    )
    assert code == 2 and err == (
        f"sapsam audit: player zed holds no seat at table {table_id}: only its players may"
        " export its deals\n"
    )
    for bad in ("players/", "players/ann/x", ""):
        code, out, err = _run(
            capsys, "audit", "export", "--table", str(table_id), "--player", bad,
            "--database-url", database_url,
        )  # fmt: skip
        assert (code, out) == (2, "") and "is not a player id (give ID or players/ID)" in err
    code, _, err = _run(capsys, "audit", "verify", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "cannot read" in err
    code, _, err = _run(capsys, "audit", "verify")
    assert code == 2 and "exactly one of" in err
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n", encoding="utf-8")
    code, out, _ = _run(capsys, "audit", "verify", str(garbage))
    assert code == 1 and "✗ format" in out


async def test_replay_prints_every_moment_or_one(
    service: TableService, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await play_series(service, 2, deals=1)
    deal_file = tmp_path / "deal.jsonl"
    await _export_deal(table_id, 1, deal_file, database_url)
    code, out, _ = _run(capsys, "audit", "replay", str(deal_file), "--plain")
    assert code == 0
    frames = [line for line in out.splitlines() if line.startswith("v")]
    assert len(frames) == len(deal_file.read_text(encoding="utf-8").splitlines()) - 1
    # The players first (ids; no display names in a table made without the directory), and at
    # the score the deal's account: each pair row by row, and the running totals.
    assert out.startswith("Players (the export carries no display names; the ids are the")
    assert "  seat 0: player ann\n  seat 1: player bob\n" in out
    assert "ann v bob: ann " in out and "front: " in out and "running totals after deal 1" in out
    dealt_version = next(
        json.loads(line)["version"]
        for line in deal_file.read_text(encoding="utf-8").splitlines()
        if '"type":"CardsDealt"' in line
    )
    code, out, _ = _run(capsys, "audit", "replay", str(deal_file), "--at", str(dealt_version))
    assert code == 0
    assert out.split("\n", 3)[3].startswith(f"v{dealt_version} CardsDealt")
    assert "[seen by seat 0 only]" in out and "[seen by seat 1 only]" in out
    code, out, _ = _run(capsys, "audit", "replay", str(deal_file), "--at", "3", "--json")
    frame = json.loads(out)
    assert frame["version"] == 3 and frame["event_type"] == "PlayerSeated"


def test_offline_verification_loads_no_database_or_network_code() -> None:
    # The promise to auditors: verifying a file needs nothing but the package.
    script = (
        "import sys\n"
        "from sapsam.audit import verify_export\n"
        "verify_export(['{}'])\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('psycopg', 'grpc', 'psycopg_pool')"
        " or m.startswith(('sapsam.store.reads', 'sapsam.store.embedded', 'sapsam.api'))]\n"
        "print(','.join(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    loaded = [name for name in result.stdout.strip().split(",") if name]
    assert loaded == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_redraws_one_line() -> None:
    stream, now = _Terminal(), [0.0]
    bar = Progress("verifying deals", 8, "deal", stream, lambda: now[0])
    for done in (0, 4, 8):
        now[0] += 1.0
        bar.update(done)
    bar.finish()
    text = stream.getvalue()
    assert text.count("\r") == 4 and text.endswith("\r\033[K")  # three drawn, one wiped
    assert "verifying deals [" + "#" * 10 + "." * 10 + "]  50% 4 of 8 deals" in text


async def test_a_running_deal_verifies_as_incomplete_with_exit_three(
    service: TableService, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await seated_table(service, 2)
    await start_and_deal(service, table_id, 1)
    deal_file = tmp_path / "running.jsonl"
    await _export_deal(table_id, 1, deal_file, database_url)
    code, out, _ = _run(capsys, "audit", "verify", str(deal_file))
    assert code == 3
    assert "… deal 1 · fair_dealing" in out
    assert "; INCOMPLETE: deals still being played, not checkable yet: 1" in out.splitlines()[-1]
    code, out, _ = _run(capsys, "audit", "verify", str(deal_file), "--json")
    report = json.loads(out)
    assert code == 3 and report["ok"] is True and report["complete"] is False


def test_an_audit_never_migrates_the_database_it_reads(
    database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    schema.downgrade(database_url, "0001")  # a database behind this code
    code, _out, err = _run(capsys, "audit", "verify", "--all", "--database-url", database_url)
    assert code == 0, err
    assert schema.current_revision(database_url) == "0001"


async def test_a_read_only_role_audits_what_it_may_and_is_told_what_it_may_not(
    service: TableService, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await play_series(service, 2, deals=2)
    with new_role(database_url, read_only) as (_, reader_url):
        code, out, _ = _run(
            capsys, "audit", "verify", "--table", str(table_id), "--database-url", reader_url
        )
        assert code == 0 and "✓ deal 2 · series_totals" in out
        export = tmp_path / "table.jsonl"
        code, _, err = _run(
            capsys,
            "audit",
            "export",
            "--table",
            str(table_id),
            "-o",
            str(export),
            "--database-url",
            reader_url,
        )
        assert code == 0, err
        code, _, err = _run(capsys, "audit", "verify", "--all", "--database-url", reader_url)
        assert code == 2
        assert err.startswith("sapsam audit: this database role may not do that: permission")
        assert "Traceback" not in err
