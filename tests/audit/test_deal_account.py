"""The account of a scored deal agrees with the scorer: for random deals of every scoring method
(fouls, ties and scoops included) each pair's explained items add up to the pair's amount, each
row's winner is the row's result, and each seat's items add up to its deal total; the accounts
of a domain-played series hold the recorded totals."""

from __future__ import annotations

import random
import uuid

import pytest

from sapsam.audit.deal_account import account_lines, pair_items, row_phrase, seat_labels
from sapsam.audit.deal_account_facts import DealAccount, Rows, _account, accounts
from sapsam.audit.sample_series import series_events
from sapsam.domain.events import DealScored
from sapsam.rules.arrangement import Arrangement, ArrangementCheck, check_arrangement
from sapsam.rules.cards import DECK
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.royalties import RoyaltyLimit, RoyaltyPayment, row_royalties
from sapsam.rules.ruleset import RowOrder, RuleSet, ScoringMethod
from sapsam.rules.scoring import score_deal
from sapsam.rules.solver import solve

RULE_SETS = [
    DEFAULT_RULE_SET.with_changes(scoring=method, row_unit=unit, scoop_bonus=2)
    for method in ScoringMethod
    for unit in (1, 5)
] + [
    # Royalties (rules version 4): paid for rows won or held, every one or the largest only,
    # with a middle-trips amount so that random rows earn some often.
    DEFAULT_RULE_SET.with_changes(
        rules_version=4,
        scoring=method,
        royalties=payment,
        royalty_limit=limit,
        royalty_middle_three_of_a_kind=1,
        row_unit=2,
    )
    for method in (ScoringMethod.PER_ROW, ScoringMethod.ONE_SIX)
    for payment in (RoyaltyPayment.WON_ROW, RoyaltyPayment.HELD_ROW)
    for limit in RoyaltyLimit
]


def _random_seat(generator: random.Random, hand: list[int]) -> tuple[Rows | None, ArrangementCheck]:
    choice = generator.random()
    if choice < 0.1:  # a fouled seat without rows (a missed deadline)
        return None, ArrangementCheck(foul=True, reason=None, detail="", values=None)
    if choice < 0.4:
        arrangement = solve(hand)
    else:  # a random split: often a foul by order
        cards = hand[:]
        generator.shuffle(cards)
        arrangement = Arrangement.of(cards[:3], cards[3:8], cards[8:])
    front, middle, back = (
        tuple(str(DECK[card]) for card in row)
        for row in (arrangement.front, arrangement.middle, arrangement.back)
    )
    return (front, middle, back), check_arrangement(arrangement, hand)


@pytest.mark.parametrize(
    "rule_set",
    RULE_SETS,
    ids=lambda r: f"{r.scoring}-{r.row_unit}-{r.royalties}-{r.royalty_limit}",
)
def test_the_explained_items_add_up_to_the_scores_for_random_deals(rule_set: RuleSet) -> None:
    generator = random.Random(str(rule_set))
    royalties_told = 0
    for _ in range(60):
        seats = generator.randint(2, 4)
        deck = list(range(52))
        generator.shuffle(deck)
        drawn = [_random_seat(generator, deck[13 * s : 13 * s + 13]) for s in range(seats)]
        checks = [check for _, check in drawn]
        score = score_deal(rule_set, checks)
        account = DealAccount(
            royalties=tuple(row_royalties(rule_set, check) for check in checks),
            deal_number=1,
            dealer=0,
            players=tuple(f"p{seat}" for seat in range(seats)),
            rows=tuple(rows for rows, _ in drawn),
            fouls=tuple(check.foul for check in checks),
            foul_words=tuple("a foul" if check.foul else "" for check in checks),
            score=score,
            recorded_totals=score.totals,
            series_totals=score.totals,
        )
        labels = seat_labels(account.players, {})
        per_seat = [0] * seats
        for pair in score.pairs:
            items = pair_items(account, pair, rule_set, labels)
            assert sum(item.points for item in items) == pair.delta
            per_seat[pair.seat_a] += pair.delta
            per_seat[pair.seat_b] -= pair.delta
            for row in range(3):
                _, winner = row_phrase(account, pair, row, labels)
                expected = {1: labels[pair.seat_a], -1: labels[pair.seat_b], 0: None}
                assert winner == expected[pair.rows[row]]
        assert tuple(per_seat) == score.totals
        lines = account_lines(account, rule_set, {})
        assert any("running totals after deal 1" in line for line in lines)
        royalties_told += sum("royalties (" in line for line in lines)
    if rule_set.royalties is not RoyaltyPayment.NONE:
        assert royalties_told  # some random deal paid a royalty, and the account says so


def test_a_played_series_is_told_with_its_recorded_totals() -> None:
    events = series_events(uuid.uuid4(), 3, 3)
    rule_set, told = accounts(events)
    assert rule_set is not None and [account.deal_number for account in told] == [1, 2, 3]
    running = [0, 0, 0]
    for account in told:
        assert account.score.totals == account.recorded_totals
        assert account.totals_before == tuple(running)
        running = [old + new for old, new in zip(running, account.recorded_totals, strict=True)]
        assert account.series_totals == tuple(running)
        names = {"ann": "Ann", "bob": "Bob"}  # cid has no display name: its id is its label
        text = "\n".join(account_lines(account, rule_set, names))
        assert "Ann v Bob: Ann" in text and "Bob v cid: Bob" in text
        assert f"running totals after deal {account.deal_number}" in text


def test_labels_tell_seats_apart() -> None:
    assert seat_labels(["a", "b", None], {"a": "Sam", "b": "Sam"}) == [
        "Sam (seat 0)",
        "Sam (seat 1)",
        "seat 2",
    ]


def _one_pair_account(rule_set: RuleSet, rows: tuple[Rows, Rows]) -> list[str]:
    """The account lines of a two-seat deal of ``rows``, both seats recorded legal."""
    checks = [
        check_arrangement(Arrangement.parse(*(" ".join(row) for row in seat)), None)
        for seat in rows
    ]
    score = score_deal(rule_set, checks)
    account = DealAccount(
        royalties=tuple(row_royalties(rule_set, check) for check in checks),
        deal_number=1,
        dealer=0,
        players=("a", "b"),
        rows=rows,
        fouls=(False, False),
        foul_words=("", ""),
        score=score,
        recorded_totals=score.totals,
        series_totals=score.totals,
    )
    return account_lines(account, rule_set, {})


# Seat a wins the back (a flush over a straight); the front and the middle tie.
ONE_WON_TWO_TIED: tuple[Rows, Rows] = (
    (("Ah", "Kd", "2c"), ("Qs", "Qh", "7c", "5d", "3s"), ("2h", "6h", "8h", "Th", "Jh")),
    (("As", "Kh", "2d"), ("Qd", "Qc", "7d", "5s", "3c"), ("4c", "5c", "6d", "7s", "8d")),
)


def test_the_majority_is_told_as_the_rule_set_reads_it() -> None:
    # Since rules version 2 (majority two_rows_won) one row won and two tied earns no majority:
    # the account must not say that winning more rows earns it.
    two_rows = RuleSet(scoring=ScoringMethod.TWO_FOUR)
    text = "\n".join(_one_pair_account(two_rows, ONE_WON_TWO_TIED))
    assert "one more for winning at least two of the three rows" in text and "more rows" not in text
    assert "2-4 majority" not in text
    version_1 = RuleSet.from_dict({"scoring": "two_four", "rules_version": 1})
    text = "\n".join(_one_pair_account(version_1, ONE_WON_TWO_TIED))
    assert "one more for winning more rows than the other" in text
    assert "2-4 majority: a won more rows than the other" in text
    one_six = RuleSet(scoring=ScoringMethod.ONE_SIX)
    assert "winning at least two of the three rows pays" in "\n".join(
        _one_pair_account(one_six, ONE_WON_TWO_TIED)
    )


def test_a_strict_row_order_is_applied_to_the_recorded_rows() -> None:
    # Equal straights in the middle and the back: legal by default, a foul under 004's strict
    # order. The record scores the seat legal (b wins the front and the back, a the middle with
    # its straight over a pair): under the strict order the account finds other scores.
    equal_straights = "2c 2d 9h|4c 5d 6h 7s 8c|4d 5h 6s 7c 8d"
    other = "3c 3d Th|Jc Jd Qh Ks Ac|As Ad Ah Kc Kd"
    recorded = DealScored(
        deal_number=1,
        pairs=(),
        totals=(-1, 1),
        fouls=(False, False),
        arrangements=(equal_straights, other),
        series_totals=(-1, 1),
        solver_arrangements=None,
    )
    lenient = _account(recorded, RuleSet(), ("a", "b"), 0, {})
    assert lenient is not None and lenient.score.totals == (-1, 1)
    strict = RuleSet(row_order=RowOrder.STRICTLY_INCREASING)
    told = _account(recorded, strict, ("a", "b"), 0, {})
    assert told is not None and told.score.totals == (-3, 3)  # a foul loses every row
    text = "\n".join(account_lines(told, strict, {}))
    assert "each row must beat the one before" in text
    assert "the record's scores differ" in text
