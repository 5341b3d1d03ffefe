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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
        temporary.replace(self.path)

    def load(self, seat: str) -> dict[int, Commitment]:
        """The seat's open commitments by deal number."""
        found = {}
        for deal, entry in self._read().get(seat, {}).items():
            rows = Rows.of(entry["front"], entry["middle"], entry["back"])
            found[int(deal)] = Commitment(
                int(deal), rows, bytes.fromhex(entry["nonce"]), bytes.fromhex(entry["commitment"])
            )
        return found

    def save(self, seat: str, committed: Commitment) -> None:
        """Keep a commitment (replacing an earlier one for the same deal)."""
        data = self._read()
        data.setdefault(seat, {})[str(committed.deal_number)] = {
            "front": list(committed.rows.front),
            "middle": list(committed.rows.middle),
            "back": list(committed.rows.back),
            "nonce": committed.nonce.hex(),
            "commitment": committed.commitment.hex(),
        }
        self._write(data)

    def forget(self, seat: str, deal: int) -> None:
        """Drop a revealed commitment."""
        data = self._read()
        entries = data.get(seat, {})
        if entries.pop(str(deal), None) is not None:
            if not entries:
                data.pop(seat, None)
            self._write(data)
