"""The checks of one deal and of the series, over decoded events. Pure.

Per deal: ``sequence`` (the events follow the protocol, in order, each by the seat allowed to act),
``dealer_rotation`` (the deal passes left from the dealer drawn by lot), then, once the seed is
published, fair dealing's own checks (``seed_commitment``, ``contributions``, ``cut``, ``dealer``,
``reveal_commitment[s]``, ``solver_arrangement[s]`` for a seat whose hand was set on its behalf,
``fouls``, ``scores``: see docs/fairness.md §13) and two consistency checks of what was recorded on
the way (``reveal_fouls``, ``scored_arrangements``: the rows recorded with the score are the
verified ones, for every seat).

Over the series: ``series_totals`` (each deal's running totals are the previous ones plus the
deal's verified totals, from zero at the first deal of each series), ``standings`` (the final
standings follow from the final totals) and, at a table created with ``after_series = new_series``,
``series_start`` (after each completed series the next one is recorded as started, with the right
number and first deal).

Series follow from the deal numbers: every series has the rule set's ``series_length`` deals, so at
a ``new_series`` table series ``k`` holds deals ``(k - 1) * length + 1 .. k * length``; deal numbers
and the dealer rotation run on across series.

This module holds fair dealing's checks of a deal; the others live beside it, in their own
modules, which callers import directly: ``deal_sequence`` (``sequence``, ``dealer_rotation``),
``series_checks`` (over the series) and ``deal_events`` (a deal's events, which series a deal is
in).
"""

from __future__ import annotations

from collections.abc import Sequence

from sapsam import fairness
from sapsam.audit.deal_events import MALFORMED, DealEvents
from sapsam.audit.report import (
    MAX_CHECK_TEXT,
    MAX_DEAL_NUMBER,
    NO_REVEAL,
    AuditCheck,
    Status,
    make_check,
    passed_check,
)
from sapsam.domain.events import ArrangementRevealed, DealScored, PlayerSeated, TableCreated
from sapsam.domain.published import DealNotFinishedError, published_deal
from sapsam.plurals import numbered
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import CardError, format_cards, parse_cards
from sapsam.rules.ruleset import RuleSet

__all__ = ["fairness_checks"]


def fairness_checks(
    deal: DealEvents,
    created: TableCreated,
    rule_set: RuleSet | None = None,
    seated: Sequence[PlayerSeated] = (),
) -> tuple[list[AuditCheck], tuple[int, ...] | None]:
    """Fair dealing's checks of a finished deal, and its verified totals (None if unverified).

    ``rule_set`` is the created table's rule set when already read (None: read it here);
    ``seated`` the table's ``PlayerSeated`` events, whose player ids scheme 2 commitments bind.
    """
    number = deal.number
    try:
        published = published_deal([created, *seated, *deal.events], number, rule_set)
        # The report shows a passed check's detail only, not its texts: none are written.
        report = fairness.verify_deal(published, passed_texts=False)
        recorded = _recorded_checks(deal, report.ok, report.arrangements)
    except (DealNotFinishedError, *MALFORMED) as error:
        # The codec checks field names, not their types: a forged value of the wrong type ends
        # here, as a failure of the deal's record, never as a crash of the verifier.
        return [
            make_check(
                "published_deal",
                Status.FAILED,
                f"the deal's events do not make a publishable deal: {type(error).__name__}: "
                f"{error}",
                deal=number,
            )
        ], None
    passed = Status.PASSED  # read once (an enum member read off its class costs a hook call)
    # Fair dealing's passes are made without make_check's tests where they hold for them all:
    # a deal number in range (a forged one is named in the detail by make_check) and a detail
    # (some fixed phrase) within the length a check's text is cut to.
    in_range = type(number) is int and 0 < number <= MAX_DEAL_NUMBER
    checks = [
        # A pass keeps what it found only for a reveal that never came: its phrase says so.
        passed_check(
            check.name, check.detail, check.found if check.found == NO_REVEAL else "", number
        )
        if check.passed and in_range and len(check.detail) <= MAX_CHECK_TEXT
        else make_check(
            check.name,
            passed,
            check.detail,
            "",
            check.found if check.found == NO_REVEAL else "",
            number,
        )
        if check.passed
        else _deal_check(
            check.name,
            Status.SKIPPED if check.skipped else Status.FAILED,
            check.detail,
            check.expected,
            check.found,
            number,
        )
        for check in report.checks
    ]
    checks.extend(recorded)
    verified = published.recorded_scores.totals if report.ok else None
    return checks, verified


def _deal_check(
    name: str, status: Status, detail: str, expected: str, found: str, deal: int
) -> AuditCheck:
    """``make_check(name, status, detail, expected, found, deal)`` (``make_check``: fair dealing
    gives ten checks per deal)."""
    return make_check(name, status, detail, expected, found, deal)


def _recorded_checks(
    deal: DealEvents, verified: bool, scored_rows: tuple[Arrangement | None, ...]
) -> list[AuditCheck]:
    """What was recorded at the reveals and at scoring agrees with the verified deal: each
    reveal's foul flag, and the rows recorded with the score (``DealScored.arrangements``) are
    the arrangements verified and scored, a reveal's or one set on the seat's behalf."""
    scored = deal.first(DealScored)
    assert isinstance(scored, DealScored)
    reveals = [event for event in deal.events if isinstance(event, ArrangementRevealed)]
    if not verified:
        detail = "not checked: the deal itself did not verify"
        return [
            make_check("reveal_fouls", Status.SKIPPED, detail, deal=deal.number),
            make_check("scored_arrangements", Status.SKIPPED, detail, deal=deal.number),
        ]
    wrong_fouls = [
        reveal.seat
        for reveal in reveals
        if reveal.seat >= len(scored.fouls) or reveal.foul != scored.fouls[reveal.seat]
    ]
    fouls = (
        _deal_check(
            "reveal_fouls",
            Status.PASSED,
            "each reveal's recorded foul flag agrees with the scoring",
            "",
            "",
            deal.number,
        )
        if not wrong_fouls
        else make_check(
            "reveal_fouls",
            Status.FAILED,
            f"the foul flag recorded at the reveal of {numbered('seat', wrong_fouls)} disagrees"
            " with the verified fouls",
            deal=deal.number,
        )
    )
    recorded = scored.arrangements
    wrong_rows = [
        seat
        for seat, arrangement in enumerate(scored_rows)
        if seat >= len(recorded) or not _same_rows(recorded[seat], arrangement)
    ]
    if len(recorded) > len(scored_rows):
        wrong_rows.extend(range(len(scored_rows), len(recorded)))
    rows = (
        _deal_check(
            "scored_arrangements",
            Status.PASSED,
            "the scored rows are the verified ones (revealed, or set on the seat's behalf)",
            "",
            "",
            deal.number,
        )
        if not wrong_rows
        else make_check(
            "scored_arrangements",
            Status.FAILED,
            f"the rows recorded with the score for {numbered('seat', wrong_rows)} are not the"
            " verified ones (the seat's reveal, the arrangement set on its behalf, or none)",
            deal=deal.number,
        )
    )
    return [fouls, rows]


def _same_rows(text: str | None, arrangement: Arrangement | None) -> bool:
    if text is None or arrangement is None:
        return text is None and arrangement is None
    rows = arrangement.rows
    front, middle, back = rows
    if text == f"{format_cards(front)}|{format_cards(middle)}|{format_cards(back)}":
        return True  # the usual case, written alike; otherwise compare the cards themselves
    parts = text.split("|")
    if len(parts) != 3:
        return False
    try:
        return all(parse_cards(part) == row for part, row in zip(parts, rows, strict=True))
    except CardError:
        return False
