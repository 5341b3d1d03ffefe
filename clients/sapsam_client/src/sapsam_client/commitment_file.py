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
from sapsam_client.discards import KeptDiscard, discards_from_json, with_discard
from sapsam_client.private_file import locked, read_json, write_private
from sapsam_client.seat_types import Commitment


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


def declaration_json(declaration: str, nonce: bytes) -> dict[str, Any]:
    """A declaration kept before its commitment (the deal's entry until the rows are committed,
    whose entry then holds it too)."""
    return {"natural": declaration, "natural_nonce": nonce.hex()}


def is_commitment(entry: object) -> bool:
    """Whether a kept entry holds rows, or only a declaration made before committing; raises
    ``TypeError`` or ``KeyError`` for an entry that is neither (a damaged file)."""
    if not isinstance(entry, dict):
        raise TypeError(f"a kept entry is an object, not {type(entry).__name__}")
    if "nonce" in entry:
        return True
    if "natural" in entry:
        return False
    raise KeyError("nonce")


def commitments_from_json(entries: dict[str, Any]) -> dict[int, Commitment]:
    """The commitments the entries of one seat hold, by deal number (declarations left out)."""
    kept = {int(deal): entry for deal, entry in entries.items()}
    return {
        deal: commitment_from_json(deal, entry)
        for deal, entry in kept.items()
        if is_commitment(entry)
    }


def declarations_from_json(entries: dict[str, Any]) -> dict[int, tuple[str, bytes]]:
    """The declarations the entries of one seat hold, by deal number."""
    return {
        int(deal): (str(entry["natural"]), bytes.fromhex(str(entry["natural_nonce"])))
        for deal, entry in entries.items()
        if entry.get("natural")
    }


class CommitmentFile:
    """Open commitments per seat name, in ``path`` (which other processes of the user may share:
    each change holds ``sapsam_client.private_file.locked``)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self, seat: str) -> dict[int, Commitment]:
        """The seat's open commitments by deal number."""
        return commitments_from_json(read_json(self.path).get(seat, {}))

    def load_declarations(self, seat: str) -> dict[int, tuple[str, bytes]]:
        """The seat's kept natural declarations by deal number."""
        return declarations_from_json(read_json(self.path).get(seat, {}))

    def save_declaration(self, seat: str, deal: int, declaration: str, nonce: bytes) -> None:
        """Keep a natural declaration before it is sent (the deal's rows come later)."""
        with locked(self.path):
            data = read_json(self.path)
            data.setdefault(seat, {})[str(deal)] = declaration_json(declaration, nonce)
            write_private(self.path, data)

    def save(self, seat: str, committed: Commitment) -> None:
        """Keep a commitment (replacing an earlier one for the same deal)."""
        with locked(self.path):
            data = read_json(self.path)
            data.setdefault(seat, {})[str(committed.deal_number)] = commitment_json(committed)
            write_private(self.path, data)

    def forget(self, seat: str, deal: int) -> None:
        """Drop a revealed commitment (or a voided deal's declaration)."""
        with locked(self.path):
            data = read_json(self.path)
            entries = data.get(seat, {})
            if entries.pop(str(deal), None) is not None:
                if not entries:
                    data.pop(seat, None)
                write_private(self.path, data)

    # -- Pineapple's discards (DiscardKeeper), under "discards" beside the seats ----------------

    def load_discards(self, seat: str) -> dict[int, list[KeptDiscard]]:
        """The seat's kept discards by deal number, in street order."""
        return discards_from_json(read_json(self.path).get(DISCARDS, {}).get(seat, {}))

    def save_discard(self, seat: str, kept: KeptDiscard) -> None:
        """Keep a discard (its cards and nonce) before its commitment is sent."""
        with locked(self.path):
            data = read_json(self.path)
            with_discard(data.setdefault(DISCARDS, {}).setdefault(seat, {}), kept)
            write_private(self.path, data)

    def forget_discards(self, seat: str, deal: int) -> None:
        """Drop a deal's discards once opened."""
        with locked(self.path):
            data = read_json(self.path)
            seats = data.get(DISCARDS, {})
            if seats.get(seat, {}).pop(str(deal), None) is not None:
                if not seats[seat]:
                    seats.pop(seat)
                write_private(self.path, data)


DISCARDS = "discards"
"""The file's key for Pineapple's discards (a seat's name always starts with ``tables/``)."""
