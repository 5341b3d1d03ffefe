"""Exports that carry their proof (issue #15 item 6, docs/audit.md §2.5 and §4.5).

An honest table is interleaved with two others into one log whose tree is signed by a pinned key.
Its anchored exports verify ANCHORED; without a pinned key, or stripped of their proof, only
INTERNALLY CONSISTENT ONLY; signed by another key, FAILED. The issue's four forgeries are made by
the domain itself (``forged_histories``), so each is internally consistent: every content check
passes, yet with the honest export's checkpoint and proofs kept, each FAILS the anchored
verification because its leaf hashes are not the signed tree's. So does a re-chained rewrite of
every field an export holds.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from forged_histories import PLAYERS, Twist, history, recorded

from sapsam.audit import Requester, select_deal, select_table, verify_export, write_lines
from sapsam.audit.anchoring import Trust
from sapsam.audit.export_format import AuditExport
from sapsam.audit.report import AuditReport, Verdict
from sapsam.audit.sample_anchored import AnchoredLog, anchored_log
from sapsam.audit.sample_series import recorded_stream
from sapsam.log.chain import canonical_event_bytes, chain_hash
from sapsam.log.signed_note import NoteSigner

SIGNER = NoteSigner.from_seed("sapsam/test", bytes(32))
OTHER_SIGNER = NoteSigner.from_seed("sapsam/test", bytes([1]) * 32)
PINNED = Trust(server_keys=(SIGNER.verifier,))
SEATS = 4
DEALS = 8

Json = dict[str, Any]


@pytest.fixture(scope="module")
def log() -> AnchoredLog:
    """The honest table (stream 0) between two other tables, all in one signed tree."""
    honest = recorded(history(SEATS, DEALS))
    return anchored_log([honest, recorded_stream(2, 3), recorded_stream(3, 2)], SIGNER)


def _lines(export: AuditExport) -> list[str]:
    return list(write_lines(export))


def _verify(lines: list[str], trust: Trust = PINNED) -> AuditReport:
    return verify_export(lines, trust=trust)


def test_an_anchored_deal_export_is_anchored_only_with_the_pinned_key(log: AnchoredLog) -> None:
    lines = _lines(log.deal_export(0, 3))
    anchored = _verify(lines)
    assert anchored.verdict is Verdict.ANCHORED, anchored.failed_names()
    assert anchored.anchor is not None and anchored.anchor.signed_by == SIGNER.verifier.label
    assert anchored.anchor.tree_size == log.tree.size and not anchored.anchor.witnessed_by
    assert anchored.named("inclusion").status.value == "passed"
    unpinned = _verify(lines, Trust())
    assert unpinned.verdict is Verdict.INTERNALLY_CONSISTENT_ONLY and unpinned.anchor is None
    assert unpinned.to_dict()["verdict"] == "internally_consistent_only"
    # Signed by a key the reader did not pin: the checkpoint is not the log's.
    wrong = _verify(lines, Trust(server_keys=(OTHER_SIGNER.verifier,)))
    assert wrong.verdict is Verdict.FAILED and wrong.failed_names() == ("checkpoint",)


def test_a_whole_table_export_is_anchored(log: AnchoredLog) -> None:
    export = log.anchored(select_table(log.streams[0], Requester.operator()))
    report = _verify(_lines(export))
    assert report.verdict is Verdict.ANCHORED and report.deals_verified == DEALS


def test_an_export_without_anchors_is_never_anchored(log: AnchoredLog) -> None:
    plain = select_deal(log.streams[0], 3, Requester.operator())
    report = _verify(_lines(plain))
    assert report.verdict is Verdict.INTERNALLY_CONSISTENT_ONLY
    assert "carries no checkpoint" in report.named("checkpoint").detail


def test_events_the_checkpoint_does_not_cover_are_named_and_not_anchored(log: AnchoredLog) -> None:
    # A checkpoint made before the deal's last events: they carry no proof yet.
    last_position = log.streams[0][-1].position
    size = log.leaf_of_position[last_position] - 2
    export = log.anchored(select_deal(log.streams[0], DEALS, Requester.operator()), size)
    report = _verify(_lines(export))
    assert report.ok and report.verdict is Verdict.INTERNALLY_CONSISTENT_ONLY
    inclusion = report.named("inclusion")
    assert (
        inclusion.status.value == "not_covered" and "not under the checkpoint" in inclusion.detail
    )


def _forged_export(honest: AuditExport, forged: AuditExport) -> list[str]:
    """The forged export dressed in the honest one's proof: its checkpoint in the header and, by
    version, each honest event's leaf index and inclusion proof."""
    inclusion = {event.version: event.inclusion for event in honest.events}
    events = tuple(
        replace(event, inclusion=inclusion.get(event.version)) for event in forged.events
    )
    header = replace(forged.header, transparency=honest.header.transparency)
    return _lines(replace(forged, header=header, events=events))


def _stripped(lines: list[str]) -> list[str]:
    header, *events = (json.loads(line) for line in lines)
    header.pop("transparency", None)
    for event in events:
        event.pop("inclusion", None)
    return [json.dumps(value) for value in (header, *events)]


FORGERIES = {
    # Re-cut deal 3 and rescore it (the cut changes every hand, so every score of deal 3).
    "recut_deal_3": (Twist(cuts={3: 40}), 3),
    # A seat's reveal replaced by a reveal timeout (its result changes sign).
    "reveal_replaced_by_timeout": (Twist(reveal_timeout=(2, 1)), 2),
    # The last deal re-cut, and so the series' standings rewritten.
    "recut_last_deal_and_standings": (Twist(cuts={DEALS: 9}), DEALS),
    # Two players' ids swapped: the winner's total goes to the other player.
    "players_swapped": (Twist(players=(PLAYERS[1], PLAYERS[0], *PLAYERS[2:])), 5),
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
@pytest.mark.parametrize("scope", ["deal", "table"])
def test_each_forgery_of_the_issue_fails_an_anchored_verification(
    log: AnchoredLog, name: str, scope: str
) -> None:
    twist, deal = FORGERIES[name]
    honest_events = log.streams[0]
    positions = {event.version: event.position for event in honest_events}
    forged_events = recorded(history(SEATS, DEALS, twist), lambda version: positions[version])
    assert [e.hash for e in forged_events] != [e.hash for e in honest_events]
    operator = Requester.operator()
    if scope == "deal":
        honest = log.anchored(select_deal(honest_events, deal, operator))
        forged = select_deal(forged_events, deal, operator)
    else:
        honest = log.anchored(select_table(honest_events, operator))
        forged = select_table(forged_events, operator)
    lines = _forged_export(honest, forged)
    # Internally consistent: every content check of the forged history passes ...
    content = verify_export(_stripped(lines))
    assert content.ok and content.complete, content.failed_names()
    # ... but its leaf hashes are not the signed tree's.
    report = _verify(lines)
    assert report.verdict is Verdict.FAILED and report.failed_names() == ("inclusion",)
    assert "not the event the log holds" in report.named("inclusion").detail
    # Stripped of the proof it cannot be anchored: internally consistent only.
    assert _verify(_stripped(lines)).verdict is Verdict.INTERNALLY_CONSISTENT_ONLY
    # Without a pinned key the proofs still do not lead to the carried checkpoint's root.
    assert _verify(lines, Trust()).verdict is Verdict.FAILED


def _rechain(header: Json, events: list[Json]) -> None:
    """Re-hash every segment from its anchor and put the new last hashes in the header, as a
    forger would (the anchors outside the file stay as stated)."""
    index = 0
    for segment in header["segments"]:
        try:
            previous = bytes.fromhex(segment["anchor"]["hash"])
            count = int(segment["last_version"]) - int(segment["first_version"]) + 1
        except (ValueError, TypeError):
            return  # a rewritten anchor or range: nothing to re-chain from (format fails)
        for event in events[index : index + count]:
            if not isinstance(event["version"], int) or not isinstance(event["data"], dict):
                continue  # malformed on purpose: the format check fails it
            previous = chain_hash(
                previous,
                canonical_event_bytes(
                    header["stream_id"],
                    event["version"],
                    event["type"],
                    event["schema_version"],
                    event["data"],
                    event["metadata"],
                ),
            )
            event["hash"] = previous.hex()
        segment["last_hash"] = previous.hex()
        index += count


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + "0" if value else "x"
    if value is None:
        return 0
    if isinstance(value, list):
        return [*value, value[0]] if value else [0]
    return {**value, "forged": 1}


def _paths(value: Any, prefix: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    """Every leaf value's path in a JSON value, and every list and object itself."""
    yield prefix
    if isinstance(value, dict):
        for key in value:
            yield from _paths(value[key], (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _set(container: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        container = container[key]
    container[path[-1]] = value


def _get(container: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        container = container[key]
    return container


# Fields no check can hold: the global position is the server's informative label (the leaf
# index is what is proven), ``withheld`` a sentence. Every other field is rewritten in turn, and
# every object inside an event's data and metadata gets a field more; an object elsewhere (the
# header, a segment, an inclusion) may carry unknown fields, which readers ignore.
UNBOUND = {("position",), ("withheld",)}


def test_a_rechained_rewrite_of_each_field_fails_an_anchored_verification(
    log: AnchoredLog,
) -> None:
    lines = _lines(log.deal_export(0, 3))
    header, *events = (json.loads(line) for line in lines)
    assert _verify(lines).verdict is Verdict.ANCHORED
    rewrites = 0
    for line_index, value in enumerate([header, *events]):
        for path in list(_paths(value, ()))[1:]:
            if path in UNBOUND or path[:1] == ("hash",):
                continue
            hashed = line_index > 0 and path[0] in ("data", "metadata")
            if isinstance(_get(value, path), dict) and not hashed:
                continue  # an unknown field added beside the known ones is ignored (extensible)
            forged_header, forged_events = copy.deepcopy(header), copy.deepcopy(events)
            target = forged_header if line_index == 0 else forged_events[line_index - 1]
            _set(target, path, _changed(_get(target, path)))
            if line_index > 0:  # the header is not hashed: re-chaining would undo its rewrite
                _rechain(forged_header, forged_events)
            forged = [json.dumps(item) for item in (forged_header, *forged_events)]
            report = _verify(forged)
            assert report.verdict is Verdict.FAILED, (line_index, path)
            rewrites += 1
    assert rewrites > 500  # every field of 25 lines, nested ones included
