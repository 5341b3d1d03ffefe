"""``sapsam audit monitor``: watch a server's transparency log as a monitor, and cosign it as a
witness (docs/transparency.md §10).

Each poll asks the server for its latest signed checkpoint and checks it (``sapsam.log.monitor``
decides; this module does the I/O): the signature by a pinned key of the log; no other checkpoint
ever seen for that size; no fewer leaves than the checkpoint held; the server's consistency proof
from the held tree; and the new leaves (``GetLeaves``) appended to the held tree's frontier make
the new root. Then the checkpoint is held, written to the state folder, and with
``--witness-key`` cosigned and sent to the server (``AddCheckpointCosignature``).

The state folder (``--state``, made 0700): ``state.json`` (origin, pinned keys, held size, root and
frontier), ``checkpoints/<size>.note`` (every checkpoint verified, never overwritten),
``cosigned/<size>.note`` (the witness's cosigned notes), ``evidence/`` (the signed notes behind
an alarm). Every file is written atomically (a temporary file, fsync, rename, fsync of the
folder), so a monitor killed at any moment continues where it stopped; a lock file keeps a second
monitor off the same folder.

Exit status: 0 all checks held (``--once``; without it the monitor runs until interrupted),
1 a malformed answer, 2 the command cannot run (bad arguments, state, key file; the server out of
reach with ``--once``), 3 a missing or bad signature, 4 a truncated log, 5 a rewritten log, 6 a
fork. This module loads gRPC, never the database driver.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from sapsam.log.checkpoint import Checkpoint
from sapsam.log.cosignature import cosign, with_cosignatures
from sapsam.log.monitor import (
    Finding,
    Held,
    MonitorError,
    MonitorState,
    check_growth,
    check_leaves,
    check_recorded,
    empty_held,
    extend_frontier,
    open_served,
)
from sapsam.log.signed_note import COSIGNATURE_V1, ED25519, NoteError, NoteSigner, VerifierKey

CANNOT_RUN: Final = 2
STATE_FILE: Final = "state.json"
LOCK_FILE: Final = ".lock"
MAX_KEY_FILE_BYTES: Final = 4096
TOFU_WARNING: Final = (
    "WARNING: trust on first use: pinned {keys} as the log's {keys_word}, learnt from the server"
    " this monitor is meant to check. Compare it with the key the operator publishes (sapsam keys"
    " show on the server) and pin it with --server-key; until then a server that lied from the"
    " start is not caught."
)


def _tofu_warning(keys: Sequence[VerifierKey]) -> str:
    words = "key" if len(keys) == 1 else "keys"
    return TOFU_WARNING.format(keys=", ".join(key.vkey() for key in keys), keys_word=words)


class CannotRunError(Exception):
    """The monitor cannot run; the message is shown as one line (exit status 2)."""


def main(arguments: argparse.Namespace) -> int:
    """Run the monitor; its exit status (the module docstring lists them)."""
    try:
        return _monitor(arguments)
    except CannotRunError as error:
        print(f"sapsam audit monitor: {error}", file=sys.stderr)
        return CANNOT_RUN
    except KeyboardInterrupt:
        return 0


# -- the state folder --


def write_atomically(path: Path, text: str, mode: int = 0o600) -> None:
    """``text`` to ``path`` all or nothing, durably: temporary file, fsync, rename, fsync."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


@dataclass(frozen=True)
class StateFolder:
    """Where the monitor keeps what it saw (see the module docstring)."""

    root: Path

    def prepare(self) -> None:
        for folder in (self.root, self.checkpoints, self.cosigned, self.evidence):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def cosigned(self) -> Path:
        return self.root / "cosigned"

    @property
    def evidence(self) -> Path:
        return self.root / "evidence"

    def note_of(self, size: int) -> str | None:
        path = self.checkpoints / f"{size}.note"
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def keep_note(self, size: int, note: str) -> None:
        """Record a verified checkpoint; one already recorded for the size is never replaced."""
        if self.note_of(size) is None:
            write_atomically(self.checkpoints / f"{size}.note", note)

    def load(self) -> MonitorState | None:
        try:
            text = (self.root / STATE_FILE).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as error:
            raise CannotRunError(f"cannot read {self.root / STATE_FILE}: {error}") from None
        try:
            return MonitorState.from_json(text)
        except ValueError as error:
            raise CannotRunError(f"{self.root / STATE_FILE}: {error}") from None

    def save(self, state: MonitorState) -> None:
        write_atomically(self.root / STATE_FILE, state.to_json() + "\n")

    def keep_evidence(self, alarm: MonitorError) -> Path:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        folder = self.evidence / f"{stamp}-{alarm.finding.name.lower()}"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomically(folder / "finding.txt", f"{alarm}\n")
        for number, note in enumerate(alarm.evidence, start=1):
            if note:
                write_atomically(folder / f"{number}.note", note)
        return folder


@contextlib.contextmanager
def locked(folder: StateFolder) -> Iterator[None]:
    """Hold the state folder's lock (a second monitor on it cannot run)."""
    import fcntl

    descriptor = os.open(folder.root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CannotRunError(f"another monitor is using {folder.root}") from None
        yield
    finally:
        os.close(descriptor)


# -- keys --


def witness_key(path: Path, name: str | None) -> NoteSigner:
    """The witness's key in ``path`` (an ``skey`` of type 0x04), made there if missing."""
    if not path.exists():
        signer = NoteSigner.generate(name or f"witness/{socket.gethostname()}", COSIGNATURE_V1)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomically(path, signer.skey() + "\n")
        print(
            f"created the witness key {path}; ask the operator to list its public key in"
            f" <data dir>/keys/witnesses.vkeys:\n{signer.verifier.vkey()}",
            file=sys.stderr,
        )
        return signer
    try:
        status = path.stat()
        if os.name == "posix" and status.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise CannotRunError(f"{path} may be read by others; chmod 600 {path}")
        if status.st_size > MAX_KEY_FILE_BYTES:
            raise CannotRunError(f"{path} is too long to be a key")
        signer = NoteSigner.from_skey(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise CannotRunError(f"cannot read the witness key {path}: {error.strerror}") from None
    except NoteError as error:
        raise CannotRunError(f"{path}: not a witness key ({error})") from None
    if signer.signature_type != COSIGNATURE_V1:
        raise CannotRunError(f"{path}: a witness key is a cosignature/v1 key (type 0x04)")
    if name is not None and signer.name != name:
        raise CannotRunError(f"{path} holds the key of {signer.name!r}, not of {name!r}")
    return signer


def pinned_keys(texts: Sequence[str]) -> tuple[VerifierKey, ...]:
    """``--server-key`` values: each a ``vkey`` or a file holding ``vkey`` lines."""
    keys: list[VerifierKey] = []
    for text in texts:
        lines = [text]
        if not text.count("+") >= 2 or Path(text).is_file():
            try:
                lines = Path(text).read_text(encoding="utf-8").splitlines()
            except OSError as error:
                raise CannotRunError(f"--server-key {text!r}: {error}") from None
        for line in lines:
            line = line.strip().removeprefix("current ").removeprefix("retired ").strip()
            if not line or line.startswith("#"):
                continue
            try:
                key = VerifierKey.parse(line)
            except NoteError as error:
                raise CannotRunError(f"--server-key: {error}") from None
            if key.signature_type != ED25519:
                raise CannotRunError(f"--server-key {key.label}: not a log key (type 0x01)")
            keys.append(key)
    if len({key.name for key in keys}) > 1:
        raise CannotRunError("the pinned keys name more than one log")
    return tuple(dict.fromkeys(keys))


# -- one poll --


@dataclass
class Monitor:
    """A monitor's connection, pinned keys, state and witness key."""

    stub: Any
    folder: StateFolder
    state: MonitorState
    witness: NoteSigner | None
    messages: Any

    def poll(self) -> str:
        """One poll; a line saying what held. Raises ``MonitorError`` on a finding."""
        import grpc

        try:
            answer = self.stub.GetCheckpoint(self.messages.GetCheckpointRequest(), timeout=30)
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND:
                raise
            if self.state.size == 0:
                return "no checkpoint issued yet"
            raise MonitorError(
                Finding.TRUNCATED,
                f"the server serves no checkpoint at all, after one of {self.state.size} leaves",
                [self.folder.note_of(self.state.size) or ""],
            ) from None
        state = self.state
        new = open_served(answer.signed_note, state.keys, state.origin, answer.tree_size,
                          answer.root_hash)  # fmt: skip
        note = answer.signed_note
        recorded = self.folder.note_of(new.size)
        if recorded is not None:
            check_recorded(_checkpoint_of(recorded), recorded, new, note)
        held = _held(self.folder, state) or empty_held(state.origin)
        if held.checkpoint.size:
            proof: list[bytes] = []
            if new.size > held.checkpoint.size:
                request = self.messages.GetConsistencyProofRequest(
                    old_size=held.checkpoint.size, new_size=new.size
                )
                proof = list(self._ask(self.stub.GetConsistencyProof, request).hashes)
            check_growth(held, new, note, proof)  # TRUNCATED first when smaller
            if new.size > held.checkpoint.size:
                self._same_as_held(held)
        added = new.size - held.checkpoint.size
        if added:
            held = check_leaves(held, self._leaves(held, new.size), new, note)
        self.folder.keep_note(new.size, note)
        self.state = state.holding(held)
        self.folder.save(self.state)
        line = (
            f"checkpoint of {new.size} leaves verified: {added} new leaves in the tree"
            if added
            else f"checkpoint of {new.size} leaves: unchanged"
        )
        if self.witness is not None:
            line += self._cosign(held)
        return line

    def _same_as_held(self, held: Held) -> None:
        """The server still serves the held checkpoint's size with the held root (``FORK``
        otherwise; ``REWRITTEN`` when it no longer serves a checkpoint it signed)."""
        import grpc

        size = held.checkpoint.size
        try:
            answer = self.stub.GetCheckpoint(
                self.messages.GetCheckpointRequest(tree_size=size), timeout=30
            )
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND:
                raise
            raise MonitorError(
                Finding.REWRITTEN,
                f"the server no longer serves the checkpoint of {size} leaves it signed",
                [held.note],
            ) from None
        again = open_served(answer.signed_note, self.state.keys, self.state.origin,
                            answer.tree_size, answer.root_hash)  # fmt: skip
        check_recorded(held.checkpoint, held.note, again, answer.signed_note)

    def _ask(self, method: Any, request: Any) -> Any:
        import grpc

        try:
            return method(request, timeout=60)
        except grpc.RpcError as error:
            if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise
            raise MonitorError(
                Finding.MALFORMED,
                f"the server refused a question about a size it signed:"
                f" {error.code().name} {error.details()}",
            ) from None

    def _leaves(self, held: Held, end: int) -> Any:
        frontier = held.frontier
        while frontier.size < end:
            request = self.messages.GetLeavesRequest(start_index=frontier.size, end_index=end)
            page = self._ask(self.stub.GetLeaves, request)
            if not page.leaves:
                raise MonitorError(Finding.MALFORMED, f"no leaves listed from {frontier.size}")
            frontier = extend_frontier(
                frontier, page.start_index, [leaf.hash for leaf in page.leaves]
            )
        return frontier

    def _cosign(self, held: Held) -> str:
        import grpc

        assert self.witness is not None
        size = held.checkpoint.size
        path = self.folder.cosigned / f"{size}.note"
        if size == 0 or path.exists():
            return ""
        line = cosign(held.note, self.witness, int(time.time())).line()[:-1]
        write_atomically(path, with_cosignatures(held.note, [line]))
        request = self.messages.AddCheckpointCosignatureRequest(
            tree_size=size, witness_key=self.witness.verifier.vkey(), cosignature=line
        )
        try:
            answer = self.stub.AddCheckpointCosignature(request, timeout=30)
        except grpc.RpcError as error:
            return f"; cosigned (kept in {path}), the server did not keep it: {error.details()}"
        return "; cosigned, kept by the server" if answer.added else "; cosigned already"


def _held(folder: StateFolder, state: MonitorState) -> Held | None:
    """The held checkpoint from the state and its note (None: the empty tree)."""
    if not state.size:
        return None
    try:
        return state.held(folder.note_of(state.size) or "")
    except ValueError as error:
        raise CannotRunError(
            f"the state folder {folder.root} is damaged (the held checkpoint of {state.size}"
            f" leaves: {error})"
        ) from None


def _checkpoint_of(note: str) -> Checkpoint:
    return Checkpoint.parse(note[: note.rfind("\n\n") + 1])


def _monitor(arguments: argparse.Namespace) -> int:
    import grpc

    from sapsam_proto.v1 import transparency_service_pb2 as messages
    from sapsam_proto.v1 import transparency_service_pb2_grpc

    if arguments.interval <= 0:
        raise CannotRunError("--interval is a number of seconds above 0")
    folder = StateFolder(Path(arguments.state))
    try:
        folder.prepare()
    except OSError as error:
        raise CannotRunError(f"cannot use the state folder {folder.root}: {error}") from None
    witness = witness_key(Path(arguments.witness_key), arguments.witness_name) if (
        arguments.witness_key
    ) else None  # fmt: skip
    given = pinned_keys(arguments.server_key)
    with locked(folder), _channel(arguments) as channel:
        stub = transparency_service_pb2_grpc.TransparencyServiceStub(channel)
        state = _initial_state(folder, given, stub, messages)
        monitor = Monitor(stub, folder, state, witness, messages)
        while True:
            try:
                print(monitor.poll(), flush=True)
                _warn_if_rotated(monitor)
            except MonitorError as alarm:
                where = folder.keep_evidence(alarm)
                print(f"ALARM {alarm} (evidence in {where})", file=sys.stderr, flush=True)
                return int(alarm.finding)
            except grpc.RpcError as error:
                message = f"the server {arguments.server} did not answer: {error.code().name}"
                if arguments.once:
                    raise CannotRunError(message) from None
                print(f"sapsam audit monitor: {message}; trying again", file=sys.stderr)
            if arguments.once:
                return 0
            time.sleep(arguments.interval)


def _initial_state(
    folder: StateFolder, given: tuple[VerifierKey, ...], stub: Any, messages: Any
) -> MonitorState:
    import grpc

    state = folder.load()
    if state is not None:
        if given and given[0].name != state.origin:
            raise CannotRunError(f"the state folder watches {state.origin}, not {given[0].name}")
        added = tuple(key for key in given if key not in state.keys)
        if added:
            state = replace(state, keys=(*state.keys, *added))
            folder.save(state)
        if state.trust_on_first_use and not given:
            print(_tofu_warning(state.keys), file=sys.stderr)
        return state
    tofu = not given
    keys = given
    if tofu:
        try:
            answer = stub.GetServerKey(messages.GetServerKeyRequest(), timeout=30)
        except grpc.RpcError as error:
            raise CannotRunError(f"GetServerKey: {error.code().name}") from None
        try:
            keys = pinned_keys([answer.verifier_key, *answer.retired_verifier_keys])
        except CannotRunError as error:
            raise CannotRunError(f"the server's key: {error}") from None
        print(_tofu_warning(keys), file=sys.stderr)
    from sapsam.log.merkle import EMPTY_ROOT

    state = MonitorState(keys[0].name, keys, 0, EMPTY_ROOT, (), trust_on_first_use=tofu)
    folder.save(state)
    return state


def _warn_if_rotated(monitor: Monitor) -> None:
    """Say so when the server signs with a key not pinned (its next checkpoint will fail)."""
    import grpc

    try:
        answer = monitor.stub.GetServerKey(monitor.messages.GetServerKeyRequest(), timeout=30)
        current = VerifierKey.parse(answer.verifier_key)
    except (grpc.RpcError, NoteError):
        return
    if current not in monitor.state.keys:
        print(
            f"WARNING: the server now names {current.label} as its key, which is not pinned:"
            " its checkpoints will be refused (exit 3) until you check the key out of band and"
            " pin it with --server-key",
            file=sys.stderr,
        )


@contextlib.contextmanager
def _channel(arguments: argparse.Namespace) -> Iterator[Any]:
    import grpc

    if arguments.tls_ca is not None:
        try:
            roots = Path(arguments.tls_ca).read_bytes()
        except OSError as error:
            raise CannotRunError(f"--tls-ca: {error}") from None
        channel = grpc.secure_channel(arguments.server, grpc.ssl_channel_credentials(roots))
    else:
        channel = grpc.insecure_channel(arguments.server)
    with channel:
        yield channel
