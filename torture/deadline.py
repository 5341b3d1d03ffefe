"""A kill across a deadline: the server dies just before a seat's deadline and is down when it
passes; once a server serves again the seat makes its move at once.

The seat was never given a chance during the downtime, so it must not be timed out for it
(issue 13, defect 2): the move is accepted, or the deadline was extended by an event in the log
that says why. The table is a two-seat, one-deal table with deadlines of ``DEADLINE_SECONDS``;
``stage`` says which deadline the kill straddles: ``arranging`` (seat 1 has not confirmed) or
``revealing`` (seat 0 revealed, seat 1 has not).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import grpc
import psycopg

from sapsam_client.errors import SapsamError
from sapsam_client.seat import Seat
from sapsam_proto.v1 import rule_set_pb2, table_pb2
from torture.ledger import Ledger, LedgerClient, Stats
from torture.load import register, sorted_rows

DEADLINE_SECONDS = 12
KILL_BEFORE_SECONDS = 1.5
DOWN_AFTER_SECONDS = 3.0
KNOWN_EVENTS = frozenset(
    {
        "TableCreated",
        "PlayerSeated",
        "DealerChosen",
        "DealStarted",
        "EntropyContributed",
        "DeckCut",
        "CardsDealt",
        "ArrangementCommitted",
        "SeatConfirmed",
        "RevealsOpened",
        "ArrangementRevealed",
        "SeatTimedOut",
        "SeedRevealed",
        "DealScored",
        "SeriesCompleted",
        "SeriesStarted",
    }
)

KillAcross = Callable[[float, float], dict[str, Any]]
"""``kill_across(kill_at, restart_after)``: SIGKILL the server at wall time ``kill_at``, start it
again once wall time ``restart_after`` has passed, wait until it serves; what happened."""


def _seconds(table: table_pb2.Table) -> float:
    return table.deadline_time.seconds + table.deadline_time.nanos / 1e9


def cross_deadline(
    target: str, url: str, stage: str, ledger: Ledger, stats: Stats, kill_across: KillAcross
) -> dict[str, Any]:
    """Play the scenario; returns whether seat 1 was timed out and what the log says."""
    channel = grpc.insecure_channel(target)
    try:
        first, second = (LedgerClient(channel, ledger, stats, f"deadline-{stage}") for _ in "ab")
        register(first, f"deadline {stage} a", stats)
        register(second, f"deadline {stage} b", stats)
        rules = rule_set_pb2.RuleSet(
            name="torture-deadline",
            arrange_seconds=DEADLINE_SECONDS,
            reveal_seconds=DEADLINE_SECONDS,
            arrange_timeout_policy=rule_set_pb2.TIMEOUT_POLICY_FOUL,
        )
        table = first.create_table(2, rule_set=rules, series_length=1)
        seats = [first.join_table(table.name, 0), second.join_table(table.name, 1)]
        dealer = first.choose_dealer(table.name)
        (first if dealer == seats[0].name else second).start_deal(table.name)
        state = first.get_table(table.name)
        (first if state.cutter_seat == seats[0].name else second).cut_deck(state.cutter_seat)
        seats[0].arrange(sorted_rows, first.get_table(table.name))
        if stage == "revealing":
            seats[1].arrange(sorted_rows, first.get_table(table.name))
            seats[0].reveal(1)
        state = first.get_table(table.name)
        deadline = _seconds(state)
        disruption = kill_across(
            deadline - KILL_BEFORE_SECONDS, max(deadline, time.time()) + DOWN_AFTER_SECONDS
        )
        moved_after = time.time() - deadline
        refused: str | None = None
        try:
            if stage == "arranging":
                seats[1].arrange(sorted_rows, first.get_table(table.name))
            else:
                seats[1].reveal(1)
        except SapsamError as error:
            refused = f"{error.code} {error.reason}"
        complete = _finish(first, seats, table.name)
    finally:
        channel.close()
    timed_out, extensions = _log_facts(url, table.name)
    return {
        "stage": stage,
        "table": table.name,
        "deadline_seconds": DEADLINE_SECONDS,
        "killed_before_deadline_s": KILL_BEFORE_SECONDS,
        "seat_moved_after_deadline_s": round(moved_after, 2),
        "disruption": disruption,
        "move_refused": refused,
        "seat_timed_out": timed_out,
        "extension_events": extensions,
        "series_complete": complete,
        "fair": not timed_out and refused is None,
    }


def _finish(client: LedgerClient, seats: list[Seat], table: str, timeout: float = 120.0) -> bool:
    """Reveal what is left to reveal (whatever the kill did), until the series is complete."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = client.get_table(table)
        if state.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE:
            return True
        if state.phase == table_pb2.TABLE_PHASE_REVEALING:
            for seat in seats:
                public = state.seats[seat.position]
                if not public.revealed and not public.timed_out and 1 in seat.commitments:
                    with contextlib.suppress(SapsamError):  # read the table again
                        seat.reveal(1)
        time.sleep(0.5)
    return False


def _log_facts(url: str, table: str) -> tuple[list[str], list[str]]:
    """Seat 1's timeouts, and the events of a kind the torture does not know (an extension)."""
    stream = "table-" + table.removeprefix("tables/")
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT version, type, data FROM events WHERE stream_id = %s ORDER BY version",
            [stream],
        ).fetchall()
    timed_out = [
        f"v{version} {data.get('stage')} -> {data.get('consequence')}"
        for version, kind, data in rows
        if kind == "SeatTimedOut" and data.get("seat") == 1
    ]
    extensions = [
        f"v{version} {kind} {data}"[:200]
        for version, kind, data in rows
        if kind not in KNOWN_EVENTS
    ]
    return timed_out, extensions
