"""Deciding the play-or-surrender announcements (docs/rules.md §2.8): ``decide``'s part for the
``ANNOUNCING`` phase, and the end of the arranging phase that leads into it.

Source 002: after every player has set their hand, each in turn, clockwise from the dealer's
left, announces whether they play it. Under a rule set with ``surrender`` on, the last
confirmation (or arranging timeout) opens the announcements (``AnnouncementsOpened``) instead of
the reveals; each seat in ``order`` then announces (``SurrenderAnnounced``), and the last
announcement opens the reveals in the same append. Each turn has its own deadline,
``surrender_seconds`` from the announcement before it; a seat whose deadline passes plays (the
timeout default, :data:`sapsam.rules.surrender.TIMEOUT_DEFAULT_SURRENDERS`). A seat that missed
the arranging deadline is not asked: it plays.

Only the announcement is public; no card is, until the reveals (docs/fairness.md §20). A
player with a registered key signs its announcement as it signs its commits (docs/fairness.md
§19); the server's announcement for a missed turn is unsigned.
"""

from __future__ import annotations

from collections.abc import Collection

from sapsam import fairness
from sapsam.domain.announcements import Announcements
from sapsam.domain.commands import AnnounceSurrender, PlayerSignature
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import AnnouncementsOpened, Event, RevealsOpened, SurrenderAnnounced
from sapsam.domain.move_signatures import check_signature
from sapsam.domain.table_checks import current_deal, require_deal, require_phase, seat_for
from sapsam.domain.table_state import DealState, TablePhase, TableState
from sapsam.fairness import player_keys
from sapsam.rules.ruleset import SurrenderRule
from sapsam.rules.surrender import TIMEOUT_DEFAULT_SURRENDERS


def announcing_order(
    dealer: int, seat_count: int, skipped: Collection[int] = ()
) -> tuple[int, ...]:
    """The seats in the order they announce: clockwise from the dealer's left, the dealer last
    (002). ``skipped`` seats (those that missed the arranging deadline) are left out."""
    order: list[int] = []
    seat = dealer
    for _ in range(seat_count):
        seat = fairness.left_of(seat, seat_count)
        if seat not in skipped:
            order.append(seat)
    return tuple(order)


def reveals_opened(state: TableState, deal: DealState, now_ms: int) -> RevealsOpened:
    """Reveals may begin, with the reveal deadline counted from ``now_ms``."""
    limit = state.rule_set.reveal_seconds
    deadline = None if limit is None else now_ms + limit * 1000
    return RevealsOpened(deal_number=deal.number, reveal_deadline_ms=deadline)


def _turn_deadline(state: TableState, now_ms: int) -> int | None:
    limit = state.rule_set.surrender_seconds
    return None if limit is None else now_ms + limit * 1000


def close_arranging(
    state: TableState, deal: DealState, now_ms: int, timing_out: Collection[int] = ()
) -> Event:
    """The event that ends the arranging phase once every seat is settled: the announcements
    under a rule set with surrender, else (or when no seat is left to ask) the reveals.
    ``timing_out``: the seats timed out for arranging in the same append (not asked)."""
    if state.rule_set.surrender is SurrenderRule.OFF:
        return reveals_opened(state, deal, now_ms)
    skipped = {
        seat
        for seat in range(state.seat_count)
        if deal.timeouts[seat] is not None or seat in timing_out
    }
    order = announcing_order(deal.dealer, state.seat_count, skipped)
    if not order:
        return reveals_opened(state, deal, now_ms)
    return AnnouncementsOpened(
        deal_number=deal.number, order=order, deadline_ms=_turn_deadline(state, now_ms)
    )


def _announced(
    state: TableState,
    deal: DealState,
    seat: int,
    surrender: bool,
    timed_out: bool,
    now_ms: int,
    signed: PlayerSignature | None = None,
) -> list[Event]:
    """The announcement of the seat whose turn it is (``signed`` by its player, or unsigned),
    and the reveals when it was the last."""
    announcements = deal.announcements
    assert announcements is not None
    later = announcements.order[announcements.order.index(seat) + 1 :]
    events: list[Event] = [
        SurrenderAnnounced(
            deal_number=deal.number,
            seat=seat,
            surrender=surrender,
            timed_out=timed_out,
            deadline_ms=_turn_deadline(state, now_ms) if later else None,
            player_key=None if signed is None else signed.public_key.hex(),
            signature=None if signed is None else signed.signature.hex(),
        )
    ]
    if not later:
        events.append(reveals_opened(state, deal, now_ms))
    return events


def decide_announce(state: TableState, command: AnnounceSurrender) -> list[Event]:
    """A seat announces play or surrender: refused when the rule set has no surrender, outside
    the announcing phase, when it is not the seat's turn, or unsigned by a player with a key or
    with a bad signature (docs/fairness.md §19)."""
    seat = seat_for(state, command.player_id)
    if state.rule_set.surrender is SurrenderRule.OFF:
        raise DomainError(
            Reason.SURRENDER_OFF,
            f"this table's rule set ({state.rule_set.name!r}) has no surrender: every seat plays",
        )
    require_deal(state, command.deal_number)
    require_phase(state, TablePhase.ANNOUNCING)
    deal = current_deal(state)
    announcements = deal.announcements
    assert announcements is not None
    if seat not in announcements.order:
        raise DomainError(
            Reason.SEAT_TIMED_OUT,
            "this seat missed its arranging deadline: it plays and is not asked",
        )
    if announcements.surrendered[seat] is not None:
        raise DomainError(Reason.ALREADY_ANNOUNCED, "this seat already announced for this deal")
    turn = announcements.turn
    if seat != turn:
        raise DomainError(
            Reason.NOT_YOUR_TURN,
            f"seat {turn} announces now; the seats announce in turn, clockwise from the "
            f"dealer's left ({', '.join(map(str, announcements.order))}); you hold {seat}",
        )
    table_id = state.table_id
    assert table_id is not None
    signed = check_signature(
        command.signature,
        command.player_keys,
        lambda: player_keys.announce_message(
            table_id, deal.number, seat, command.player_id, command.surrender
        ),
    )
    return _announced(state, deal, seat, command.surrender, False, command.now_ms, signed)


def announcing_time_out(state: TableState, now_ms: int, forced: bool) -> list[Event]:
    """The seat whose turn it is plays, its deadline passed (or the operator timed it out:
    ``forced``); nothing when no deadline has passed. The server's announcement: unsigned."""
    deal = current_deal(state)
    announcements = deal.announcements
    assert announcements is not None
    seat = announcements.turn
    deadline = announcements.deadline_ms
    if seat is None or not (forced or (deadline is not None and now_ms >= deadline)):
        return []
    return _announced(state, deal, seat, TIMEOUT_DEFAULT_SURRENDERS, True, now_ms)


def opened(event: AnnouncementsOpened, seat_count: int) -> Announcements:
    """``evolve``'s part: the announcements as they begin."""
    return Announcements(event.order, (None,) * seat_count, (), event.deadline_ms)


def announced(before: Announcements, event: SurrenderAnnounced) -> Announcements:
    """``evolve``'s part: the announcements after one more."""
    surrendered = list(before.surrendered)
    surrendered[event.seat] = event.surrender
    timed_out = (*before.timed_out, event.seat) if event.timed_out else before.timed_out
    return Announcements(before.order, tuple(surrendered), timed_out, event.deadline_ms)
