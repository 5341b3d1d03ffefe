"""What the open-face bot tests share: an open-face set played over gRPC by ``sapsam-bot``'s
``play_seat`` in a thread a seat, and the table's log read and verified as ``sapsam audit verify``
does."""

from __future__ import annotations

import threading
from typing import Any

import psycopg

from sapsam.audit import Requester, select_table
from sapsam.audit.verifier import verify_audit_export
from sapsam.store.offline_reads import read_stream
from sapsam_client import connect
from sapsam_client.bot import play_seat
from sapsam_client.seat_types import SeriesOutcome


def operator_token(operator_metadata: tuple[tuple[str, str], ...]) -> str:
    return dict(operator_metadata)["authorization"].removeprefix("Bearer ")


def play_bot_set(address: str, table: str, seats: int, seconds: float) -> list[SeriesOutcome]:
    """Seats 0..seats-1 each played by a registered bot until the set is over (each thread given
    ``seconds``); their outcomes, none of them failed."""
    outcomes: list[SeriesOutcome] = []
    errors: list[BaseException] = []

    def run(seat: int) -> None:
        try:
            client = connect(address)
            client.register(f"bot {seat}")
            outcomes.append(play_seat(client, table, None, seat, report=False))  # type: ignore[arg-type]
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=run, args=(seat,)) for seat in range(seats)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds)
    assert errors == [] and len(outcomes) == seats
    return outcomes


def recorded(database_url: str, table: str) -> list[Any]:
    """The table's whole log."""
    with psycopg.connect(database_url) as connection:
        return read_stream(connection, "table-" + table.removeprefix("tables/"))


def verified(database_url: str, table: str) -> tuple[list[Any], Any]:
    """The table's log and its export's verification report."""
    events = recorded(database_url, table)
    export = select_table(events, Requester.operator(), table.removeprefix("tables/"))
    return events, verify_audit_export(export)
