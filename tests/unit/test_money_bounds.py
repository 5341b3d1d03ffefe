"""Every number of a rule set is bounded, and the bounds keep every amount far inside int64."""

import pytest

from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.royalties import RoyaltyPayment
from sapsam.rules.ruleset import (
    MAX_BONUS_UNITS,
    MAX_DEADLINE_SECONDS,
    MAX_ROW_UNIT,
    MAX_SEATS,
    MAX_SERIES_LENGTH,
    RuleSet,
    RuleSetError,
    ScoringMethod,
)
from sapsam.rules.scoring import (
    INT64_MAX,
    ScoreOverflowError,
    add_totals,
    score_deal,
    settle,
    worst_pair_units,
    worst_series_total,
)

# The margin the bounds must leave below int64 (and the exact range of a double, 2^53, which a
# JSON reader in JavaScript uses for every number).
WIDE_MARGIN = 1000


def test_the_worst_series_total_fits_int64_with_a_wide_margin() -> None:
    # Computed here from the rules, independently of worst_series_total's own loop: the method
    # paying most per pair is a scoop under per_row_scoop_bonus (3 rows + the bonus), and on top
    # a royalty at its maximum in each of the three rows won and in three hands split across rows
    # (royalty_broken_hands claimed: at most three ranks of four among 13 cards).
    per_pair = (
        max(
            abs(settle(extreme, rows))
            for extreme in (
                RuleSet(
                    scoring=method,
                    scoop_bonus=MAX_BONUS_UNITS,
                    one_six_scoop=MAX_BONUS_UNITS,
                    one_six_two_of_three=MAX_BONUS_UNITS,
                )
                for method in ScoringMethod
            )
            for rows in ((1, 1, 1), (1, 1, 0), (1, 0, 0), (1, 1, -1), (1, -1, 0))
        )
        + 6 * MAX_BONUS_UNITS
    )
    worst = per_pair * MAX_ROW_UNIT * (MAX_SEATS - 1) * MAX_SERIES_LENGTH
    assert worst == worst_series_total() == 7003 * 10**6 * 3 * 10_000
    assert worst * WIDE_MARGIN < INT64_MAX
    assert worst < 2**53


def test_a_deal_at_every_maximum_scores_without_overflow() -> None:
    rules = RuleSet(
        scoring=ScoringMethod.PER_ROW_SCOOP_BONUS,
        row_unit=MAX_ROW_UNIT,
        scoop_bonus=MAX_BONUS_UNITS,
        series_length=MAX_SERIES_LENGTH,
        royalties=RoyaltyPayment.WON_ROW,
        royalty_front_three_of_a_kind=MAX_BONUS_UNITS,
        royalty_middle_four_of_a_kind=MAX_BONUS_UNITS,
        royalty_back_straight_flush=MAX_BONUS_UNITS,
    )
    # Front trips, middle quads, back straight flush: a royalty in every row.
    legal = check_arrangement(Arrangement.parse("2♠ 2♥ 2♦", "3♣ 3♦ 3♥ 3♠ K♦", "10♣ J♣ Q♣ K♣ A♣"))
    fouled = check_arrangement(Arrangement(front=(), middle=(), back=()))
    # One legal hand against three fouls scoops everyone: the worst deal there is.
    score = score_deal(rules, [legal, fouled, fouled, fouled])
    one_deal = 3 * (3 + MAX_BONUS_UNITS + 3 * MAX_BONUS_UNITS) * MAX_ROW_UNIT
    assert score.totals == (one_deal, -one_deal // 3, -one_deal // 3, -one_deal // 3)
    totals: tuple[int, ...] = (0, 0, 0, 0)
    for _ in range(MAX_SERIES_LENGTH):
        totals = add_totals(totals, score.totals)
    # The bound also counts three hands split across rows (royalty_broken_hands), which no hand
    # holds together with a royalty in every row: a bound, reached without those claims.
    assert totals[0] == worst_series_total() - 3 * 3 * MAX_BONUS_UNITS * MAX_ROW_UNIT * 10_000


def test_an_amount_beyond_int64_is_refused_loudly() -> None:
    with pytest.raises(ScoreOverflowError):
        add_totals((INT64_MAX,), (1,))


@pytest.mark.parametrize(
    ("key", "largest"),
    [
        ("row_unit", MAX_ROW_UNIT),
        ("scoop_bonus", MAX_BONUS_UNITS),
        ("one_six_two_of_three", MAX_BONUS_UNITS),
        ("one_six_scoop", MAX_BONUS_UNITS),
        ("series_length", MAX_SERIES_LENGTH),
        ("arrange_seconds", MAX_DEADLINE_SECONDS),
        ("reveal_seconds", MAX_DEADLINE_SECONDS),
        ("max_seats", MAX_SEATS),
    ],
)
def test_each_number_has_a_documented_maximum(key: str, largest: int) -> None:
    assert getattr(RuleSet(**{key: largest}), key) == largest
    for too_big in (largest + 1, 2**31 - 1, 2**63, 10**5000):
        with pytest.raises(RuleSetError, match=f"'{key}' must be in"):
            RuleSet(**{key: too_big})


def test_a_huge_value_is_not_echoed_whole() -> None:
    with pytest.raises(RuleSetError) as raised:
        RuleSet(row_unit=10**5000)
    assert len(str(raised.value)) < 200


def test_a_rule_set_recorded_before_the_maxima_still_reads_as_recorded() -> None:
    # An old table's first event keeps its rules: reading it must not fail or fall back to the
    # defaults (its deals would replay under other rules); only a new table is held to them.
    recorded = {**RuleSet().to_dict(), "row_unit": 10**7, "series_length": 20_000}
    old = RuleSet.from_dict(recorded)
    assert (old.row_unit, old.series_length) == (10**7, 20_000)
    with pytest.raises(RuleSetError, match=r"'row_unit' must be in 1\.\.1000000"):
        old.check_limits()
    with pytest.raises(RuleSetError, match="'row_unit'"):
        RuleSet.from_dict({**recorded, "row_unit": 0})  # the minima always hold


def test_creating_a_table_beyond_the_maxima_is_refused_by_the_domain() -> None:
    import uuid

    from sapsam.domain.commands import CreateTable
    from sapsam.domain.errors import DomainError, Reason
    from sapsam.domain.table import INITIAL_STATE, decide

    command = CreateTable(
        table_id=uuid.uuid4(),
        rule_set=RuleSet.from_dict({"scoop_bonus": MAX_BONUS_UNITS + 1}),
        seat_count=2,
        lot_commitment=b"c" * 32,
        created_by="operator",
    )
    with pytest.raises(DomainError) as refused:
        decide(INITIAL_STATE, command)
    assert refused.value.reason is Reason.BAD_RULE_SET


def test_the_worst_pair_is_the_outcome_its_method_pays_most_for() -> None:
    # Under one_six a table may pay the 2-of-3 win more than the scoop: the worst pair is then
    # a 2-1 win, not a scoop.
    rules = RuleSet(scoring=ScoringMethod.ONE_SIX, one_six_scoop=0, one_six_two_of_three=7)
    assert settle(rules, (1, 1, -1)) == 7 and settle(rules, (1, 1, 1)) == 0
    assert worst_pair_units(rules) == 7
    royalties = rules.with_changes(royalties=RoyaltyPayment.HELD_ROW)
    assert worst_pair_units(royalties) == 7 + 3 + 5 + 5  # the largest royalty of each row
    assert worst_pair_units(RuleSet()) == 3
    assert worst_pair_units(RuleSet(scoring=ScoringMethod.TWO_FOUR)) == 4
