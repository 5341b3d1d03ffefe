"""The checks over a table's series: ``series_totals``, ``standings`` and, at a ``new_series``
table, ``series_start`` (see ``sapsam.audit.deal_checks``). Pure."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from sapsam.audit.deal_events import NEW_SERIES, DealEvents, first_deal_of_series, series_of_deal
from sapsam.audit.report import AuditCheck, Status, make_check
from sapsam.domain.events import DealScored, DealVoided, SeriesCompleted, SeriesStarted
from sapsam.fairness.encoding import require_seat_count
from sapsam.plurals import plural
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.scoring import standings


def series_checks(
    deals: Sequence[DealEvents],
    verified_totals: dict[int, tuple[int, ...]],
    rule_set: RuleSet | None,
    seat_count: int,
    after_series: str = "close",
    *,
    series_in_deals: bool = True,
) -> list[AuditCheck]:
    """Running totals, final standings and (at a ``new_series`` table) each new series' start,
    against the verified deal results and the rule set's series length (``series_in_deals``
    False: the family's own checks judge when its series ends, ``AuditFamily``)."""
    checks: list[AuditCheck] = []
    length = None if rule_set is None else rule_set.series_length
    # Before anything is sized by it: a forged seat count of 10^9 made gigabytes of zeros.
    zeros = (0,) * require_seat_count(seat_count)
    running: dict[int, tuple[int, ...]] = {0: zeros}
    restarted: set[int] = set()  # deals after which a SeriesStarted is recorded
    for deal in deals:
        scored = deal.first(DealScored)
        if isinstance(deal.first(DealVoided), DealVoided):
            # Voided: no score, the running totals go on unchanged (when known).
            if deal.number - 1 in running:
                running[deal.number] = running[deal.number - 1]
            continue
        if not isinstance(scored, DealScored):
            continue
        number = deal.number
        opens_series = number == 1 or (
            length is not None
            and after_series == NEW_SERIES
            and first_deal_of_series(number, length, after_series) == number
        )
        if length is None and number - 1 in restarted:
            opens_series = True  # no valid series length: trust the recorded SeriesStarted
        previous = zeros if opens_series else running.get(number - 1)
        totals = verified_totals.get(number)
        if isinstance(deal.first(SeriesStarted), SeriesStarted):
            restarted.add(number)
        if previous is None:
            checks.append(
                make_check(
                    "series_totals",
                    Status.NOT_COVERED,
                    f"not checkable from this export: it needs deal {number - 1}'s result "
                    "(export the whole table to check the series)",
                    deal=number,
                )
            )
            # Later deals can still be checked against this deal's recorded running totals.
            running[number] = scored.series_totals
            continue
        if totals is None:
            checks.append(
                make_check(
                    "series_totals",
                    Status.SKIPPED,
                    "not checked: the deal's result did not verify",
                    deal=number,
                )
            )
            running[number] = scored.series_totals
            continue
        expected = tuple(a + b for a, b in zip(previous, totals, strict=True))
        fresh = (
            f" (series {series_of_deal(number, length, after_series)} starts from zero)"
            if opens_series and number > 1 and length is not None
            else ""
        )
        if scored.series_totals == expected:
            checks.append(
                make_check(
                    "series_totals",
                    Status.PASSED,
                    f"running totals {list(expected)}{fresh}",
                    deal=number,
                )
            )
        else:
            checks.append(
                make_check(
                    "series_totals",
                    Status.FAILED,
                    f"the running totals recorded after deal {number} are not the previous "
                    f"totals plus this deal's verified result{fresh}",
                    expected=",".join(map(str, expected)),
                    found=",".join(map(str, scored.series_totals)),
                    deal=number,
                )
            )
        running[number] = scored.series_totals
    exported = {deal.number for deal in deals}
    voided = {deal.number for deal in deals if isinstance(deal.first(DealVoided), DealVoided)}
    seen = _SeriesDeals(sorted(exported), sorted(voided))
    for deal in deals:
        completed = deal.first(SeriesCompleted)
        if isinstance(completed, SeriesCompleted):
            checks.append(
                _standings_check(
                    deal,
                    completed,
                    running.get(deal.number),
                    length,
                    after_series,
                    seen,
                    series_in_deals,
                )
            )
        elif series_in_deals and length is not None:
            missing = _missing_completion(deal, length, after_series, seen)
            if missing is not None:
                checks.append(missing)
        start = _series_start_check(deal, length, after_series)
        if start is not None:
            checks.append(start)
    return checks


def _missing_completion(
    deal: DealEvents, length: int, after_series: str, seen: _SeriesDeals
) -> AuditCheck | None:
    """A scored deal that records no ``SeriesCompleted``: failed when the export holds every deal
    of its series up to it and it is the series' ``length``-th deal that counts (a voided deal does
    not, docs/events.md). ``None``: the series goes on, or the export cannot tell (a deal export of
    a later deal cannot see which earlier deals were voided)."""
    if not deal.finished or isinstance(deal.first(DealVoided), DealVoided):
        return None
    first = first_deal_of_series(deal.number, length, after_series)
    # Counted by bisection, not deal by deal: a forged export of 16,000 deals stays linear.
    held = seen.between(seen.exported_sorted, first, deal.number)
    if held != deal.number - first + 1:
        return None
    counted = held - seen.between(seen.voided_sorted, first, deal.number)
    if counted != length:
        return None
    return make_check(
        "standings",
        Status.FAILED,
        f"deal {deal.number} is the {_ordinal(length)} deal that counts of the series"
        + (f" that began at deal {first}" if first > 1 else "")
        + f" (the rule set's series has {plural(length, 'deal')}), but no SeriesCompleted"
        " follows its DealScored: the series is recorded as going on",
        expected="SeriesCompleted",
        found="none",
        deal=deal.number,
    )


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True)
class _SeriesDeals:
    """The deal numbers an export holds, and those of them voided, each sorted (counted in a
    range by bisection)."""

    exported_sorted: list[int]
    voided_sorted: list[int]

    @staticmethod
    def between(numbers: list[int], low: int, high: int) -> int:
        """How many of the sorted ``numbers`` lie in ``low..high``."""
        return bisect_right(numbers, high) - bisect_left(numbers, low)


def _standings_check(
    deal: DealEvents,
    completed: SeriesCompleted,
    final_totals: tuple[int, ...] | None,
    length: int | None,
    after_series: str,
    seen: _SeriesDeals,
    series_in_deals: bool = True,
) -> AuditCheck:
    first = 1 if length is None else first_deal_of_series(deal.number, length, after_series)
    numbers = range(first, deal.number + 1)
    # A voided deal does not count towards the series (DealVoided): deals 1 to 4 with deal 3
    # voided complete a 3-deal series. This check failed such a table before.
    in_series = len(numbers) - seen.between(seen.voided_sorted, first, deal.number)
    unseen = len(numbers) - seen.between(seen.exported_sorted, first, deal.number)
    if (
        completed.deals_played != in_series
        and unseen
        and in_series - unseen <= completed.deals_played < in_series
        and length == completed.deals_played
    ):
        # Where the series ended is not checkable here, but the standings still rank the final
        # totals this deal's DealScored records: a reordered standing fails even in a deal export.
        ranked = _ranking_failure(completed, final_totals, deal.number, recorded=True)
        if ranked is not None:
            return ranked
        return make_check(
            "standings",
            Status.NOT_COVERED,
            f"not checkable from this export: {plural(completed.deals_played, 'deal')} counted"
            f" by deal {deal.number}, and deals of the series it does not hold may have been"
            " voided (export the whole table to check the series); the standings rank the"
            " running totals its DealScored records",
            deal=deal.number,
        )
    if completed.deals_played != in_series or (series_in_deals and length != in_series):
        return make_check(
            "standings",
            Status.FAILED,
            f"the series is recorded complete after deal {deal.number} "
            f"(deals_played {completed.deals_played}); "
            + (
                "the rule set gives no series length"
                if length is None
                else f"the rule set's series has {plural(length, 'deal')}"
            )
            + (f" and this series began at deal {first}" if first > 1 else ""),
            deal=deal.number,
        )
    if final_totals is None:
        return make_check("standings", Status.SKIPPED, "no final totals to rank", deal=deal.number)
    failed = _ranking_failure(completed, final_totals, deal.number)
    if failed is not None:
        return failed
    places = ", ".join(
        f"seat {item.seat}: {item.total} (place {item.place})" for item in completed.standings
    )
    return make_check("standings", Status.PASSED, places, deal=deal.number)


def _ranking_failure(
    completed: SeriesCompleted,
    final_totals: tuple[int, ...] | None,
    number: int,
    *,
    recorded: bool = False,
) -> AuditCheck | None:
    """The failed ``standings`` check when the recorded standings are not those of the final
    totals (seats by total, highest first, then by seat; equal totals share a place); ``None``
    when they are, or when there are no totals to rank."""
    if final_totals is None:
        return None
    expected = [(item.seat, item.total, item.place) for item in standings(final_totals)]
    found = [(item.seat, item.total, item.place) for item in completed.standings]
    if expected == found:
        return None
    totals = "the running totals its DealScored records" if recorded else "the final totals"
    return make_check(
        "standings",
        Status.FAILED,
        f"the recorded standings do not follow from {totals} (equal totals share a place)",
        expected=str(expected),
        found=str(found),
        deal=number,
    )


def _series_start_check(
    deal: DealEvents, length: int | None, after_series: str
) -> AuditCheck | None:
    """At a ``new_series`` table, the finished last deal of each series records the next series'
    start with the right number and first deal; no other deal records one. ``None``: nothing to
    check for this deal."""
    started = deal.first(SeriesStarted)
    ends_series = (
        after_series == NEW_SERIES
        and length is not None
        and deal.finished
        and deal.number % length == 0
    )
    if not ends_series:
        if isinstance(started, SeriesStarted):
            why = (
                f"the table was created with after_series = {after_series}"
                if after_series != NEW_SERIES
                else f"deal {deal.number} does not end a series"
                + ("" if length is None else f" of {plural(length, 'deal')}")
            )
            return make_check(
                "series_start",
                Status.FAILED,
                f"a new series is recorded after deal {deal.number}, but {why}",
                deal=deal.number,
            )
        return None
    assert length is not None
    expected_number = deal.number // length + 1
    expected = f"series {expected_number} from deal {deal.number + 1}"
    if not isinstance(started, SeriesStarted):
        return make_check(
            "series_start",
            Status.FAILED,
            f"deal {deal.number} ends series {expected_number - 1} of a new_series table, but no "
            "SeriesStarted follows it",
            expected=expected,
            found="none",
            deal=deal.number,
        )
    found = f"series {started.series_number} from deal {started.first_deal_number}"
    if found != expected:
        return make_check(
            "series_start",
            Status.FAILED,
            f"the SeriesStarted after deal {deal.number} names the wrong series or first deal",
            expected=expected,
            found=found,
            deal=deal.number,
        )
    return make_check(
        "series_start",
        Status.PASSED,
        f"{expected}: totals reset to zero, the deal keeps passing left",
        deal=deal.number,
    )
