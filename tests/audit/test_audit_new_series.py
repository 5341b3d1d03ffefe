"""A table created with ``after_series = new_series`` plays two short series; the audit verifies it
offline and online, keeps the dealer rotation across the series boundary, replays the new series,
and names a forged ``SeriesStarted`` or a forged second-series total."""

from __future__ import annotations

import asyncio
import copy
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

from sapsam import fairness
from sapsam.app.tables import TableService
from sapsam.audit import Requester, Status, read_export, verify_export
from sapsam.audit import database as audit_database
from sapsam.audit.export_format import write_lines
from sapsam.audit.replay import replay
from sapsam.audit.replay_rendering import render_frame
from sapsam.audit.sample_play import play_series
from sapsam.cli import main
from sapsam.log.chain import canonical_event_bytes, chain_hash
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors

RULES = DEFAULT_RULE_SET.with_changes(series_length=2)
SEATS = 3
Json = dict[str, Any]


@dataclass(frozen=True)
class TwoSeries:
    """Four deals at a 3-seat new_series table with 2-deal series: series 1 is deals 1-2."""

    url: str
    table_id: uuid.UUID
    table_lines: list[str]


async def _played_two_series(url: str) -> uuid.UUID:
    store = await EventStore.connect(url, projectors=projectors())
    try:
        store.prepare()
        return await play_series(
            TableService(store), SEATS, deals=4, rule_set=RULES, after_series="new_series"
        )
    finally:
        await store.close()


@pytest.fixture(scope="module")
def two_series(database_factory: Any) -> Iterator[TwoSeries]:
    # The deals are random. A first series that ends all square would make "carry its totals
    # into the next series" change nothing, so play until it does not (rarely twice), each time
    # in a database of its own: the whole-database audit below must find this one table only.
    for _attempt in range(20):
        name, url = database_factory.create(migrated=True)
        table_id = asyncio.run(_played_two_series(url))  # a loop of its own: a module fixture
        with psycopg.connect(url, autocommit=True) as connection:
            export = audit_database.export_table(connection, table_id, Requester.player("ann"))
        lines = list(write_lines(export))
        if any(_of_type(_events(lines), "DealScored", 1)["data"]["series_totals"]):
            break
        database_factory.drop(name)
    else:
        raise AssertionError("twenty first series all ended all square")
    try:
        yield TwoSeries(url, table_id, lines)
    finally:
        database_factory.drop(name)


def _events(lines: list[str]) -> list[Json]:
    return [json.loads(line) for line in lines[1:]]


def test_the_table_plays_two_series_recorded_as_such(two_series: TwoSeries) -> None:
    types = [event["type"] for event in _events(two_series.table_lines)]
    assert types.count("SeriesCompleted") == 2 and types.count("SeriesStarted") == 2
    started = [e["data"] for e in _events(two_series.table_lines) if e["type"] == "SeriesStarted"]
    assert started == [
        {"series_number": 2, "first_deal_number": 3},
        {"series_number": 3, "first_deal_number": 5},
    ]


def test_two_series_verify_offline_from_the_whole_table(two_series: TwoSeries) -> None:
    report = verify_export(two_series.table_lines)
    assert report.ok, [check for check in report.checks if check.status is not Status.PASSED]
    assert report.deals_verified == 4
    for number in range(1, 5):
        assert report.named("sequence", number).status is Status.PASSED
        assert report.named("dealer_rotation", number).status is Status.PASSED
        assert report.named("series_totals", number).status is Status.PASSED
    assert report.named("standings", 2).status is Status.PASSED
    assert report.named("standings", 4).status is Status.PASSED
    assert report.named("series_start", 2).status is Status.PASSED
    assert report.named("series_start", 4).status is Status.PASSED
    assert "series 2 starts from zero" in report.named("series_totals", 3).detail
    # The second series' running totals start again from deal 3's own result.
    scored = {
        e["data"]["deal_number"]: e["data"]
        for e in _events(two_series.table_lines)
        if e["type"] == "DealScored"
    }
    assert scored[3]["series_totals"] == scored[3]["totals"]
    assert scored[4]["series_totals"] == [
        a + b for a, b in zip(scored[3]["totals"], scored[4]["totals"], strict=True)
    ]
    # The deal keeps passing left across the series boundary.
    dealers = {
        e["data"]["deal_number"]: e["data"]["dealer"]
        for e in _events(two_series.table_lines)
        if e["type"] == "DealStarted"
    }
    assert dealers[3] == fairness.left_of(dealers[2], SEATS)


def test_two_series_verify_online_table_and_each_deal(two_series: TwoSeries) -> None:
    offline = verify_export(two_series.table_lines)
    with psycopg.connect(two_series.url, autocommit=True) as connection:
        online = audit_database.verify_table_online(connection, two_series.table_id)
        assert online.ok
        assert [c.label for c in online.checks] == [c.label for c in offline.checks]
        for number in range(1, 5):
            deal = audit_database.verify_deal_online(connection, two_series.table_id, number)
            assert deal.ok, [c for c in deal.checks if c.status is Status.FAILED]
            assert deal.named("stored_chain").status is Status.PASSED
            exported = audit_database.export_deal(
                connection, two_series.table_id, number, Requester.player("bob")
            )
            assert verify_export(write_lines(exported)).ok
    # The first deal of a series needs no earlier deal: its totals start from zero.
    assert deal_status(two_series, 3, "series_totals") is Status.PASSED
    assert deal_status(two_series, 4, "series_totals") is Status.NOT_COVERED
    assert deal_status(two_series, 2, "series_start") is Status.PASSED


def deal_status(two_series: TwoSeries, number: int, name: str) -> Status:
    with psycopg.connect(two_series.url, autocommit=True) as connection:
        report = audit_database.verify_deal_online(connection, two_series.table_id, number)
    return report.named(name, number).status


def test_sapsam_audit_verify_table_passes_a_two_series_table(
    two_series: TwoSeries, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["audit", "verify", "--table", str(two_series.table_id), "--database-url", two_series.url]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "✓ deal 2 · series_start" in out and "✓ deal 4 · standings" in out
    code = main(["audit", "verify", "--all", "--database-url", two_series.url])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "4 of 4 finished deals" in out


def test_replay_shows_the_new_series(two_series: TwoSeries) -> None:
    frames = replay(read_export(two_series.table_lines))
    started = next(frame for frame in frames if frame.event_type == "SeriesStarted")
    assert started.series_number == 2
    assert "series 2 started" in started.happened and "deal 3 comes next" in started.happened
    assert [view.series_total for view in started.seats] == [0] * SEATS
    assert "series 2" in render_frame(started)
    assert frames[0].series_number == 1 and frames[-1].series_number == 3
    assert started.to_dict()["series_number"] == 2


# -- forged exports: edited, and with the chain recomputed as a forger would -----------------------


def _rechain(header: Json, events: list[Json]) -> None:
    previous = bytes.fromhex(header["segments"][0]["anchor"]["hash"])
    for offset, event in enumerate(events):
        event["version"] = header["segments"][0]["first_version"] + offset
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
    header["segments"][0]["last_version"] = events[-1]["version"]
    header["segments"][0]["last_hash"] = events[-1]["hash"]


def _forged(two_series: TwoSeries, edit: Callable[[list[Json]], None], rechain: bool) -> list[str]:
    header = json.loads(two_series.table_lines[0])
    events = copy.deepcopy(_events(two_series.table_lines))
    edit(events)
    if rechain:
        _rechain(header, events)
    return [json.dumps(header)] + [json.dumps(event) for event in events]


def _of_type(events: list[Json], type_name: str, nth: int = 0) -> Json:
    return [event for event in events if event["type"] == type_name][nth]


def renumber_the_series(events: list[Json]) -> None:
    _of_type(events, "SeriesStarted")["data"]["series_number"] = 3


def move_the_first_deal(events: list[Json]) -> None:
    _of_type(events, "SeriesStarted")["data"]["first_deal_number"] = 4


def drop_the_series_start(events: list[Json]) -> None:
    events.remove(_of_type(events, "SeriesStarted"))


def carry_totals_into_the_second_series(events: list[Json]) -> None:
    second, third = _of_type(events, "DealScored", 1), _of_type(events, "DealScored", 2)
    third["data"]["series_totals"] = [
        a + b for a, b in zip(second["data"]["series_totals"], third["data"]["totals"], strict=True)
    ]


def shift_a_second_series_total(events: list[Json]) -> None:
    totals = _of_type(events, "DealScored", 3)["data"]["series_totals"]
    totals[0] += 1


def count_deals_from_the_table_start(events: list[Json]) -> None:
    _of_type(events, "SeriesCompleted", 1)["data"]["deals_played"] = 4


def drop_the_first_series_completion(events: list[Json]) -> None:
    # Deal 3 ends series 1 (issue #15): without its SeriesCompleted the series never ended.
    events.remove(_of_type(events, "SeriesCompleted"))


def make_the_table_close_after_its_series(events: list[Json]) -> None:
    events[0]["data"]["after_series"] = "close"


FORGERIES: dict[str, tuple[Callable[[list[Json]], None], set[str]]] = {
    "renumber_the_series": (renumber_the_series, {"series_start"}),
    "move_the_first_deal": (move_the_first_deal, {"sequence", "series_start"}),
    "drop_the_series_start": (drop_the_series_start, {"series_start"}),
    "carry_totals_into_the_second_series": (
        carry_totals_into_the_second_series,
        {"series_totals"},
    ),
    "shift_a_second_series_total": (shift_a_second_series_total, {"series_totals", "standings"}),
    "count_deals_from_the_table_start": (count_deals_from_the_table_start, {"standings"}),
    "drop_the_first_series_completion": (drop_the_first_series_completion, {"standings"}),
    "make_the_table_close_after_its_series": (
        make_the_table_close_after_its_series,
        {"sequence", "series_start"},
    ),
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_plain_edit_of_the_series_breaks_the_chain(two_series: TwoSeries, name: str) -> None:
    edit, _ = FORGERIES[name]
    report = verify_export(_forged(two_series, edit, rechain=False))
    assert not report.ok
    first = report.first_divergence
    assert first is not None and first.name == "chain"


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_forged_series_with_the_chain_recomputed_is_named(
    two_series: TwoSeries, name: str
) -> None:
    edit, expected = FORGERIES[name]
    report = verify_export(_forged(two_series, edit, rechain=True))
    failed = set(report.failed_names())
    assert report.named("chain").status is Status.PASSED
    assert expected <= failed, failed
    # Nothing about the cards was touched: fair dealing still holds for every deal.
    assert {"seed_commitment", "cut", "scores"}.isdisjoint(failed)


def test_a_second_series_dealt_again_from_the_drawn_dealer_fails_the_rotation(
    two_series: TwoSeries,
) -> None:
    # As if a new series drew no one but restarted the rotation at the first dealer.
    def restart_the_rotation(events: list[Json]) -> None:
        first_dealer = _of_type(events, "DealerChosen")["data"]["dealer"]
        _of_type(events, "DealStarted", 2)["data"]["dealer"] = first_dealer

    report = verify_export(_forged(two_series, restart_the_rotation, rechain=True))
    rotation = report.named("dealer_rotation", 3)
    assert rotation.status is Status.FAILED
    dealers = {
        e["data"]["deal_number"]: e["data"]["dealer"]
        for e in _events(two_series.table_lines)
        if e["type"] == "DealStarted"
    }
    assert rotation.expected == str(dealers[3]) == str(fairness.left_of(dealers[2], SEATS))
    assert report.named("dealer_rotation", 4).status is Status.PASSED
