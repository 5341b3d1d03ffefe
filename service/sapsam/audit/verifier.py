"""Offline verification of an audit export: no database, no network, only the package.

:func:`verify_export` takes the export's lines and returns an :class:`AuditReport`. The checks run
in this order (docs/audit.md describes each precisely):

1. ``format``: the header and every event line parse.
2. ``chain``: each segment's events, recomputed from its anchor, give the recorded hashes
   (``sapsam.log.chain``), with versions running on without a gap.
3. ``anchor``: the first segment starts the stream (genesis); each later segment hangs on the
   event just before it, and where it touches the previous segment, on that segment's last hash.
4. ``coverage``: each segment holds exactly the versions its header names and ends on the
   recorded last hash; no event lies outside a segment.
5. ``decode``: every event is a known type and schema version with well-formed fields.
6. ``header``: the header's table, stream, rule set, seat count and deal lists agree with the
   events (the rule set that counts is the one recorded, and hashed, in ``TableCreated``).
7. ``dealer_lot``: the lot seed matches the table's lot commitment and draws the recorded dealer.
8. Per deal (see ``sapsam.audit.deal_checks``): ``sequence``, ``dealer_rotation``, and for a
   finished deal fair dealing's checks plus ``reveal_fouls`` and ``scored_arrangements``.
9. Over the series: ``series_totals``, ``standings`` and (at a table created with
   ``after_series = new_series``) ``series_start``; totals restart from zero with each series.

10. Given what the reader pins (``trust``; see ``sapsam.audit.anchoring``): ``checkpoint``,
    ``inclusion`` and ``consistency``, which decide between the verdicts *anchored* and
    *internally consistent only* (``AuditReport.verdict``).

Every check runs even after an earlier one failed, so a report shows all that is wrong; the first
failure is the first divergence.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, Final, TypeVar, cast, overload

from sapsam import fairness
from sapsam.audit.anchoring import Trust, anchoring_checks
from sapsam.audit.deal_checks import fairness_checks
from sapsam.audit.deal_events import MALFORMED, DealEvents
from sapsam.audit.deal_sequence import rotation_check, sequence_check
from sapsam.audit.export_format import (
    AuditExport,
    ExportedEvent,
    ExportFormatError,
    Segment,
)
from sapsam.audit.export_reading import read_export
from sapsam.audit.player_signatures import signature_checks
from sapsam.audit.report import AuditCheck, AuditReport, Status
from sapsam.audit.series_checks import series_checks
from sapsam.audit.void_checks import voided_check
from sapsam.domain.events import (
    DEFAULT_CODEC,
    DealerChosen,
    DealScored,
    DealStarted,
    DealVoided,
    Event,
    EventCodec,
    PlayerSeated,
    SeatReplaced,
    TableCreated,
)
from sapsam.log.chain import verify_chain_of_stream
from sapsam.rules.cards import format_cards
from sapsam.rules.ruleset import RuleSet, RuleSetError

_NO_FALLBACK: Final = object()


def verify_export(
    lines: Iterable[str], codec: EventCodec = DEFAULT_CODEC, trust: Trust | None = None
) -> AuditReport:
    """Verify an export from its JSON lines; a malformed export is a failed ``format`` check.
    With ``trust`` (what the reader pins, possibly nothing) the export's anchoring is checked too
    and the report ends in one of the three verdicts (``AuditReport.verdict``).

    Raises ``ExportLimitError`` (``sapsam.audit.export_limits``) for an input beyond the
    documented limits, which is refused unread rather than verified.
    """
    try:
        export = read_export(lines)
    except ExportFormatError as error:
        return AuditReport(
            subject="an unreadable export",
            checks=(AuditCheck("format", Status.FAILED, str(error)),),
            verdicts=trust is not None,
        )
    return verify_audit_export(export, codec, trust)


def verify_audit_export(
    export: AuditExport, codec: EventCodec = DEFAULT_CODEC, trust: Trust | None = None
) -> AuditReport:
    """Verify a parsed export (see the module docstring for the checks); with ``trust``, its
    anchoring too (the ``checkpoint``, ``inclusion`` and ``consistency`` checks)."""
    report = _verify_content(export, codec)
    if trust is None:
        return report
    checks, anchor = anchoring_checks(export, trust)
    anchored = replace(report, checks=report.checks + tuple(checks), anchor=anchor, verdicts=True)
    return anchored if anchored.ok else replace(anchored, anchor=None)


def _verify_content(export: AuditExport, codec: EventCodec) -> AuditReport:
    """Every check of the export's content (1 to 9 of the module docstring)."""
    header = export.header
    checks: list[AuditCheck] = [
        AuditCheck(
            "format",
            Status.PASSED,
            f"{header.scope} export, format {header.format_version}, {len(export.events)} events",
        )
    ]
    segment_events = _split(export)
    checks.append(_chain_check(export, segment_events))
    checks.append(_anchor_check(header.segments, segment_events))
    checks.append(_coverage_check(export, segment_events))
    decoded, decode_check = _decode(export.events, codec)
    checks.append(decode_check)
    created = next((event for _, event in decoded if isinstance(event, TableCreated)), None)
    rule_set = _safely("header", None, lambda: _rule_set(created), None)
    checks.append(
        _safely("header", None, lambda: _header_check(export, decoded, created, rule_set))
    )
    chosen = next((event for _, event in decoded if isinstance(event, DealerChosen)), None)
    checks.append(_safely("opening", None, lambda: _opening_check(decoded, created)))
    checks.append(_safely("dealer_lot", None, lambda: _lot_check(created, chosen)))
    deals = _group_deals(decoded)
    seated = _opening_seating(decoded)
    verified_totals: dict[int, tuple[int, ...]] = {}
    deals_verified = 0
    seat_count = created.seat_count if created is not None else header.seat_count
    after_series = created.after_series if created is not None else "close"
    # Who holds each seat as each deal is played: PlayerSeated, then SeatReplaced between deals.
    seated_now = list(seated)
    for index, deal in enumerate(deals):
        if index:
            seated_now = _seating_after(seated_now, deals[index - 1])
        checks.append(
            _safely(
                "sequence", deal.number, partial(sequence_check, deal, seat_count, after_series)
            )
        )
        checks.append(
            _safely(
                "dealer_rotation", deal.number, partial(rotation_check, deal, chosen, seat_count)
            )
        )
        if isinstance(deal.first(DealVoided), DealVoided) and created is not None:
            table_id = uuid.UUID(created.table_id)
            checks.append(
                _safely(
                    "voided_deal",
                    deal.number,
                    partial(voided_check, deal, table_id, created.seat_count),
                )
            )
            continue
        if not deal.finished:
            checks.append(
                AuditCheck(
                    "fair_dealing",
                    Status.PENDING,
                    "the deal is still being played: its seed is secret until SeedRevealed, so "
                    "its cards cannot be checked yet",
                    deal=deal.number,
                )
            )
            continue
        if created is None:
            checks.append(
                AuditCheck("fair_dealing", Status.SKIPPED, "no TableCreated", deal=deal.number)
            )
            continue
        deal_checks, totals = fairness_checks(deal, created, rule_set, seated_now)
        checks.extend(deal_checks)
        if totals is not None:
            verified_totals[deal.number] = totals
            deals_verified += 1
    checks.extend(
        _safely(
            "player_signature",
            None,
            lambda: signature_checks(deals, created, seated),
            [_malformed("player_signature", None, "the players' signatures cannot be read")],
        )
    )
    checks.extend(
        _safely(
            "series_totals",
            None,
            lambda: series_checks(deals, verified_totals, rule_set, seat_count, after_series),
            [_malformed("series_totals", None, "the recorded running totals cannot be read")],
        )
    )
    return AuditReport(
        subject=f"table {header.table_id} ({_scope_text(export)})",
        checks=tuple(checks),
        deals_verified=deals_verified,
        events_checked=len(export.events),
    )


def _opening_seating(decoded: Sequence[tuple[int, Event]]) -> list[PlayerSeated]:
    """Who holds each seat when the export's first deal starts: the PlayerSeated events, and
    the seats given away before it (SeatReplaced: a deal's export carries those of the deals
    before it), as PlayerSeated records."""
    seated: list[PlayerSeated] = []
    for _, event in decoded:
        if isinstance(event, DealStarted):
            break
        if isinstance(event, PlayerSeated):
            seated.append(event)
        elif isinstance(event, SeatReplaced):
            seated.append(PlayerSeated(seat=event.seat, player_id=event.player_id))
    return seated


def _seating_after(seated: list[PlayerSeated], deal: DealEvents) -> list[PlayerSeated]:
    """``seated`` with the seats ``deal``'s SeatReplaced events gave away (after its score),
    as PlayerSeated records: what ``published_deal`` reads the seats' players from."""
    replaced = [event for event in deal.events if isinstance(event, SeatReplaced)]
    if not replaced:
        return seated
    return [*seated, *(PlayerSeated(seat=e.seat, player_id=e.player_id) for e in replaced)]


_Result = TypeVar("_Result")


def _malformed(name: str, deal: int | None, detail: str) -> AuditCheck:
    return AuditCheck(name, Status.FAILED, f"malformed event content: {detail}", deal=deal)


@overload
def _safely(name: str, deal: int | None, compute: Callable[[], AuditCheck]) -> AuditCheck: ...


@overload
def _safely(
    name: str, deal: int | None, compute: Callable[[], _Result], fallback: _Result
) -> _Result: ...


def _safely(
    name: str, deal: int | None, compute: Callable[[], Any], fallback: Any = _NO_FALLBACK
) -> Any:
    """Run a check; a malformed value it trips over fails the check instead of the verifier."""
    try:
        return compute()
    except MALFORMED as error:
        if fallback is not _NO_FALLBACK:
            return fallback
        return _malformed(name, deal, f"{type(error).__name__}: {error}")


def _scope_text(export: AuditExport) -> str:
    header = export.header
    if header.scope == "deal" and header.deals:
        return f"deal {header.deals[0]}"
    return f"series, deals {', '.join(map(str, header.deals)) or 'none'}"


def _split(export: AuditExport) -> list[list[ExportedEvent]]:
    """The events of each segment, in file order, by the segment's version range."""
    return [
        [
            event
            for event in export.events
            if segment.first_version <= event.version <= segment.last_version
        ]
        for segment in export.header.segments
    ]


def _chain_check(export: AuditExport, segment_events: Sequence[list[ExportedEvent]]) -> AuditCheck:
    stream_id = export.header.stream_id
    checked = 0
    for index, (segment, events) in enumerate(
        zip(export.header.segments, segment_events, strict=True), start=1
    ):
        report = verify_chain_of_stream(
            stream_id, events, segment.anchor.hash, segment.anchor.version, export.parsed_json
        )
        checked += report.events_checked
        if not report.intact:
            problem = report.problems[0]
            kind = next((e.type for e in events if e.version == problem.version), "?")
            return AuditCheck(
                "chain",
                Status.FAILED,
                f"segment {index}, the {kind} event at version {problem.version}: "
                f"{problem.reason}; it was altered, or events before it were removed, added or "
                "reordered",
            )
    return AuditCheck(
        "chain",
        Status.PASSED,
        f"{checked} events in {len(segment_events)} segment(s), each hash recomputed from its "
        "anchor",
    )


def _anchor_check(
    segments: Sequence[Segment], segment_events: Sequence[list[ExportedEvent]]
) -> AuditCheck:
    first = segments[0]
    if not first.anchor.is_genesis or first.first_version != 1:
        return AuditCheck(
            "anchor",
            Status.FAILED,
            "the export must start at the stream's first event (version 1, anchored on the "
            f"genesis hash); it starts at version {first.first_version} on anchor version "
            f"{first.anchor.version}",
        )
    stated: list[str] = []
    for index in range(1, len(segments)):
        segment, previous = segments[index], segments[index - 1]
        if segment.anchor.version != segment.first_version - 1:
            return AuditCheck(
                "anchor",
                Status.FAILED,
                f"segment {index + 1} names anchor version {segment.anchor.version} but starts "
                f"at version {segment.first_version}",
            )
        if segment.anchor.version < previous.last_version:
            return AuditCheck(
                "anchor",
                Status.FAILED,
                f"segment {index + 1} overlaps segment {index}",
            )
        if segment.anchor.version == previous.last_version:
            previous_events = segment_events[index - 1]
            last_hash = previous_events[-1].hash if previous_events else previous.last_hash
            if segment.anchor.hash != last_hash:
                return AuditCheck(
                    "anchor",
                    Status.FAILED,
                    f"segment {index + 1} hangs on version {segment.anchor.version} with a hash "
                    f"that is not that event's hash in segment {index}",
                    expected=last_hash.hex(),
                    found=segment.anchor.hash.hex(),
                )
        else:
            stated.append(
                f"segment {index + 1} hangs on version {segment.anchor.version} "
                f"(hash {segment.anchor.hash.hex()[:16]}…), which is outside the export"
            )
    detail = "the export starts at the genesis"
    if stated:
        detail += (
            "; "
            + "; ".join(stated)
            + " (confirm it against the server: sapsam audit verify --table T --deal N)"
        )
    return AuditCheck("anchor", Status.PASSED, detail)


def _coverage_check(
    export: AuditExport, segment_events: Sequence[list[ExportedEvent]]
) -> AuditCheck:
    covered = sum(len(events) for events in segment_events)
    if covered != len(export.events):
        outside = [
            event.version
            for event in export.events
            if not any(
                s.first_version <= event.version <= s.last_version for s in export.header.segments
            )
        ]
        return AuditCheck(
            "coverage",
            Status.FAILED,
            f"event(s) at version(s) {outside or 'repeated'} lie outside the segments the "
            "header names (an event was added or the versions do not match the header)",
        )
    for index, (segment, events) in enumerate(
        zip(export.header.segments, segment_events, strict=True), start=1
    ):
        wanted = segment.last_version - segment.first_version + 1
        if len(events) != wanted:
            return AuditCheck(
                "coverage",
                Status.FAILED,
                f"segment {index} should hold versions {segment.first_version}.."
                f"{segment.last_version} ({wanted} events) but holds {len(events)}: "
                "events are missing or repeated",
            )
        if not events:
            return AuditCheck("coverage", Status.FAILED, f"segment {index} names no version at all")
        if events[-1].version != segment.last_version or events[-1].hash != segment.last_hash:
            return AuditCheck(
                "coverage",
                Status.FAILED,
                f"segment {index} should end on version {segment.last_version} with hash "
                f"{segment.last_hash.hex()[:16]}…; it ends on version {events[-1].version}",
            )
    return AuditCheck(
        "coverage", Status.PASSED, f"{covered} events, exactly the versions the header names"
    )


def _decode(
    events: Sequence[ExportedEvent], codec: EventCodec
) -> tuple[list[tuple[int, Event]], AuditCheck]:
    decoded: list[tuple[int, Event]] = []
    problems: list[str] = []
    for event in events:
        try:
            decoded.append(
                (event.version, codec.decode(event.type, event.schema_version, event.data))
            )
        except (ValueError, KeyError, TypeError) as error:
            problems.append(f"the {event.type} event at version {event.version}: {error!s}")
    if problems:
        return decoded, AuditCheck(
            "decode",
            Status.FAILED,
            f"{len(problems)} event(s) cannot be read; first: {problems[0]}",
        )
    return decoded, AuditCheck("decode", Status.PASSED, f"{len(decoded)} events read")


def _rule_set(created: TableCreated | None) -> RuleSet | None:
    if created is None:
        return None
    try:
        return _read_rule_set(created.rule_set)
    except RuleSetError:
        return None


# RuleSet.from_dict validates every field, and a verifier going through many exports meets the
# same few rule sets again and again. A RuleSet is frozen, so one reading is shared: the key holds
# each value's type too (true and 1 are equal in Python, not as rule set values). Errors are not
# kept, so a bad rule set raises every time.
_RuleSetKey = tuple[tuple[str, type, object], ...]
_RULE_SETS: dict[_RuleSetKey, RuleSet] = {}
_RULE_SETS_KEPT = 64


def _read_rule_set(data: object) -> RuleSet:
    """``RuleSet.from_dict(data)``, read once per distinct rule set."""
    if type(data) is not dict:
        return RuleSet.from_dict(cast(Mapping[str, Any], data))
    try:
        key = tuple((name, type(value), value) for name, value in data.items())
        known = _RULE_SETS.get(key)
    except TypeError:  # an unhashable value (a list …): nothing to share, from_dict judges it
        return RuleSet.from_dict(data)
    if known is None:
        known = RuleSet.from_dict(data)
        if len(_RULE_SETS) >= _RULE_SETS_KEPT:
            _RULE_SETS.clear()
        _RULE_SETS[key] = known
    return known


def _header_check(
    export: AuditExport,
    decoded: Sequence[tuple[int, Event]],
    created: TableCreated | None,
    rule_set: RuleSet | None,
) -> AuditCheck:
    header = export.header
    if created is None:
        return AuditCheck("header", Status.FAILED, "the export holds no TableCreated event")
    problems: list[str] = []
    if header.table_id != created.table_id:
        problems.append(f"table id {header.table_id} is not the recorded {created.table_id}")
    if header.stream_id != f"table-{created.table_id}":
        problems.append(f"stream {header.stream_id} is not the table's stream")
    if dict(header.rule_set) != dict(created.rule_set):
        changed = sorted(
            key
            for key in set(header.rule_set) | set(created.rule_set)
            if header.rule_set.get(key) != created.rule_set.get(key)
        )
        problems.append(
            f"the header's rule set differs from the one recorded in TableCreated in {changed}"
        )
    if rule_set is None:
        problems.append("the recorded rule set is not a valid rule set")
    if header.seat_count != created.seat_count:
        problems.append(f"seat count {header.seat_count} is not the recorded {created.seat_count}")
    started = [event.deal_number for _, event in decoded if isinstance(event, DealStarted)]
    scored = [event.deal_number for _, event in decoded if isinstance(event, DealScored)]
    if list(header.deals) != started:
        problems.append(f"the header lists deals {list(header.deals)}, the events hold {started}")
    if list(header.finished_deals) != scored:
        problems.append(
            f"the header lists finished deals {list(header.finished_deals)}, "
            f"the events score {scored}"
        )
    if header.scope not in ("deal", "table"):
        problems.append(f"unknown scope {header.scope!r}")
    if problems:
        return AuditCheck("header", Status.FAILED, "; ".join(problems))
    name = rule_set.name if rule_set is not None else "?"
    return AuditCheck(
        "header",
        Status.PASSED,
        f"table {created.table_id}, {created.seat_count} seats, rule set {name!r} as recorded",
    )


def _opening_check(
    decoded: Sequence[tuple[int, Event]], created: TableCreated | None
) -> AuditCheck:
    """TableCreated at version 1, each seat taken once, then the dealer drawn; nothing else."""
    opening: list[tuple[int, Event]] = []
    for version, event in decoded:
        if isinstance(event, DealStarted):
            break
        opening.append((version, event))
    if created is None or not opening or opening[0][1] is not created or opening[0][0] != 1:
        return AuditCheck("opening", Status.FAILED, "the export does not begin with TableCreated")
    seats: dict[int, str] = {}
    drawn = False
    for version, event in opening[1:]:
        if isinstance(event, PlayerSeated) and not drawn:
            if not 0 <= event.seat < created.seat_count or event.seat in seats:
                return AuditCheck(
                    "opening",
                    Status.FAILED,
                    f"the PlayerSeated event at version {version} takes seat {event.seat}, "
                    "which does not exist or is already taken",
                )
            if event.player_id in seats.values():
                return AuditCheck(
                    "opening",
                    Status.FAILED,
                    f"the PlayerSeated event at version {version} seats {event.player_id} twice",
                )
            seats[event.seat] = event.player_id
        elif isinstance(event, DealerChosen) and not drawn and len(seats) == created.seat_count:
            drawn = True
        elif (
            isinstance(event, SeatReplaced)
            and drawn
            and seats.get(event.seat) == event.previous_player_id
            and event.player_id not in seats.values()
        ):
            # A deal's export carries the seats given away between earlier deals.
            seats[event.seat] = event.player_id
        else:
            return AuditCheck(
                "opening",
                Status.FAILED,
                f"the {event.TYPE} event at version {version} is out of place before the first "
                "deal (expected TableCreated, a PlayerSeated per seat, then DealerChosen)",
            )
    players = ", ".join(f"seat {seat}: {seats[seat]}" for seat in sorted(seats))
    return AuditCheck("opening", Status.PASSED, players or "no seat taken yet")


def _lot_check(created: TableCreated | None, chosen: DealerChosen | None) -> AuditCheck:
    if created is None or chosen is None:
        return AuditCheck(
            "dealer_lot", Status.PENDING, "the dealer has not been drawn in this export"
        )
    try:
        table_id = uuid.UUID(created.table_id)
        lot_seed = bytes.fromhex(chosen.lot_seed)
        commitment = fairness.lot_commitment(table_id, lot_seed)
        lot = fairness.draw_dealer(lot_seed, table_id, created.seat_count)
    except ValueError as error:
        return AuditCheck("dealer_lot", Status.FAILED, f"the lot cannot be redrawn: {error}")
    if commitment.hex() != created.lot_commitment:
        return AuditCheck(
            "dealer_lot",
            Status.FAILED,
            "the published lot seed does not hash to the lot commitment recorded at the "
            "table's creation",
            expected=created.lot_commitment,
            found=commitment.hex(),
        )
    drawn = format_cards(lot.cards).split()
    if lot.dealer != chosen.dealer or drawn != list(chosen.lot_cards):
        return AuditCheck(
            "dealer_lot",
            Status.FAILED,
            "redrawing the lot does not give the recorded cards and dealer",
            expected=f"dealer {lot.dealer}, cards {' '.join(drawn)}",
            found=f"dealer {chosen.dealer}, cards {' '.join(chosen.lot_cards)}",
        )
    return AuditCheck(
        "dealer_lot", Status.PASSED, f"seat {lot.dealer} drew the highest card ({' '.join(drawn)})"
    )


def _group_deals(decoded: Sequence[tuple[int, Event]]) -> list[DealEvents]:
    """Each deal's events from its DealStarted on (SeriesCompleted, and SeriesStarted at a
    ``new_series`` table, go with the last deal of the series).

    An event after the opening that is not in a deal's run is kept where it sits, so the sequence
    check of the deal around it reports it.
    """
    deals: list[DealEvents] = []
    for version, event in decoded:
        if not deals and isinstance(
            event, TableCreated | PlayerSeated | DealerChosen | SeatReplaced
        ):
            continue
        if isinstance(event, DealStarted):
            deals.append(DealEvents(event.deal_number))
        elif not deals:
            number = getattr(event, "deal_number", 0)
            deals.append(DealEvents(number if isinstance(number, int) else 0))
        deals[-1].events.append(event)
        deals[-1].versions.append(version)
    return deals
