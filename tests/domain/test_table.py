"""The table aggregate, pure: given these events, when this command, then these events."""

from __future__ import annotations

import dataclasses
import itertools
import uuid
from collections.abc import Sequence

import pytest

from sapsam import fairness
from sapsam.domain import table as table_module
from sapsam.domain.commands import (
    ChooseDealer,
    CommitArrangement,
    ConfirmArrangement,
    ContributeEntropy,
    CreateTable,
    CutDeck,
    DealCards,
    RevealArrangement,
    RevealSeed,
    SeatPlayer,
    StartDeal,
    TimeOutSeats,
)
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import (
    ArrangementRevealed,
    DealScored,
    Event,
    SeatTimedOut,
    SeriesCompleted,
)
from sapsam.domain.published import published_deal
from sapsam.domain.table import INITIAL_STATE, TablePhase, TableState, decide, evolve, fold
from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.ruleset import RuleSet, TimeoutPolicy
from sapsam.rules.scoring import score_deal
from sapsam.rules.solver import solve

TABLE_ID = uuid.UUID("00000000-0000-4000-8000-000000000001")
LOT_SEED = bytes(range(32))
PLAYERS = ("ann", "bob", "cid", "dee")
NONCE = b"n" * 16


class Table:
    """A test harness: applies commands through decide/evolve and keeps the secret seeds."""

    def __init__(self, seat_count: int = 4, rule_set: RuleSet = DEFAULT_RULE_SET) -> None:
        self.state = INITIAL_STATE
        self.events: list[Event] = []
        self.seed = b""
        self.run(
            CreateTable(
                table_id=TABLE_ID,
                rule_set=rule_set,
                seat_count=seat_count,
                lot_commitment=fairness.lot_commitment(TABLE_ID, LOT_SEED),
                created_by="operator",
            )
        )

    def run(self, command: object) -> list[Event]:
        new_events = decide(self.state, command)
        for event in new_events:
            self.state = evolve(self.state, event)
        self.events.extend(new_events)
        return new_events

    def refused(self, command: object, reason: Reason) -> DomainError:
        before = self.state
        with pytest.raises(DomainError) as caught:
            decide(self.state, command)
        assert caught.value.reason is reason, caught.value
        assert self.state == before
        return caught.value

    def seat_all(self) -> None:
        for player in PLAYERS[: self.state.seat_count]:
            self.run(SeatPlayer(player_id=player))

    def start_deal(self) -> None:
        deal = self.state.deal
        number = self.state.deals_scored + 1 if deal is None else deal.number + 1
        self.seed = bytes([number]) * 32
        self.run(StartDeal(seed_commitment=fairness.seed_commitment(TABLE_ID, number, self.seed)))

    def cut(self, position: int, now_ms: int = 0) -> None:
        """The cut, then the deal the service issues with it."""
        self.run(CutDeck(player_id=self.cutter(), position=position))
        deal = self.state.deal
        assert deal is not None
        record = fairness.deal_record(
            self.seed,
            deal.contributions,
            TABLE_ID,
            deal.number,
            position,
            deal.dealer,
            self.state.seat_count,
        )
        self.run(DealCards(deal_record=record, now_ms=now_ms))

    def cutter(self) -> str:
        deal = self.state.deal
        assert deal is not None
        seat = fairness.cutter_for(deal.dealer, self.state.seat_count)
        player = self.state.seats[seat]
        assert player is not None
        return player

    def hands(self) -> tuple[tuple[fairness.Card, ...], ...]:
        deal = self.state.deal
        assert deal is not None and deal.cut_position is not None
        return fairness.hands_for_deal(
            self.seed,
            deal.contributions,
            TABLE_ID,
            deal.number,
            deal.cut_position,
            deal.dealer,
            self.state.seat_count,
        )

    def commit(self, seat: int, arrangement: Arrangement) -> None:
        deal = self.state.deal
        assert deal is not None
        commitment = fairness.arrangement_commitment(
            TABLE_ID, deal.number, seat, arrangement, NONCE
        )
        player = self.state.seats[seat]
        assert player is not None
        self.run(CommitArrangement(player_id=player, commitment=commitment))

    def play_deal(self, arrangements: Sequence[Arrangement] | None = None) -> list[Event]:
        self.start_deal()
        self.cut(17, 0)
        hands = self.hands()
        chosen = arrangements or [solve(hand) for hand in hands]
        for seat, arrangement in enumerate(chosen):
            self.commit(seat, arrangement)
            self.run(ConfirmArrangement(player_id=PLAYERS[seat], now_ms=1))
        for seat, arrangement in enumerate(chosen):
            self.run(
                RevealArrangement(
                    player_id=PLAYERS[seat], arrangement=arrangement, nonce=NONCE, dealt=hands[seat]
                )
            )
        return self.run(RevealSeed(seed=self.seed))


def ready_table(seat_count: int = 4, rule_set: RuleSet = DEFAULT_RULE_SET) -> Table:
    table = Table(seat_count, rule_set)
    table.seat_all()
    table.run(ChooseDealer(lot_seed=LOT_SEED))
    return table


@pytest.mark.parametrize("seat_count", [2, 3, 4])
def test_a_full_series_scores_like_the_rules_engine(seat_count: int) -> None:
    table = ready_table(seat_count)
    dealers = []
    for _ in range(DEFAULT_RULE_SET.series_length):
        events = table.play_deal()
        deal = table.state.deal
        assert deal is not None
        dealers.append(deal.dealer)
        scored = next(event for event in events if isinstance(event, DealScored))
        hands = table.hands()
        expected = score_deal(
            DEFAULT_RULE_SET, [check_arrangement(solve(hand), hand) for hand in hands]
        )
        assert scored.totals == expected.totals
        assert sum(scored.totals) == 0
    assert isinstance(table.events[-1], SeriesCompleted)
    assert table.state.phase is TablePhase.SERIES_COMPLETE
    # The deal passes to the left (clockwise, seat + 1) after each deal.
    for previous, following in itertools.pairwise(dealers):
        assert following == fairness.left_of(previous, seat_count)
    # Replaying the log gives the same state, also through the JSON codec.
    assert fold(table.events) == table.state
    decoded = [DEFAULT_CODEC.decode(*DEFAULT_CODEC.encode(event)) for event in table.events]
    assert decoded == table.events
    assert fold(decoded) == table.state


def test_verify_deal_passes_on_what_the_events_hold() -> None:
    table = ready_table(4)
    events = table.play_deal()
    published = published_deal(table.events, 1)
    report = fairness.verify_deal(published)
    assert report.ok, [check for check in report.checks if not check.passed]
    assert any(isinstance(event, DealScored) for event in events)


def test_contributed_entropy_changes_the_hands() -> None:
    table = ready_table(2)
    table.start_deal()
    table.cut(5, 0)
    plain = table.hands()
    other = ready_table(2)
    other.start_deal()
    other.run(ContributeEntropy(player_id="ann", entropy=b"\x01" * 8))
    other.cut(5, 0)
    assert other.hands() != plain


def test_refusals_name_their_reason_and_change_nothing() -> None:
    table = Table(2)
    table.refused(SeatPlayer(player_id="ann", seat=2), Reason.UNKNOWN_SEAT)
    table.run(SeatPlayer(player_id="ann", seat=0))
    table.refused(SeatPlayer(player_id="ann"), Reason.ALREADY_SEATED)
    table.refused(SeatPlayer(player_id="bob", seat=0), Reason.SEAT_TAKEN)
    table.refused(ChooseDealer(lot_seed=LOT_SEED), Reason.WRONG_PHASE)
    table.run(SeatPlayer(player_id="bob"))
    table.refused(SeatPlayer(player_id="cid"), Reason.TABLE_FULL)
    table.refused(StartDeal(seed_commitment=b"x" * 32), Reason.WRONG_PHASE)
    table.refused(ChooseDealer(lot_seed=b"other"), Reason.BAD_SEED)
    table.refused(ChooseDealer(lot_seed=b"o" * 32), Reason.SEED_MISMATCH)
    table.run(ChooseDealer(lot_seed=LOT_SEED))
    table.refused(StartDeal(seed_commitment=b"short"), Reason.BAD_COMMITMENT)
    table.refused(CutDeck(player_id="ann", position=3), Reason.WRONG_PHASE)
    table.start_deal()
    cutter = table.cutter()
    other = "bob" if cutter == "ann" else "ann"
    table.refused(CutDeck(player_id=other, position=3), Reason.NOT_YOUR_TURN)
    table.refused(CutDeck(player_id="zed", position=3), Reason.NOT_SEATED)
    for bad in (0, 52, -1):
        error = table.refused(CutDeck(player_id=cutter, position=bad), Reason.BAD_CUT_POSITION)
        assert error.field == "position"
    table.refused(ContributeEntropy(player_id="ann", entropy=b""), Reason.BAD_ENTROPY)
    table.run(ContributeEntropy(player_id="ann", entropy=b"abc"))
    table.refused(ContributeEntropy(player_id="ann", entropy=b"abc"), Reason.ALREADY_CONTRIBUTED)
    table.refused(CommitArrangement(player_id="ann", commitment=b"x" * 32), Reason.WRONG_PHASE)
    table.run(CutDeck(player_id=cutter, position=3))
    table.refused(CutDeck(player_id=cutter, position=3), Reason.WRONG_PHASE)
    table.refused(CommitArrangement(player_id="ann", commitment=b"x" * 32), Reason.WRONG_PHASE)
    record = fairness.deal_record(table.seed, (b"abc", None), TABLE_ID, 1, 3, 0, 2)
    table.refused(
        DealCards(deal_record=dataclasses.replace(record, hands=record.hands[:1]), now_ms=0),
        Reason.INVALID_ARGUMENT,
    )
    deal = table.state.deal
    assert deal is not None
    table.run(
        DealCards(
            deal_record=fairness.deal_record(
                table.seed, deal.contributions, TABLE_ID, 1, 3, deal.dealer, 2
            ),
            now_ms=0,
        )
    )
    table.refused(DealCards(deal_record=record, now_ms=0), Reason.WRONG_PHASE)
    table.refused(ContributeEntropy(player_id="ann", entropy=b"a"), Reason.WRONG_PHASE)
    table.refused(CommitArrangement(player_id="ann", commitment=b"x" * 31), Reason.BAD_COMMITMENT)
    table.refused(ConfirmArrangement(player_id="ann", now_ms=0), Reason.NO_COMMITMENT)
    hands = table.hands()
    arrangements = [solve(hand) for hand in hands]
    table.commit(0, arrangements[0])
    table.run(ConfirmArrangement(player_id="ann", now_ms=0))
    table.refused(ConfirmArrangement(player_id="ann", now_ms=0), Reason.ALREADY_CONFIRMED)
    table.refused(
        CommitArrangement(player_id="ann", commitment=b"x" * 32), Reason.ALREADY_CONFIRMED
    )
    reveal = RevealArrangement(
        player_id="ann", arrangement=arrangements[0], nonce=NONCE, dealt=hands[0]
    )
    table.refused(reveal, Reason.WRONG_PHASE)
    table.refused(RevealSeed(seed=table.seed), Reason.WRONG_PHASE)
    # Dealt at 0 under the preset's 90 s: one millisecond before the deadline, nothing is due.
    table.refused(TimeOutSeats(now_ms=89_999), Reason.NOTHING_TIMED_OUT)
    table.commit(1, arrangements[1])
    table.run(ConfirmArrangement(player_id="bob", now_ms=0))
    table.refused(dataclasses.replace(reveal, nonce=b"short"), Reason.BAD_NONCE)
    table.refused(dataclasses.replace(reveal, nonce=b"x" * 65), Reason.BAD_NONCE)
    table.refused(dataclasses.replace(reveal, nonce=b"m" * 16), Reason.COMMITMENT_MISMATCH)
    swapped = Arrangement(
        front=arrangements[0].front, middle=arrangements[0].back, back=arrangements[0].middle
    )
    table.refused(dataclasses.replace(reveal, arrangement=swapped), Reason.COMMITMENT_MISMATCH)
    table.run(reveal)
    table.refused(reveal, Reason.ALREADY_REVEALED)
    table.refused(RevealSeed(seed=table.seed), Reason.WRONG_PHASE)
    table.run(
        RevealArrangement(player_id="bob", arrangement=arrangements[1], nonce=NONCE, dealt=hands[1])
    )
    table.refused(RevealSeed(seed=b"\x00" * 32), Reason.SEED_MISMATCH)
    table.run(RevealSeed(seed=table.seed))
    table.refused(RevealSeed(seed=table.seed), Reason.WRONG_PHASE)


def test_commands_before_the_table_exists_are_refused() -> None:
    with pytest.raises(DomainError) as caught:
        decide(INITIAL_STATE, SeatPlayer(player_id="ann"))
    assert caught.value.reason is Reason.TABLE_NOT_CREATED
    table = Table(2)
    table.refused(
        CreateTable(TABLE_ID, DEFAULT_RULE_SET, 2, b"x" * 32, "operator"), Reason.TABLE_EXISTS
    )
    with pytest.raises(DomainError) as caught:
        decide(INITIAL_STATE, CreateTable(TABLE_ID, DEFAULT_RULE_SET, 5, b"x" * 32, "operator"))
    assert caught.value.reason is Reason.BAD_SEAT_COUNT


def test_a_fouled_reveal_is_recorded_as_a_fact_and_loses_every_row() -> None:
    table = ready_table(2)
    table.start_deal()
    table.cut(30, 0)
    hands = table.hands()
    good = solve(hands[1])
    legal = solve(hands[0])
    # Middle and back swapped: a foul unless the two rows are of equal strength.
    fouled = Arrangement(front=legal.front, middle=legal.back, back=legal.middle)
    table.commit(0, fouled)
    table.commit(1, good)
    table.run(ConfirmArrangement(player_id="ann", now_ms=0))
    table.run(ConfirmArrangement(player_id="bob", now_ms=0))
    (revealed,) = table.run(
        RevealArrangement(player_id="ann", arrangement=fouled, nonce=NONCE, dealt=hands[0])
    )
    assert isinstance(revealed, ArrangementRevealed)
    assert revealed.foul is check_arrangement(fouled, hands[0]).foul
    table.run(RevealArrangement(player_id="bob", arrangement=good, nonce=NONCE, dealt=hands[1]))
    events = table.run(RevealSeed(seed=table.seed))
    scored = next(event for event in events if isinstance(event, DealScored))
    if revealed.foul:
        assert scored.fouls == (True, False)
        assert scored.pairs[0].rows == (-1, -1, -1)
        assert scored.totals == (-3, 3)


def test_cards_not_dealt_are_a_foul_even_when_the_commitment_matches() -> None:
    table = ready_table(2)
    table.start_deal()
    table.cut(30, 0)
    hands = table.hands()
    stolen = solve(hands[1])  # seat 0 commits to seat 1's cards
    table.commit(0, stolen)
    table.commit(1, stolen)
    table.run(ConfirmArrangement(player_id="ann", now_ms=0))
    table.run(ConfirmArrangement(player_id="bob", now_ms=0))
    (revealed,) = table.run(
        RevealArrangement(player_id="ann", arrangement=stolen, nonce=NONCE, dealt=hands[0])
    )
    assert isinstance(revealed, ArrangementRevealed)
    assert revealed.foul and revealed.foul_reason == "NOT_DEALT_CARDS"


@pytest.mark.parametrize("policy", [TimeoutPolicy.FOUL, TimeoutPolicy.SOLVER])
def test_missed_arranging_deadline(policy: TimeoutPolicy) -> None:
    rules = dataclasses.replace(
        DEFAULT_RULE_SET, arrange_seconds=60, reveal_seconds=30, arrange_timeout_policy=policy
    )
    table = ready_table(3, rules)
    table.start_deal()
    table.cut(9, 1_000)
    deal = table.state.deal
    assert deal is not None and deal.arrange_deadline_ms == 61_000
    hands = table.hands()
    arrangement = solve(hands[0])
    table.commit(0, arrangement)
    table.run(ConfirmArrangement(player_id="ann", now_ms=2_000))
    table.refused(TimeOutSeats(now_ms=60_999), Reason.NOTHING_TIMED_OUT)
    events = table.run(TimeOutSeats(now_ms=61_000))
    timed_out = [event for event in events if isinstance(event, SeatTimedOut)]
    assert [(event.seat, event.stage, event.consequence) for event in timed_out] == [
        (1, "arranging", policy.value),
        (2, "arranging", policy.value),
    ]
    assert table.state.phase is TablePhase.REVEALING
    table.refused(CommitArrangement(player_id="bob", commitment=b"x" * 32), Reason.WRONG_PHASE)
    table.run(
        RevealArrangement(player_id="ann", arrangement=arrangement, nonce=NONCE, dealt=hands[0])
    )
    scored = next(e for e in table.run(RevealSeed(seed=table.seed)) if isinstance(e, DealScored))
    if policy is TimeoutPolicy.FOUL:
        assert scored.fouls == (False, True, True)
        assert scored.arrangements[1] is None
    else:
        assert scored.arrangements[1] == table_module.arrangement_text(solve(hands[1]))
        assert scored.fouls == (False, False, False)
    assert sum(scored.totals) == 0


def test_missed_reveal_deadline_is_a_foul() -> None:
    rules = dataclasses.replace(DEFAULT_RULE_SET, reveal_seconds=30)
    table = ready_table(2, rules)
    table.start_deal()
    table.cut(9, 0)
    hands = table.hands()
    arrangements = [solve(hand) for hand in hands]
    table.commit(0, arrangements[0])
    table.commit(1, arrangements[1])
    table.run(ConfirmArrangement(player_id="ann", now_ms=0))
    table.run(ConfirmArrangement(player_id="bob", now_ms=5_000))
    table.run(
        RevealArrangement(player_id="ann", arrangement=arrangements[0], nonce=NONCE, dealt=hands[0])
    )
    table.refused(TimeOutSeats(now_ms=34_999), Reason.NOTHING_TIMED_OUT)
    (timed_out,) = table.run(TimeOutSeats(now_ms=35_000))
    assert isinstance(timed_out, SeatTimedOut) and timed_out.seat == 1
    assert timed_out.stage == "revealing" and timed_out.consequence == "foul"
    late = RevealArrangement(
        player_id="bob", arrangement=arrangements[1], nonce=NONCE, dealt=hands[1]
    )
    table.refused(late, Reason.WRONG_PHASE)
    scored = next(e for e in table.run(RevealSeed(seed=table.seed)) if isinstance(e, DealScored))
    assert scored.fouls == (False, True)
    assert scored.totals == (3, -3)


def test_without_deadlines_a_table_waits() -> None:
    # Chosen explicitly: every preset has deadlines (docs/rules.md §2.2).
    no_deadlines = dataclasses.replace(DEFAULT_RULE_SET, arrange_seconds=None, reveal_seconds=None)
    table = ready_table(2, no_deadlines)
    table.start_deal()
    table.cut(9, 0)
    table.refused(TimeOutSeats(now_ms=10**15), Reason.NOTHING_TIMED_OUT)


def test_evolve_is_total_over_the_codec() -> None:
    table = ready_table(3)
    table.play_deal()
    state: TableState = INITIAL_STATE
    for event in table.events:
        state = evolve(state, DEFAULT_CODEC.decode(*DEFAULT_CODEC.encode(event)))
    assert state == table.state
    assert state.version == len(table.events)
