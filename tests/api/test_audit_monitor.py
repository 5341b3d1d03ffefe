"""``sapsam audit monitor`` against a real server over a socket, on a real PostgreSQL: normal
growth passes poll after poll (each ``--once`` a restart from the state folder) and is cosigned;
an owner who tampers with the log, disabling the guards and letting the server rebuild and
re-sign the tree with its own key, is caught — a deleted last deal then more play (rewritten,
exit 5), a deleted tail (truncated, 4), the last event changed at the same size (fork, 6) — and a
checkpoint with no signature or another key's (3). Each alarm leaves its signed evidence."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import psycopg
import pytest
from scenarios import World
from serving import TEST_SERVER_KEYS, serving
from test_transparency_api import checkpoint_covering

from sapsam.cli import main
from sapsam.cli.bootstrap import build_services
from sapsam.cli.monitor_command import StateFolder, locked
from sapsam.log.checkpoint import open_checkpoint, sapsam_checkpoint, sign_checkpoint
from sapsam.log.signed_note import COSIGNATURE_V1, NoteSigner
from sapsam_proto.v1 import transparency_service_pb2 as messages
from sapsam_proto.v1 import transparency_service_pb2_grpc

WITNESS = NoteSigner.from_seed("witness.test/monitor", bytes([7]) * 32, COSIGNATURE_V1)
SERVER_VKEY = TEST_SERVER_KEYS.signer.verifier.vkey()
TREE_LOCK = "SELECT pg_advisory_xact_lock(7526466447829417326)"  # the checkpointer's
TREE_TABLES = ("events", "merkle_nodes", "merkle_leaves", "log_checkpoints")


@dataclasses.dataclass
class Setup:
    world: World
    stub: transparency_service_pb2_grpc.TransparencyServiceStub
    address: str
    state: Path

    def monitor(self, *extra: str, pinned: bool = True) -> int:
        key = ("--server-key", SERVER_VKEY) if pinned else ()
        argv = ["audit", "monitor", "--server", self.address, "--state", str(self.state)]
        return main([*argv, "--once", *key, *extra])

    def checkpointed(self) -> messages.GetCheckpointResponse:
        return checkpoint_covering(self.stub, self.world, self.world.event_count())

    def held(self) -> int:
        return int(json.loads((self.state / "state.json").read_text())["size"])


@pytest.fixture
def setup(database_url: str, tmp_path: Path) -> Iterator[Setup]:
    keys = dataclasses.replace(TEST_SERVER_KEYS, witnesses=(WITNESS.verifier,))
    services = build_services(database_url, pool_size=4, server_keys=keys, checkpoint_seconds=0.2)
    with (
        serving(database_url, services=services) as running,
        grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel,
    ):
        world = World(channel, database_url)
        stub = transparency_service_pb2_grpc.TransparencyServiceStub(channel)
        yield Setup(world, stub, f"127.0.0.1:{running.port}", tmp_path / "monitor")


def _played_and_held(setup: Setup) -> tuple[World, int]:
    """A played deal, checkpointed, and a monitor holding that checkpoint."""
    world = setup.world
    world.played(world.seated())
    size = setup.checkpointed().tree_size
    assert setup.monitor() == 0
    assert setup.held() == size
    return world, size


def _evidence(setup: Setup, finding: str) -> list[str]:
    folders = sorted((setup.state / "evidence").glob(f"*-{finding}"))
    assert folders, f"no {finding} evidence"
    return sorted(path.name for path in folders[-1].iterdir())


def test_normal_growth_passes_poll_after_poll_and_is_cosigned(
    setup: Setup, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = setup.world
    witness_file = tmp_path / "witness.key"
    witness_file.write_text(WITNESS.skey() + "\n")
    witness_file.chmod(0o600)
    # The first run trusts the server's key on first use, and says so loudly.
    world.played(world.seated())
    first = setup.checkpointed()
    assert setup.monitor("--witness-key", str(witness_file), pinned=False) == 0
    captured = capsys.readouterr()
    assert "trust on first use" in captured.err and SERVER_VKEY in captured.err
    assert f"checkpoint of {first.tree_size} leaves verified" in captured.out
    state = json.loads((setup.state / "state.json").read_text())
    assert state["keys"] == [SERVER_VKEY] and state["trust_on_first_use"]
    sizes = [first.tree_size]
    for _ in range(3):  # more play, each poll a fresh process state read back from disk
        world.played(world.seated())
        sizes.append(setup.checkpointed().tree_size)
        assert setup.monitor("--witness-key", str(witness_file)) == 0
        assert setup.held() == sizes[-1]
    assert setup.monitor("--witness-key", str(witness_file)) == 0
    assert "unchanged" in capsys.readouterr().out
    kept = {int(path.stem) for path in (setup.state / "checkpoints").glob("*.note")}
    assert set(sizes) <= kept
    # Every checkpoint it verified, it cosigned; the server keeps and returns the cosignature.
    for size in sizes:
        served = setup.stub.GetCheckpoint(messages.GetCheckpointRequest(tree_size=size))
        opened = open_checkpoint(
            served.signed_note, [TEST_SERVER_KEYS.signer.verifier, WITNESS.verifier],
            TEST_SERVER_KEYS.origin,
        )  # fmt: skip
        assert [entry.key for entry in opened.note.verified] == [
            TEST_SERVER_KEYS.signer.verifier,
            WITNESS.verifier,
        ]
        assert (setup.state / "cosigned" / f"{size}.note").read_text() == served.signed_note
    assert not (setup.state / "evidence").exists() or not any((setup.state / "evidence").iterdir())
    # A second monitor on the same state folder cannot run at once.
    with locked(StateFolder(setup.state)):
        assert setup.monitor() == 2


def _tamper(world: World, statements: list[tuple[str, list[object]]]) -> None:
    """As the database's owner, with the guards off and the checkpointer held off."""
    with psycopg.connect(world.database_url) as connection, connection.transaction():
        connection.execute(TREE_LOCK)
        for table in TREE_TABLES:
            connection.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        for statement, parameters in statements:
            connection.execute(statement.encode(), parameters)
        for table in TREE_TABLES:
            connection.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")


def _drop_tree_from(first_leaf: int) -> list[tuple[str, list[object]]]:
    """Statements deleting the tree's rows that cover any leaf from ``first_leaf`` on: the
    running server's checkpointer rebuilds them from the events left, signing anew."""
    return [
        ("DELETE FROM merkle_leaves WHERE leaf_index >= %s", [first_leaf]),
        ("DELETE FROM merkle_nodes WHERE (index + 1) * (2::numeric ^ level) > %s", [first_leaf]),
        ("DELETE FROM log_checkpoints WHERE size > %s", [first_leaf]),
    ]


def _delete_last_deal(world: World) -> int:
    """Delete the last deal (DealStarted onwards) of the table that played last, and the tree
    from its first event; the number of events deleted."""
    with psycopg.connect(world.database_url) as connection:
        row = connection.execute(
            "SELECT stream_id, max(version) FROM events WHERE type = 'DealStarted'"
            " AND stream_id = (SELECT stream_id FROM events ORDER BY position DESC LIMIT 1)"
            " GROUP BY stream_id"
        ).fetchone()
        assert row is not None
        stream, version = row
        first = connection.execute(
            "SELECT l.leaf_index FROM merkle_leaves l JOIN events e USING (position)"
            " WHERE e.stream_id = %s AND e.version = %s",
            [stream, version],
        ).fetchone()
        assert first is not None
        deleted = connection.execute(
            "SELECT count(*) FROM events WHERE stream_id = %s AND version >= %s", [stream, version]
        ).fetchone()
    _tamper(
        world,
        [
            ("DELETE FROM events WHERE stream_id = %s AND version >= %s", [stream, version]),
            *_drop_tree_from(int(first[0])),
        ],
    )
    assert deleted is not None
    return int(deleted[0])


def test_a_deleted_last_deal_re_signed_and_grown_past_is_a_rewritten_log(setup: Setup) -> None:
    world, held = _played_and_held(setup)
    assert _delete_last_deal(world) >= 5
    # Play goes on; the server rebuilds the tree from what is left and signs with its own key.
    world.played(world.seated())
    later = setup.checkpointed()
    assert later.tree_size > held
    open_checkpoint(later.signed_note, TEST_SERVER_KEYS.verifier_keys(), TEST_SERVER_KEYS.origin)
    assert setup.monitor() == 5
    assert setup.held() == held  # the alarm moves nothing
    assert _evidence(setup, "rewritten") == ["1.note", "2.note", "finding.txt"]
    assert setup.monitor() == 5  # and it stays raised


@pytest.mark.parametrize("checkpoints", ["older ones kept", "all deleted"])
def test_a_deleted_tail_is_a_truncated_log(setup: Setup, checkpoints: str) -> None:
    world = setup.world
    world.played(world.seated())
    earlier = setup.checkpointed().tree_size  # a checkpoint from before the deal deleted
    world, held = _played_and_held(setup)
    deleted = _delete_last_deal(world)
    if checkpoints == "all deleted":
        _tamper(world, [("DELETE FROM log_checkpoints", [])])
    with psycopg.connect(world.database_url) as connection:
        latest = connection.execute("SELECT max(size) FROM log_checkpoints").fetchone()
    assert latest is not None
    assert setup.monitor() == 4
    assert setup.held() == held
    if checkpoints == "all deleted":  # the server serves no checkpoint at all any more
        assert latest[0] is None
        assert _evidence(setup, "truncated") == ["1.note", "finding.txt"]
    else:  # an older, smaller checkpoint is the latest again
        assert earlier <= latest[0] <= held - deleted
        assert _evidence(setup, "truncated") == ["1.note", "2.note", "finding.txt"]


def test_the_last_event_changed_at_the_same_size_is_a_fork(setup: Setup) -> None:
    world, held = _played_and_held(setup)
    _tamper(
        world,
        [
            (
                "UPDATE events SET hash = %s WHERE position = (SELECT max(position) FROM events)",
                [hashlib.sha256(b"forged").digest()],
            ),
            *_drop_tree_from(held - 1),
        ],
    )
    deadline = time.monotonic() + 20
    while True:  # the checkpointer signs the other tree of the same size
        try:
            if setup.stub.GetCheckpoint(messages.GetCheckpointRequest()).tree_size == held:
                break
        except grpc.RpcError as error:  # none left until then, if all covered the last leaf
            assert error.code() == grpc.StatusCode.NOT_FOUND
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert setup.monitor() == 6
    evidence = _evidence(setup, "fork")
    assert "1.note" in evidence and "2.note" in evidence
    assert setup.held() == held


@pytest.mark.parametrize("how", ["unsigned", "another key", "flipped"])
def test_a_checkpoint_without_a_good_signature_of_the_pinned_key_is_refused(
    setup: Setup, how: str
) -> None:
    world, held = _played_and_held(setup)
    world.played(world.seated())
    latest = setup.checkpointed()
    checkpoint = open_checkpoint(
        latest.signed_note, TEST_SERVER_KEYS.verifier_keys(), TEST_SERVER_KEYS.origin
    ).checkpoint
    impostor = NoteSigner.from_seed(TEST_SERVER_KEYS.origin, bytes([9]) * 32)
    notes = {
        "unsigned": checkpoint.text(),
        "another key": sign_checkpoint(
            sapsam_checkpoint(checkpoint.origin, checkpoint.size, checkpoint.root, 1), impostor
        ),
        "flipped": _flip(latest.signed_note, -10),
    }
    _tamper(
        world,
        [("UPDATE log_checkpoints SET note = %s WHERE size = %s", [notes[how], latest.tree_size])],
    )
    assert setup.monitor() == 3
    assert setup.held() == held
    assert _evidence(setup, "signature") == ["1.note", "finding.txt"]


def _flip(note: str, at: int) -> str:
    """The note with one base64 character of its last signature changed."""
    character = "A" if note[at] != "A" else "B"
    return note[:at] + character + note[at + 1 :]


def test_a_log_longer_than_a_page_of_leaves_is_read_page_by_page(setup: Setup) -> None:
    """2,500 events at once: GetLeaves answers 1,000 at a time, and the monitor's first run
    reads the whole log in pages (then only the new part) and checks every leaf."""
    world = setup.world
    world.played(world.seated())
    world.execute(
        "INSERT INTO events (stream_id, version, type, schema_version, data, metadata, hash)"
        " SELECT 'bulk', v, 'Test', 1, '{}', '{}', sha256(('bulk/' || v)::bytea)"
        " FROM generate_series(1, 2500) AS v"
    )
    size = setup.checkpointed().tree_size
    assert size > 2_500
    page = setup.stub.GetLeaves(messages.GetLeavesRequest(start_index=1))
    assert (page.start_index, len(page.leaves)) == (1, 1_000)
    assert setup.monitor() == 0
    assert setup.held() == size
    world.execute(
        "INSERT INTO events (stream_id, version, type, schema_version, data, metadata, hash)"
        " SELECT 'bulk', v, 'Test', 1, '{}', '{}', sha256(('bulk/' || v)::bytea)"
        " FROM generate_series(2501, 3700) AS v"
    )
    later = setup.checkpointed().tree_size
    assert later == size + 1_200
    assert setup.monitor() == 0
    assert setup.held() == later


def test_after_a_key_rotation_the_new_key_must_be_pinned_and_the_history_still_holds(
    database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The operator rotates the key (the old one retired) and restarts: checkpoints signed by the
    new key are refused (3) until it is pinned; then the log still extends what was held."""
    rotated = dataclasses.replace(
        TEST_SERVER_KEYS,
        signer=NoteSigner.from_seed(TEST_SERVER_KEYS.origin, bytes([5]) * 32),
        retired=(TEST_SERVER_KEYS.signer.verifier,),
    )
    state = tmp_path / "monitor"
    held = 0
    for keys in (TEST_SERVER_KEYS, rotated):
        services = build_services(
            database_url, pool_size=4, server_keys=keys, checkpoint_seconds=0.2
        )
        with (
            serving(database_url, services=services) as running,
            grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel,
        ):
            setup = Setup(
                World(channel, database_url),
                transparency_service_pb2_grpc.TransparencyServiceStub(channel),
                f"127.0.0.1:{running.port}",
                state,
            )
            setup.world.played(setup.world.seated())
            size = setup.checkpointed().tree_size
            if keys is TEST_SERVER_KEYS:
                assert setup.monitor() == 0
                held = setup.held()
                continue
            capsys.readouterr()
            assert setup.monitor() == 3  # signed by a key the monitor has not pinned
            assert "--server-key" in capsys.readouterr().err
            assert setup.held() == held
            new_key = rotated.signer.verifier.vkey()
            assert setup.monitor("--server-key", new_key) == 0
            assert setup.held() == size > held
            # What was signed before the rotation still verifies, with the retired key.
            old = setup.stub.GetCheckpoint(messages.GetCheckpointRequest(tree_size=held))
            open_checkpoint(old.signed_note, [TEST_SERVER_KEYS.signer.verifier], keys.origin)
    assert json.loads((state / "state.json").read_text())["keys"] == [SERVER_VKEY, new_key]


def test_a_running_monitor_follows_growth_and_stops_on_the_alarm(setup: Setup) -> None:
    """Without --once the monitor polls every --interval until an alarm: play goes on while it
    runs, then the owner deletes the tail; it exits 4 on its own."""
    world = setup.world
    world.played(world.seated())
    setup.checkpointed()
    argv = ["audit", "monitor", "--server", setup.address, "--state", str(setup.state),
            "--server-key", SERVER_VKEY, "--interval", "0.2"]  # fmt: skip
    result: list[int] = []
    runner = threading.Thread(target=lambda: result.append(main(argv)), daemon=True)
    runner.start()
    world.played(world.seated())
    size = setup.checkpointed().tree_size
    deadline = time.monotonic() + 30
    while not (setup.state / "state.json").exists() or setup.held() != size:
        assert runner.is_alive() and time.monotonic() < deadline, "the monitor did not catch up"
        time.sleep(0.1)
    _delete_last_deal(world)
    runner.join(timeout=30)
    assert not runner.is_alive()
    assert result == [4]
    assert setup.held() == size
