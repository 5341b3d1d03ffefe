"""The server's signing key: where it is kept, how it is made, rotated and read.

The key signs the log's checkpoints (``sapsam.log.checkpoint``) and, later, receipts. It is an
Ed25519 key under the name ``sapsam/<server name>`` (the checkpoints' origin), kept as one line
in Go's ``note`` signing-key form, ``PRIVATE+KEY+<name>+<key id>+<base64(0x01 || seed)>``.

Where it comes from, first match wins:

1. an explicit file (``--key-file``);
2. ``SAPSAM_SERVER_KEY``: the key text itself (a secret an orchestrator injects);
3. ``SAPSAM_SERVER_KEY_FILE``: a file holding it (a mounted secret);
4. ``<data dir>/keys/server.key``, created on first start (``create=True``) with mode 0600 in
   a folder of mode 0700.

A key file readable by anyone but its owner is refused, as ssh refuses one. Rotation
(``rotate_key``, file keys only) appends the old public key to ``<data dir>/keys/retired.vkeys``
(one ``vkey`` per line, ``#`` comments) before the new key atomically replaces the old file, so
checkpoints signed before the rotation stay verifiable: readers pin the current key and every
retired one (``ServerKeys.verifier_keys``). Old private keys are not kept.

I/O lives here, outside ``sapsam.log`` (pure); the CLI and the server import it.
"""

from __future__ import annotations

import os
import socket
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sapsam.log.signed_note import (
    COSIGNATURE_V1,
    NoteError,
    NoteSigner,
    VerifierKey,
    check_key_name,
)

KEY_FOLDER: Final = "keys"
KEY_FILE: Final = "server.key"
RETIRED_FILE: Final = "retired.vkeys"
WITNESS_FILE: Final = "witnesses.vkeys"
"""The witnesses whose cosignatures the server keeps (``AddCheckpointCosignature``): one
cosignature/v1 ``vkey`` per line, ``#`` comments; none when the file does not exist."""
MAX_WITNESSES: Final = 64
ENV_KEY: Final = "SAPSAM_SERVER_KEY"
ENV_KEY_FILE: Final = "SAPSAM_SERVER_KEY_FILE"
ENV_SERVER_NAME: Final = "SAPSAM_SERVER_NAME"
NAME_PREFIX: Final = "sapsam/"
MAX_KEY_FILE_BYTES: Final = 4096
MAX_RETIRED_BYTES: Final = 1 << 20


class ServerKeyError(Exception):
    """A key that cannot be read, made or rotated; the message says why and what to do."""


class KeyExistsError(ServerKeyError):
    """``create_key`` where a key file exists already."""


def key_name(server_name: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """``sapsam/<server name>``: the name given, else ``SAPSAM_SERVER_NAME``, else the host."""
    environ = os.environ if environ is None else environ
    name = server_name or environ.get(ENV_SERVER_NAME) or socket.gethostname()
    full = name if name.startswith(NAME_PREFIX) else NAME_PREFIX + name
    try:
        check_key_name(full)
    except NoteError as error:
        raise ServerKeyError(f"server name: {error}") from None
    return full


@dataclass(frozen=True)
class KeyPaths:
    """Where a data folder keeps the key and the retired public keys."""

    folder: Path
    key: Path
    retired: Path

    @classmethod
    def of(cls, data_dir: Path) -> KeyPaths:
        folder = data_dir / KEY_FOLDER
        return cls(folder, folder / KEY_FILE, folder / RETIRED_FILE)


@dataclass(frozen=True)
class ServerKeys:
    """The signing key in use, the public keys it replaced, and where the key came from."""

    signer: NoteSigner
    retired: tuple[VerifierKey, ...]
    source: str
    witnesses: tuple[VerifierKey, ...] = ()
    """The witnesses the operator accepts cosignatures from (``read_witnesses``)."""

    @property
    def origin(self) -> str:
        """The log's origin: the key's name."""
        return self.signer.name

    def verifier_keys(self) -> tuple[VerifierKey, ...]:
        """What a reader pins: the current public key, then each retired one."""
        return (self.signer.verifier, *self.retired)


def read_signer(path: Path) -> NoteSigner:
    """The key in ``path``; refused if group or others may read it (POSIX)."""
    try:
        status = path.stat()
        if os.name == "posix" and status.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ServerKeyError(
                f"{path} may be read by others (mode {stat.S_IMODE(status.st_mode):o});"
                f" chmod 600 {path}"
            )
        if status.st_size > MAX_KEY_FILE_BYTES:
            raise ServerKeyError(f"{path} is too long to be a key ({status.st_size} bytes)")
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ServerKeyError(f"cannot read the server key {path}: {error.strerror}") from None
    return _signer_from_text(text, str(path))


def _signer_from_text(text: str, source: str) -> NoteSigner:
    try:
        return NoteSigner.from_skey(text)
    except NoteError as error:
        raise ServerKeyError(f"{source}: not a sapsam/Go note signing key ({error})") from None


def read_retired(path: Path) -> tuple[VerifierKey, ...]:
    """The retired public keys listed in ``path`` (none if it does not exist)."""
    try:
        if path.stat().st_size > MAX_RETIRED_BYTES:
            raise ServerKeyError(f"{path} is longer than {MAX_RETIRED_BYTES} bytes")
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return ()
    except OSError as error:
        raise ServerKeyError(f"cannot read {path}: {error.strerror}") from None
    keys = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if text and not text.startswith("#"):
            try:
                keys.append(VerifierKey.parse(text))
            except NoteError as error:
                raise ServerKeyError(f"{path} line {number}: {error}") from None
    return tuple(keys)


def read_witnesses(data_dir: Path | None) -> tuple[VerifierKey, ...]:
    """The accepted witnesses' keys in ``<data dir>/keys/witnesses.vkeys`` (none without a data
    folder or the file); each must be a cosignature/v1 key (type 0x04), at most 64 of them."""
    if data_dir is None:
        return ()
    path = data_dir / KEY_FOLDER / WITNESS_FILE
    keys = read_retired(path)
    if len(keys) > MAX_WITNESSES:
        raise ServerKeyError(f"{path}: at most {MAX_WITNESSES} witnesses")
    for key in keys:
        if key.signature_type != COSIGNATURE_V1:
            raise ServerKeyError(f"{path}: {key.label} is not a cosignature/v1 key (type 0x04)")
    return keys


def _private_folder(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)


def _fsync_folder(folder: Path) -> None:
    if os.name == "posix":
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _write_secret(path: Path, signer: NoteSigner, replace: bool) -> None:
    """Write the key with mode 0600 to a temporary file, then link it in place (refused if a
    key exists) or, with ``replace``, rename it over the old one: a reader, or a second server
    starting at the same moment, sees no key or a whole one, never half a file."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.unlink(missing_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(temporary, flags, 0o600), "w", encoding="utf-8") as handle:
        handle.write(signer.skey() + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    try:
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)
    except FileExistsError:
        raise KeyExistsError(f"{path} exists already; sapsam keys rotate replaces it") from None
    finally:
        temporary.unlink(missing_ok=True)
    _fsync_folder(path.parent)


def create_key(data_dir: Path, name: str) -> ServerKeys:
    """Make a new key file in ``data_dir`` (refused if there is one)."""
    paths = KeyPaths.of(data_dir)
    _private_folder(paths.folder)
    signer = NoteSigner.generate(name)
    _write_secret(paths.key, signer, replace=False)
    return ServerKeys(signer, read_retired(paths.retired), str(paths.key))


def rotate_key(data_dir: Path, name: str | None = None, now: float | None = None) -> ServerKeys:
    """Replace the key file with a new key (same name unless ``name``), the old public key
    listed as retired first."""
    paths = KeyPaths.of(data_dir)
    old = read_signer(paths.key)
    new = NoteSigner.generate(name or old.name)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if now is None else now))
    retired = read_retired(paths.retired)
    if old.verifier not in retired:
        with paths.retired.open("a", encoding="utf-8") as handle:
            handle.write(f"# retired {stamp}\n{old.verifier.vkey()}\n")
            handle.flush()
            os.fsync(handle.fileno())
    _write_secret(paths.key, new, replace=True)
    return ServerKeys(new, read_retired(paths.retired), str(paths.key))


def load_server_keys(
    data_dir: Path | None,
    key_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    create: bool = False,
    name: str | None = None,
) -> ServerKeys:
    """The server's keys, from the first source the module docstring lists that is set; with
    ``create``, a missing data-folder key is made under ``name`` (default ``key_name()``)."""
    environ = os.environ if environ is None else environ
    paths = KeyPaths.of(data_dir) if data_dir is not None else None
    retired = read_retired(paths.retired) if paths else ()
    if key_file is not None:
        return ServerKeys(read_signer(key_file), retired, str(key_file))
    if environ.get(ENV_KEY):
        return ServerKeys(_signer_from_text(environ[ENV_KEY], ENV_KEY), retired, ENV_KEY)
    if environ.get(ENV_KEY_FILE):
        path = Path(environ[ENV_KEY_FILE])
        return ServerKeys(read_signer(path), retired, str(path))
    if paths is None:
        raise ServerKeyError(f"no server key: give a key file, {ENV_KEY} or a data folder")
    if not paths.key.exists():
        if not create:
            raise ServerKeyError(
                f"no server key in {paths.key}: run sapsam keys create (or sapsam serve)"
            )
        try:
            return create_key(paths.folder.parent, key_name(name, environ))
        except KeyExistsError:
            pass  # another process made it first: use theirs
    return ServerKeys(read_signer(paths.key), retired, str(paths.key))
