"""What a monitor (witness) of the transparency log decides, without any I/O.

``sapsam audit monitor`` (``sapsam.cli.monitor_command``) polls the server and asks this module
about each checkpoint it is served, in this order:

1. ``open_served``: the note verifies against the pinned keys, one of them the log's own, and
   the response's ``tree_size``/``root_hash`` fields are the note's (else ``SIGNATURE`` or
   ``MALFORMED``);
2. ``check_recorded``: no other checkpoint was ever seen for the same size (else ``FORK``);
3. ``check_growth``: not smaller than the checkpoint held (``TRUNCATED``), the same root at the
   same size (``FORK``), and the server's consistency proof from the held tree leads to the new
   root (``REWRITTEN``);
4. ``extend_frontier`` then ``check_leaves``: the leaves the server lists for the new range,
   appended to the held tree's right edge (its frontier), give the new root — so every new
   event's chained hash is in the tree, at its index (else ``REWRITTEN``).

Only then does the new checkpoint become the one held. A ``MonitorError`` carries the finding,
a one-line message and the signed notes that prove it (``evidence``): two signed checkpoints
that fail these checks prove the server's misbehaviour to anyone holding its key.

``MonitorState`` is what the monitor keeps between runs (its JSON form is versioned).

Pure: no I/O.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sapsam.log.checkpoint import Checkpoint, CheckpointError, check_extends, open_checkpoint
from sapsam.log.merkle import EMPTY_ROOT, HASH_SIZE, Frontier, MerkleError, event_leaf_hash
from sapsam.log.merkle_proofs import ProofError
from sapsam.log.signed_note import NoteError, NoteVerificationError, VerifierKey, parse_note

STATE_VERSION: Final = 1


class Finding(enum.IntEnum):
    """What went wrong; the value is ``sapsam audit monitor``'s exit status."""

    MALFORMED = 1
    """An answer that breaks the protocol: fields that disagree with the signed note, leaves
    missing or of the wrong size."""
    SIGNATURE = 3
    """A checkpoint with no signature, a bad one, or none by a pinned key of the log."""
    TRUNCATED = 4
    """A signed checkpoint smaller than one held: leaves were removed."""
    REWRITTEN = 5
    """A signed checkpoint that does not extend the one held (no consistency), or whose
    leaves do not make its root: history was rewritten."""
    FORK = 6
    """Two different signed checkpoints of the same size."""


class MonitorError(Exception):
    """A finding, its message, and the signed notes that show it."""

    def __init__(self, finding: Finding, message: str, evidence: Sequence[str] = ()) -> None:
        super().__init__(f"{finding.name}: {message}")
        self.finding, self.message, self.evidence = finding, message, tuple(evidence)


def open_served(
    note: str, keys: Sequence[VerifierKey], origin: str, tree_size: int, root_hash: bytes
) -> Checkpoint:
    """The checkpoint of a ``GetCheckpoint`` answer once its note verifies against ``keys``
    (one of them the log's own, named ``origin``) and its fields agree with the note."""
    try:
        checkpoint = open_checkpoint(note, keys, origin).checkpoint
    except NoteVerificationError as error:
        raise MonitorError(Finding.SIGNATURE, _signature_hint(str(error), keys), [note]) from None
    except CheckpointError as error:
        finding = Finding.SIGNATURE if "signed" in str(error) else Finding.MALFORMED
        raise MonitorError(finding, str(error), [note]) from None
    except NoteError as error:
        finding = Finding.SIGNATURE if "signature" in str(error) else Finding.MALFORMED
        raise MonitorError(finding, f"not a signed note: {error}", [note]) from None
    if (checkpoint.size, checkpoint.root) != (tree_size, root_hash):
        raise MonitorError(
            Finding.MALFORMED,
            f"the answer's tree_size/root_hash ({tree_size}) are not the signed note's"
            f" ({checkpoint.size})",
            [note],
        )
    return checkpoint


def _signature_hint(error: str, keys: Sequence[VerifierKey]) -> str:
    pinned = ", ".join(key.label for key in keys)
    return (
        f"{error} (pinned: {pinned}); if the operator rotated the key, check the new key out of"
        " band and pin it with --server-key"
    )


def check_recorded(
    recorded: Checkpoint | None, recorded_note: str, new: Checkpoint, new_note: str
) -> None:
    """``FORK`` when a checkpoint of the same size seen before has another root."""
    if recorded is not None and recorded.size == new.size and recorded.root != new.root:
        raise MonitorError(
            Finding.FORK,
            f"two different signed roots for {new.size} leaves",
            [recorded_note, new_note],
        )


@dataclass(frozen=True)
class Held:
    """The checkpoint the monitor holds: verified, its note, and its tree's frontier."""

    checkpoint: Checkpoint
    note: str
    frontier: Frontier

    def __post_init__(self) -> None:
        if self.frontier.size != self.checkpoint.size:
            raise ValueError("a held frontier is of the held checkpoint's size")


def check_growth(held: Held, new: Checkpoint, new_note: str, proof: Sequence[bytes]) -> None:
    """``TRUNCATED``, ``FORK`` or ``REWRITTEN`` unless ``new`` extends the held checkpoint by
    the server's consistency ``proof`` (RFC 9162 §2.1.4)."""
    evidence = [held.note, new_note]
    old = held.checkpoint
    if new.size < old.size:
        raise MonitorError(
            Finding.TRUNCATED,
            f"the log shrank from {old.size} to {new.size} leaves (truncated or rewritten)",
            evidence,
        )
    if new.size == old.size and new.root != old.root:
        raise MonitorError(Finding.FORK, f"two different signed roots for {new.size}", evidence)
    try:
        check_extends(old, new, proof)
    except (CheckpointError, ProofError) as error:
        raise MonitorError(
            Finding.REWRITTEN,
            f"the checkpoint of {new.size} leaves does not extend the one of {old.size}"
            f" held: {error}",
            evidence,
        ) from None


def extend_frontier(frontier: Frontier, start: int, chained_hashes: Iterable[bytes]) -> Frontier:
    """A copy of ``frontier`` with the leaves from index ``start`` appended (each an event's
    32-byte chained hash); ``MALFORMED`` when they do not start where the frontier ends."""
    if start != frontier.size:
        raise MonitorError(
            Finding.MALFORMED, f"leaves listed from {start}, not from {frontier.size}"
        )
    extended = frontier.copy()
    try:
        extended.extend(event_leaf_hash(value) for value in chained_hashes)
    except MerkleError as error:
        raise MonitorError(Finding.MALFORMED, f"a listed leaf: {error}") from None
    return extended


def check_leaves(held: Held, frontier: Frontier, new: Checkpoint, new_note: str) -> Held:
    """The new checkpoint held, once the listed leaves (appended to ``frontier``) make its
    root; ``REWRITTEN`` if they do not (the server lists other events than its tree holds)."""
    if frontier.size != new.size:
        raise MonitorError(
            Finding.MALFORMED,
            f"{frontier.size - held.checkpoint.size} leaves listed, not"
            f" {new.size - held.checkpoint.size}",
        )
    if frontier.root() != new.root:
        raise MonitorError(
            Finding.REWRITTEN,
            f"the leaves {held.checkpoint.size}..{new.size - 1} the server lists do not make the"
            f" root it signed for {new.size} leaves",
            [held.note, new_note],
        )
    return Held(new, new_note, frontier)


def empty_held(origin: str) -> Held:
    """What a monitor holds before its first checkpoint: the empty tree (every tree extends
    it; the first checkpoint's leaves are all read and checked)."""
    return Held(Checkpoint(origin, 0, EMPTY_ROOT), "", Frontier())


@dataclass(frozen=True)
class MonitorState:
    """What the monitor keeps between runs (``state.json``): the log's origin, the pinned keys,
    and the held checkpoint's size, root and frontier. Every checkpoint seen is kept apart, by
    size (``checkpoints/<size>.note``), as is the held one's note."""

    origin: str
    keys: tuple[VerifierKey, ...]
    size: int
    root: bytes
    frontier: tuple[bytes, ...]
    trust_on_first_use: bool = False

    def to_json(self) -> str:
        """The state file's text."""
        return json.dumps(
            {
                "version": STATE_VERSION,
                "origin": self.origin,
                "keys": [key.vkey() for key in self.keys],
                "trust_on_first_use": self.trust_on_first_use,
                "size": self.size,
                "root": self.root.hex(),
                "frontier": [value.hex() for value in self.frontier],
            },
            indent=2,
        )

    @classmethod
    def from_json(cls, text: str) -> MonitorState:
        """A state file read back; ``ValueError`` naming what is wrong."""
        try:
            data: dict[str, Any] = json.loads(text)
            if data.get("version") != STATE_VERSION:
                raise ValueError(f"state version {data.get('version')!r}, not {STATE_VERSION}")
            state = cls(
                origin=str(data["origin"]),
                keys=tuple(VerifierKey.parse(str(key)) for key in data["keys"]),
                size=int(data["size"]),
                root=bytes.fromhex(str(data["root"])),
                frontier=tuple(bytes.fromhex(str(value)) for value in data["frontier"]),
                trust_on_first_use=bool(data.get("trust_on_first_use", False)),
            )
            Frontier(state.size, state.frontier)  # checks the hashes' count and sizes
        except (KeyError, TypeError, ValueError, MerkleError) as error:
            raise ValueError(f"not a monitor state: {error}") from None
        if len(state.root) != HASH_SIZE:
            raise ValueError("not a monitor state: the root is not 32 bytes")
        return state

    def held(self, note: str) -> Held:
        """The held checkpoint with its note (the note's checkpoint must be this state's)."""
        frontier = Frontier(self.size, self.frontier)
        if self.size == 0:
            return empty_held(self.origin)
        checkpoint = Checkpoint.parse(parse_note(note).text)
        if (checkpoint.size, checkpoint.root) != (self.size, self.root):
            raise ValueError(f"the held note is not of the state's checkpoint of {self.size}")
        if frontier.root() != self.root:
            raise ValueError("the state's frontier does not make its root")
        return Held(checkpoint, note, frontier)

    def holding(self, held: Held) -> MonitorState:
        """This state, now holding ``held``."""
        return MonitorState(
            self.origin,
            self.keys,
            held.checkpoint.size,
            held.checkpoint.root,
            held.frontier.hashes,
            self.trust_on_first_use,
        )
