"""What ``sapsam-play`` shows of the table while a series is played: a line for each event a
player wants to see, the results of each deal from the player's own seat
(``sapsam_client.results_text``), and whom the table waits for (``sapsam_client.waiting``).

A deal's results are shown before the next deal's prompt, never after it: the SDK reads the table
after each event and may find the next deal already dealt (the other seats are quick) before the
``DealScored`` event is seen; the prompt then fetches the finished deal's result first, and the
event, when it comes, is not shown twice.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from sapsam_client.arranging import arrange, declaration
from sapsam_client.client import Client, Hand, seat_position
from sapsam_client.commitment import Rows
from sapsam_client.connection import deal_number
from sapsam_client.deal_watch import POLL_SECONDS, ROWS_NOT_SENT, DealWatch, quick_reads
from sapsam_client.errors import SapsamError
from sapsam_client.prompts import Terminal
from sapsam_client.results_text import (
    deal_lines,
    deal_started_line,
    final_lines,
    label,
    replaced_lines,
    seat_labels,
    standing_label,
    timed_out_line,
    voided_lines,
)
from sapsam_client.seat import Seat
from sapsam_client.seat_types import Commitment, DealEndedError
from sapsam_client.waiting import awaited, waiting_text
from sapsam_proto.v1 import table_event_pb2, table_pb2

REDRAW_SECONDS: Final = 1.0
"""How often a status drawn in place is redrawn (its countdown moves by the second)."""
REPEAT_SECONDS: Final = 20.0
"""How often a terminal that cannot redraw is reminded of a wait that goes on."""

Clock = Callable[[], datetime]


def _now() -> datetime:
    return datetime.now(UTC)


class WaitingStatus:
    """The status line: whom the table waits for, updated on every table read and by a timer
    thread (a countdown, or the time waited so far) while the player is not being asked."""

    def __init__(self, terminal: Terminal, me: str, clock: Clock = _now) -> None:
        self.terminal = terminal
        self.me = me
        self.clock = clock
        self._lock = threading.Lock()
        self._table: table_pb2.Table | None = None
        self._labels: dict[str, str] = {}
        self._key: object = None
        self._since = clock()
        self._shown_at = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="waiting-status", daemon=True)

    def start(self) -> None:
        """Keep the status up to date until :meth:`stop`."""
        self._thread.start()

    def stop(self) -> None:
        """End the timer and take the status off the screen."""
        self._stop.set()
        self.pause()

    def update(self, table: table_pb2.Table, labels: dict[str, str]) -> None:
        """The table as just read: say whom it waits for now, if that changed."""
        mine = next((seat for seat in table.seats if seat.name == self.me), None)
        if (
            table.phase == table_pb2.TABLE_PHASE_ARRANGING
            and mine is not None
            and not mine.confirmed
            and not mine.timed_out
        ):
            self.pause()  # the player is about to be asked for rows
            return
        key = (table.phase, table.deal_number, awaited(table, self.me))
        with self._lock:
            changed = key != self._key
            if changed:
                self._key = key
                self._since = self.clock()
            self._table, self._labels = table, labels
        if changed:
            self._show()

    def pause(self) -> None:
        """No status until the next table read (the player is asked something)."""
        with self._lock:
            self._table, self._key = None, None
        self.terminal.end_status()

    def text(self) -> str | None:
        """The status now, or None when the table waits for no one but the player."""
        with self._lock:
            if self._table is None:
                return None
            return waiting_text(self._table, self.me, self._labels, self.clock(), self._since)

    def _show(self) -> None:
        text = self.text()
        if text is None:
            self.terminal.end_status()
        else:
            self.terminal.status(text)
            self._shown_at = time.monotonic()

    def _run(self) -> None:
        while not self._stop.wait(REDRAW_SECONDS):
            due = time.monotonic() - self._shown_at >= REPEAT_SECONDS
            if self.terminal.redraw is not None or (due and self.text()):
                self._show()


class TableView:
    """The table as the player sees it: seat names, events, results, the waiting status."""

    def __init__(self, terminal: Terminal, client: Client, seat: Seat) -> None:
        self.terminal = terminal
        self.client = client
        self.seat = seat
        self.labels: dict[str, str] = {}
        self.series_length = 0
        self.shown_deals: set[int] = set()
        self.prompted = 0  # the last deal whose cards the player was shown
        self.voided = 0  # deals the operator voided (they do not count towards the series)
        self.read_version = 0  # the table's version when last read
        self.waiting = WaitingStatus(terminal, seat.name)
        self.deal_poll_seconds = POLL_SECONDS  # how often the deal is checked while typing
        self.last_started = 0  # the last deal number started
        self.changed_hands: dict[str, tuple[str, int]] = {}  # seat: (previous player, last deal)
        # Who held each seat at the event being shown (PlayerSeated, SeatReplaced): a resumed
        # session replays the whole log, and a deal played before a replacement is named by the
        # player who played it, not by the seat's holder now.
        self.holders: dict[str, str] = {}  # seat: "players/{id}"
        self.display_names: dict[str, str] = {}  # "players/{id}": display name
        self.forced: dict[int, set[str]] = {}  # deal: the seats the operator timed out

    def say(self, lines: list[str]) -> None:
        """Several lines."""
        for line in lines:
            self.terminal.say(line)

    def refresh(self, seen: int | None = None) -> table_pb2.Table:
        """Read the table: the seats' names, the series length, and whom it waits for, unless
        the table is already past the last event ``seen`` (the events still to come say what
        happened first; a status now would run ahead of them)."""
        table = self.client.get_table(self.seat.table)
        self.read_version = table.version
        self.series_length = table.rule_set.series_length
        self.labels = seat_labels(table.seats)
        for seat in table.seats:
            if seat.player:
                self.display_names[seat.player] = seat.display_name
        if seen is None or seen >= table.version:
            self.waiting.update(table, self.labels)
        return table

    def name_of(self, seat: str) -> str:
        """The display name of who held ``seat`` at the event being shown ("you" for the
        reader), or the seat number."""
        return "you" if self._mine(seat) else label(self.event_labels(), seat)

    def _mine(self, seat: str) -> bool:
        holder = self.holders.get(seat)
        if holder is None:  # no seating seen (a view fed events part-way): the seat is the seat
            return seat == self.seat.name
        try:
            return holder == f"players/{self.seat.player_id()}"
        except (SapsamError, ValueError):
            return seat == self.seat.name

    def event_labels(self) -> dict[str, str]:
        """What to call each seat at the event being shown: its holder then (``holders``), by
        display name, as ``seat_labels`` names the seats of a table read."""
        if not self.holders:
            return self.labels
        seats = [
            table_pb2.Seat(
                name=seat,
                player=self.holders.get(seat, ""),
                display_name=self._display_name(self.holders.get(seat, ""), seat),
            )
            for seat in sorted({*self.labels, *self.holders}, key=seat_position)
        ]
        return seat_labels(seats)

    def _display_name(self, player: str, seat: str) -> str:
        """A player's display name, asked of the server once (a previous holder is not among
        the table's seats now); empty when it cannot be read."""
        if not player:
            return ""
        if player not in self.display_names:
            try:
                self.display_names[player] = self.client.get_player(player).display_name
            except (SapsamError, ValueError):
                return ""
        return self.display_names[player]

    def arranger(self, hand: Hand, table: table_pb2.Table) -> Rows:
        """The SDK's arranger: the previous deal's results if not shown yet, then the dialogue,
        watched: a deal that ends while the person types (voided, out of time) is said at once
        and ends the dialogue, and nothing is sent for it (``sapsam_client.deal_watch``)."""
        self.waiting.pause()
        self.catch_up(hand.deal_number - 1)
        self.prompted = max(self.prompted, hand.deal_number)
        watch = DealWatch(
            self.terminal,
            *quick_reads(self.client, self.seat.table),
            self.seat.name,
            hand.deal_number,
            self.deal_poll_seconds,
            table.version,
        )
        self.terminal.after_answer = watch.raise_if_over
        watch.start()
        try:
            rows = arrange(self.terminal, hand, table, self.seat.position)
        finally:
            watch.stop()
            self.terminal.after_answer = None
        if watch.check(ROWS_NOT_SENT) is not None:  # the last look, before anything is sent
            raise DealEndedError(watch.notice())
        return rows

    def declarer(self, hand: Hand, table: table_pb2.Table) -> str:
        """The SDK's declarer: at a table with naturals, the player is offered the natural its
        hand holds (``sapsam_client.arranging.declaration``)."""
        self.waiting.pause()
        return declaration(self.terminal, hand, table)

    def announcer(self, committed: Commitment | None, table: table_pb2.Table) -> bool:
        """On the seat's turn at a table with surrender (docs/rules.md §2.8): the rows the
        player committed, what the seats before said, and the question play or surrender."""
        self.waiting.pause()
        rules = table.rule_set
        price = rules.surrender_price * max(rules.row_unit, 1)
        said = [
            f"  {self.name_of(seat.name)}: "
            + (
                "surrenders"
                if seat.announcement == table_pb2.SURRENDER_CHOICE_SURRENDER
                else "plays"
            )
            for seat in table.seats
            if seat.announcement != table_pb2.SURRENDER_CHOICE_UNSPECIFIED
        ]
        if said:
            self.say(["announced so far:", *said])
        if committed is not None:
            rows = committed.rows
            self.terminal.say(
                f"your rows: {' '.join(rows.front)} | {' '.join(rows.middle)} | "
                f"{' '.join(rows.back)}"
            )
        return self.terminal.yes_no(
            f"Play or surrender? Surrender this hand (you pay {price} to each seat that plays)?"
        )

    def catch_up(self, deal_number: int) -> None:
        """Show deal ``deal_number``'s results now if they are not shown yet."""
        if deal_number < 1 or deal_number in self.shown_deals:
            return
        try:
            result = self.client.get_deal_result(f"{self.seat.table}/deals/{deal_number}")
        except SapsamError:
            return  # not there (a series started later), or not readable: the event will show it
        if result.scored:
            self.show_result(result)

    def show_result(self, result: table_pb2.DealResult) -> None:
        """A scored deal, once."""
        if result.deal_number in self.shown_deals:
            return
        self.shown_deals.add(result.deal_number)
        # After a voided deal, deal numbers run past the series length: no "deal 4 of 3".
        series_length = 0 if self.voided else self.series_length
        # From the reader's side only if the reader held the seat for that deal.
        me = self.seat.name if self._mine(self.seat.name) else ""
        lines = deal_lines(
            result,
            me,
            self.event_labels(),
            self.terminal.style,
            series_length,
            self.standing_labels(),
            self.forced.get(result.deal_number, set()),
        )
        self.say(lines)

    def note_timeout(self, timed_out: table_event_pb2.SeatTimedOut) -> None:
        """Remember a seat the operator timed out, so its deal's results say so."""
        if timed_out.by_operator:
            self.forced.setdefault(deal_number(timed_out.deal), set()).add(timed_out.seat)

    def player_name(self, player: str, seat: str) -> str:
        """A player's display name ("you" for the reader's own), asked of the server; the seat's
        label when it cannot be read. (A table's labels name its players now: a replay of an
        earlier event needs the name of who was there then.)"""
        try:
            if player == f"players/{self.seat.player_id()}":
                return "you"
            return self.client.get_player(player).display_name or label(self.labels, seat)
        except (SapsamError, ValueError):
            return label(self.labels, seat)

    def standing_labels(self) -> dict[str, str]:
        """The names the standings give the seats: a seat that changed hands names its player
        now and the one before, whose points its series total holds too."""
        labels = self.event_labels()
        named = dict(labels)
        for seat, (previous, last_deal) in self.changed_hands.items():
            named[seat] = standing_label(label(labels, seat), seat, previous, last_deal)
        return named

    def show_event(self, event: table_event_pb2.TableEvent) -> None:
        """One line (or a block) for the events a player wants to see, then the status."""
        kind = event.WhichOneof("payload")
        me = self.seat.name
        if kind == "player_seated":
            self.holders[event.player_seated.seat] = event.player_seated.player
            self.refresh(event.version)
            seated = event.player_seated.seat
            self.terminal.say(f"seat {seat_position(seated)}: {self.name_of(seated)} sat down")
        elif kind == "dealer_chosen":
            dealer = event.dealer_chosen.dealer_seat
            self.terminal.say(
                f"dealer drawn by lot: seat {seat_position(dealer)} ({self.name_of(dealer)})"
            )
        elif kind == "deal_started":
            number = event.deal_started.deal_number
            self.last_started = max(self.last_started, number)
            if number > self.prompted:
                self.terminal.say(deal_started_line(number, self.series_length, self.voided))
        elif kind == "seat_confirmed" and event.seat_confirmed.seat != me:
            who = self.name_of(event.seat_confirmed.seat)
            self.terminal.say(f"{who} (seat {seat_position(event.seat_confirmed.seat)}) confirmed")
        elif kind == "reveals_opened":
            self.terminal.say("every seat confirmed: revealing")
        elif kind == "announcements_opened":
            self.terminal.say("every seat confirmed: each announces play or surrender in turn")
        elif kind == "surrender_announced" and (
            event.surrender_announced.seat != me or event.surrender_announced.by_operator
        ):
            announced = event.surrender_announced
            what = (
                "surrenders"
                if announced.choice == table_pb2.SURRENDER_CHOICE_SURRENDER
                else "plays"
            )
            late = ""
            if announced.timed_out:
                late = (
                    " (the operator timed it out)"
                    if announced.by_operator
                    else " (its time ran out)"
                )
            who = self.name_of(announced.seat)
            if who == "you":  # only when the operator timed the reader out of its turn
                self.terminal.say("the operator timed you out of your turn to announce: you play")
            else:
                self.terminal.say(f"{who} (seat {seat_position(announced.seat)}) {what}{late}")
        elif kind == "seat_timed_out":
            timed_out = event.seat_timed_out
            self.note_timeout(timed_out)
            self.terminal.say(timed_out_line(self.name_of(timed_out.seat), timed_out))
        elif kind == "deal_voided":
            self.voided += 1
            self.say(voided_lines(event.deal_voided))
        elif kind == "seat_replaced":
            replaced = event.seat_replaced.seat
            previous = self.player_name(event.seat_replaced.previous_player, replaced)
            self.holders[replaced] = event.seat_replaced.player
            self.refresh(event.version)  # the new player's name
            name = self.name_of(replaced)
            self.changed_hands[replaced] = (previous, self.last_started)
            self.say(replaced_lines(replaced, name, previous, self.last_started))
        elif kind == "deal_scored":
            self.show_result(event.deal_scored.result)
        elif kind == "series_completed":
            self.waiting.stop()
            self.say(final_lines(event.series_completed, me, self.standing_labels()))
            return
        if kind not in ("player_seated", "seat_replaced") and event.version >= self.read_version:
            self.refresh(event.version)  # (a table read already past this event says nothing)
