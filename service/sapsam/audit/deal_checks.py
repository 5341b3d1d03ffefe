"""The checks of one deal and of the series, over decoded events. Pure.

Per deal: ``sequence`` (the events follow the protocol, in order, each by the seat allowed to act),
``dealer_rotation`` (the deal passes left from the dealer drawn by lot), then, once the seed is
published, fair dealing's own checks (``seed_commitment``, ``contributions``, ``cut``, ``dealer``,
``reveal_commitment[s]``, ``fouls``, ``scores``: see docs/fairness.md §9) and two consistency
checks of what was recorded on the way (``reveal_fouls``, ``scored_arrangements``).

Over the series: ``series_totals`` (each deal's running totals are the previous ones plus the
deal's verified totals, from zero at the first deal of each series), ``standings`` (the final
standings follow from the final totals) and, at a table created with ``after_series = new_series``,
``series_start`` (after each completed series the next one is recorded as started, with the right
number and first deal).

Series follow from the deal numbers: every series has the rule set's ``series_length`` deals, so at
a ``new_series`` table series ``k`` holds deals ``(k - 1) * length + 1 .. k * length``; deal numbers
and the dealer rotation run on across series.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from sapsam import fairness
from sapsam.audit.report import MAX_CHECK_TEXT, MAX_DEAL_NUMBER, AuditCheck, Status
from sapsam.domain.events import (
    ArrangementCommitted,
    ArrangementRevealed,
    CardsDealt,
    DeadlinesExtended,
    DealerChosen,
    DealScored,
    DealStarted,
    DeckCut,
    EntropyContributed,
    Event,
    RevealsOpened,
    SeatConfirmed,
    SeatTimedOut,
    SeedRevealed,
    SeriesCompleted,
    SeriesStarted,
    TableCreated,
)
from sapsam.domain.published import DealNotFinishedError, published_deal
from sapsam.fairness.encoding import require_seat_count
from sapsam.frozen import from_fields
from sapsam.rules.cards import CardError, parse_cards
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.scoring import standings

# What malformed field values raise when a check reads them (the codec checks names, not types).
MALFORMED: Final = (TypeError, ValueError, KeyError, AttributeError, IndexError)
NEW_SERIES: Final = "new_series"


def first_deal_of_series(deal_number: int, series_length: int, after_series: str) -> int:
    """The number of the first deal of the series that deal ``deal_number`` belongs to."""
    if after_series != NEW_SERIES:
        return 1
    return (deal_number - 1) // series_length * series_length + 1


def series_of_deal(deal_number: int, series_length: int, after_series: str) -> int:
    """The number of the series (from 1) that deal ``deal_number`` belongs to."""
    if after_series != NEW_SERIES:
        return 1
    return (deal_number - 1) // series_length + 1


@dataclass
class DealEvents:
    """One deal's decoded events in export order, with their stream versions."""

    number: int
    events: list[Event] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)

    def first(self, event_type: type[Event]) -> Event | None:
        """The first event of a type, if any."""
        for event in self.events:  # a plain loop: this runs several times per deal
            if isinstance(event, event_type):
                return event
        return None

    @property
    def finished(self) -> bool:
        """Scored (and so its seed is published)."""
        return self.first(DealScored) is not None


class _SequenceError(Exception):
    """An event out of the protocol's order."""


@dataclass
class _Progress:
    """Where a deal stands while its events are walked through."""

    seat_count: int
    after_series: str = "close"
    dealer: int = 0
    stage: str = "start"
    contributed: set[int] = field(default_factory=set)
    committed: dict[int, str] = field(default_factory=dict)
    confirmed: set[int] = field(default_factory=set)
    timed_out: set[int] = field(default_factory=set)
    revealed: set[int] = field(default_factory=set)


def _seat(progress: _Progress, seat: int) -> int:
    if not 0 <= seat < progress.seat_count:
        raise _SequenceError(f"seat {seat} does not exist at a {progress.seat_count}-seat table")
    return seat


def _settled(progress: _Progress, seat: int) -> bool:
    """The seat has confirmed or timed out (a set of the two is made only where counted)."""
    return seat in progress.confirmed or seat in progress.timed_out


def _expect(progress: _Progress, *stages: str) -> None:
    if progress.stage not in stages:
        raise _SequenceError(f"it comes at stage {progress.stage!r}, not {' or '.join(stages)}")


def _step(progress: _Progress, event: Event, number: int) -> None:
    """Advance ``progress`` by one event, or raise ``_SequenceError`` saying why it is misplaced."""
    deal_number = getattr(event, "deal_number", number)
    if deal_number != number:
        raise _SequenceError(f"it names deal {deal_number} inside deal {number}")
    if isinstance(event, DealStarted):
        _expect(progress, "start")
        progress.dealer = _seat(progress, event.dealer)
        progress.stage = "started"
    elif isinstance(event, EntropyContributed):
        _expect(progress, "started")
        if _seat(progress, event.seat) in progress.contributed:
            raise _SequenceError(f"seat {event.seat} already contributed")
        progress.contributed.add(event.seat)
    elif isinstance(event, DeckCut):
        _expect(progress, "started")
        cutter = fairness.cutter_for(progress.dealer, progress.seat_count)
        if event.seat != cutter:
            raise _SequenceError(f"seat {event.seat} cut; the cut belongs to seat {cutter}")
        progress.stage = "cut"
    elif isinstance(event, CardsDealt):
        _expect(progress, "cut")
        progress.stage = "arranging"
    elif isinstance(event, ArrangementCommitted):
        _expect(progress, "arranging")
        if _settled(progress, _seat(progress, event.seat)):
            raise _SequenceError(f"seat {event.seat} committed after it was settled")
        progress.committed[event.seat] = event.commitment
    elif isinstance(event, SeatConfirmed):
        _expect(progress, "arranging")
        if _settled(progress, _seat(progress, event.seat)):
            raise _SequenceError(f"seat {event.seat} confirmed twice or after timing out")
        if progress.committed.get(event.seat) != event.commitment:
            raise _SequenceError(f"seat {event.seat} confirmed a commitment it never made last")
        progress.confirmed.add(event.seat)
    elif isinstance(event, SeatTimedOut):
        _seat(progress, event.seat)
        if event.stage == "arranging":
            _expect(progress, "arranging")
            if _settled(progress, event.seat):
                raise _SequenceError(f"seat {event.seat} timed out after it was settled")
        else:
            _expect(progress, "revealing")
            if event.seat in progress.revealed | progress.timed_out:
                raise _SequenceError(f"seat {event.seat} timed out after revealing")
        progress.timed_out.add(event.seat)
    elif isinstance(event, DeadlinesExtended):
        # A deadline moved because no server served when it fell (docs/events.md): it belongs to
        # the stage it names, for seats that have still to act there.
        _expect(progress, event.stage)
        for seat in event.seats:
            if _seat(progress, seat) in progress.timed_out or (
                seat in (progress.confirmed if event.stage == "arranging" else progress.revealed)
            ):
                raise _SequenceError(f"it extends seat {seat}'s deadline after the seat acted")
    elif isinstance(event, RevealsOpened):
        _expect(progress, "arranging")
        if len(progress.confirmed | progress.timed_out) != progress.seat_count:
            raise _SequenceError("reveals opened before every seat confirmed or timed out")
        progress.stage = "revealing"
    elif isinstance(event, ArrangementRevealed):
        _expect(progress, "revealing")
        seat = _seat(progress, event.seat)
        if seat not in progress.confirmed or seat in progress.revealed | progress.timed_out:
            raise _SequenceError(f"seat {seat} revealed without a confirmed, unrevealed hand")
        progress.revealed.add(seat)
    elif isinstance(event, SeedRevealed):
        _expect(progress, "revealing")
        if len(progress.revealed | progress.timed_out) != progress.seat_count:
            raise _SequenceError("the seed was revealed before every seat revealed or timed out")
        progress.stage = "seed"
    elif isinstance(event, DealScored):
        _expect(progress, "seed")
        progress.stage = "scored"
    elif isinstance(event, SeriesCompleted):
        _expect(progress, "scored")
        progress.stage = "series complete"
    elif isinstance(event, SeriesStarted):
        _expect(progress, "series complete")
        if progress.after_series != NEW_SERIES:
            raise _SequenceError(
                f"the table was created with after_series = {progress.after_series}, so no new "
                "series starts"
            )
        if event.first_deal_number != number + 1:
            raise _SequenceError(
                f"it starts the next series at deal {event.first_deal_number}, not {number + 1}"
            )
        progress.stage = "series started"
    else:
        raise _SequenceError(f"a {event.TYPE} event does not belong inside a deal")


def sequence_check(deal: DealEvents, seat_count: int, after_series: str = "close") -> AuditCheck:
    """The deal's events follow the protocol: right order, right seats, nothing twice; a
    ``SeriesStarted`` only after ``SeriesCompleted`` and only at a ``new_series`` table."""
    progress = _Progress(seat_count, after_series)
    for event, version in zip(deal.events, deal.versions, strict=True):
        try:
            _step(progress, event, deal.number)
        except _SequenceError as error:
            return AuditCheck(
                "sequence",
                Status.FAILED,
                f"the {event.TYPE} event at version {version} is out of place: {error}",
                deal=deal.number,
            )
    return AuditCheck(
        "sequence",
        Status.PASSED,
        f"{len(deal.events)} events in protocol order (up to {progress.stage!r})",
        deal=deal.number,
    )


def rotation_check(deal: DealEvents, chosen: DealerChosen | None, seat_count: int) -> AuditCheck:
    """Deal ``n``'s dealer is the first dealer moved ``n - 1`` seats to the left (across series
    too: a new series does not draw a new dealer, the deal keeps passing left)."""
    started = deal.first(DealStarted)
    if chosen is None or not isinstance(started, DealStarted):
        return AuditCheck(
            "dealer_rotation", Status.SKIPPED, "no DealerChosen or DealStarted", deal=deal.number
        )
    expected = chosen.dealer
    # Passing left is a rotation, so n - 1 moves are (n - 1) mod seats of them: without this, deal
    # 2,000 of a long-lived table took 1,999 steps, and a table's checks grew with its length
    # squared.
    moves = deal.number - 1
    for _ in range(moves % seat_count if seat_count > 0 else moves):
        expected = fairness.left_of(expected, seat_count)
    if started.dealer == expected:
        return AuditCheck(
            "dealer_rotation", Status.PASSED, f"seat {expected} deals", deal=deal.number
        )
    return AuditCheck(
        "dealer_rotation",
        Status.FAILED,
        f"deal {deal.number} is dealt by seat {started.dealer}; passing left from seat "
        f"{chosen.dealer} makes it seat {expected}",
        expected=str(expected),
        found=str(started.dealer),
        deal=deal.number,
    )


def fairness_checks(
    deal: DealEvents, created: TableCreated, rule_set: RuleSet | None = None
) -> tuple[list[AuditCheck], tuple[int, ...] | None]:
    """Fair dealing's checks of a finished deal, and its verified totals (None if unverified).

    ``rule_set`` is the created table's rule set when already read (None: read it here).
    """
    number = deal.number
    try:
        published = published_deal([created, *deal.events], number, rule_set)
        report = fairness.verify_deal(published)
        recorded = _recorded_checks(deal, report.ok)
    except (DealNotFinishedError, *MALFORMED) as error:
        # The codec checks field names, not their types: a forged value of the wrong type ends
        # here, as a failure of the deal's record, never as a crash of the verifier.
        return [
            AuditCheck(
                "published_deal",
                Status.FAILED,
                f"the deal's events do not make a publishable deal: {type(error).__name__}: "
                f"{error}",
                deal=number,
            )
        ], None
    checks = [
        _deal_check(check.name, Status.PASSED, check.detail, "", "", number)
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
    """``AuditCheck(name, status, detail, expected, found, deal)``: for the usual check (a deal
    number that is a plain int in range, short texts), whose ``__post_init__`` would change
    nothing, its fields are set in one step instead of ``__init__``'s setattr per field (fair
    dealing gives ten checks per deal); anything else takes the constructor."""
    if not (
        type(deal) is int
        and 0 < deal <= MAX_DEAL_NUMBER
        and max(len(detail), len(expected), len(found)) <= MAX_CHECK_TEXT
    ):
        return AuditCheck(name, status, detail, expected, found, deal)
    return from_fields(
        AuditCheck,
        {
            "name": name,
            "status": status,
            "detail": detail,
            "expected": expected,
            "found": found,
            "deal": deal,
        },
    )


def _recorded_checks(deal: DealEvents, verified: bool) -> list[AuditCheck]:
    """What was recorded at the reveals and at scoring agrees with the verified reveals."""
    scored = deal.first(DealScored)
    assert isinstance(scored, DealScored)
    reveals = [event for event in deal.events if isinstance(event, ArrangementRevealed)]
    if not verified:
        detail = "not checked: the deal itself did not verify"
        return [
            AuditCheck("reveal_fouls", Status.SKIPPED, detail, deal=deal.number),
            AuditCheck("scored_arrangements", Status.SKIPPED, detail, deal=deal.number),
        ]
    wrong_fouls = [
        reveal.seat
        for reveal in reveals
        if reveal.seat >= len(scored.fouls) or reveal.foul != scored.fouls[reveal.seat]
    ]
    fouls = (
        AuditCheck(
            "reveal_fouls",
            Status.PASSED,
            "each reveal's recorded foul flag agrees with the scoring",
            deal=deal.number,
        )
        if not wrong_fouls
        else AuditCheck(
            "reveal_fouls",
            Status.FAILED,
            f"the foul flag recorded at the reveal of seat(s) {wrong_fouls} disagrees with the "
            "verified fouls",
            deal=deal.number,
        )
    )
    wrong_rows = [
        reveal.seat
        for reveal in reveals
        if reveal.seat >= len(scored.arrangements)
        or not _same_rows(scored.arrangements[reveal.seat], reveal)
    ]
    rows = (
        AuditCheck(
            "scored_arrangements",
            Status.PASSED,
            "the scored rows are the revealed ones",
            deal=deal.number,
        )
        if not wrong_rows
        else AuditCheck(
            "scored_arrangements",
            Status.FAILED,
            f"the rows recorded with the score for seat(s) {wrong_rows} are not the revealed ones",
            deal=deal.number,
        )
    )
    return [fouls, rows]


def _same_rows(text: str | None, reveal: ArrangementRevealed) -> bool:
    if text is None:
        return False
    if text == f"{' '.join(reveal.front)}|{' '.join(reveal.middle)}|{' '.join(reveal.back)}":
        return True  # the usual case, written alike; otherwise compare the cards themselves
    parts = text.split("|")
    if len(parts) != 3:
        return False
    try:
        return all(
            parse_cards(part) == parse_cards(row)
            for part, row in zip(parts, (reveal.front, reveal.middle, reveal.back), strict=True)
        )
    except CardError:
        return False


def series_checks(
    deals: Sequence[DealEvents],
    verified_totals: dict[int, tuple[int, ...]],
    rule_set: RuleSet | None,
    seat_count: int,
    after_series: str = "close",
) -> list[AuditCheck]:
    """Running totals, final standings and (at a ``new_series`` table) each new series' start,
    against the verified deal results and the rule set's series length."""
    checks: list[AuditCheck] = []
    length = None if rule_set is None else rule_set.series_length
    # Before anything is sized by it: a forged seat count of 10^9 made gigabytes of zeros.
    zeros = (0,) * require_seat_count(seat_count)
    running: dict[int, tuple[int, ...]] = {0: zeros}
    restarted: set[int] = set()  # deals after which a SeriesStarted is recorded
    for deal in deals:
        scored = deal.first(DealScored)
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
                AuditCheck(
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
                AuditCheck(
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
                AuditCheck(
                    "series_totals",
                    Status.PASSED,
                    f"running totals {list(expected)}{fresh}",
                    deal=number,
                )
            )
        else:
            checks.append(
                AuditCheck(
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
    for deal in deals:
        completed = deal.first(SeriesCompleted)
        if isinstance(completed, SeriesCompleted):
            checks.append(
                _standings_check(deal, completed, running.get(deal.number), length, after_series)
            )
        start = _series_start_check(deal, length, after_series)
        if start is not None:
            checks.append(start)
    return checks


def _standings_check(
    deal: DealEvents,
    completed: SeriesCompleted,
    final_totals: tuple[int, ...] | None,
    length: int | None,
    after_series: str,
) -> AuditCheck:
    first = 1 if length is None else first_deal_of_series(deal.number, length, after_series)
    in_series = deal.number - first + 1
    if completed.deals_played != in_series or length != in_series:
        return AuditCheck(
            "standings",
            Status.FAILED,
            f"the series is recorded complete after deal {deal.number} "
            f"(deals_played {completed.deals_played}); the rule set's series has {length} deals"
            + (f" and this series began at deal {first}" if first > 1 else ""),
            deal=deal.number,
        )
    if final_totals is None:
        return AuditCheck("standings", Status.SKIPPED, "no final totals to rank", deal=deal.number)
    expected = [(item.seat, item.total, item.place) for item in standings(final_totals)]
    found = [(item.seat, item.total, item.place) for item in completed.standings]
    if expected == found:
        places = ", ".join(f"seat {seat}: {total} (place {place})" for seat, total, place in found)
        return AuditCheck("standings", Status.PASSED, places, deal=deal.number)
    return AuditCheck(
        "standings",
        Status.FAILED,
        "the recorded standings do not follow from the final totals (equal totals share a place)",
        expected=str(expected),
        found=str(found),
        deal=deal.number,
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
                else f"deal {deal.number} does not end a series of {length} deals"
            )
            return AuditCheck(
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
        return AuditCheck(
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
        return AuditCheck(
            "series_start",
            Status.FAILED,
            f"the SeriesStarted after deal {deal.number} names the wrong series or first deal",
            expected=expected,
            found=found,
            deal=deal.number,
        )
    return AuditCheck(
        "series_start",
        Status.PASSED,
        f"{expected}: totals reset to zero, the deal keeps passing left",
        deal=deal.number,
    )
