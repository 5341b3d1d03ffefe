"""The record of a deal's play-or-surrender announcements (docs/rules.md §2.8), as the log tells
it; ``sapsam.domain.table_surrender`` decides them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Announcements:
    """Who announces, in which order, and what each seat announced so far.

    ``order``: the seats in turn (``AnnouncementsOpened.order``). ``surrendered``: per seat (index
    = seat), ``True`` surrendered, ``False`` plays, ``None`` not announced (yet, or never: a seat
    left out of the order plays). ``timed_out``: the seats that let their turn pass.
    ``deadline_ms``: the current turn's deadline, ``None`` for none.
    """

    order: tuple[int, ...]
    surrendered: tuple[bool | None, ...]
    timed_out: tuple[int, ...] = ()
    deadline_ms: int | None = None

    @property
    def turn(self) -> int | None:
        """The seat whose turn it is, or ``None`` when every seat in the order has announced."""
        for seat in self.order:
            if self.surrendered[seat] is None:
                return seat
        return None

    def surrendering_seats(self) -> tuple[bool, ...]:
        """Per seat, whether it surrendered (a seat that did not announce plays)."""
        return tuple(choice is True for choice in self.surrendered)
