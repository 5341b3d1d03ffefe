"""The offline verifier with no database at all: series made by the pure domain, and fuzzing.

``sapsam.audit.sample_series`` records a series exactly as the store would (versions, metadata,
the hash chain), so these tests need nothing but the package, like an auditor at home.
"""

from __future__ import annotations

import contextlib
import json
import random
from typing import Any

import pytest

from sapsam.audit import (
    Requester,
    Status,
    read_export,
    select_deal,
    select_table,
    verify_export,
    write_lines,
)
from sapsam.audit.replay import replay
from sapsam.audit.sample_series import recorded_stream
from sapsam.log.records import RecordedEvent


@pytest.fixture(scope="module")
def stream() -> list[RecordedEvent]:
    return recorded_stream(3, deals=8)


@pytest.mark.parametrize("seat_count", [2, 3, 4])
def test_every_deal_of_a_series_made_offline_verifies(seat_count: int) -> None:
    events = recorded_stream(seat_count, deals=8)
    operator = Requester.operator()
    for number in range(1, 9):
        report = verify_export(write_lines(select_deal(events, number, operator)))
        assert report.ok and report.deals_verified == 1, report.failed_names()
    report = verify_export(write_lines(select_table(events, operator)))
    assert report.ok and report.deals_verified == 8
    assert report.named("standings", 8).status is Status.PASSED


def test_a_series_cut_short_exports_only_what_exists(stream: list[RecordedEvent]) -> None:
    # The stream up to deal 3's scoring and half of deal 4: a running deal at the end.
    fourth = next(
        e.version for e in stream if e.type == "DealStarted" and e.data["deal_number"] == 4
    )
    running = stream[: fourth + 3]
    report = verify_export(write_lines(select_table(running, Requester.operator())))
    assert report.ok
    assert report.named("fair_dealing", 4).status is Status.PENDING
    player = select_table(running, Requester.player("ann"))
    assert player.header.deals == (1, 2, 3)
    assert player.events[-1].type == "DealScored"


def _mutations(lines: list[str], rng: random.Random) -> tuple[list[str], str]:
    """One random change to the content of an event line, or to the order of the lines."""
    kind = rng.choice(["leaf", "leaf", "leaf", "delete_key", "drop", "duplicate", "swap"])
    events = lines[1:]
    index = rng.randrange(len(events))
    if kind == "drop":
        return [lines[0], *events[:index], *events[index + 1 :]], kind
    if kind == "duplicate":
        return [lines[0], *events[: index + 1], events[index], *events[index + 1 :]], kind
    if kind == "swap":
        other = rng.randrange(len(events))
        while events[other] == events[index]:
            other = rng.randrange(len(events))
        events[index], events[other] = events[other], events[index]
        return [lines[0], *events], kind
    event = json.loads(events[index])
    parent: Any = event
    key: Any = rng.choice([k for k in event if k != "position"])  # position is not hashed
    while isinstance(parent[key], dict | list) and parent[key] and rng.random() < 0.8:
        parent = parent[key]
        key = rng.choice(list(parent)) if isinstance(parent, dict) else rng.randrange(len(parent))
    if kind == "delete_key" and isinstance(parent, dict):
        del parent[key]
    else:
        choices = [None, True, -1, 0, 7, 2**40, "", "x", "Zz", "ab" * 16, [], {}, [1, "a"]]
        replacement = rng.choice([c for c in choices if c != parent[key]])
        parent[key] = replacement
    events[index] = json.dumps(event)
    return [lines[0], *events], kind


def test_random_tampering_never_crashes_the_verifier_and_never_passes(
    stream: list[RecordedEvent],
) -> None:
    rng = random.Random(20261130)
    exports = [
        list(write_lines(select_deal(stream, 3, Requester.operator()))),
        list(write_lines(select_deal(stream, 1, Requester.operator()))),
        list(write_lines(select_table(stream, Requester.operator()))),
    ]
    kinds: dict[str, int] = {}
    for _ in range(600):
        lines, kind = _mutations(list(rng.choice(exports)), rng)
        report = verify_export(lines)  # must not raise, whatever the content
        assert not report.ok, (kind, lines)
        assert report.first_divergence is not None
        kinds[kind] = kinds.get(kind, 0) + 1
        # The replay may refuse (ExportFormatError, ReplayError), always as a ValueError that
        # the CLI prints as one line.
        with contextlib.suppress(ValueError):
            replay(read_export(lines))
    assert set(kinds) == {"leaf", "delete_key", "drop", "duplicate", "swap"}
