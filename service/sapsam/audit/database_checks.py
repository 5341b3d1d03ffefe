"""Whole-database checks beside the streams and deals: acknowledged requests against the log,
and the deals still in play (pending or stuck).

- ``acknowledged_requests``: every row of ``processed_requests`` is a call the service answered,
  with the versions and positions its events got. Each must still be in the log, at those
  positions: a stream cut short (its tail deleted), or rewritten from some version on, leaves
  acknowledged requests pointing past its head or at other events, even when what is left of the
  stream verifies and the read models were rebuilt from it.
- ``deals_in_play``: a deal started and not scored is *pending* while it can still move (a seat
  may act, or its deadline is ahead); it is *stuck* when only the service could move it and has
  not (the cards were never dealt after the cut, the seed never revealed after the last reveal) or
  when its deadline passed more than ``STUCK_AFTER_MS`` ago with no timeout recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

import psycopg

from sapsam.audit.report import AuditCheck, Status
from sapsam.plurals import plural
from sapsam.store.projection_folds import Row

Connection = psycopg.Connection[Any]

# The deadline sweeper looks every second; a deal this far past its deadline was not swept.
STUCK_AFTER_MS: Final = 60_000
MAX_NAMED: Final = 20
_IN_PLAY: Final = frozenset(
    {"AWAITING_CUT", "DEALING", "ARRANGING", "ANNOUNCING", "REVEALING", "AWAITING_SEED"}
)
_OWED_BY_THE_SERVICE: Final = {
    "DEALING": "cut but never dealt",
    "AWAITING_SEED": "every seat settled but the seed never revealed",
}

_BROKEN_REQUESTS = """
SELECT p.stream_id, count(*), min(p.request_id), max(p.last_version)
FROM processed_requests p
LEFT JOIN events f ON f.stream_id = p.stream_id AND f.version = p.first_version
LEFT JOIN events l ON l.stream_id = p.stream_id AND l.version = p.last_version
WHERE f.position IS DISTINCT FROM p.first_position OR l.position IS DISTINCT FROM p.last_position
GROUP BY p.stream_id ORDER BY p.stream_id
"""


def acknowledged_request_checks(
    connection: Connection, heads: Mapping[str, int]
) -> list[AuditCheck]:
    """A summary check, and a failed check per stream whose acknowledged requests name events the
    log does not hold (``heads``: each stream's last version)."""
    total = connection.execute(
        "SELECT count(*), count(DISTINCT stream_id) FROM processed_requests"
    ).fetchone()
    requests, streams = (int(total[0]), int(total[1])) if total else (0, 0)
    problems: list[AuditCheck] = []
    for stream_id, count, example, acknowledged in connection.execute(_BROKEN_REQUESTS):
        head = heads.get(str(stream_id))
        ends = "has no events" if head is None else f"ends at version {head}"
        problems.append(
            AuditCheck(
                f"{stream_id}: acknowledged_requests",
                Status.FAILED,
                f"{plural(count, 'acknowledged request')}"
                f" {'names' if count == 1 else 'name'} events the log does not hold (e.g."
                f" {str(example)[:80]!r}); acknowledged up to version {acknowledged}, the stream"
                f" {ends}: events were deleted or rewritten after they were acknowledged",
                expected=f"version {acknowledged}",
                found="none" if head is None else f"version {head}",
            )
        )
    broken = len(problems)
    summary = AuditCheck(
        "acknowledged_requests",
        Status.FAILED if broken else Status.PASSED,
        f"{plural(requests, 'acknowledged request')} over {plural(streams, 'stream')}: "
        + (
            f"{plural(broken, 'stream')} lost acknowledged events"
            if broken
            else "every one in the log"
        ),
    )
    return [summary, *problems]


def _when(unix_ms: int) -> str:
    return datetime.fromtimestamp(unix_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _span(milliseconds: int) -> str:
    seconds = milliseconds // 1000
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"


def deal_in_play(stream_id: str, row: Row, now_ms: int) -> AuditCheck | None:
    """The check naming a table's deal in play, pending or stuck (None: no deal in play)."""
    phase = row.get("phase")
    if phase not in _IN_PLAY:
        return None
    deal = row.get("deal_number")
    deadline = row.get("deadline_ms")
    owed = _OWED_BY_THE_SERVICE.get(str(phase))
    if owed is not None:
        detail = f"deal {deal} stuck: {phase}, {owed}"
    elif isinstance(deadline, int) and now_ms > deadline + STUCK_AFTER_MS:
        detail = (
            f"deal {deal} stuck: {phase}, past its deadline ({_when(deadline)}) by"
            f" {_span(now_ms - deadline)} with no timeout recorded"
        )
    elif isinstance(deadline, int):
        ahead = deadline - now_ms
        when = f"in {_span(ahead)}" if ahead >= 0 else f"passed {_span(-ahead)} ago"
        detail = f"deal {deal} pending: {phase}, its deadline {when}"
    else:
        detail = f"deal {deal} pending: {phase}, no deadline"
    return AuditCheck(f"{stream_id}: deal_in_play", Status.PENDING, detail)


def deals_in_play_checks(tables: Iterable[tuple[str, Row]], now_ms: int) -> list[AuditCheck]:
    """A summary check and one check per table with a deal in play (``tables``: stream id and
    its ``table_state`` row as the log makes it)."""
    named = [
        check
        for stream_id, row in tables
        if (check := deal_in_play(stream_id, row, now_ms)) is not None
    ]
    if not named:
        return [AuditCheck("deals_in_play", Status.PASSED, "no deal is being played")]
    stuck = [check for check in named if " stuck: " in check.detail]
    tables_stuck = ", ".join(check.name.split(":")[0] for check in stuck[:MAX_NAMED])
    summary = AuditCheck(
        "deals_in_play",
        Status.PENDING,
        f"{plural(len(named), 'deal')} in play: {len(named) - len(stuck)} pending,"
        f" {len(stuck)} stuck" + (f" ({tables_stuck})" if stuck else ""),
    )
    return [summary, *named]
