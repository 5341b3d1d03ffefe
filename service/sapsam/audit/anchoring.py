"""Exports that carry their proof: attaching a signed checkpoint and inclusion proofs to an
export, and checking them against the keys a reader pins (docs/audit.md §2.5 and §4.5).

Pure: the store reads the checkpoint, the leaf indexes and the tree's nodes
(``sapsam.audit.export_proofs``) and :func:`attach_anchors` builds the proofs from them. The
verifier's side is :func:`anchoring_checks`: three named checks and, when they hold with a pinned
key, the :class:`~sapsam.audit.report.Anchor` that makes the verdict *anchored*:

* ``checkpoint``: the carried checkpoint is a well-formed signed note and, with ``--server-key``,
  a pinned key of the log named in it signed it (a witness key given with ``--witness-key`` that
  cosigned it is named);
* ``inclusion``: each event's leaf hash, ``SHA-256(0x00 || its chained hash)``, leads by its
  inclusion proof to the checkpoint's root, at leaf indexes that grow with the versions; an event
  without a proof is not anchored (not covered);
* ``consistency`` (with ``--checkpoint``): the reader's own checkpoint, signed by a pinned key, is
  the export's (same size and root) or is linked to it by a consistency proof the export carries.

Signatures are checked with ``cryptography``, imported only when a key is pinned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from hashlib import sha256 as _sha256
from typing import Final

from sapsam.audit.export_format import (
    AuditExport,
    ConsistencyProof,
    EventInclusion,
    ExportedEvent,
    ExportTransparency,
)
from sapsam.audit.export_reading import OPENING_TYPES
from sapsam.audit.inclusion_walk import EVENT_ROOTS, inclusion_root
from sapsam.audit.report import Anchor, AuditCheck, Status, make_check
from sapsam.frozen import from_fields
from sapsam.log.checkpoint import (
    Checkpoint,
    CheckpointError,
    check_extends,
    open_checkpoint,
    open_parsed_checkpoint,
)
from sapsam.log.merkle import LEAF_PREFIX, NodeId, event_leaf_hash
from sapsam.log.merkle_proofs import (
    ProofError,
    inclusion_plan,
    inclusion_proof,
    plan_nodes,
)
from sapsam.log.signed_note import NoteError, OpenedNote, VerifierKey, parse_note
from sapsam.plurals import plural

HASH_SIZE: Final = 32


@dataclass(frozen=True)
class Trust:
    """What a reader pins: the log's public keys (current and retired), the witnesses' keys,
    and optionally a signed checkpoint of its own (note text) to anchor the export under."""

    server_keys: tuple[VerifierKey, ...] = ()
    witness_keys: tuple[VerifierKey, ...] = ()
    checkpoint: str | None = None


# -- attaching (the exporter's side) --------------------------------------------------------------


def nodes_needed(leaf_indexes: Iterable[int], size: int) -> set[NodeId]:
    """The stored perfect subtrees the inclusion proofs of these leaves (below ``size``) need."""
    needed: set[NodeId] = set()
    for leaf in leaf_indexes:
        if 0 <= leaf < size:
            needed.update(plan_nodes(inclusion_plan(leaf, size)))
    return needed


def attach_anchors(
    export: AuditExport,
    checkpoint_note: str,
    size: int,
    leaf_of_position: Mapping[int, int],
    node: Callable[[NodeId], bytes],
    consistency: Sequence[ConsistencyProof] = (),
) -> AuditExport:
    """``export`` with the signed checkpoint of the tree of ``size`` leaves in its header and,
    for each event whose position has a leaf below ``size``, its leaf index and inclusion proof
    (``node`` gives a stored perfect subtree's hash). Events not yet in that tree stay without
    one: they are not anchored."""
    events: list[ExportedEvent] = []
    for event in export.events:
        leaf = leaf_of_position.get(event.position)
        if leaf is None or not 0 <= leaf < size:
            events.append(replace(event, inclusion=None))
            continue
        proof = b"".join(inclusion_proof(leaf, size, node))
        events.append(replace(event, inclusion=EventInclusion(leaf, proof)))
    header = replace(
        export.header,
        transparency=ExportTransparency(checkpoint_note, tuple(consistency)),
    )
    return replace(export, header=header, events=tuple(events))


def unanchored_versions(export: AuditExport) -> tuple[int, ...]:
    """The versions of the events without an inclusion proof."""
    return tuple(event.version for event in export.events if event.inclusion is None)


# -- checking (the verifier's side) --------------------------------------------------------------


def anchoring_checks(export: AuditExport, trust: Trust) -> tuple[list[AuditCheck], Anchor | None]:
    """The ``checkpoint``, ``inclusion`` and (with ``trust.checkpoint``) ``consistency`` checks,
    and the anchor when every event is included under a checkpoint a pinned key signed."""
    transparency = export.header.transparency
    if transparency is None:
        detail = "the export carries no checkpoint"
        checks = [
            make_check("checkpoint", Status.NOT_COVERED, detail),
            make_check("inclusion", Status.NOT_COVERED, f"{detail}, so no event is anchored"),
        ]
        if trust.checkpoint is not None:
            checks.append(
                make_check("consistency", Status.NOT_COVERED, f"{detail} to link yours to")
            )
        return checks, None
    checkpoint_check, checkpoint, opened = _checkpoint_check(transparency, trust)
    checks = [checkpoint_check]
    inclusion = (
        _inclusion_check(export.events, checkpoint)
        if checkpoint is not None
        else make_check("inclusion", Status.SKIPPED, "the checkpoint cannot be read")
    )
    checks.append(inclusion)
    anchor: Anchor | None = None
    if opened is not None and checkpoint is not None and inclusion.status is Status.PASSED:
        anchor = _anchor(checkpoint, opened, "export")
    if trust.checkpoint is not None:
        consistency, linked = _consistency_check(transparency, checkpoint, trust)
        checks.append(consistency)
        if consistency.failed:
            anchor = None
        elif anchor is not None and linked is not None:
            anchor = _linked_anchor(anchor, linked, _last_leaf(export.events))
    return checks, anchor


def _anchor(checkpoint: Checkpoint, opened: OpenedNote, whose: str) -> Anchor:
    signer = next(
        entry.key.label
        for entry in opened.verified
        if entry.key.name == checkpoint.origin and entry.timestamp is None
    )
    # Anchor(...) without the frozen __init__ (no __post_init__; every field given, in order).
    return from_fields(
        Anchor,
        {
            "origin": checkpoint.origin,
            "tree_size": checkpoint.size,
            "root": checkpoint.root,
            "signed_by": signer,
            "witnessed_by": _witnesses(opened),
            "checkpoint": whose,
        },
    )


def _witnesses(opened: OpenedNote) -> tuple[str, ...]:
    return tuple(entry.key.label for entry in opened.verified if entry.timestamp is not None)


def _linked_anchor(
    export_anchor: Anchor, linked: tuple[Checkpoint, OpenedNote], last_leaf: int
) -> Anchor:
    """The anchor once the reader's checkpoint is linked: the larger of the two trees (an
    inclusion in the smaller tree is one in the larger, which extends it), witnessed by the
    export's witnesses and by the reader's when the reader's tree holds every event (up to
    ``last_leaf``): a witness of a smaller tree saw none of the leaves past it, and that the
    larger tree extends it says nothing about them (docs/audit.md §4.5)."""
    checkpoint, opened = linked
    reader = _anchor(checkpoint, opened, "reader")
    readers_witnesses = reader.witnessed_by if last_leaf < checkpoint.size else ()
    witnesses = tuple(dict.fromkeys(readers_witnesses + export_anchor.witnessed_by))
    if checkpoint.size >= export_anchor.tree_size:
        return replace(reader, witnessed_by=witnesses)
    return replace(export_anchor, witnessed_by=witnesses)


def _checkpoint_check(
    transparency: ExportTransparency, trust: Trust
) -> tuple[AuditCheck, Checkpoint | None, OpenedNote | None]:
    """The ``checkpoint`` check, the checkpoint read, and the note opened with a pinned key.

    A pure function of the note and the keys pinned: a note that opened under pinned keys is
    judged once per process (see ``_OPENED``), every other case each time."""
    keys = trust.server_keys + trust.witness_keys
    if trust.server_keys:
        known = _OPENED.get((transparency.checkpoint, keys))
        if known is not None:
            return known
    try:
        note = parse_note(transparency.checkpoint)
        checkpoint = Checkpoint.parse(note.text)
    except NoteError as error:
        return (
            make_check(
                "checkpoint", Status.FAILED, f"the carried checkpoint is malformed: {error}"
            ),
            None,
            None,
        )
    about = f"a checkpoint of {checkpoint.origin}, {_leaves(checkpoint.size)}"
    if not trust.server_keys:
        return (
            make_check(
                "checkpoint",
                Status.NOT_COVERED,
                f"{about}, whose signature is not checked: no server key is pinned (--server-key)",
            ),
            checkpoint,
            None,
        )
    try:
        # open_checkpoint(transparency.checkpoint, keys, checkpoint.origin), read once.
        opened = open_parsed_checkpoint(note, checkpoint, keys).note
    except NoteError as error:  # CheckpointError and NoteVerificationError are NoteErrors
        pinned = ", ".join(key.label for key in trust.server_keys)
        return (
            make_check(
                "checkpoint",
                Status.FAILED,
                f"{about}, is not signed by a pinned key of that log ({pinned}): {error}",
            ),
            checkpoint,
            None,
        )
    witnesses = _witnesses(opened)
    unchecked = len(opened.unverified)
    detail = f"{about}, signed by {_anchor(checkpoint, opened, 'export').signed_by} (pinned)"
    if witnesses:
        detail += f"; witnessed by {', '.join(witnesses)}"
    else:
        detail += "; not witnessed by a pinned witness"
    if unchecked:
        detail += f" ({plural(unchecked, 'signature')} by keys not pinned, not checked)"
    checked = (make_check("checkpoint", Status.PASSED, detail), checkpoint, opened)
    if len(_OPENED) >= _OPENED_KEPT:
        _OPENED.clear()
    _OPENED[(transparency.checkpoint, keys)] = checked
    return checked


# Checking a signed note is a pure function of the note and the keys trusted, and the deals
# exported within a few seconds carry the same checkpoint: a verifier going through many files
# checks each distinct note's signatures once, and reads the checkpoint in it once. Only notes
# that opened are kept (a refusal is decided again each time), at most 64.
_OPENED: dict[tuple[str, tuple[VerifierKey, ...]], tuple[AuditCheck, Checkpoint, OpenedNote]] = {}
_OPENED_KEPT: Final = 64
_EVENT_ROOTS_KEPT: Final = 4096
"""At most as many opening events as ``export_reading`` keeps read (``_OPENINGS_KEPT``)."""


def forget_opened_notes() -> None:
    """Empty the cache of opened notes, so that the next file's signatures are checked again
    (``bench/verify.py`` measures both ways)."""
    _OPENED.clear()


def _inclusion_check(events: Sequence[ExportedEvent], checkpoint: Checkpoint) -> AuditCheck:
    """Every event's inclusion proof leads to the checkpoint's root (docs/audit.md §4.5)."""
    size, root = checkpoint.size, checkpoint.root
    unanchored: list[int] = []
    previous_leaf = -1
    proven = 0
    for event in events:
        inclusion = event.inclusion
        if inclusion is None:
            unanchored.append(event.version)
            continue
        leaf = inclusion.leaf_index
        if leaf <= previous_leaf or leaf >= size:
            return _misplaced_leaf(event, leaf, previous_leaf, size)
        previous_leaf = leaf
        shared = event.type in OPENING_TYPES
        if shared:
            known = EVENT_ROOTS.get(id(event))
            if known is not None and known[0] is event and known[1] == size and known[2] == root:
                proven += 1  # this event's proof reached this root before (in another export)
                continue
        digest = event.hash
        try:
            # event_leaf_hash, written out for the usual 32-byte hash (it refuses another size).
            leaf_hash = (
                _sha256(LEAF_PREFIX + digest).digest()
                if len(digest) == HASH_SIZE
                else event_leaf_hash(digest)
            )
            reached = inclusion_root(leaf, size, leaf_hash, inclusion.proof)
        except ProofError as error:
            return make_check("inclusion", Status.FAILED, f"{_leaf_place(event, leaf)}: {error}")
        if reached != root:
            return make_check(
                "inclusion",
                Status.FAILED,
                f"{_leaf_place(event, leaf)}: its leaf hash and proof do not lead to the "
                "checkpoint's root: this is not the event the log holds at that leaf",
                expected=root.hex(),
                found=reached.hex(),
            )
        if shared:
            if len(EVENT_ROOTS) >= _EVENT_ROOTS_KEPT:
                EVENT_ROOTS.clear()
            EVENT_ROOTS[id(event)] = (event, size, root)
        proven += 1
    if unanchored:
        return make_check(
            "inclusion",
            Status.NOT_COVERED,
            f"{plural(len(unanchored), 'event')} {'is' if len(unanchored) == 1 else 'are'} not"
            f" under the checkpoint ({version_words(unanchored)}):"
            " the checkpoint was made before them; export again once a later one covers them"
            f" ({plural(proven, 'event')} included)",
        )
    return make_check(
        "inclusion",
        Status.PASSED,
        f"{'the event is' if proven == 1 else f'all {proven} events are'} in the checkpoint's"
        " tree (leaves "
        f"{_first_leaf(events)}..{previous_leaf}), each proof leading to its root",
    )


def _leaf_place(event: ExportedEvent, leaf: int) -> str:
    """Where a failed inclusion is, in words (formatted only for a failure)."""
    return f"the {event.type} event at version {event.version} (leaf {leaf})"


def _misplaced_leaf(event: ExportedEvent, leaf: int, previous_leaf: int, size: int) -> AuditCheck:
    """The failed ``inclusion`` of a leaf index out of the log's order or outside the tree."""
    where = _leaf_place(event, leaf)
    if leaf <= previous_leaf:
        return make_check(
            "inclusion",
            Status.FAILED,
            f"{where}: leaf indexes must grow with the versions (the log's order)",
        )
    return make_check("inclusion", Status.FAILED, f"{where}: not in a tree of {_leaves(size)}")


def _last_leaf(events: Sequence[ExportedEvent]) -> int:
    """The largest leaf index of the events' proofs (-1 without any)."""
    return max((e.inclusion.leaf_index for e in events if e.inclusion is not None), default=-1)


def _first_leaf(events: Sequence[ExportedEvent]) -> int:
    first = events[0].inclusion if events else None
    return first.leaf_index if first is not None else 0


def _leaves(count: int) -> str:
    return plural(count, "leaf", "leaves")


def version_words(versions: Sequence[int]) -> str:
    """``version 7`` or ``versions 1-3, 7`` (``versions`` ascending, at least one)."""
    return ("version " if len(versions) == 1 else "versions ") + version_ranges(versions)


def version_ranges(versions: Sequence[int]) -> str:
    """Versions as runs: ``1-3, 7`` (``versions`` ascending, at least one)."""
    parts: list[str] = []
    start = previous = versions[0]
    for version in [*versions[1:], None]:
        if version is not None and version == previous + 1:
            previous = version
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if version is not None:
            start = previous = version
    return ", ".join(parts)


def _consistency_check(
    transparency: ExportTransparency, checkpoint: Checkpoint | None, trust: Trust
) -> tuple[AuditCheck, tuple[Checkpoint, OpenedNote] | None]:
    """The reader's checkpoint against the export's: equal, or linked by a carried proof."""
    assert trust.checkpoint is not None
    if checkpoint is None:
        return make_check("consistency", Status.SKIPPED, "the export's checkpoint is unread"), None
    try:
        opened_reader = open_checkpoint(
            trust.checkpoint, trust.server_keys + trust.witness_keys, checkpoint.origin
        )
    except NoteError as error:
        return (
            make_check(
                "consistency",
                Status.FAILED,
                f"your checkpoint is not a checkpoint of {checkpoint.origin} signed by a pinned "
                f"key: {error}",
            ),
            None,
        )
    reader = opened_reader.checkpoint
    linked = (reader, opened_reader.note)
    if reader.size == checkpoint.size:
        if reader.root != checkpoint.root:
            return (
                make_check(
                    "consistency",
                    Status.FAILED,
                    f"your checkpoint and the export's have {_leaves(reader.size)} and different"
                    " roots: two histories for one size (a fork), both signed",
                    expected=reader.root.hex(),
                    found=checkpoint.root.hex(),
                ),
                None,
            )
        return (
            make_check(
                "consistency", Status.PASSED, f"your checkpoint is the export's ({reader.size})"
            ),
            linked,
        )
    old, new = (reader, checkpoint) if reader.size < checkpoint.size else (checkpoint, reader)
    carried = next(
        (
            proof
            for proof in transparency.consistency
            if (proof.old_size, proof.new_size) == (old.size, new.size)
        ),
        None,
    )
    if carried is None:
        return (
            make_check(
                "consistency",
                Status.NOT_COVERED,
                f"the export carries no consistency proof from {old.size} to {_leaves(new.size)}, "
                "so your checkpoint is not linked to it (GetConsistencyProof gives one): the "
                "export's own checkpoint is the anchor",
            ),
            None,
        )
    hashes = [carried.proof[i : i + HASH_SIZE] for i in range(0, len(carried.proof), HASH_SIZE)]
    try:
        check_extends(old, new, hashes)
    except (CheckpointError, ProofError) as error:
        return (
            make_check(
                "consistency",
                Status.FAILED,
                f"the tree of {_leaves(new.size)} does not extend the one of {old.size}: {error}",
            ),
            None,
        )
    return (
        make_check(
            "consistency",
            Status.PASSED,
            f"the tree of {_leaves(new.size)} ({'yours' if new is reader else 'the export’s'}) "
            f"extends the one of {old.size} ({'yours' if old is reader else 'the export’s'})",
        ),
        linked,
    )
