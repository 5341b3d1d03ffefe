"""The audit's part of surrender (docs/rules.md §2.8): the announcements follow the rules.

Pure; ``sapsam.audit.deal_sequence`` hands each announcing event of a deal to
:class:`AnnouncingTurns` as it walks the deal, so an announcement out of place fails the deal's
``sequence`` check with the reason given here:

- ``AnnouncementsOpened`` only at a table whose rule set has surrender, once every seat is settled,
  and its ``order`` is exactly the seats clockwise from the dealer's left, the dealer last,
  without the seats that timed out arranging (``announcing_order``): a forged order fails;
- each ``SurrenderAnnounced`` is by the seat whose turn it is, once; one the server recorded for
  a missed turn (``timed_out``) plays, the timeout default;
- the reveals open only after every seat in the order announced; at a table with surrender they
  may follow the arranging directly only when no seat was left to ask;
- a ``DeadlinesExtended`` of the ``announcing`` stage extends the turn of the seat due, only.

What a surrender pays is checked with the score: the published deal carries who surrendered
(``sapsam.domain.published``), and the ``scores`` check rescores it with
``sapsam.rules.surrender.score_with_surrender`` (a forged price or payee fails there).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Final

from sapsam.domain.events import AnnouncementsOpened, DeadlinesExtended, SurrenderAnnounced
from sapsam.rules.ruleset import SurrenderRule
from sapsam.rules.surrender import TIMEOUT_DEFAULT_SURRENDERS


class AnnouncementOutOfPlaceError(Exception):
    """An announcing event the rules do not allow where it stands; the message says why."""


@dataclass
class AnnouncingTurns:
    """The announcements of one deal so far, as its events are walked through."""

    surrender_on: bool
    order: tuple[int, ...] | None = None
    announced: list[int] = field(default_factory=list)

    @property
    def turn(self) -> int | None:
        """The seat due to announce, or ``None`` when none is (not opened, or all done)."""
        if self.order is None or len(self.announced) >= len(self.order):
            return None
        return self.order[len(self.announced)]

    def opened(
        self, event: AnnouncementsOpened, dealer: int, seat_count: int, timed_out: Collection[int]
    ) -> None:
        """The announcements open: only with surrender, once, in the rules' order."""
        if not self.surrender_on:
            raise AnnouncementOutOfPlaceError("the table's rule set has no surrender")
        if self.order is not None:
            raise AnnouncementOutOfPlaceError("the announcements were already opened")
        # Imported here: the domain's surrender module brings the table's commands and state,
        # which a verification of a deal without surrender never needs (start-up, issue #15).
        from sapsam.domain.table_surrender import announcing_order

        expected = announcing_order(dealer, seat_count, timed_out)
        if tuple(event.order) != expected:
            raise AnnouncementOutOfPlaceError(
                f"its order is {list(event.order)}; clockwise from the dealer's left (seat "
                f"{dealer} deals), without the seats that timed out arranging, it is "
                f"{list(expected)}"
            )
        if not expected:
            raise AnnouncementOutOfPlaceError("no seat is left to ask: the reveals open at once")
        self.order = expected

    def said(self, event: SurrenderAnnounced) -> None:
        """One announcement: by the seat whose turn it is; a missed turn plays."""
        turn = self.turn
        if turn is None:
            raise AnnouncementOutOfPlaceError("no seat is due to announce")
        if event.seat != turn:
            raise AnnouncementOutOfPlaceError(
                f"seat {event.seat} announced on seat {turn}'s turn "
                f"(the order is {list(self.order or ())})"
            )
        if event.timed_out and event.surrender != TIMEOUT_DEFAULT_SURRENDERS:
            raise AnnouncementOutOfPlaceError(
                f"seat {event.seat} missed its turn, so it plays; the log has it surrender"
            )
        self.announced.append(event.seat)

    def reveals_may_open(self, settled_after_arranging: bool, nobody_to_ask: bool) -> None:
        """The reveals open: after the last announcement, or straight after the arranging when
        the table has no surrender or no seat was left to ask."""
        if self.order is None:
            if self.surrender_on and settled_after_arranging and not nobody_to_ask:
                raise AnnouncementOutOfPlaceError(
                    "the table's rule set has surrender: the seats announce before the reveals"
                )
            return
        if self.turn is not None:
            raise AnnouncementOutOfPlaceError(
                f"reveals opened before seat {self.turn} announced play or surrender"
            )

    def extended(self, event: DeadlinesExtended) -> None:
        """An outage moved the announcing deadline: only the seat due may be named."""
        turn = self.turn
        if turn is None or tuple(event.seats) != (turn,):
            raise AnnouncementOutOfPlaceError(
                f"it extends seats {list(event.seats)}; the seat due to announce is {turn}"
            )


def surrender_in(recorded_rule_set: Mapping[str, object]) -> bool:
    """Whether a recorded rule set (``TableCreated.rule_set``) has surrender: its ``surrender``
    key, absent when off (``sapsam.rules.ruleset.SURRENDER_FIELDS``)."""
    return recorded_rule_set.get("surrender", _OFF) != _OFF


_OFF: Final = SurrenderRule.OFF.value  # read once: every deal verified asks


def tell_announcement(
    event: AnnouncementsOpened | SurrenderAnnounced,
    who: Callable[[int], str] = lambda seat: f"seat {seat}",
    by_operator: bool = False,
) -> str:
    """The replay's line for an announcing event (``sapsam audit replay``), each seat named by
    ``who``; ``by_operator``: the event was recorded by the operator (a forced timeout)."""
    if isinstance(event, AnnouncementsOpened):
        order = ", ".join(who(seat) for seat in event.order)
        return f"every seat is settled: the seats announce play or surrender in turn ({order})"
    if event.timed_out and by_operator:
        return f"the operator timed {who(event.seat)} out of its turn to announce: it plays"
    if event.timed_out:
        return f"{who(event.seat)} let its turn pass: it plays"
    return f"{who(event.seat)} {'surrenders' if event.surrender else 'plays'}"
