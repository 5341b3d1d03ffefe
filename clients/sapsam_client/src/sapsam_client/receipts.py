"""Receipts kept on disk: the server's signed statement of every call it acknowledged.

Each mutating call's response carries a receipt (``sapsam.v1.Receipt``, docs/transparency.md §9)
signed by the server key: the events the call appended, their positions and chained hashes. A
player who keeps them can prove later that the log no longer holds what the server acknowledged
(``sapsam audit verify EXPORT --receipts DIR --server-key KEY``).

A :class:`ReceiptFolder` appends each receipt, as one JSON line, to ``<folder>/<stream>.jsonl``
(one file per table or tournament): the folder is made with mode 0700, each file with 0600, and
every line is written with one ``write`` and made durable (``fsync``) before the call returns,
so a crash loses no receipt the program saw. Only ``signed_note`` is evidence; the other fields
(stream, versions, request id) are there to find a receipt by eye. A retry's receipt is the same
bytes and is not written twice.

**Checked as it arrives.** A folder with the server's key pinned checks each receipt before it
keeps it (``sapsam_client.receipt_check``: the note opens under a pinned key named as the
receipt's log, its text is a receipt, its stream, versions and request are the response's, and
the request is the call's own: a receipt of another call is refused). The key
is pinned by ``ReceiptFolder(folder, server_keys=[vkey, ...])`` (from the operator, out of band:
docs/transparency.md §6), else read from ``<folder>/.server-keys`` (one ``vkey`` a line), and
added to on first use of each server by :meth:`ReceiptFolder.pin_from` (``GetServerKey``: a
log whose key is pinned keeps it, so a later session trusts the same key and no other; a new
log's keys are added; ``sapsam-play`` and ``sapsam-bot`` do it). A
receipt that fails is **refused**: it is not kept among the receipts (which only a valid
signature makes evidence), but appended with the reason to ``<folder>/.rejected-<stream>.jsonl``
(a dot file: ``sapsam audit verify --receipts`` skips it), logged as a warning on the logger
``sapsam_client.receipts``, and listed in :attr:`ReceiptFolder.rejected`; the call itself
succeeded on the server and is not failed. A folder with no key pinned keeps every receipt
unchecked, as before.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final, Protocol

import grpc

from sapsam_client.receipt_check import ReceiptCheckError, ServerKey, check_receipt
from sapsam_proto.v1 import receipt_pb2, transparency_service_pb2, transparency_service_pb2_grpc

_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,120}")
RECENT_NOTES = 256
"""Notes remembered per file so a repeated receipt is not written twice (the latest ones: a
retry's receipt comes soon after the original's)."""
PINNED_KEYS_FILE: Final = ".server-keys"
"""The server keys a folder pinned, one ``vkey`` a line (``#`` comments)."""
PINNED_KEYS_HEADER: Final = (
    "# server keys pinned on first use (GetServerKey), one log's at a time; receipts are"
    " checked with them\n"
)
MAX_PINNED_KEYS: Final = 64
MAX_REJECTED_REMEMBERED: Final = 1_000
_logger = logging.getLogger("sapsam_client.receipts")


class ReceiptKeeper(Protocol):
    """Where a client puts every receipt it receives."""

    def keep(self, receipt: receipt_pb2.Receipt, sent_request_id: str | None = None) -> None:
        """Keep one receipt durably (raises ``OSError`` if it cannot); ``sent_request_id``: the
        request_id of the call whose response carried it (its receipt must name that call)."""
        ...


class ReceiptFolder:
    """Receipts as JSON lines, one file per stream, in ``folder`` (owner-only)."""

    def __init__(self, folder: Path, server_keys: Iterable[str] = ()) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._written: dict[str, deque[str]] = {}
        self.rejected: deque[tuple[receipt_pb2.Receipt, str]] = deque(
            maxlen=MAX_REJECTED_REMEMBERED
        )
        """The receipts refused in this session, each with why (the latest ones)."""
        given = [ServerKey.parse(vkey) for vkey in server_keys]
        self._given = bool(given)
        self.server_keys: tuple[ServerKey, ...] = tuple(given) or self._read_pinned()
        """The pinned server keys each receipt is checked against; empty: none, unchecked."""

    def _read_pinned(self) -> tuple[ServerKey, ...]:
        path = self.folder / PINNED_KEYS_FILE
        if not path.is_file():
            return ()
        lines = path.read_text(encoding="utf-8").splitlines()[: MAX_PINNED_KEYS * 4]
        texts = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
        try:
            return tuple(ServerKey.parse(text.split()[-1]) for text in texts[:MAX_PINNED_KEYS])
        except ReceiptCheckError as error:
            raise ReceiptCheckError(
                f"{path}: {error} (one pinned server key, a vkey, per line: mend or remove it)"
            ) from None

    def pin_from(self, channel: grpc.Channel, timeout: float = 10.0) -> bool:
        """Pin the server's keys on first use: ask ``GetServerKey`` (the current key and the
        retired ones) and, when no key of that log (its origin, the keys' name) is pinned yet,
        add them to ``.server-keys``, so one folder serves several servers. Never replaces or
        adds beside a pinned key of the same log (a key learned from the server later proves
        nothing), and asks nothing when the keys were given to the constructor. False when no
        key of this server is pinned (it has no key, or could not be asked)."""
        if self._given:
            return True
        stub = transparency_service_pb2_grpc.TransparencyServiceStub(channel)
        try:
            answer = stub.GetServerKey(
                transparency_service_pb2.GetServerKeyRequest(), timeout=timeout
            )
            vkeys = [answer.verifier_key, *answer.retired_verifier_keys][:MAX_PINNED_KEYS]
            keys = tuple(ServerKey.parse(vkey) for vkey in vkeys if vkey)
        except grpc.RpcError as error:
            code = error.code() if isinstance(error, grpc.Call) else None
            if code is not grpc.StatusCode.UNIMPLEMENTED:  # a server without a key: no receipts
                _logger.warning(
                    "receipts unchecked: no server key (%s)", getattr(code, "name", "?")
                )
            return False
        except ReceiptCheckError as error:
            _logger.warning("receipts unchecked: the server's key is unreadable (%s)", error)
            return False
        with self._lock:
            if any(key.name == answer.origin for key in self.server_keys):
                return True  # this log's key is pinned already: trusted, not replaced
            keys = tuple(key for key in keys if key.name == answer.origin)
            if not keys or len(self.server_keys) + len(keys) > MAX_PINNED_KEYS:
                return False
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            path = self.folder / PINNED_KEYS_FILE
            text = "" if path.exists() else PINNED_KEYS_HEADER
            text += f"# {answer.origin}, on first use\n"
            text += "".join(f"{vkey}\n" for vkey in vkeys if vkey.startswith(answer.origin + "+"))
            _write_durably(path, text, append=True)
            self.server_keys += keys
        return True

    def path_for(self, stream: str) -> Path:
        """The file of one stream's receipts."""
        name = stream if _FILE_NAME.fullmatch(stream) else "other"
        return self.folder / f"{name}.jsonl"

    def keep(self, receipt: receipt_pb2.Receipt, sent_request_id: str | None = None) -> None:
        """Append ``receipt`` to its stream's file and fsync it (once per note, among
        the file's latest :data:`RECENT_NOTES`). With ``sent_request_id`` (the request_id of
        the call whose response carried it), a receipt of another call is refused (kept aside
        with the reason, as a bad signature is)."""
        line = json.dumps(
            {
                "stream": receipt.stream,
                "first_version": receipt.first_version,
                "last_version": receipt.last_version,
                "request_id": receipt.request_id,
                "signed_note": receipt.signed_note,
            },
            ensure_ascii=False,
        )
        path = self.path_for(receipt.stream)
        problem = self._problem(receipt)
        if (
            not problem
            and sent_request_id is not None
            and not receipt.request_id.endswith(f"/{sent_request_id}")
        ):
            problem = (
                f"the receipt names request {receipt.request_id[:120]!r}, not this call's"
                f" {sent_request_id[:80]!r}"
            )
        with self._lock:
            written = self._written.setdefault(str(path), deque(maxlen=RECENT_NOTES))
            if receipt.signed_note in written:
                return
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if problem:
                self.rejected.append((receipt, problem))
                rejected = {**json.loads(line), "problem": problem}
                path = self.folder / f".rejected-{path.name}"
                line = json.dumps(rejected, ensure_ascii=False)
                _logger.warning(
                    "receipt of %s versions %d-%d refused: %s (kept in %s)",
                    receipt.stream[:80],
                    receipt.first_version,
                    receipt.last_version,
                    problem,
                    path,
                )
            _write_durably(path, line + "\n", append=True)
            if not problem:  # a refused note must not stand in for a later good one
                written.append(receipt.signed_note)

    def _problem(self, receipt: receipt_pb2.Receipt) -> str:
        """Why ``receipt`` is refused, or "" (also when no key is pinned: nothing to check)."""
        if not self.server_keys:
            return ""
        try:
            check_receipt(
                receipt.signed_note,
                self.server_keys,
                receipt.stream,
                receipt.first_version,
                receipt.last_version,
                receipt.request_id,
            )
        except ReceiptCheckError as error:
            return str(error)
        return ""

    def read(self) -> Iterator[dict[str, Any]]:
        """Every kept receipt's JSON object, file by file, in the order kept."""
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("*.jsonl")):
            if path.name.startswith("."):
                continue  # refused receipts are not receipts
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    value = json.loads(line)
                    if isinstance(value, dict):
                        yield value


def default_folder(beside: Path) -> Path:
    """The receipts folder beside a file the client keeps (the token or commitments file)."""
    return beside.with_name("receipts")


def _write_durably(path: Path, text: str, append: bool) -> None:
    """Write ``text`` (owner-only file, one ``write``), fsync it, and fsync the folder when the
    file is new, so a crash loses nothing the program saw."""
    created = not path.exists()
    mode = os.O_APPEND if append else os.O_TRUNC
    flags = os.O_WRONLY | os.O_CREAT | mode | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(path, flags, 0o600)
    try:
        os.write(descriptor, text.encode("utf-8"))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    if created and os.name == "posix":
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
