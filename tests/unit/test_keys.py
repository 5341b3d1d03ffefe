"""sapsam.keys: the server's signing key on disk or from the environment, and its rotation."""

from __future__ import annotations

import socket
import stat
from pathlib import Path

import pytest

from sapsam.keys import (
    ENV_KEY,
    ENV_KEY_FILE,
    ENV_SERVER_NAME,
    KeyExistsError,
    KeyPaths,
    ServerKeyError,
    create_key,
    key_name,
    load_server_keys,
    read_retired,
    read_signer,
    rotate_key,
)
from sapsam.log.checkpoint import open_checkpoint, sapsam_checkpoint, sign_checkpoint
from sapsam.log.merkle import EMPTY_ROOT
from sapsam.log.signed_note import NoteSigner

NAME = "sapsam/game.example"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_key_is_private_and_in_go_signing_key_form(tmp_path: Path) -> None:
    keys = create_key(tmp_path, NAME)
    paths = KeyPaths.of(tmp_path)
    assert _mode(paths.key) == 0o600
    assert _mode(paths.folder) == 0o700
    text = paths.key.read_text()
    assert text.startswith(f"PRIVATE+KEY+{NAME}+{keys.signer.verifier.key_id:08x}+A")
    assert NoteSigner.from_skey(text).verifier == keys.signer.verifier
    assert keys.origin == NAME
    assert keys.retired == ()
    assert list(paths.folder.iterdir()) == [paths.key]  # no temporary file left behind
    with pytest.raises(KeyExistsError):
        create_key(tmp_path, NAME)


def test_first_start_creates_the_key_and_later_starts_read_it(tmp_path: Path) -> None:
    environ: dict[str, str] = {}
    with pytest.raises(ServerKeyError, match="sapsam keys create"):
        load_server_keys(tmp_path, environ=environ)
    first = load_server_keys(tmp_path, environ=environ, create=True, name="game.example")
    again = load_server_keys(tmp_path, environ=environ, create=True, name="other")
    assert first.signer.verifier == again.signer.verifier
    assert again.origin == NAME


def test_a_key_others_may_read_is_refused(tmp_path: Path) -> None:
    keys = create_key(tmp_path, NAME)
    path = Path(keys.source)
    path.chmod(0o640)
    with pytest.raises(ServerKeyError, match="chmod 600"):
        read_signer(path)
    path.chmod(0o600)
    path.write_text("not a key\n")
    with pytest.raises(ServerKeyError, match="not a sapsam/Go note signing key"):
        read_signer(path)


def test_the_sources_in_order(tmp_path: Path) -> None:
    on_disk = create_key(tmp_path, NAME).signer
    from_env = NoteSigner.from_seed("sapsam/env", b"\x01" * 32)
    from_env_file = NoteSigner.from_seed("sapsam/env-file", b"\x02" * 32)
    explicit = NoteSigner.from_seed("sapsam/explicit", b"\x03" * 32)
    env_file = tmp_path / "env.key"
    env_file.write_text(from_env_file.skey())
    env_file.chmod(0o600)
    explicit_file = tmp_path / "explicit.key"
    explicit_file.write_text(explicit.skey())
    explicit_file.chmod(0o600)
    environ = {ENV_KEY: from_env.skey(), ENV_KEY_FILE: str(env_file)}

    def loaded(environ: dict[str, str], key_file: Path | None = None) -> str:
        return load_server_keys(tmp_path, key_file=key_file, environ=environ).origin

    assert loaded(environ, explicit_file) == "sapsam/explicit"
    assert loaded(environ) == "sapsam/env"
    assert loaded({ENV_KEY_FILE: str(env_file)}) == "sapsam/env-file"
    assert loaded({}) == on_disk.name
    assert load_server_keys(None, environ={ENV_KEY: from_env.skey()}).source == ENV_KEY
    with pytest.raises(ServerKeyError):
        load_server_keys(None, environ={})
    with pytest.raises(ServerKeyError, match=ENV_KEY):
        load_server_keys(None, environ={ENV_KEY: "PRIVATE+KEY+broken"})


def test_rotation_keeps_what_the_old_keys_signed_verifiable(tmp_path: Path) -> None:
    first = create_key(tmp_path, NAME)
    before = sign_checkpoint(sapsam_checkpoint(NAME, 0, EMPTY_ROOT, 1), first.signer)
    second = rotate_key(tmp_path, now=0)
    third = rotate_key(tmp_path, now=60)
    assert len({first.signer.verifier, second.signer.verifier, third.signer.verifier}) == 3
    assert third.retired == (first.signer.verifier, second.signer.verifier)
    assert third.origin == NAME
    assert _mode(Path(third.source)) == 0o600
    loaded = load_server_keys(tmp_path, environ={})
    assert loaded.signer.verifier == third.signer.verifier
    assert loaded.verifier_keys() == (third.signer.verifier, *third.retired)
    opened = open_checkpoint(before, loaded.verifier_keys(), NAME)
    assert opened.checkpoint.size == 0
    retired_text = KeyPaths.of(tmp_path).retired.read_text()
    assert retired_text.startswith("# retired 1970-01-01T00:00:00Z\n")
    # A rotation may rename the server (a new origin; the old log's checkpoints keep theirs).
    renamed = rotate_key(tmp_path, name="sapsam/new.example")
    assert renamed.origin == "sapsam/new.example"
    assert list(KeyPaths.of(tmp_path).folder.glob("*.tmp")) == []


def test_rotation_needs_a_key_file(tmp_path: Path) -> None:
    with pytest.raises(ServerKeyError, match="cannot read"):
        rotate_key(tmp_path)


def test_a_broken_retired_list_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "retired.vkeys"
    path.write_text("# comment\n\nsapsam/x+00000000+AAAA\n")
    with pytest.raises(ServerKeyError, match="line 3"):
        read_retired(path)
    assert read_retired(tmp_path / "missing") == ()


def test_the_key_name_is_sapsam_slash_the_server_name() -> None:
    assert key_name("game.example", {}) == NAME
    assert key_name(NAME, {}) == NAME
    assert key_name(None, {ENV_SERVER_NAME: "env.example"}) == "sapsam/env.example"
    assert key_name(None, {}) == "sapsam/" + socket.gethostname()
    for bad in ["has space", "a+b"]:
        with pytest.raises(ServerKeyError):
            key_name(bad, {})


def test_the_key_module_imports_only_the_pure_log_and_the_standard_library() -> None:
    # So the store, the app, the API and the CLI may all import it (tests/unit/test_layering.py
    # checks the layers; this module sits beside them).
    import ast
    import sys

    import sapsam.keys

    tree = ast.parse(Path(sapsam.keys.__file__).read_text())
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    outside = {
        name
        for name in imported
        if name is not None
        and name != "__future__"
        and name.split(".")[0] not in sys.stdlib_module_names
        and not name.startswith("sapsam.log.")
    }
    assert outside == set()
