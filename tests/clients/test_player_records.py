"""A player's record from the SDK and ``sapsam-play``: the hand history (``ListMyDeals``) and
disputes, each deal fetched over the API and verified here with the sapsam package's verifier.

A real server with a signing key over a socket; two SDK players play a series keeping their
receipts beside their saved tokens, as ``sapsam-play`` does. An honest deal is ANCHORED under the
key the receipts folder pinned; an export altered after download FAILS, naming what failed; a
deal still being played, or another table's deal, is refused in plain words.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sapsam.api.server import RunningServer, ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam.keys import ServerKeys
from sapsam.log.signed_note import NoteSigner
from sapsam_client import Client, connect, player_records
from sapsam_client.dispute import ANCHORED, FAILED, NotThisDealError
from sapsam_client.errors import SapsamError
from sapsam_client.player_key import load_or_create
from sapsam_client.receipts import ReceiptFolder, default_folder
from sapsam_client.rules import solver_arranger
from sapsam_client.tokens import SavedPlayer, load_player, save_player

KEYS = ServerKeys(NoteSigner.from_seed("sapsam/records-test", bytes(range(32))), (), "tests")
PLAY = [sys.executable, "-m", "sapsam_client.terminal"]


@pytest.fixture
def address(database_url: str) -> Iterator[str]:
    running: RunningServer = start_server(
        ServerConfig(listen="127.0.0.1:0", grace_seconds=2),
        build_services(database_url, pool_size=8, server_keys=KEYS, checkpoint_seconds=0.3),
    )
    try:
        yield f"127.0.0.1:{running.port}"
    finally:
        running.stop()


def _player(address: str, folder: Path, name: str) -> tuple[Client, Path]:
    """A registered SDK player whose token is saved as sapsam-play saves it, keeping its
    receipts beside it (the server key pinned on first use)."""
    tokens = folder / name / "tokens.json"
    receipts = ReceiptFolder(default_folder(tokens))
    client = connect(address, receipts=receipts)
    receipts.pin_from(client.channel)
    registered = client.register(name)
    save_player(
        tokens,
        address,
        SavedPlayer(registered.player, registered.display_name, registered.token),
    )
    return client, tokens


def _play(clients: list[Client], table: str) -> None:
    seats = [client.join_table(table) for client in clients]
    failures: list[BaseException] = []

    def run(index: int) -> None:
        try:
            seats[index].play_series(solver_arranger)
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(seats))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []


def _tampered(export: str) -> str:
    """The export with the first seat's score in the DealScored line raised by one."""
    lines = export.split("\n")
    for index, line in enumerate(lines):
        if '"DealScored"' in line:
            event = json.loads(line)
            event["data"]["totals"][0] += 1
            lines[index] = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
            return "\n".join(lines)
    raise AssertionError("no DealScored line")


@pytest.fixture
def played(address: str, tmp_path: Path) -> tuple[str, list[tuple[Client, Path]]]:
    """A 2-deal series between Ann and Bob, and a table of Cy's Ann never sat at."""
    ann, bob, cy, dee = (_player(address, tmp_path, name) for name in ("ann", "bob", "cy", "dee"))
    table = ann[0].create_table(2, preset="pagat", series_length=2).name
    _play([ann[0], bob[0]], table)
    other = cy[0].create_table(2, preset="pagat", series_length=1).name
    _play([cy[0], dee[0]], other)
    return table, [ann, bob, cy, dee]


def test_the_sdk_lists_a_players_own_deals_and_disputes_one(
    played: tuple[str, list[tuple[Client, Path]]],
) -> None:
    table, [(ann, tokens), (bob, _), (cy, _), _] = played
    history = list(ann.deal_history(page_size=1))
    assert [deal.deal for deal in history] == [f"{table}/deals/2", f"{table}/deals/1"]
    assert all(deal.seat.startswith(table) for deal in history)
    assert history[0].series_total == history[0].delta + history[1].delta
    assert all(deal.deal.startswith(table) for deal in bob.deal_history())
    assert not any(deal.deal.startswith(table) for deal in cy.deal_history())

    folder = default_folder(tokens)
    verdict = ann.dispute(f"{table}/deals/2", receipts=folder)
    assert verdict.verdict == ANCHORED, verdict.report_text
    assert verdict.exit_status == 0 and verdict.failures == ()
    assert "pinned in" in verdict.key_source and verdict.receipts > 0
    assert "ANCHORED" in verdict.explain() and "seed" in verdict.explain()
    # The report tells the deal as `sapsam audit verify` does: the players, then row by row.
    text = verdict.report_text
    assert "front: " in text and "running totals after deal 2" in text
    assert text.index("✓ deal 2 · scores") < text.index("running totals after deal 2")

    # The player's own signing key pinned: each of its signed moves is by that key. Under a key
    # the player never signed with (as if the server had re-signed its moves), the verdict fails.
    player = load_player(tokens, ann.server)
    assert player is not None
    pinned = ann.dispute(f"{table}/deals/2", receipts=folder, player=player.player)
    assert pinned.verdict == ANCHORED, pinned.report_text
    assert {check.name: check.status for check in pinned.checks}[
        f"pinned_player_key[{player.player.removeprefix('players/')}]"
    ] == "passed"
    own_path = ann.key_path
    ann.key_path = folder.parent / "other-keys.json"
    try:
        load_or_create(ann.key_path, ann.server, player.player)  # a key it never signed with
        foreign = ann.dispute(f"{table}/deals/2", receipts=folder, player=player.player)
    finally:
        ann.key_path = own_path
    assert foreign.verdict == FAILED
    assert [check.name for check in foreign.failures] == [
        f"pinned_player_key[{player.player.removeprefix('players/')}]"
    ]

    # The same file altered after download: the chain (and the scores) no longer hold.
    export = ann.export_deal(f"{table}/deals/2").export
    forged = ann.dispute(f"{table}/deals/2", receipts=folder, export=_tampered(export))
    assert forged.verdict == FAILED and forged.exit_status == 1
    assert "chain" in {check.name for check in forged.failures}
    assert "FAILED" in forged.explain() and "chain" in forged.explain()

    # A folder that pinned only another server's key: this server's is pinned beside it (as
    # sapsam-play does on first use) and the deal is anchored under it.
    elsewhere = NoteSigner.from_seed("sapsam/elsewhere", bytes(32)).verifier.vkey()
    shared = ReceiptFolder(folder.parent / "shared", server_keys=())
    shared.folder.mkdir()
    (shared.folder / ".server-keys").write_text(f"{elsewhere}\n", encoding="utf-8")
    other_first = ann.dispute(f"{table}/deals/1", receipts=ReceiptFolder(shared.folder))
    assert other_first.verdict == ANCHORED, other_first.report_text
    assert "now pinned in" in other_first.key_source
    again = ann.dispute(f"{table}/deals/1", receipts=ReceiptFolder(shared.folder))
    assert again.verdict == ANCHORED and "when you first played" in again.key_source

    # Only a key of another log given: the checkpoint opens under no pinned key of its log.
    stranger = ann.dispute(f"{table}/deals/2", export=export, server_keys=[elsewhere])
    assert stranger.verdict != ANCHORED
    # A saved export of deal 2 named as deal 1 is refused before any verification.
    with pytest.raises(NotThisDealError):
        ann.dispute(f"{table}/deals/1", export=export)

    # Another table's deal: the server refuses the export to a player not seated there.
    with pytest.raises(SapsamError) as refused:
        cy.dispute(f"{table}/deals/1")
    assert refused.value.reason == "NOT_SEATED"


def test_a_running_deal_is_refused_until_scored(address: str, tmp_path: Path) -> None:
    ann, _ = _player(address, tmp_path, "ann")
    bob, _ = _player(address, tmp_path, "bob")
    table = ann.create_table(2, preset="pagat", series_length=2).name
    ann.join_table(table)
    bob.join_table(table)
    ann.choose_dealer(table)
    deal = ann.start_deal(table)
    with pytest.raises(SapsamError) as refused:
        ann.dispute(deal)
    assert refused.value.reason == "DEAL_NOT_FINISHED"
    assert list(ann.deal_history()) == []


def _run(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PLAY, *words], capture_output=True, text=True, timeout=120, check=False)


def test_sapsam_play_history_and_dispute(
    played: tuple[str, list[tuple[Client, Path]]], address: str, tmp_path: Path
) -> None:
    table, [(_, tokens), _, (_, cy_tokens), _] = played
    common = ("--server", address, "--token-file", str(tokens))
    listed = _run("history", *common)
    assert listed.returncode == 0, listed.stderr
    assert f"{table}/deals/2" in listed.stdout and f"{table}/deals/1" in listed.stdout
    assert listed.stdout.index(f"{table}/deals/2") < listed.stdout.index(f"{table}/deals/1")
    assert "sapsam-play dispute DEAL" in listed.stdout

    saved = tmp_path / "deal2.jsonl"
    honest = _run("dispute", f"{table}/deals/2", *common, "--save", str(saved))
    assert honest.returncode == 0, honest.stdout + honest.stderr
    assert "ANCHORED" in honest.stdout and "receipt" in honest.stdout

    saved.write_text(_tampered(saved.read_text(encoding="utf-8")), encoding="utf-8")
    forged = _run("dispute", f"{table}/deals/2", *common, "--file", str(saved))
    assert forged.returncode == 1, forged.stdout + forged.stderr
    assert "FAILED" in forged.stdout and "chain" in forged.stdout

    stranger = _run(
        "dispute", f"{table}/deals/1", "--server", address, "--token-file", str(cy_tokens)
    )
    assert stranger.returncode == 2
    assert "you held no seat at that table" in stranger.stderr

    wrong = _run("dispute", f"{table}/deals/1", *common, "--file", str(saved))
    assert wrong.returncode == 2 and "not " + f"{table}/deals/1" in wrong.stderr

    nobody = _run("history", "--server", address, "--token-file", str(tmp_path / "none.json"))
    assert nobody.returncode == 2 and "no saved player" in nobody.stderr
    bad = _run("dispute", "tables/nope", *common)
    assert bad.returncode == 2 and "tables/<uuid>/deals/<number>" in bad.stderr


def test_a_dispute_that_cannot_run_never_exits_as_failed(address: str, tmp_path: Path) -> None:
    # 1 is the FAILED verdict: a deal not verified at all (a refused token, a malformed key)
    # exits 2, "cannot run", with a plain error, never 1 or a traceback.
    tokens = tmp_path / "tokens.json"
    save_player(tokens, address, SavedPlayer("players/nobody", "nobody", "not-a-token"))
    deal = "tables/00000000-0000-0000-0000-000000000007/deals/1"
    common = ["--server", address, "--token-file", str(tokens)]
    assert player_records.main(["dispute", deal, *common]) == 2  # UNAUTHENTICATED
    export = tmp_path / "deal.jsonl"
    export.write_text("{}\n", encoding="utf-8")
    with_key = ["dispute", deal, *common, "--file", str(export), "--server-key", "garbage"]
    assert player_records.main(with_key) == 2
