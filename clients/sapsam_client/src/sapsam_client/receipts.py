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
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from sapsam_proto.v1 import receipt_pb2

_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,120}")
RECENT_NOTES = 256
"""Notes remembered per file so a repeated receipt is not written twice (the latest ones: a
retry's receipt comes soon after the original's)."""


class ReceiptKeeper(Protocol):
    """Where a client puts every receipt it receives."""

    def keep(self, receipt: receipt_pb2.Receipt) -> None:
        """Keep one receipt durably (raises ``OSError`` if it cannot)."""
        ...


class ReceiptFolder:
    """Receipts as JSON lines, one file per stream, in ``folder`` (owner-only)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._written: dict[str, deque[str]] = {}

    def path_for(self, stream: str) -> Path:
        """The file of one stream's receipts."""
        name = stream if _FILE_NAME.fullmatch(stream) else "other"
        return self.folder / f"{name}.jsonl"

    def keep(self, receipt: receipt_pb2.Receipt) -> None:
        """Append ``receipt`` to its stream's file and fsync it (once per note, among
        the file's latest :data:`RECENT_NOTES`)."""
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
        with self._lock:
            written = self._written.setdefault(str(path), deque(maxlen=RECENT_NOTES))
            if receipt.signed_note in written:
                return
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            created = not path.exists()
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
            descriptor = os.open(path, flags, 0o600)
            try:
                os.write(descriptor, (line + "\n").encode("utf-8"))
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            if created and os.name == "posix":
                folder = os.open(self.folder, os.O_RDONLY)
                try:
                    os.fsync(folder)
                finally:
                    os.close(folder)
            written.append(receipt.signed_note)

    def read(self) -> Iterator[dict[str, Any]]:
        """Every kept receipt's JSON object, file by file, in the order kept."""
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    value = json.loads(line)
                    if isinstance(value, dict):
                        yield value


def default_folder(beside: Path) -> Path:
    """The receipts folder beside a file the client keeps (the token or commitments file)."""
    return beside.with_name("receipts")
