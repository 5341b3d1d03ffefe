"""``sapsam audit monitor`` where it cannot run (exit 2, one line, nothing half-written), its
witness key file and pinned keys, and the atomic state writes; the checks themselves run against
a real server in tests/api/test_audit_monitor.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from sapsam.cli import main
from sapsam.cli.monitor_command import (
    CannotRunError,
    StateFolder,
    locked,
    pinned_keys,
    witness_key,
    write_atomically,
)
from sapsam.log.signed_note import COSIGNATURE_V1, NoteSigner

SERVER = NoteSigner.from_seed("sapsam/unit", bytes(32))


def _free_address() -> str:
    # Port 1: nothing listens there, and no port-0 bind of another test can be given it.
    return "127.0.0.1:1"


def _run(*argv: str) -> int:
    return main(["audit", "monitor", *argv])


def test_it_cannot_run_without_a_server_or_with_bad_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "state")
    key = SERVER.verifier.vkey()
    address = _free_address()
    assert _run("--server", address, "--state", state, "--once", "--server-key", key) == 2
    assert "did not answer" in capsys.readouterr().err
    assert _run("--server", address, "--state", state, "--interval", "0") == 2
    assert _run("--server", address, "--state", state, "--once", "--server-key", "nonsense") == 2
    witness = NoteSigner.from_seed("w", bytes(32), COSIGNATURE_V1).verifier.vkey()
    assert _run("--server", address, "--state", state, "--once", "--server-key", witness) == 2
    assert "not a log key" in capsys.readouterr().err
    (tmp_path / "state" / "state.json").write_text("{not json")
    assert _run("--server", address, "--state", state, "--once", "--server-key", key) == 2
    assert "not a monitor state" in capsys.readouterr().err


def test_a_witness_key_is_made_once_private_and_refused_when_others_may_read_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "keys" / "witness.key"
    made = witness_key(path, "witness.example/w9")
    assert path.stat().st_mode & 0o077 == 0
    assert witness_key(path, None).verifier == made.verifier
    assert made.signature_type == COSIGNATURE_V1
    with pytest.raises(CannotRunError, match="not of"):
        witness_key(path, "another")
    path.chmod(0o644)
    with pytest.raises(CannotRunError, match="read by others"):
        witness_key(path, None)
    server_file = tmp_path / "server.key"
    server_file.write_text(SERVER.skey())
    server_file.chmod(0o600)
    with pytest.raises(CannotRunError, match="cosignature/v1"):
        witness_key(server_file, None)


def test_pinned_keys_read_vkeys_and_keys_show_output(tmp_path: Path) -> None:
    retired = NoteSigner.from_seed("sapsam/unit", bytes([1]) * 32).verifier
    shown = tmp_path / "keys.txt"
    shown.write_text(f"current {SERVER.verifier.vkey()}\nretired {retired.vkey()}\n# note\n")
    assert pinned_keys([str(shown)]) == (SERVER.verifier, retired)
    assert pinned_keys([SERVER.verifier.vkey(), str(shown)]) == (SERVER.verifier, retired)
    other = NoteSigner.from_seed("sapsam/other", bytes(32)).verifier.vkey()
    with pytest.raises(CannotRunError, match="more than one log"):
        pinned_keys([SERVER.verifier.vkey(), other])


def test_state_writes_are_atomic_and_the_folder_is_locked(tmp_path: Path) -> None:
    folder = StateFolder(tmp_path / "state")
    folder.prepare()
    assert (folder.root.stat().st_mode & 0o777) == 0o700
    target = folder.root / "file"
    write_atomically(target, "one")
    write_atomically(target, "two")
    assert target.read_text() == "two"
    assert [path.name for path in folder.root.iterdir() if path.name.startswith(".file")] == []
    folder.keep_note(5, "first")
    folder.keep_note(5, "second")  # a note kept for a size is never replaced
    assert folder.note_of(5) == "first"
    with locked(folder), pytest.raises(CannotRunError, match="another monitor"), locked(folder):
        pass


def test_a_state_whose_held_note_is_gone_cannot_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sapsam.log.merkle import Frontier
    from sapsam.log.monitor import MonitorState

    folder = StateFolder(tmp_path / "state")
    folder.prepare()
    frontier = Frontier()
    frontier.append(bytes(32))
    folder.save(
        MonitorState("sapsam/unit", (SERVER.verifier,), 1, frontier.root(), frontier.hashes)
    )
    # A server must answer for the poll to reach the held checkpoint: none here, so the
    # damaged state is found by loading it directly.
    from sapsam.cli.monitor_command import _held

    loaded = folder.load()
    assert loaded is not None
    with pytest.raises(CannotRunError, match="damaged"):
        _held(folder, loaded)
