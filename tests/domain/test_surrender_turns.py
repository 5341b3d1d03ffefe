"""Play or surrender, in turn (docs/rules.md §2.8): given these events, when this command, then
these events.

Source 002: «fiecare jucător va anunța la rândul său (în sensul acelor de ceasornic, pornind de la
stânga dealerului), indiferent dacă își joacă sau nu mâna» -- each player in turn, clockwise from
the dealer's left, announces whether they play their hand.
"""

from __future__ import annotations

from test_table import NONCE, PLAYERS, Table, ready_table

from sapsam import fairness
from sapsam.domain.commands import (
    AnnounceSurrender,
    ConfirmArrangement,
    RevealArrangement,
    RevealSeed,
    TimeOutSeats,
    VoidDeal,
)
from sapsam.domain.errors import Reason
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import (
    AnnouncementsOpened,
    DeadlinesExtended,
    DealScored,
    DealVoided,
    RevealsOpened,
    SeatConfirmed,
    SeatTimedOut,
    SurrenderAnnounced,
)
from sapsam.domain.published import published_deal
from sapsam.domain.table import TablePhase, fold
from sapsam.domain.table_deadlines import UnservedWindow
from sapsam.domain.table_surrender import announcing_order
from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.ruleset import RuleSet, SurrenderRule
from sapsam.rules.solver import solve
from sapsam.rules.surrender import score_with_surrender

RULES = RuleSet(
    surrender=SurrenderRule.PAY_PLAYERS,
    surrender_price=2,
    surrender_seconds=20,
    arrange_seconds=90,
    reveal_seconds=30,
)


def arranged(seat_count: int = 3, rules: RuleSet = RULES) -> tuple[Table, list[Arrangement]]:
    """A table whose every seat committed (not confirmed) the solver's arrangement."""
    table = ready_table(seat_count, rules)
    table.start_deal()
    table.cut(9, 0)
    arrangements = [solve(hand) for hand in table.hands()]
    for seat, arrangement in enumerate(arrangements):
        table.commit(seat, arrangement)
    return table, arrangements


def confirm_all(table: Table, now_ms: int = 1_000) -> list[object]:
    events: list[object] = []
    for player in PLAYERS[: table.state.seat_count]:
        events = list(table.run(ConfirmArrangement(player_id=player, now_ms=now_ms)))
    return events


def dealer(table: Table) -> int:
    assert table.state.deal is not None
    return table.state.deal.dealer


def announce(seat: int, surrender: bool, now_ms: int = 2_000) -> AnnounceSurrender:
    return AnnounceSurrender(player_id=PLAYERS[seat], surrender=surrender, now_ms=now_ms)


def test_the_order_is_clockwise_from_the_dealers_left_the_dealer_last() -> None:
    assert announcing_order(0, 4) == (1, 2, 3, 0)
    assert announcing_order(2, 4) == (3, 0, 1, 2)
    assert announcing_order(1, 3, skipped={2}) == (0, 1)
    assert announcing_order(1, 2, skipped={0, 1}) == ()


def test_the_last_confirmation_opens_the_announcements_not_the_reveals() -> None:
    table, _ = arranged(3)
    last = confirm_all(table, now_ms=1_000)
    order = announcing_order(dealer(table), 3)
    assert [type(event) for event in last] == [SeatConfirmed, AnnouncementsOpened]
    assert last[1] == AnnouncementsOpened(deal_number=1, order=order, deadline_ms=21_000)
    assert table.state.phase is TablePhase.ANNOUNCING
    # No reveal before every seat announced.
    hands = table.hands()
    table.refused(
        RevealArrangement(
            player_id="ann", arrangement=solve(hands[0]), nonce=NONCE, dealt=hands[0]
        ),
        Reason.WRONG_PHASE,
    )


def test_seats_announce_in_turn_and_the_last_opens_the_reveals() -> None:
    table, arrangements = arranged(3)
    confirm_all(table)
    first, second, last = announcing_order(dealer(table), 3)
    table.refused(announce(second, True), Reason.NOT_YOUR_TURN)
    table.refused(announce(last, False), Reason.NOT_YOUR_TURN)
    table.refused(
        AnnounceSurrender(player_id="zed", surrender=True, now_ms=2_000), Reason.NOT_SEATED
    )
    table.refused(
        AnnounceSurrender(player_id=PLAYERS[first], surrender=True, now_ms=2_000, deal_number=2),
        Reason.WRONG_DEAL,
    )
    (said,) = table.run(announce(first, True, now_ms=2_000))
    assert said == SurrenderAnnounced(
        deal_number=1, seat=first, surrender=True, timed_out=False, deadline_ms=22_000
    )
    table.refused(announce(first, False), Reason.ALREADY_ANNOUNCED)
    table.run(announce(second, False, now_ms=3_000))
    events = table.run(announce(last, False, now_ms=4_000))
    assert events == [
        SurrenderAnnounced(
            deal_number=1, seat=last, surrender=False, timed_out=False, deadline_ms=None
        ),
        RevealsOpened(deal_number=1, reveal_deadline_ms=34_000),
    ]
    assert table.state.phase is TablePhase.REVEALING
    # Every seat reveals, the surrendered one too (its commitment is opened for the audit).
    hands = table.hands()
    for seat, arrangement in enumerate(arrangements):
        table.run(
            RevealArrangement(
                player_id=PLAYERS[seat], arrangement=arrangement, nonce=NONCE, dealt=hands[seat]
            )
        )
    scored = next(e for e in table.run(RevealSeed(seed=table.seed)) if isinstance(e, DealScored))
    surrendered = tuple(seat == first for seat in range(3))
    expected = score_with_surrender(
        RULES,
        [check_arrangement(a, h) for a, h in zip(arrangements, hands, strict=True)],
        surrendered,
    )
    assert scored.totals == expected.totals and sum(scored.totals) == 0
    assert scored.totals[first] == -4  # 2 units to each of the two players
    # The log replays to the same state, through the JSON codec too, and verifies.
    decoded = [DEFAULT_CODEC.decode(*DEFAULT_CODEC.encode(event)) for event in table.events]
    assert decoded == table.events and fold(decoded) == table.state
    published = published_deal(table.events, 1)
    assert published.surrendered == surrendered
    assert fairness.verify_deal(published).ok


def test_a_missed_turn_plays_the_timeout_default() -> None:
    table, _ = arranged(2)
    confirm_all(table, now_ms=1_000)
    first, second = announcing_order(dealer(table), 2)
    table.refused(TimeOutSeats(now_ms=20_999), Reason.NOTHING_TIMED_OUT)
    (missed,) = table.run(TimeOutSeats(now_ms=21_000))
    assert missed == SurrenderAnnounced(
        deal_number=1, seat=first, surrender=False, timed_out=True, deadline_ms=41_000
    )
    events = table.run(TimeOutSeats(now_ms=41_000))
    assert [type(event) for event in events] == [SurrenderAnnounced, RevealsOpened]
    announcements = table.state.deal.announcements if table.state.deal else None
    assert announcements is not None and announcements.timed_out == (first, second)
    assert announcements.surrendering_seats() == (False, False)


def test_the_operator_times_out_only_the_seat_whose_turn_it_is() -> None:
    table, _ = arranged(3)
    confirm_all(table)
    first, second, _ = announcing_order(dealer(table), 3)
    table.refused(TimeOutSeats(now_ms=1_500, forced_seat=second), Reason.NOTHING_TIMED_OUT)
    (forced,) = table.run(TimeOutSeats(now_ms=1_500, forced_seat=first))
    assert isinstance(forced, SurrenderAnnounced) and forced.timed_out and not forced.surrender


def test_a_seat_that_missed_the_arranging_deadline_is_not_asked() -> None:
    table, _ = arranged(3)
    table.run(ConfirmArrangement(player_id="ann", now_ms=1_000))
    table.run(ConfirmArrangement(player_id="bob", now_ms=1_000))
    events = table.run(TimeOutSeats(now_ms=90_000))
    assert [type(event) for event in events] == [SeatTimedOut, AnnouncementsOpened]
    opened = events[1]
    assert isinstance(opened, AnnouncementsOpened)
    assert opened.order == announcing_order(dealer(table), 3, skipped={2})
    table.refused(announce(2, True), Reason.SEAT_TIMED_OUT)


def test_when_every_seat_missed_the_arranging_deadline_nobody_is_asked() -> None:
    table, _ = arranged(2)
    events = table.run(TimeOutSeats(now_ms=90_000))
    assert [type(event) for event in events] == [SeatTimedOut, SeatTimedOut, RevealsOpened]


def test_a_turn_that_fell_in_an_outage_is_extended() -> None:
    table, _ = arranged(2)
    confirm_all(table, now_ms=1_000)
    first, _ = announcing_order(dealer(table), 2)
    outage = (UnservedWindow(start_ms=10_000, end_ms=50_000),)
    (extended,) = table.run(TimeOutSeats(now_ms=50_000, unserved=outage, grace_ms=5_000))
    assert extended == DeadlinesExtended(
        deal_number=1,
        stage="announcing",
        seats=(first,),
        previous_deadline_ms=21_000,
        deadline_ms=55_000,
        reason="server_restart",
        unserved_from_ms=10_000,
        unserved_until_ms=50_000,
    )
    table.refused(TimeOutSeats(now_ms=54_999), Reason.NOTHING_TIMED_OUT)
    (missed,) = table.run(TimeOutSeats(now_ms=55_000))
    assert isinstance(missed, SurrenderAnnounced) and missed.timed_out


def test_without_surrender_the_announcement_is_refused_and_reveals_open_at_once() -> None:
    table, _ = arranged(2, RuleSet(arrange_seconds=90))
    table.refused(announce(0, True), Reason.SURRENDER_OFF)
    last = confirm_all(table)
    assert [type(event) for event in last] == [SeatConfirmed, RevealsOpened]
    table.refused(announce(0, True), Reason.SURRENDER_OFF)


def test_the_operator_may_void_a_deal_while_seats_announce() -> None:
    table, _ = arranged(2)
    confirm_all(table)
    first, _ = announcing_order(dealer(table), 2)
    table.run(announce(first, True))
    (voided,) = table.run(VoidDeal(reason="a client crashed", seed=table.seed))
    assert isinstance(voided, DealVoided)
    assert table.state.phase is TablePhase.BETWEEN_DEALS
