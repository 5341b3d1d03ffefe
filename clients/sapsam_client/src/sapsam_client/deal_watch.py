"""While the person types rows, ``sapsam-play`` keeps an eye on the deal they are for.

The SDK's play loop reads no event while its arranger (the person at the prompt) chooses rows, so
a deal that ends meanwhile — the operator voids it, or the seat runs out of time — would go
unnoticed until the rows were sent, and refused. A :class:`DealWatch` reads the table every
``POLL_SECONDS`` while the prompt is up; once the deal is over without the person's rows it says
so at once, above the prompt ("the operator voided deal 2 while you were arranging: ..."), and
the dialogue, at the next line typed, ends without sending anything
(``sapsam_client.seat_types.DealEndedError``). A last look is taken before rows are sent, so rows
confirmed in the seconds between two reads are not sent into a deal that is over either.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any, Final

import grpc

from sapsam_client.client import Client, table_name
from sapsam_client.errors import SapsamError, from_rpc_error
from sapsam_client.prompts import Terminal
from sapsam_client.seat_types import DealEndedError
from sapsam_proto.v1 import table_pb2, table_service_pb2

POLL_SECONDS: Final = 2.0
"""How often the table is read while the person types (a person takes seconds per row)."""
CALL_SECONDS: Final = 2.0
"""How long one of the watch's reads may take. Each is tried once, never retried: a server out of
reach is the play loop's to wait for, and no read must still be running once the prompt is over
(a grpc call left running in another thread can hold up the program's exit)."""

NOT_SENT: Final = "what you type now is not sent (press Enter to go on)"
"""The end of a notice shown while the person is at the prompt."""
ROWS_NOT_SENT: Final = "your rows were not sent"
"""The end of a notice from the last look, once the person has confirmed their rows."""


def deal_over_notice(
    table: table_pb2.Table,
    seat: str,
    deal: int,
    result: table_pb2.DealResult | None,
    by_operator: Callable[[], bool | None] = lambda: False,
) -> str | None:
    """What to tell a person still arranging deal number ``deal`` at ``seat``, given the table
    as read (and, once the table is past the deal, the deal's ``result``); None while the deal
    still waits for their rows. ``by_operator``, asked only when the seat was timed out: whether
    the operator timed it out (the event says so: ``SeatTimedOut.by_operator``); None when that
    could not be read, and the notice then says no more than that the seat was timed out."""
    mine = next((held for held in table.seats if held.name == seat), None)
    same_deal = table.deal_number == deal
    if same_deal and mine is not None:
        if mine.timed_out:
            return f"{_timed_out(by_operator(), deal)}: the table went on without your rows;"
        if mine.confirmed:
            return f"your rows for deal {deal} were confirmed by another session of yours;"
    if same_deal and table.phase == table_pb2.TABLE_PHASE_ARRANGING:
        return None
    # Only the operator ends a deal that neither has the seat's rows nor timed the seat out; and
    # a deal the table has gone past unscored was voided (every other deal ends scored).
    voided_now = same_deal and mine is not None
    if voided_now or (result is not None and not result.scored):
        return f"the operator voided deal {deal} while you were arranging:"
    if result is not None and result.scored:
        forced = by_operator()
        why = "you were timed out" if forced is None else "your time ran out"
        if forced:
            why = "the operator timed you out"
        return f"deal {deal} was scored without your rows ({why}):"
    return f"deal {deal} ended while you were arranging:"


def _timed_out(by_operator: bool | None, deal: int) -> str:
    if by_operator is None:
        return f"your seat was timed out of deal {deal}"
    if by_operator:
        return f"the operator timed you out of deal {deal}"
    return f"you ran out of time on deal {deal}"


def quick_reads(
    client: Client, table: str
) -> tuple[
    Callable[[], table_pb2.Table],
    Callable[[int], table_pb2.DealResult],
    Callable[[str, int, int], bool | None],
]:
    """Reads of ``table``, of one of its deals and of whether the operator timed a seat out, each
    one call of at most ``CALL_SECONDS``, not retried (``SapsamError`` when it fails, but for
    the last: None), and not heard by ``client.on_reachability``."""

    def once(method: Callable[..., Any], request: Any) -> Any:
        try:
            return method(request, metadata=client.metadata(), timeout=CALL_SECONDS)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None

    def read_table() -> table_pb2.Table:
        request = table_service_pb2.GetTableRequest(name=table_name(table))
        return once(client.tables.GetTable, request).table  # type: ignore[no-any-return]

    def read_result(deal: int) -> table_pb2.DealResult:
        name = f"{table_name(table)}/deals/{deal}"
        request = table_service_pb2.GetDealResultRequest(name=name)
        return once(client.tables.GetDealResult, request).result  # type: ignore[no-any-return]

    def read_by_operator(seat: str, after_version: int, until_version: int) -> bool | None:
        # The table read says that the seat timed out, not who timed it out: its SeatTimedOut
        # event does. The events since the prompt began are read once, until that version.
        request = table_service_pb2.WatchTableRequest(
            table=table_name(table), after_version=after_version, batch_events=True
        )
        stream = client.tables.WatchTable(request, metadata=client.metadata(), timeout=CALL_SECONDS)
        try:
            for response in stream:
                for event in response.events or [response.event]:
                    timed_out = event.seat_timed_out
                    if event.WhichOneof("payload") == "seat_timed_out" and timed_out.seat == seat:
                        return bool(timed_out.by_operator)
                    if event.version >= until_version:
                        return None
        except grpc.RpcError:
            return None  # unreadable in time: the notice says only that the seat timed out
        finally:
            stream.cancel()
        return None

    return read_table, read_result, read_by_operator


class DealWatch:
    """Reads the table every ``interval`` seconds while the person arranges deal ``deal``;
    :meth:`notice` is what they were told once the deal ended (None until then)."""

    def __init__(
        self,
        terminal: Terminal,
        read_table: Callable[[], table_pb2.Table],
        read_result: Callable[[int], table_pb2.DealResult],
        read_by_operator: Callable[[str, int, int], bool | None],
        seat: str,
        deal: int,
        interval: float = POLL_SECONDS,
        since_version: int = 0,
    ) -> None:
        self.terminal = terminal
        self.read_table = read_table
        self.read_result = read_result
        self.read_by_operator = read_by_operator
        self.since_version = since_version  # the table's version when the prompt began
        self.seat = seat
        self.deal = deal
        self.interval = interval
        self._notice: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="deal-watch", daemon=True)

    def start(self) -> None:
        """Watch until :meth:`stop`."""
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (the prompt is over), a read in progress included."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(CALL_SECONDS + 1)

    def notice(self) -> str | None:
        """What the person was told about the deal ending, or None while it goes on."""
        with self._lock:
            return self._notice

    def raise_if_over(self) -> None:
        """Raise :class:`DealEndedError` once the deal is over (``Terminal.after_answer``: the
        dialogue ends at the next line typed)."""
        if self.notice() is not None:
            raise DealEndedError(self.notice())

    def check(self, tail: str = NOT_SENT) -> str | None:
        """Read the table now; tell the person (once) if the deal ended, the notice ending with
        ``tail``; the notice, if any."""
        if self.notice() is not None:
            return self.notice()
        try:
            table = self.read_table()
        except SapsamError:
            return None  # the server out of reach: the play loop will say so, and try again
        result = None
        if table.deal_number != self.deal:
            with contextlib.suppress(SapsamError):  # unreadable: the notice says less
                result = self.read_result(self.deal)
        said = deal_over_notice(
            table,
            self.seat,
            self.deal,
            result,
            lambda: self.read_by_operator(self.seat, self.since_version, table.version),
        )
        if said is None:
            return None
        with self._lock:
            if self._notice is not None:
                return self._notice
            self._notice = f"{said} {tail}"
        self.terminal.interrupt(self._notice)
        return self._notice

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            if self.check() is not None:
                return
