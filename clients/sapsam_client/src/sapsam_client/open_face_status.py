"""``sapsam-play``'s waiting status at an open-face table, with the deadline counted down (issue
#18's leftover: the closed game's play shows it, ``sapsam_client.table_view.WaitingStatus``).

The table's open-face view carries the deadline of the move it waits for (``OpenFaceDeal.
deadline_time``: the seat on turn's placement, the Fantasyland hands, Pineapple's discards).
While another seat is due the status says "waiting for Bob (seat 1) to place street 3: 25 s
left", redrawn in place every second where the terminal can (else repeated every
``REPEAT_SECONDS``); "(no time limit)" at a table without one. On the person's own turn
:func:`time_left_text` says how long it has before the server moves for it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from sapsam_client.prompts import Terminal
from sapsam_client.waiting import duration
from sapsam_proto.v1 import open_face_pb2, table_pb2

REDRAW_SECONDS: Final = 1.0
REPEAT_SECONDS: Final = 20.0

Clock = Callable[[], datetime]


def _now() -> datetime:
    return datetime.now(UTC)


def deadline_of(message: open_face_pb2.OpenFaceDeal | table_pb2.Table) -> datetime | None:
    """The current deadline of a deal (or of the table read, whose ``deadline_time`` is the
    move it waits for), or None without one."""
    if not message.HasField("deadline_time"):
        return None
    return message.deadline_time.ToDatetime(tzinfo=UTC)


def countdown_text(whom: str, deadline: datetime | None, now: datetime) -> str:
    """``waiting for …: 25 s left`` (or ``the time ran out 3 s ago``, or no time limit)."""
    if deadline is None:
        return f"waiting for {whom} (no time limit)"
    left = (deadline - now).total_seconds()
    if left >= 0:
        return f"waiting for {whom}: {duration(left)} left"
    return f"waiting for {whom}: the time ran out {duration(-left)} ago"


def time_left_text(
    deal: open_face_pb2.OpenFaceDeal | table_pb2.Table, now: datetime | None = None
) -> str:
    """What the person is told on its own turn: ``you have 25 s`` or '' without a deadline."""
    deadline = deadline_of(deal)
    if deadline is None:
        return ""
    left = (deadline - (now or _now())).total_seconds()
    return f"you have {duration(left)} (then the server moves for you)"


class OpenFaceWaiting:
    """The status line, kept up to date by a timer thread until :meth:`stop`."""

    def __init__(self, terminal: Terminal, clock: Clock = _now) -> None:
        self.terminal = terminal
        self.clock = clock
        self._lock = threading.Lock()
        self._whom: str | None = None
        self._deadline: datetime | None = None
        self._shown_at = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ofc-waiting", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.pause()

    def update(self, whom: str, deadline: datetime | None) -> None:
        """The table waits for ``whom`` until ``deadline``: shown now if that changed."""
        with self._lock:
            changed = (whom, deadline) != (self._whom, self._deadline)
            self._whom, self._deadline = whom, deadline
        if changed:
            self._show()

    def pause(self) -> None:
        """No status until the next :meth:`update` (the person is asked something)."""
        with self._lock:
            self._whom = None
        self.terminal.end_status()

    def text(self) -> str | None:
        with self._lock:
            if self._whom is None:
                return None
            return countdown_text(self._whom, self._deadline, self.clock())

    def _show(self) -> None:
        text = self.text()
        if text is not None:
            self.terminal.status(text)
            self._shown_at = time.monotonic()

    def _run(self) -> None:
        while not self._stop.wait(REDRAW_SECONDS):
            due = time.monotonic() - self._shown_at >= REPEAT_SECONDS
            with self._lock:
                timed = self._deadline is not None
            if (self.terminal.redraw is not None and timed) or due:
                self._show()
