"""Where a series ends (docs/audit.md §4.3, issue #15): the log's rules say when a series
completes, after ``series_length`` scored deals that count (a voided deal does not,
docs/events.md), so a table export whose series reaches its end without ``SeriesCompleted``, or
records one too early, fails ``standings``; and a deal export of a series' last deal still ranks
the running totals its own ``DealScored`` records.

The honest series is the page's sample (web/test/data/sample_series.py: three seats, series of 3,
surrender, deal 2 voided so deal 4 completes the series); each forgery is re-chained as the store
would hash it. Pure: no database (the ``new_series`` table is in test_audit_new_series.py).
"""

from __future__ import annotations

import dataclasses
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from sapsam.audit import Requester, Status, select_deal, select_table, verify_export, write_lines
from sapsam.audit.report import AuditReport
from sapsam.log.chain import GENESIS_HASH, canonical_event_bytes, chain_hash
from sapsam.log.records import RecordedEvent

sys.path.insert(0, str(Path(__file__).parents[2] / "web" / "test" / "data"))
from sample_series import series_with_void

TABLE_ID = uuid.UUID("6b1f0c2e-4d3a-4e5b-9c7d-8e9f0a1b2c3d")
Stream = list[RecordedEvent]


@pytest.fixture(scope="module")
def series() -> Stream:
    return series_with_void(TABLE_ID)


def _chained(events: Stream) -> Stream:
    """``events`` renumbered and hashed again from the genesis, as a careful forger would."""
    previous = GENESIS_HASH
    out: Stream = []
    for version, e in enumerate(events, start=1):
        previous = chain_hash(
            previous,
            canonical_event_bytes(
                e.stream_id, version, e.type, e.schema_version, e.data, e.metadata
            ),
        )
        out.append(dataclasses.replace(e, position=version, version=version, hash=previous))
    return out


def _table(events: Stream) -> AuditReport:
    return verify_export(write_lines(select_table(events, Requester.operator())))


def _deal(events: Stream, number: int) -> AuditReport:
    return verify_export(write_lines(select_deal(events, number, Requester.operator())))


def _index(events: Stream, type_name: str, deal: int | None = None) -> int:
    return next(
        i
        for i, e in enumerate(events)
        if e.type == type_name and (deal is None or e.data.get("deal_number") == deal)
    )


def _failed(report: AuditReport) -> list[str]:
    return [f"{c.name}@{c.deal}" for c in report.failed]


def test_the_honest_series_with_a_void_and_a_surrender_verifies(series: Stream) -> None:
    report = _table(series)
    assert report.ok, _failed(report)
    assert report.named("standings", 4).status is Status.PASSED
    assert [c.deal for c in report.checks if c.name == "standings"] == [4]
    # Its last deal alone: where the series ended is not covered, the ranking is checked.
    alone = _deal(series, 4)
    assert alone.ok, _failed(alone)
    standings = alone.named("standings", 4)
    assert standings.status is Status.NOT_COVERED
    assert "rank the running totals its DealScored records" in standings.detail
    # Deal 3 alone (the second that counts): nothing to say about the series' end.
    assert _deal(series, 3).ok


def _drop_completion(events: Stream) -> Stream:
    return [e for e in events if e.type != "SeriesCompleted"]


def _complete_at_deal_three(events: Stream) -> Stream:
    # The void counted as a deal: SeriesCompleted moved from deal 4 to deal 3.
    moved = list(events)
    completed = moved.pop(_index(moved, "SeriesCompleted"))
    moved.insert(_index(moved, "DealScored", 3) + 1, completed)
    return moved


FORGERIES: dict[str, tuple[Callable[[Stream], Stream], list[str]]] = {
    "the series' last deal without SeriesCompleted": (_drop_completion, ["standings@4"]),
    "SeriesCompleted a deal too early": (_complete_at_deal_three, ["standings@3", "standings@4"]),
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_re_chained_series_end_forgery_fails_standings(series: Stream, name: str) -> None:
    edit, expected = FORGERIES[name]
    report = _table(_chained(edit(series)))
    assert report.named("chain").status is Status.PASSED
    assert [f for f in _failed(report) if f.startswith("standings")] == expected, _failed(report)
    assert {"seed_commitment", "cut", "scores", "series_totals"}.isdisjoint(report.failed_names())


def test_a_missing_completion_is_named_with_the_rule(series: Stream) -> None:
    check = _table(_chained(_drop_completion(series))).named("standings", 4)
    assert check.status is Status.FAILED
    assert "deal 4 is the 3rd deal that counts" in check.detail
    assert (check.expected, check.found) == ("SeriesCompleted", "none")


def test_a_deal_export_of_the_last_deal_with_reordered_standings_fails(series: Stream) -> None:
    forged = list(series)
    i = _index(forged, "SeriesCompleted")
    standings = [dict(s) for s in forged[i].data["standings"]]
    standings[0], standings[1] = (
        dict(standings[0], seat=standings[1]["seat"]),
        dict(standings[1], seat=standings[0]["seat"]),
    )
    forged[i] = dataclasses.replace(forged[i], data={**forged[i].data, "standings": standings})
    report = _deal(_chained(forged), 4)
    assert _failed(report) == ["standings@4"]
    assert "running totals its DealScored records" in report.named("standings", 4).detail
