"""What a torture run reports beyond the checks: timeouts and how they were caused, spreads."""

from __future__ import annotations

import calendar
import time
from typing import Any

import psycopg

from torture.load import Lateness


def timeouts_seen(
    url: str, late: list[Lateness], disruptions: list[dict[str, Any]]
) -> dict[str, Any]:
    """Every SeatTimedOut: the laggards' on purpose, the rest (findings) with the disruption
    they followed."""
    expected = {(item.table, item.seat, item.deal, item.stage) for item in late}
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT stream_id, (data->>'deal_number')::int, (data->>'seat')::int, data->>'stage',"
            " metadata->>'recorded_at' FROM events WHERE type = 'SeatTimedOut'"
        ).fetchall()
    unexpected = []
    on_purpose = 0
    for stream, deal, seat, stage, recorded in rows:
        key = ("tables/" + stream.removeprefix("table-"), seat, deal, stage)
        if key in expected:
            on_purpose += 1
            continue
        at = calendar.timegm(time.strptime(recorded[:19], "%Y-%m-%dT%H:%M:%S"))
        before = [item for item in disruptions if item.get("at", 0) <= at]
        last = max(before, key=lambda item: item["at"], default=None)
        unexpected.append(
            {
                "table": key[0],
                "deal": deal,
                "seat": seat,
                "stage": stage,
                "recorded_at": recorded,
                "after": None
                if last is None
                else f"{last['kind']} {last.get('mode', '')} {round(at - last['at'], 1)} s earlier",
            }
        )
    return {
        "on_purpose": on_purpose,
        "laggard_deadlines_skipped": len(expected),
        "unexpected": unexpected,
    }


def count(items: Any) -> dict[str, int]:
    counted: dict[str, int] = {}
    for item in items:
        counted[str(item)] = counted.get(str(item), 0) + 1
    return counted


def spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "min": ordered[0],
        "median": ordered[len(ordered) // 2],
        "max": ordered[-1],
    }


def deadlines_extended(url: str) -> dict[str, int]:
    """``DeadlinesExtended`` events by reason (deadlines that fell while no server served)."""
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT coalesce(data->>'reason', '?'), count(*) FROM events"
            " WHERE type = 'DeadlinesExtended' GROUP BY 1"
        ).fetchall()
    return {str(reason): int(number) for reason, number in rows}
