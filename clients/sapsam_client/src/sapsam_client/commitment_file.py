"""Commitments kept on disk until revealed, so a client that restarts can still reveal.

Without its rows and nonce a seat that confirmed can never reveal: the deal waits for it (or,
under a time limit, scores it as a foul). A :class:`CommitmentFile` keeps each seat's open
commitments in one JSON file, readable by its owner only (a nonce must stay secret until the
reveal), and forgets them once revealed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sapsam_client.commitment import Rows
from sapsam_client.private_file import locked, read_json, write_private
from sapsam_client.seat import Commitment


def commitment_json(committed: Commitment) -> dict[str, Any]:
    """A commitment as the JSON the files keep: rows, nonce and hash (hex)."""
    entry = {
        "front": list(committed.rows.front),
        "middle": list(committed.rows.middle),
        "back": list(committed.rows.back),
        "nonce": committed.nonce.hex(),
        "commitment": committed.commitment.hex(),
    }
    if committed.natural:  # a table with naturals: the declaration opened with the reveal
        entry["natural"] = committed.natural
        entry["natural_nonce"] = committed.natural_nonce.hex()
    return entry


def commitment_from_json(deal: int, entry: dict[str, Any]) -> Commitment:
    """The commitment for deal number ``deal`` that :func:`commitment_json` wrote."""
    rows = Rows.of(entry["front"], entry["middle"], entry["back"])
    return Commitment(
        deal,
        rows,
        bytes.fromhex(entry["nonce"]),
        bytes.fromhex(entry["commitment"]),
        str(entry.get("natural", "")),
        bytes.fromhex(str(entry.get("natural_nonce", ""))),
    )


class CommitmentFile:
    """Open commitments per seat name, in ``path`` (which other processes of the user may share:
    each change holds ``sapsam_client.private_file.locked``)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self, seat: str) -> dict[int, Commitment]:
        """The seat's open commitments by deal number."""
        entries = read_json(self.path).get(seat, {}).items()
        return {int(deal): commitment_from_json(int(deal), entry) for deal, entry in entries}

    def save(self, seat: str, committed: Commitment) -> None:
        """Keep a commitment (replacing an earlier one for the same deal)."""
        with locked(self.path):
            data = read_json(self.path)
            data.setdefault(seat, {})[str(committed.deal_number)] = commitment_json(committed)
            write_private(self.path, data)

    def forget(self, seat: str, deal: int) -> None:
        """Drop a revealed commitment."""
        with locked(self.path):
            data = read_json(self.path)
            entries = data.get(seat, {})
            if entries.pop(str(deal), None) is not None:
                if not entries:
                    data.pop(seat, None)
                write_private(self.path, data)
