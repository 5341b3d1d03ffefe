"""Whom a table waits for, and for how long, in words: pure, no I/O.

``sapsam-play`` reads the table after each event and, while the next move is another seat's (or
the server's), says so: "waiting for Bob (seat 1) to reveal: 25 s left" when the phase has a
deadline, "… 1 min 05 s so far (no time limit)" when it has none. The reader's own automatic moves
(entropy, the cut, the reveal, starting a deal) are left out: the SDK makes them at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Final

from sapsam_client.client import seat_position
from sapsam_proto.v1 import table_pb2

SERVER: Final = ""
"""The "seat" named when the server itself has the next move (dealing, revealing the seed)."""

Awaited = tuple[tuple[str, tuple[str, ...]], ...]
"""What the table waits for: (what is to be done, the seats to do it) in order."""


def awaited(table: table_pb2.Table, me: str) -> Awaited:
    """Every move the table waits for, but ``me``'s (the seats by name, in seat order)."""
    others = [seat for seat in table.seats if seat.name != me]
    phase = table.phase
    if phase == table_pb2.TABLE_PHASE_SEATING:
        empty = tuple(seat.name for seat in table.seats if not seat.player)
        return (("to sit down", empty),) if empty else ()
    if phase == table_pb2.TABLE_PHASE_AWAITING_DEALER:
        first = [seat.name for seat in table.seats if seat.position == 0 and seat.name != me]
        return (("to draw the first dealer by lot", tuple(first)),) if first else ()
    if phase == table_pb2.TABLE_PHASE_BETWEEN_DEALS:
        if not table.dealer_seat or table.dealer_seat == me:
            return ()
        return ((f"to start deal {table.deal_number + 1}", (table.dealer_seat,)),)
    if phase == table_pb2.TABLE_PHASE_AWAITING_CUT:
        groups: list[tuple[str, tuple[str, ...]]] = []
        entropy = tuple(seat.name for seat in others if not seat.entropy_contributed)
        if entropy:
            groups.append(("to add entropy", entropy))
        if table.cutter_seat and table.cutter_seat != me:
            groups.append(("to cut the deck", (table.cutter_seat,)))
        return tuple(groups)
    if phase == table_pb2.TABLE_PHASE_DEALING:
        return (("to deal", (SERVER,)),)
    if phase == table_pb2.TABLE_PHASE_AWAITING_SEED:
        return (("to reveal the seed and score the deal", (SERVER,)),)
    if phase == table_pb2.TABLE_PHASE_ARRANGING:
        playing = [seat for seat in others if not seat.timed_out and not seat.confirmed]
        arranging = tuple(seat.name for seat in playing if not seat.committed)
        confirming = tuple(seat.name for seat in playing if seat.committed)
        return tuple(
            (doing, seats)
            for doing, seats in (("to arrange", arranging), ("to confirm", confirming))
            if seats
        )
    if phase == table_pb2.TABLE_PHASE_ANNOUNCING:
        turn = table.announcing_seat
        return (("to announce play or surrender", (turn,)),) if turn and turn != me else ()
    if phase == table_pb2.TABLE_PHASE_REVEALING:
        revealing = tuple(seat.name for seat in others if not seat.timed_out and not seat.revealed)
        return (("to reveal", revealing),) if revealing else ()
    return ()


def duration(seconds: float) -> str:
    """``"7 s"``, ``"1 min 05 s"``, ``"2 h 03 min"``."""
    whole = max(0, int(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def seat_words(seat: str, labels: Mapping[str, str]) -> str:
    """``Bob (seat 1)``; ``seat 1`` for a seat without a name; ``the server``."""
    if seat == SERVER:
        return "the server"
    position = seat_position(seat)
    name = labels.get(seat, "")
    if not name or f"seat {position}" in name:
        return name or f"seat {position}"
    return f"{name} (seat {position})"


def listed(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def waiting_text(
    table: table_pb2.Table,
    me: str,
    labels: Mapping[str, str],
    now: datetime,
    since: datetime,
) -> str | None:
    """ "waiting for … to …: how long", or None when the table waits for no one but ``me``.

    The time is the phase's deadline counted down when the table has one, else the time waited
    ``since`` the wait began (as the caller saw it)."""
    groups = awaited(table, me)
    if not groups:
        return None
    if table.phase == table_pb2.TABLE_PHASE_SEATING:
        empty = groups[0][1]
        players = "player" if len(empty) == 1 else "players"
        who = f"{len(empty)} more {players} to sit down"
    else:
        who = "; ".join(
            f"{listed([seat_words(seat, labels) for seat in seats])} {doing}"
            for doing, seats in groups
        )
    if table.HasField("deadline_time"):
        left = (table.deadline_time.ToDatetime(tzinfo=UTC) - now).total_seconds()
        if left >= 0:
            return f"waiting for {who}: {duration(left)} left"
        return f"waiting for {who}: the time ran out {duration(-left)} ago"
    waited = (now - since).total_seconds()
    if waited < 1:
        return f"waiting for {who} (no time limit)"
    return f"waiting for {who}: {duration(waited)} so far (no time limit)"
