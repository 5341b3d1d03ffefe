"""A deal's ``sequence`` check (the events follow the protocol, in order, each by the seat
allowed to act) and its ``dealer_rotation`` check (the deal passes left from the dealer drawn by
lot). Pure; part of ``sapsam.audit.deal_checks``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from sapsam import fairness
from sapsam.audit.deal_events import NEW_SERIES, DealEvents
from sapsam.audit.report import AuditCheck, Status, make_check
from sapsam.audit.surrender_checks import AnnouncementOutOfPlaceError, AnnouncingTurns
from sapsam.domain.events import (
    AnnouncementsOpened,
    ArrangementCommitted,
    ArrangementRevealed,
    CardsDealt,
    DeadlinesExtended,
    DealerChosen,
    DealScored,
    DealStarted,
    DealVoided,
    DeckCut,
    EntropyContributed,
    Event,
    NaturalDeclared,
    NaturalRevealed,
    RevealsOpened,
    SeatConfirmed,
    SeatReplaced,
    SeatTimedOut,
    SeedRevealed,
    SeriesCompleted,
    SeriesStarted,
    SurrenderAnnounced,
)


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
    declared: set[int] = field(default_factory=set)
    """Seats that committed a natural declaration (``NaturalDeclared``)."""
    opened: set[int] = field(default_factory=set)
    """Seats that opened it (``NaturalRevealed``), each just before its reveal."""
    turns: AnnouncingTurns = field(default_factory=lambda: AnnouncingTurns(surrender_on=False))
    """The play-or-surrender announcements (``sapsam.audit.surrender_checks``)."""


def _seat(progress: _Progress, seat: int) -> int:
    if not 0 <= seat < progress.seat_count:
        raise _SequenceError(f"seat {seat} does not exist at a {progress.seat_count}-seat table")
    return seat


def _settled(progress: _Progress, seat: int) -> bool:
    """The seat has confirmed or timed out (a set of the two is made only where counted)."""
    return seat in progress.confirmed or seat in progress.timed_out


def _expect(progress: _Progress, *stages: str) -> None:
    """Raise ``_SequenceError`` unless the deal is at one of ``stages``. (Where one stage is
    expected, ``_step`` compares it first and calls this only to raise: a call per event less.)"""
    if progress.stage not in stages:
        raise _SequenceError(f"it comes at stage {progress.stage!r}, not {' or '.join(stages)}")


# The event types _step tells apart, in the order its branches test them. What isinstance answers
# depends on the type alone: each concrete type's kind (the first of _KINDS its instances are
# instances of; None: none) is worked out once.
_KINDS: Final[tuple[type[Event], ...]] = (
    DealStarted,
    EntropyContributed,
    DeckCut,
    CardsDealt,
    ArrangementCommitted,
    SeatConfirmed,
    SeatTimedOut,
    DeadlinesExtended,
    AnnouncementsOpened,
    SurrenderAnnounced,
    RevealsOpened,
    NaturalDeclared,
    NaturalRevealed,
    ArrangementRevealed,
    SeedRevealed,
    DealScored,
    DealVoided,
    SeatReplaced,
    SeriesCompleted,
    SeriesStarted,
)
_KIND_OF_TYPE: dict[type, type[Event] | None] = {kind: kind for kind in _KINDS}
_UNKNOWN: Final = object()


def _kind_of(event_type: type) -> type[Event] | None:
    kind = next((kind for kind in _KINDS if issubclass(event_type, kind)), None)
    if len(_KIND_OF_TYPE) < 256:  # bounded: only types met in events
        _KIND_OF_TYPE[event_type] = kind
    return kind


def _step(progress: _Progress, event: Event, number: int) -> None:
    """Advance ``progress`` by one event, or raise ``_SequenceError`` saying why it is misplaced."""
    deal_number = getattr(event, "deal_number", number)
    if deal_number != number:
        raise _SequenceError(f"it names deal {deal_number} inside deal {number}")
    # One isinstance per event, against the one kind it can be (the branch below that tests it
    # first), instead of along the whole chain.
    kind = _KIND_OF_TYPE.get(type(event), _UNKNOWN)
    if kind is _UNKNOWN:
        kind = _kind_of(type(event))
    if kind is DealStarted and isinstance(event, DealStarted):
        if progress.stage != "start":
            _expect(progress, "start")
        progress.dealer = _seat(progress, event.dealer)
        progress.stage = "started"
    elif kind is EntropyContributed and isinstance(event, EntropyContributed):
        if progress.stage != "started":
            _expect(progress, "started")
        if _seat(progress, event.seat) in progress.contributed:
            raise _SequenceError(f"seat {event.seat} already contributed")
        progress.contributed.add(event.seat)
    elif kind is DeckCut and isinstance(event, DeckCut):
        if progress.stage != "started":
            _expect(progress, "started")
        cutter = fairness.cutter_for(progress.dealer, progress.seat_count)
        if event.seat != cutter:
            raise _SequenceError(f"seat {event.seat} cut; the cut belongs to seat {cutter}")
        progress.stage = "cut"
    elif kind is CardsDealt and isinstance(event, CardsDealt):
        if progress.stage != "cut":
            _expect(progress, "cut")
        progress.stage = "arranging"
    elif kind is ArrangementCommitted and isinstance(event, ArrangementCommitted):
        if progress.stage != "arranging":
            _expect(progress, "arranging")
        if _settled(progress, _seat(progress, event.seat)):
            raise _SequenceError(f"seat {event.seat} committed after it was settled")
        progress.committed[event.seat] = event.commitment
    elif kind is SeatConfirmed and isinstance(event, SeatConfirmed):
        if progress.stage != "arranging":
            _expect(progress, "arranging")
        if _settled(progress, _seat(progress, event.seat)):
            raise _SequenceError(f"seat {event.seat} confirmed twice or after timing out")
        if progress.committed.get(event.seat) != event.commitment:
            raise _SequenceError(f"seat {event.seat} confirmed a commitment it never made last")
        progress.confirmed.add(event.seat)
    elif kind is SeatTimedOut and isinstance(event, SeatTimedOut):
        _seat(progress, event.seat)
        if event.stage == "arranging":
            if progress.stage != "arranging":
                _expect(progress, "arranging")
            if _settled(progress, event.seat):
                raise _SequenceError(f"seat {event.seat} timed out after it was settled")
        else:
            if progress.stage != "revealing":
                _expect(progress, "revealing")
            if event.seat in progress.revealed | progress.timed_out:
                raise _SequenceError(f"seat {event.seat} timed out after revealing")
        progress.timed_out.add(event.seat)
    elif kind is DeadlinesExtended and isinstance(event, DeadlinesExtended):
        # A deadline moved because no server served when it fell (docs/events.md): it belongs to
        # the stage it names, for seats that have still to act there.
        _expect(progress, event.stage)
        if event.stage == "announcing":
            progress.turns.extended(event)
        for seat in event.seats:
            if _seat(progress, seat) in progress.timed_out or (
                seat in (progress.confirmed if event.stage == "arranging" else progress.revealed)
            ):
                raise _SequenceError(f"it extends seat {seat}'s deadline after the seat acted")
    elif kind is AnnouncementsOpened and isinstance(event, AnnouncementsOpened):
        if progress.stage != "arranging":
            _expect(progress, "arranging")
        if len(progress.confirmed | progress.timed_out) != progress.seat_count:
            raise _SequenceError("announcements opened before every seat confirmed or timed out")
        progress.turns.opened(event, progress.dealer, progress.seat_count, progress.timed_out)
        progress.stage = "announcing"
    elif kind is SurrenderAnnounced and isinstance(event, SurrenderAnnounced):
        if progress.stage != "announcing":
            _expect(progress, "announcing")
        progress.turns.said(event)
    elif kind is RevealsOpened and isinstance(event, RevealsOpened):
        _expect(progress, "arranging", "announcing")
        if len(progress.confirmed | progress.timed_out) != progress.seat_count:
            raise _SequenceError("reveals opened before every seat confirmed or timed out")
        progress.turns.reveals_may_open(
            progress.stage == "arranging", len(progress.timed_out) == progress.seat_count
        )
        progress.stage = "revealing"
    elif kind is NaturalDeclared and isinstance(event, NaturalDeclared):
        # Before the seat's first commitment, once (docs/rules.md §2.9.1).
        if progress.stage != "arranging":
            _expect(progress, "arranging")
        seat = _seat(progress, event.seat)
        if seat in progress.declared or seat in progress.committed or _settled(progress, seat):
            raise _SequenceError(f"seat {seat} declared twice or after committing")
        progress.declared.add(seat)
    elif kind is NaturalRevealed and isinstance(event, NaturalRevealed):
        # Opened with the reveal, in its append, just before the ArrangementRevealed.
        if progress.stage != "revealing":
            _expect(progress, "revealing")
        seat = _seat(progress, event.seat)
        if seat not in progress.declared or seat in progress.opened | progress.revealed:
            raise _SequenceError(f"seat {seat} opened a declaration it did not make, or twice")
        progress.opened.add(seat)
    elif kind is ArrangementRevealed and isinstance(event, ArrangementRevealed):
        if progress.stage != "revealing":
            _expect(progress, "revealing")
        seat = _seat(progress, event.seat)
        if seat not in progress.confirmed or seat in progress.revealed | progress.timed_out:
            raise _SequenceError(f"seat {seat} revealed without a confirmed, unrevealed hand")
        if seat in progress.declared and seat not in progress.opened:
            raise _SequenceError(f"seat {seat} revealed without opening its declaration")
        progress.revealed.add(seat)
    elif kind is SeedRevealed and isinstance(event, SeedRevealed):
        if progress.stage != "revealing":
            _expect(progress, "revealing")
        if len(progress.revealed | progress.timed_out) != progress.seat_count:
            raise _SequenceError("the seed was revealed before every seat revealed or timed out")
        progress.stage = "seed"
    elif kind is DealScored and isinstance(event, DealScored):
        if progress.stage != "seed":
            _expect(progress, "seed")
        progress.stage = "scored"
    elif kind is DealVoided and isinstance(event, DealVoided):
        # The operator voided the deal in progress: it ends here, unscored.
        _expect(progress, "started", "cut", "arranging", "announcing", "revealing")
        progress.stage = "voided"
    elif kind is SeatReplaced and isinstance(event, SeatReplaced):
        # Between deals: after this deal's score (or voiding), before the next DealStarted.
        _expect(progress, "scored", "voided")
        _seat(progress, event.seat)
    elif kind is SeriesCompleted and isinstance(event, SeriesCompleted):
        if progress.stage != "scored":
            _expect(progress, "scored")
        progress.stage = "series complete"
    elif kind is SeriesStarted and isinstance(event, SeriesStarted):
        if progress.stage != "series complete":
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


def sequence_check(
    deal: DealEvents, seat_count: int, after_series: str = "close", surrender_on: bool = False
) -> AuditCheck:
    """The deal's events follow the protocol: right order, right seats, nothing twice; a
    ``SeriesStarted`` only after ``SeriesCompleted`` and only at a ``new_series`` table; with
    ``surrender_on`` (the table's rule set has surrender), the announcements in turn
    (``sapsam.audit.surrender_checks``)."""
    progress = _Progress(seat_count, after_series, turns=AnnouncingTurns(surrender_on))
    for event, version in zip(deal.events, deal.versions, strict=True):
        try:
            _step(progress, event, deal.number)
        except (_SequenceError, AnnouncementOutOfPlaceError) as error:
            return make_check(
                "sequence",
                Status.FAILED,
                f"the {event.TYPE} event at version {version} is out of place: {error}",
                deal=deal.number,
            )
    return make_check(
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
        return make_check(
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
        return make_check(
            "dealer_rotation", Status.PASSED, f"seat {expected} deals", deal=deal.number
        )
    return make_check(
        "dealer_rotation",
        Status.FAILED,
        f"deal {deal.number} is dealt by seat {started.dealer}; passing left from seat "
        f"{chosen.dealer} makes it seat {expected}",
        expected=str(expected),
        found=str(started.dealer),
        deal=deal.number,
    )
