"""Bot load: lanes of four-seat tables, each seat an SDK ``Seat.play_series`` in a thread.

A lane plays one table's series after another until told to stop; then it finishes the series it
is in. Every table has arranging and reveal deadlines. In a laggard lane, seat 3 deliberately
lets one deadline of every other deal pass (arranging in one, revealing in the next), so the
deadline sweeper acts under load; those timeouts are expected, any other one is a finding.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import grpc

from sapsam_client.client import Hand
from sapsam_client.commitment import RANKS, Rows
from sapsam_client.errors import AlreadyExistsError, SapsamError
from sapsam_client.seat import Seat
from sapsam_client.seat_types import Arranger
from sapsam_proto.v1 import rule_set_pb2, table_pb2
from torture.ledger import Ledger, LedgerClient, Stats

SEATS = 4
ERRORS_PER_SEAT = 20
"""A seat whose series raised this many errors stops playing (its deadlines then fire)."""


def sorted_rows(hand: Hand, table: table_pb2.Table) -> Rows:
    """Cheap rows: the five highest cards at the back, the next five in the middle (it may foul;
    a foul is a fact of the game, not a failure)."""
    ranked = sorted(hand.cards, key=lambda card: RANKS.index(card[0]), reverse=True)
    return Rows.of(ranked[10:], ranked[5:10], ranked[:5])


@dataclass(frozen=True)
class Lateness:
    """A deadline a laggard seat lets pass on purpose: (table, seat, deal, stage)."""

    table: str
    seat: int
    deal: int
    stage: str


class TortureSeat(Seat):
    """The SDK's seat, with the run's counters at hand (``stats``).

    (It used to step in for a timed-out dealer that the SDK left waiting between deals: finding
    T4 in docs/reliability.md, fixed in the SDK by 90145cc.)
    """

    def __init__(self, *arguments: Any, stats: Stats, **options: Any) -> None:
        super().__init__(*arguments, **options)
        self.stats = stats


class LaggardSeat(TortureSeat):
    """A seat that skips arranging in deals 2, 6, 10 … and revealing in deals 4, 8, 12 …"""

    def __init__(self, *arguments: Any, late: list[Lateness], **options: Any) -> None:
        super().__init__(*arguments, **options)
        self.late = late

    def act(
        self,
        table: table_pb2.Table,
        arranger: Arranger,
        *,
        contribute_entropy: bool = True,
        stream_behind: bool = False,
    ) -> None:
        """As the SDK's seat, but late on purpose in some deals."""
        deal = table.deal_number
        mine = table.seats[self.position]
        if table.phase == table_pb2.TABLE_PHASE_ARRANGING and deal % 4 == 2 and not mine.confirmed:
            self._mark(deal, "arranging")
            return
        if table.phase == table_pb2.TABLE_PHASE_REVEALING and deal % 4 == 0 and not mine.revealed:
            self._mark(deal, "revealing")
            return
        super().act(
            table, arranger, contribute_entropy=contribute_entropy, stream_behind=stream_behind
        )

    def _mark(self, deal: int, stage: str) -> None:
        lateness = Lateness(self.table, self.position, deal, stage)
        if lateness not in self.late:
            self.late.append(lateness)


@dataclass
class LaneConfig:
    """What a lane's tables look like."""

    series_length: int
    arrange_seconds: int
    reveal_seconds: int
    laggard: bool = False


@dataclass
class TableRecord:
    """One table a lane played: its name, and how its series went."""

    name: str
    lane: str
    series_length: int
    completed: bool = False
    seat_errors: list[str] = field(default_factory=list)


def register(client: LedgerClient, name: str, stats: Stats) -> None:
    """Register a player; a registration whose answer a kill swallowed (the retry is told the
    token was already issued, and a token is shown only once) is made again under a new id."""
    while True:
        try:
            client.register(name)
            return
        except AlreadyExistsError as error:
            if error.reason != "TOKEN_ALREADY_ISSUED":
                raise
            stats.add("registrations whose answer was lost (token shown once)")


class Lane(threading.Thread):
    """Plays series after series of four-seat tables until ``stop`` is set."""

    def __init__(
        self,
        index: int,
        target: str,
        config: LaneConfig,
        ledger: Ledger,
        stats: Stats,
        stop: threading.Event,
        tables: list[TableRecord],
        late: list[Lateness],
    ) -> None:
        super().__init__(name=f"lane-{index}", daemon=True)
        self.index = index
        self.target = target
        self.config = config
        self.ledger = ledger
        self.stats = stats
        self.stop = stop
        self.tables = tables
        self.late = late
        self.failure: str | None = None

    def run(self) -> None:
        """Tables, one after another."""
        number = 0
        try:
            while not self.stop.is_set():
                number += 1
                self.play_table(number)
        except BaseException as error:  # reported as a finding by the run
            self.failure = f"{type(error).__name__}: {error}"
            self.stats.note(f"lane {self.index} stopped: {self.failure}")

    def rule_set(self) -> rule_set_pb2.RuleSet:
        """The lane's rules: the base game with deadlines (the solver arranges for a late seat)."""
        return rule_set_pb2.RuleSet(
            name="torture",
            arrange_seconds=self.config.arrange_seconds,
            reveal_seconds=self.config.reveal_seconds,
            arrange_timeout_policy=rule_set_pb2.TIMEOUT_POLICY_SOLVER,
        )

    def play_table(self, number: int) -> None:
        """Register four players, create a table, seat them, play its series."""
        lane = f"lane{self.index}"
        channel = grpc.insecure_channel(self.target)
        try:
            clients = [LedgerClient(channel, self.ledger, self.stats, lane) for _ in range(SEATS)]
            for seat, client in enumerate(clients):
                register(client, f"{lane} t{number} s{seat}", self.stats)
            table = clients[0].create_table(
                SEATS, rule_set=self.rule_set(), series_length=self.config.series_length
            )
            record = TableRecord(table.name, lane, self.config.series_length)
            self.tables.append(record)
            seats: list[Seat] = []
            for position, client in enumerate(clients):
                joined = client.join_table(table.name, position)
                if self.config.laggard and position == SEATS - 1:
                    seats.append(LaggardSeat(client, joined.name, late=self.late, stats=self.stats))
                else:
                    seats.append(TortureSeat(client, joined.name, stats=self.stats))
            threads = [
                threading.Thread(
                    target=self.play_seat, args=(seat, record), name=f"{lane}-{seat.position}"
                )
                for seat in seats
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            record.completed = clients[0].get_table(table.name).phase == (
                table_pb2.TABLE_PHASE_SERIES_COMPLETE
            )
            self.stats.add("tables completed" if record.completed else "tables not completed")
        finally:
            channel.close()

    def play_seat(self, seat: Seat, record: TableRecord) -> None:
        """The seat's series; an error is noted, and play goes on from where the table is."""
        errors = 0
        while True:
            try:
                seat.play_series(sorted_rows)
                return
            except SapsamError as error:
                errors += 1
                text = f"{seat.name}: {error.code} {error.reason}: {error.message[:120]}"
                record.seat_errors.append(text)
                self.stats.add(f"seat errors {error.code} {error.reason}")
                self.stats.note(f"seat error {text}")
                if errors >= ERRORS_PER_SEAT:
                    return
                time.sleep(0.5)
                # A fresh seat forgets which moves it made (the refused one may be due again)
                # but keeps its open commitments, so it can still reveal.
                again = (
                    LaggardSeat(seat.client, seat.name, late=self.late, stats=self.stats)
                    if isinstance(seat, LaggardSeat)
                    else TortureSeat(seat.client, seat.name, stats=self.stats)
                )
                again.commitments = seat.commitments
                seat = again
