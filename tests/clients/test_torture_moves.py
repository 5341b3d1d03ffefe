"""The torture's clients play as the SDK does by default: every commit of scheme 2 and every
commit and reveal signed by the player's key, the keys kept in the run's folder; its log check
counts a move that is not (``unsigned``), as a problem of the run (torture/checks.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from sapsam_client.player_calls import PlayerCalls
from torture import checks
from torture.ledger import Ledger, Stats
from torture.load import Lane, LaneConfig, Lateness, TableRecord


def _play_one_table(address: str, folder: Path) -> list[TableRecord]:
    tables: list[TableRecord] = []
    late: list[Lateness] = []
    lane = Lane(
        0,
        address,
        LaneConfig(series_length=1, arrange_seconds=60, reveal_seconds=60),
        Ledger(folder / "ledger.jsonl"),
        Stats(),
        threading.Event(),
        tables,
        late,
    )
    lane.play_table(1)
    return tables


def test_the_torture_plays_signed_scheme_2_moves_and_keeps_its_keys_in_its_folder(
    address: str, database_url: str, tmp_path: Path
) -> None:
    tables = _play_one_table(address, tmp_path)
    assert [table.completed for table in tables] == [True]
    log = checks.check_log(database_url)
    assert log["tables_complete"] == 1 and "unsigned" not in log, log
    assert (tmp_path / "player-keys.json").is_file()  # not the user's key file


def test_the_log_check_counts_unsigned_moves(
    address: str, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(PlayerCalls, "key_for", lambda self, player: None)  # an unsigning client
    _play_one_table(address, tmp_path)
    log = checks.check_log(database_url)
    assert log["unsigned"] >= 8, log  # four seats' commits and reveals
    assert "ArrangementCommitted deal 1 seat" in " ".join(log["examples"]["unsigned"])
