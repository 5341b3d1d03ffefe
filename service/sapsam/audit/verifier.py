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

This module runs the checks in order; they live beside it: ``segment_checks`` (2 to 4),
``opening_checks`` (6 and 7, and reading the recorded rule set), ``deal_checks``,
``deal_sequence`` and ``void_checks`` (8), ``series_checks`` and ``player_signatures`` (9),
``anchoring`` (10).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from sapsam.audit.anchoring import Trust, anchoring_checks, forget_opened_notes
from sapsam.audit.check_guard import malformed_check
from sapsam.audit.check_guard import safely as _safely
from sapsam.audit.deal_events import DealEvents
from sapsam.audit.export_format import AuditExport, ExportedEvent, ExportFormatError
from sapsam.audit.export_reading import OPENING_TYPES, forget_openings_read, read_export
from sapsam.audit.families import DealContext, audit_family_for
from sapsam.audit.inclusion_walk import forget_walks
from sapsam.audit.opening_checks import (
    forget_lots_and_rule_sets,
    header_check,
    lot_check,
    opening_check,
)
from sapsam.audit.player_signatures import signature_checks
from sapsam.audit.report import Anchor, AuditCheck, AuditReport, Status, make_check
from sapsam.audit.segment_checks import (
    anchor_check,
    chain_check,
    coverage_check,
    forget_chains,
    split_segments,
)
from sapsam.audit.series_checks import series_checks
from sapsam.domain.event_codec import DEFAULT_CODEC, EventCodec
from sapsam.domain.events import (
    DealerChosen,
    DealStarted,
    Event,
    PlayerSeated,
    SeatReplaced,
    TableCreated,
)
from sapsam.domain.family import UnknownFamilyError
from sapsam.frozen import from_fields
from sapsam.plurals import plural


def verify_export(
    lines: Iterable[str], codec: EventCodec = DEFAULT_CODEC, trust: Trust | None = None
) -> AuditReport:
    """Verify an export from its JSON lines; a malformed export is a failed ``format`` check.
    With ``trust`` (what the reader pins, possibly nothing) the export's anchoring is checked too
    and the report ends in one of the three verdicts (``AuditReport.verdict``).

    Raises ``ExportLimitError`` (``sapsam.audit.export_limits``) for an input beyond the
    documented limits, which is refused unread rather than verified.
    """
    return read_and_verify(lines, codec, trust)[1]


def read_and_verify(
    lines: Iterable[str], codec: EventCodec = DEFAULT_CODEC, trust: Trust | None = None
) -> tuple[AuditExport | None, AuditReport]:
    """``verify_export``, and the export it read (None for an unreadable one, whose report's
    ``format`` check says why): for a caller that goes on with the same export (tells its deals,
    checks receipts or pinned keys against it) without reading it again."""
    try:
        export = read_export(lines)
    except ExportFormatError as error:
        return None, AuditReport(
            subject="an unreadable export",
            checks=(make_check("format", Status.FAILED, str(error)),),
            verdicts=trust is not None,
        )
    return export, verify_audit_export(export, codec, trust)


def forget_shared_work() -> None:
    """Forget what the verifications of a process share (each a pure function of what it is
    kept by, and bounded): the checkpoints opened under pinned keys, the inclusion walks, the
    lots redrawn, the rule sets read, and the opening lines a table's deal exports share (read,
    decoded, chained, proven and checked once). The next export is verified from nothing, as in a
    process of its own (``bench/verify.py`` measures both ways)."""
    forget_opened_notes()
    forget_walks()
    forget_lots_and_rule_sets()
    forget_openings_read()
    forget_chains()
    _DECODED.clear()


def verify_audit_export(
    export: AuditExport, codec: EventCodec = DEFAULT_CODEC, trust: Trust | None = None
) -> AuditReport:
    """Verify a parsed export (see the module docstring for the checks); with ``trust``, its
    anchoring too (the ``checkpoint``, ``inclusion`` and ``consistency`` checks)."""
    report = _verify_content(export, codec)
    if trust is None:
        return report
    checks, anchor = anchoring_checks(export, trust)
    every_check = report.checks + tuple(checks)
    anchored = _report(
        report.subject, every_check, report.deals_verified, report.events_checked, anchor, True
    )
    if anchored.ok:
        return anchored
    return _report(
        report.subject, every_check, report.deals_verified, report.events_checked, None, True
    )


def _report(
    subject: str,
    checks: tuple[AuditCheck, ...],
    deals_verified: int,
    events_checked: int,
    anchor: Anchor | None = None,
    verdicts: bool = False,
) -> AuditReport:
    """``AuditReport(subject, checks, deals_verified, events_checked, anchor, verdicts)`` made
    without the frozen ``__init__``'s setattr per field (no ``__post_init__``; every field given,
    in the class's order): one a verification, where ``dataclasses.replace`` made it through
    ``__init__`` again."""
    return from_fields(
        AuditReport,
        {
            "subject": subject,
            "checks": checks,
            "deals_verified": deals_verified,
            "events_checked": events_checked,
            "anchor": anchor,
            "verdicts": verdicts,
        },
    )


def _verify_content(export: AuditExport, codec: EventCodec) -> AuditReport:
    """Every check of the export's content (1 to 9 of the module docstring)."""
    header = export.header
    checks: list[AuditCheck] = [
        make_check(
            "format",
            Status.PASSED,
            f"{header.scope} export, format {header.format_version},"
            f" {plural(len(export.events), 'event')}",
        )
    ]
    segment_events = split_segments(export)
    checks.append(chain_check(export, segment_events))
    checks.append(anchor_check(header.segments, segment_events))
    checks.append(coverage_check(export, segment_events))
    decoded, decode_check = _decode(export.events, codec)
    checks.append(decode_check)
    created = next((event for _, event in decoded if isinstance(event, TableCreated)), None)
    try:
        family = audit_family_for(created)
    except UnknownFamilyError as error:
        checks.append(make_check("family", Status.FAILED, str(error)))
        return _report(
            f"table {header.table_id} ({_scope_text(export)})",
            tuple(checks),
            0,
            len(export.events),
        )
    rule_set = _safely("header", None, lambda: family.read_rules(created), None)
    checks.append(_safely("header", None, lambda: header_check(export, decoded, created, rule_set)))
    chosen = next((event for _, event in decoded if isinstance(event, DealerChosen)), None)
    checks.append(_safely("opening", None, lambda: opening_check(decoded, created)))
    checks.append(_safely("dealer_lot", None, lambda: lot_check(created, chosen)))
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
        context = _deal_context(
            created, chosen, seat_count, after_series, rule_set, seated_now, deals[:index]
        )
        deal_checks, totals = family.deal_checks(deal, context)
        checks.extend(deal_checks)
        if totals is not None:
            verified_totals[deal.number] = totals
            deals_verified += 1
    checks.extend(
        _safely(
            "player_signature",
            None,
            lambda: signature_checks(deals, created, seated),
            _SIGNATURES_UNREADABLE,
        )
    )
    checks.extend(
        _safely(
            "series_totals",
            None,
            lambda: series_checks(
                deals,
                verified_totals,
                rule_set,
                seat_count,
                after_series,
                series_in_deals=family.series_in_deals,
            ),
            _TOTALS_UNREADABLE,
        )
    )
    return _report(
        f"table {header.table_id} ({_scope_text(export)})",
        tuple(checks),
        deals_verified,
        len(export.events),
    )


def _deal_context(
    created: TableCreated | None,
    chosen: DealerChosen | None,
    seat_count: int,
    after_series: str,
    rules: object,
    seated: Sequence[PlayerSeated],
    earlier: Sequence[DealEvents],
) -> DealContext:
    """``DealContext(created, chosen, seat_count, after_series, rules, seated, earlier)`` made
    without the frozen ``__init__``'s setattr per field (no ``__post_init__``; every field given,
    in the class's order): one a deal."""
    return from_fields(
        DealContext,
        {
            "created": created,
            "chosen": chosen,
            "seat_count": seat_count,
            "after_series": after_series,
            "rules": rules,
            "seated": seated,
            "earlier": earlier,
        },
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


# The fallbacks of the checks that give several (made once: a report's checks are immutable).
_SIGNATURES_UNREADABLE: Final[Sequence[AuditCheck]] = (
    malformed_check("player_signature", None, "the players' signatures cannot be read"),
)
_TOTALS_UNREADABLE: Final[Sequence[AuditCheck]] = (
    malformed_check("series_totals", None, "the recorded running totals cannot be read"),
)


def _scope_text(export: AuditExport) -> str:
    header = export.header
    if header.scope == "deal" and header.deals:
        return f"deal {header.deals[0]}"
    return f"series, deals {', '.join(map(str, header.deals)) or 'none'}"


# The opening events read once for many exports (``export_reading._OPENINGS_READ``) are decoded
# once too: by the identity of the shared event, which the entry holds (so the id is not reused
# while kept). Only the default codec's decoding is kept; at most _DECODED_KEPT events.
_DECODED: dict[int, tuple[ExportedEvent, Event]] = {}
_DECODED_KEPT: Final = 4096


def _decode(
    events: Sequence[ExportedEvent], codec: EventCodec
) -> tuple[list[tuple[int, Event]], AuditCheck]:
    decoded: list[tuple[int, Event]] = []
    problems: list[str] = []
    kept = _DECODED if codec is DEFAULT_CODEC else {}
    for event in events:
        if event.type in OPENING_TYPES:  # only those are kept
            known = kept.get(id(event))
            if known is not None and known[0] is event:
                decoded.append((event.version, known[1]))
                continue
        try:
            value = codec.decode(event.type, event.schema_version, event.data)
        except (ValueError, KeyError, TypeError) as error:
            problems.append(f"the {event.type} event at version {event.version}: {error!s}")
            continue
        decoded.append((event.version, value))
        if event.type in OPENING_TYPES and codec is DEFAULT_CODEC:
            if len(_DECODED) >= _DECODED_KEPT:
                _DECODED.clear()
            _DECODED[id(event)] = (event, value)
    if problems:
        return decoded, make_check(
            "decode",
            Status.FAILED,
            f"{plural(len(problems), 'event')} cannot be read; first: {problems[0]}",
        )
    return decoded, make_check("decode", Status.PASSED, f"{plural(len(decoded), 'event')} read")


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
