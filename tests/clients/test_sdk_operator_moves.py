"""The SDK's play loop meets the operator's moves on a real server: a deal voided while the seats
arrange, one voided while they reveal (the series goes on to the next deal and finishes, the
seats forget the voided deal's commitments), and a seat given to another player between deals
(the replaced player's loop stops with SeatReplacedError; the newcomer takes the seat up and
finishes the series)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

from sapsam_client import Client, Hand, Rows, Seat, SeriesOutcome, connect
from sapsam_client.commitment_file import CommitmentFile
from sapsam_client.errors import SapsamError
from sapsam_client.prompts import Terminal
from sapsam_client.rules import solver_arranger
from sapsam_client.seat import take_seat
from sapsam_client.seat_types import EventHandler, SeatReplacedError
from sapsam_client.table_view import TableView
from sapsam_proto.v1 import (
    operator_service_pb2,
    operator_service_pb2_grpc,
    table_event_pb2,
    table_pb2,
)

DEALS = 3
Metadata = tuple[tuple[str, str], ...]


def operator(address: str) -> operator_service_pb2_grpc.OperatorServiceStub:
    return operator_service_pb2_grpc.OperatorServiceStub(grpc.insecure_channel(address))


def summary(table: table_pb2.Table) -> str:
    """The table's phase, deal and seats, for a failing test's message."""
    seats = [(s.player, s.committed, s.confirmed, s.revealed, s.timed_out) for s in table.seats]
    return (
        f"{table_pb2.TablePhase.Name(table.phase)} deal {table.deal_number}"
        f" dealer {table.dealer_seat} {seats}"
    )


def wait_for(client: Client, table: str, ready: Callable[[table_pb2.Table], bool]) -> None:
    deadline = time.monotonic() + 60
    while not ready(client.get_table(table)):
        assert time.monotonic() < deadline, summary(client.get_table(table))
        time.sleep(0.05)


class Players:
    """A two-seat table of DEALS deals; each seat plays its series in a thread of its own."""

    def __init__(self, address: str, tmp_path: Path) -> None:
        self.address = address
        # A file per seat: a CommitmentFile is not shared between threads (bot.SharedKeeper).
        self.keepers = [CommitmentFile(tmp_path / f"commitments-{index}.json") for index in (0, 1)]
        creator = connect(address)
        creator.register("creator")
        self.table = creator.create_table(2, series_length=DEALS).name
        self.seats: list[Seat] = []
        for index in range(2):
            client = connect(address)
            client.register(f"seat {index}")
            self.seats.append(client.join_table(self.table, keeper=self.keepers[index]))
        self.outcomes: dict[str, SeriesOutcome] = {}
        self.failures: dict[str, BaseException] = {}
        self.threads: list[threading.Thread] = []
        self.handlers: dict[int, EventHandler] = {}  # a seat position's on_event

    def play(
        self,
        seat: Seat,
        arranger: Callable[[Hand, table_pb2.Table], Rows] = solver_arranger,
        *,
        who: str | None = None,
    ) -> None:
        """Play ``seat``'s series in a thread: its outcome or failure kept under ``who`` (by
        default the seat's name)."""

        def run(handler: EventHandler | None) -> None:
            try:
                self.outcomes[who or seat.name] = seat.play_series(arranger, on_event=handler)
            except BaseException as error:
                self.failures[who or seat.name] = error

        handler = self.handlers.get(seat.position)
        thread = threading.Thread(target=run, args=(handler,), daemon=True)
        thread.start()
        self.threads.append(thread)

    def join(self) -> None:
        for thread in self.threads:
            thread.join(90)
            table = self.seats[0].client.get_table(self.table)
            assert not thread.is_alive(), (
                f"a play loop hangs at {summary(table)}, {self.failures!r}"
            )


def blocking_on(
    matches: Callable[[table_event_pb2.TableEvent], bool], release: threading.Event
) -> EventHandler:
    """An on_event that holds its play loop at the first event ``matches`` until ``release``."""

    def handler(event: table_event_pb2.TableEvent) -> None:
        if matches(event):
            assert release.wait(60)

    return handler


def hold_later_deals(client: Client, table: str, release: threading.Event) -> None:
    """Make ``client`` start no deal after the first until ``release`` is set."""
    start_deal = client.start_deal

    def held(*args: Any, **kwargs: Any) -> str:
        now = client.get_table(table)
        if now.deal_number >= 1:
            assert release.wait(60)
            return start_deal(*args, **kwargs)
        # Deal 1 only: a call that arrives late (the other seat started deal 1 and it was
        # played meanwhile) must not start deal 2 behind the operator's back.
        try:
            return start_deal(*args, **kwargs, expected_version=now.version)
        except SapsamError as error:
            if error.reason != "VERSION_MISMATCH":
                raise
            return f"{table}/deals/1"

    client.start_deal = held  # type: ignore[method-assign]


def void(address: str, metadata: Metadata, table: str, deal: int, reason: str) -> None:
    operator(address).VoidDeal(
        operator_service_pb2.VoidDealRequest(deal=f"{table}/deals/{deal}", reason=reason),
        metadata=metadata,
    )


def assert_series_finished_without_deal_2(players: Players) -> None:
    assert players.failures == {}
    for seat in players.seats:
        outcome = players.outcomes[seat.name]
        assert [r.deal_number for r in outcome.results] == [1, 3, 4]
        assert len(outcome.standings) == 2
        assert 2 not in seat.commitments  # the voided deal's rows and nonce are forgotten
        assert players.keepers[seat.position].load(seat.name) == {}
    final = players.seats[0].client.get_table(players.table)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE


def test_a_deal_voided_while_arranging_ends_and_the_series_goes_on(
    address: str, operator_metadata: Metadata, tmp_path: Path
) -> None:
    players = Players(address, tmp_path)
    release = threading.Event()
    first, second = players.seats

    def slow(hand: Hand, table: table_pb2.Table) -> Rows:
        if hand.deal_number == 2:  # still choosing when the operator voids the deal
            assert release.wait(60)
        return solver_arranger(hand, table)

    players.play(first)
    players.play(second, slow)
    wait_for(
        first.client,
        players.table,
        lambda t: (
            t.deal_number == 2
            and t.phase == table_pb2.TABLE_PHASE_ARRANGING
            and t.seats[0].confirmed
        ),
    )
    # The server shows the seat confirmed before its CommitArrangement call has returned to the
    # player's thread, which keeps the commitment only then.
    deadline = time.monotonic() + 60
    while 2 not in first.commitments:
        assert time.monotonic() < deadline, "seat 0 never kept its deal-2 commitment"
        time.sleep(0.01)
    void(address, operator_metadata, players.table, 2, "a spilled drink")
    release.set()
    players.join()
    assert_series_finished_without_deal_2(players)

    # sapsam-play's view of the same table, its events replayed: the void in plain words.
    said: list[str] = []
    view = TableView(Terminal(input, said.append), first.client, first)
    for event in first.client.watch(players.table):
        view.show_event(event)
    assert "the operator voided deal 2: a spilled drink (no points change; the deal does" in said
    assert "-- deal 3 started (2 of 3 that count; 1 voided) --" in said
    assert "== deal 4: the reveal ==" in said


def test_a_deal_voided_while_revealing_ends_and_the_series_goes_on(
    address: str, operator_metadata: Metadata, tmp_path: Path
) -> None:
    players = Players(address, tmp_path)
    release = threading.Event()
    first, second = players.seats

    def after_the_first(hand: Hand, table: table_pb2.Table) -> Rows:
        if hand.deal_number == 2:  # seat 1 confirms last, so seat 0 may be held before it reveals
            wait_for(second.client, players.table, lambda t: t.seats[0].confirmed)
        return solver_arranger(hand, table)

    def seat_1_committed_deal_2(event: table_event_pb2.TableEvent) -> bool:
        committed = event.arrangement_committed
        return (
            event.WhichOneof("payload") == "arrangement_committed"
            and committed.deal.endswith("/deals/2")
            and committed.seat == second.name
        )

    players.handlers = {0: blocking_on(seat_1_committed_deal_2, release)}
    players.play(first)
    players.play(second, after_the_first)
    wait_for(
        first.client,
        players.table,
        lambda t: (
            t.deal_number == 2
            and t.phase == table_pb2.TABLE_PHASE_REVEALING
            and t.seats[1].revealed
        ),
    )
    void(address, operator_metadata, players.table, 2, "a card seen")
    release.set()
    players.join()
    assert_series_finished_without_deal_2(players)


def test_a_replaced_seat_stops_its_loop_and_the_newcomer_finishes(
    address: str, operator_metadata: Metadata, tmp_path: Path
) -> None:
    players = Players(address, tmp_path)
    release = threading.Event()
    first, second = players.seats

    # Neither seat starts deal 2 before the operator's move: the table stays between deals.
    for seat in players.seats:
        hold_later_deals(seat.client, players.table, release)
    players.play(first)
    players.play(second, who="replaced")
    # Deal 1 played: a full table waits between deals before its first deal too (deal 0).
    wait_for(
        first.client,
        players.table,
        lambda t: t.phase == table_pb2.TABLE_PHASE_BETWEEN_DEALS and t.deal_number == 1,
    )
    newcomer = connect(address)
    registered = newcomer.register("newcomer")
    operator(address).ReplaceSeat(
        operator_service_pb2.ReplaceSeatRequest(seat=second.name, player=registered.player),
        metadata=operator_metadata,
    )
    release.set()
    replacing = take_seat(newcomer, players.table, player=registered.player)
    assert replacing.name == second.name
    players.play(replacing, who="newcomer")
    players.join()

    stopped = players.failures.pop("replaced")
    assert isinstance(stopped, SeatReplacedError)
    assert stopped.player == registered.player
    assert str(stopped) == (
        f"the operator gave {second.name} to {registered.player} (it was"
        f" players/{second.player_id()}): this client no longer plays it"
    )
    assert players.failures == {}
    for outcome in players.outcomes.values():
        assert [r.deal_number for r in outcome.results] == [1, 2, 3]
    final = newcomer.get_table(players.table)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    assert final.seats[1].player == registered.player

    said: list[str] = []
    view = TableView(Terminal(input, said.append), first.client, first)
    for event in first.client.watch(players.table):
        view.show_event(event)
    shown = " ".join(line.strip() for line in said)
    # The seat's series total is the seat's: it carries on, and the standings say whose it holds.
    assert (
        "seat 1 is now played by newcomer (seat 1 played it until deal 1); the seat's series"
        " total carries on: a series total is the seat's, not the player's" in shown
    )
    assert "newcomer (seat 1, seat 1 until deal 1)" in shown  # the standings after deal 2
    assert all(len(line) <= 80 for line in said)
