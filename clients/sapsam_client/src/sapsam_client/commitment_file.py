"""Commitments kept on disk until revealed, so a client that restarts can still reveal.

Without its rows and nonce a seat that confirmed can never reveal: the deal waits for it (or,
under a time limit, scores it as a foul). A :class:`CommitmentFile` keeps each seat's open
commitments in one JSON file, readable by its owner only (a nonce must stay secret until the
reveal), and forgets them once revealed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sapsam_client.commitment import Rows
from sapsam_client.seat import Commitment


def commitment_json(committed: Commitment) -> dict[str, Any]:
    """A commitment as the JSON the files keep: rows, nonce and hash (hex)."""
    return {
        "front": list(committed.rows.front),
        "middle": list(committed.rows.middle),
        "back": list(committed.rows.back),
        "nonce": committed.nonce.hex(),
        "commitment": committed.commitment.hex(),
    }


def commitment_from_json(deal: int, entry: dict[str, Any]) -> Commitment:
    """The commitment for deal number ``deal`` that :func:`commitment_json` wrote."""
    rows = Rows.of(entry["front"], entry["middle"], entry["back"])
    return Commitment(deal, rows, bytes.fromhex(entry["nonce"]), bytes.fromhex(entry["commitment"]))


def write_private(path: Path, data: object) -> None:
    """Write ``data`` as JSON to ``path``, readable by its owner only, replacing it whole (a
    reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
    temporary.replace(path)


class CommitmentFile:
    """Open commitments per seat name, in ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, dict[str, Any]]) -> None:
        write_private(self.path, data)

    def load(self, seat: str) -> dict[int, Commitment]:
        """The seat's open commitments by deal number."""
        entries = self._read().get(seat, {}).items()
        return {int(deal): commitment_from_json(int(deal), entry) for deal, entry in entries}

    def save(self, seat: str, committed: Commitment) -> None:
        """Keep a commitment (replacing an earlier one for the same deal)."""
        data = self._read()
        data.setdefault(seat, {})[str(committed.deal_number)] = commitment_json(committed)
        self._write(data)

    def forget(self, seat: str, deal: int) -> None:
        """Drop a revealed commitment."""
        data = self._read()
        entries = data.get(seat, {})
        if entries.pop(str(deal), None) is not None:
            if not entries:
                data.pop(seat, None)
            self._write(data)
