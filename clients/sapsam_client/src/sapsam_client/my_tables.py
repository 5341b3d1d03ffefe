"""A player's unfinished tables, and the command line that goes back to one (``sapsam-play``).

The API has no "tables of a player" call: the tables come from ``ListTables`` (those being played,
then open ones, newest first), kept where one of the seats is the player's. At most
``SCAN_LIMIT`` tables of each status are read, so a busy server costs a bounded number of pages.
"""

from __future__ import annotations

import argparse
import itertools
import shlex
from dataclasses import dataclass

from sapsam_client.client import Client
from sapsam_proto.v1 import table_pb2

SCAN_LIMIT = 500
"""Most tables of each status read to find the player's own (the newest)."""


@dataclass(frozen=True)
class HeldTable:
    """A table where the player holds a seat and the series is not complete."""

    table: table_pb2.Table
    seat: str

    def describe(self) -> str:
        """One line: the table, the seat held, how far the series is."""
        table = self.table
        position = self.seat.rsplit("/", 1)[1]
        if table.status == table_pb2.TABLE_STATUS_OPEN:
            taken = sum(1 for seat in table.seats if seat.player)
            where = f"waiting for players, {taken}/{table.seat_count} seated"
        elif table.deal_number > table.rule_set.series_length:
            # Voided deals do not count: "deal 4 of 3" read as a bug.
            where = f"deal {table.deal_number} (a series of {table.rule_set.series_length} deals"
            where += " that count; voided deals do not)"
        else:
            where = f"deal {table.deal_number} of {table.rule_set.series_length}"
        return f"{table.name}  your seat {position}, {where}"


def unfinished_tables(client: Client, player: str, limit: int = SCAN_LIMIT) -> list[HeldTable]:
    """The open and playing tables where ``player`` (``players/{id}``) holds a seat."""
    held = []
    for status in (table_pb2.TABLE_STATUS_PLAYING, table_pb2.TABLE_STATUS_OPEN):
        for table in itertools.islice(client.list_tables(status), limit):
            for seat in table.seats:
                if seat.player == player:
                    held.append(HeldTable(table, seat.name))
    return held


def resume_command(arguments: argparse.Namespace, table: str) -> str:
    """The ``sapsam-play`` command line that takes the seat at ``table`` up again."""
    words = ["sapsam-play", "--server", arguments.server, "--table", table]
    if arguments.token_file:
        words += ["--token-file", str(arguments.token_file)]
    if arguments.tls:
        words.append("--tls")
    if arguments.ca_cert:
        words += ["--ca-cert", str(arguments.ca_cert)]
    if arguments.receipts:
        words += ["--receipts", str(arguments.receipts)]
    if arguments.plain:
        words.append("--plain")
    return shlex.join(words)
