"""The audit report: named checks with ✓/✗, the first divergence in words, a verdict, JSON.

Pure. A check has a stable ``name`` (``chain``, ``seed_commitment``, ``reveal_commitment[2]`` …;
docs/audit.md lists them all) and, for a deal's checks, the ``deal`` number it belongs to.

A verification of an export (``sapsam audit verify FILE``, ``VerifyDeal``) ends in exactly one of
three verdicts (:class:`Verdict`, docs/audit.md §4.5): *anchored* (nothing failed, and every event
is included under a checkpoint signed by a pinned server key: ``AuditReport.anchor`` says which),
*internally consistent only* (nothing failed, but nothing is anchored outside the file), or
*failed*. The verdict is computed from the checks, so another source of failures (the receipts of
``--receipts DIR``, say) joins by adding its checks: ``report.with_checks([AuditCheck("receipts",
Status.FAILED, ...)])`` makes the verdict *failed*, and a passing check changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from operator import attrgetter
from typing import Any, Final

from sapsam.plurals import plural
from sapsam.quoting import quote_prefix

MAX_CHECK_TEXT: Final = 1_000
"""A check's detail, expected and found values are cut to this many characters."""

MAX_DEAL_NUMBER: Final = 2**31 - 1
"""The largest deal number a report names (the protobuf field is an int32)."""


class Verdict(StrEnum):
    """The one verdict of an export's verification (docs/audit.md §4.5)."""

    ANCHORED = "anchored"
    """Nothing failed, and every event is included under a checkpoint a pinned key signed."""
    INTERNALLY_CONSISTENT_ONLY = "internally_consistent_only"
    """Nothing failed, but nothing is anchored outside the file (no key, checkpoint or proof)."""
    FAILED = "failed"
    """A check failed (or could not run because one it relies on failed)."""


VERDICT_TEXT: Final = {
    Verdict.ANCHORED: "ANCHORED",
    Verdict.INTERNALLY_CONSISTENT_ONLY: "INTERNALLY CONSISTENT ONLY",
    Verdict.FAILED: "FAILED",
}


@dataclass(frozen=True)
class Anchor:
    """What anchors a verified export outside the file: a checkpoint of ``origin`` with
    ``tree_size`` leaves and ``root``, signed by the pinned key ``signed_by`` (``name+keyid``),
    cosigned by the pinned witnesses ``witnessed_by`` (empty: not witnessed), and whose
    checkpoint it is (``"export"``: the one the export carries; ``"reader"``: the one given with
    ``--checkpoint``, linked to the export's by a consistency proof or equal to it)."""

    origin: str
    tree_size: int
    root: bytes
    signed_by: str
    witnessed_by: tuple[str, ...] = ()
    checkpoint: str = "export"

    def describe(self) -> str:
        """One line: which checkpoint, signed and witnessed by whom."""
        whose = "the export's checkpoint" if self.checkpoint == "export" else "your checkpoint"
        witnesses = (
            f"witnessed by {', '.join(self.witnessed_by)}" if self.witnessed_by else "not witnessed"
        )
        return (
            f"every event is in {whose} of {self.origin}"
            f" ({plural(self.tree_size, 'leaf', 'leaves')}), signed by the pinned key"
            f" {self.signed_by}; {witnesses}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain values for JSON output."""
        return {
            "origin": self.origin,
            "tree_size": self.tree_size,
            "root": self.root.hex(),
            "signed_by": self.signed_by,
            "witnessed_by": list(self.witnessed_by),
            "checkpoint": self.checkpoint,
        }


class Status(StrEnum):
    """How a check ended."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    """Not run: a check it relies on failed, so its inputs are not trustworthy."""
    PENDING = "pending"
    """Not yet checkable: the deal is still being played (its seed is not published)."""
    NOT_COVERED = "not_covered"
    """Not checkable from what was given (e.g. a later deal's running totals without the deal
    before it); the subject of the check lies outside the export."""


SYMBOLS = {
    Status.PASSED: "✓",
    Status.FAILED: "✗",
    Status.SKIPPED: "–",
    Status.PENDING: "…",
    Status.NOT_COVERED: "·",
}


CHECK_PHRASES: Final = {
    "format": "the file is an export this verifier can read",
    "chain": "no event was changed, added, removed or reordered after it was recorded",
    "anchor": "each piece of the log hangs where it says in the table's history",
    "coverage": "the file holds every event of the pieces it names, and nothing else",
    "decode": "every event is a known kind with well-formed fields",
    "header": "the header names the table, rules and seats the log recorded",
    "opening": "the table opened as recorded: created, each seat taken once, a dealer drawn",
    "dealer_lot": "the first dealer was drawn by the lot committed when the table was created",
    "sequence": "the deal's moves came in an order the rules allow",
    "dealer_rotation": "the deal passed to the left as it should",
    "fair_dealing": "the cards can be checked once the deal's seed is revealed",
    "published_deal": "the deal's record holds every fact the fairness checks need",
    "seed_commitment": "the seed revealed is the one committed before the cut",
    "contributions": "the deck came from the committed seed and the players' own entropy",
    "cut": "the deck was cut where the cutter chose",
    "dealer": "each seat got the 13 cards dealt from the dealer's left, one at a time",
    "reveal_commitment": "the rows shown are the ones the seat committed to before the seed was"
    " revealed",
    "solver_arrangement": "the rows set for a seat out of time are legal rows of its own cards",
    "fouls": "the fouls follow from the rows shown and the cards dealt",
    "scores": "the scores follow from the rows under the table's rules",
    "reveal_fouls": "each reveal's foul flag agrees with the scoring",
    "scored_arrangements": "the rows scored are the rows checked",
    "player_signature": "the seat's signed moves carry valid signatures of its player's key",
    "pinned_player_key": "the player's moves are signed by a key you pinned for that player",
    "series_totals": "the running totals are the sums of the deal scores",
    "standings": "the final standings follow from the running totals",
    "series_start": "a new series started where the last one ended",
    "voided_deal": "the voided deal changed no score and published its seed",
    "checkpoint": "a key you pinned signed the log's checkpoint",
    "inclusion": "every event is in the log the checkpoint signs",
    "consistency": "your own checkpoint and the export's are of one log",
    "receipts": "the server's signed receipts you kept agree with the export",
    "stored_chain": "the stored log's chain holds from the table's first event",
}
"""What each check confirms, in a phrase (``sapsam audit verify`` prints it beside the check);
a check named ``name[...]`` or ``stream: name`` takes the phrase of ``name``."""

PHRASE_PREFIXES: Final = {
    "passed": "",
    "failed": "does not hold: ",
    "skipped": "not checked: ",
    "pending": "not yet checkable: ",
}


NO_REVEAL: Final = "no reveal"
"""What a ``reveal_commitment`` check found for a seat that revealed no rows (it missed the
deadline, or the solver set its rows): ``sapsam.fairness.verify``."""
NO_REVEAL_PHRASE: Final = (
    "the seat showed no rows of its own, so there was no commitment to hold them to"
)
"""The phrase of such a check: the usual one ("the rows shown are the ones the seat committed
to") would contradict its detail ("the seat never revealed")."""


def check_phrase(name: str, found: str = "") -> str:
    """The phrase of a check's name (``reveal_commitment[2]`` takes ``reveal_commitment``'s);
    empty for a check without one. ``found``: what the check found, for the one check whose
    phrase depends on it (a reveal that never came)."""
    base = name.rsplit(": ", 1)[-1].split("[", 1)[0]
    if base == "reveal_commitment" and found == NO_REVEAL:
        return NO_REVEAL_PHRASE
    return CHECK_PHRASES.get(base, "")


@dataclass(frozen=True)
class AuditCheck:
    """One check: what it confirms, its status, and on failure what was expected and found.

    ``detail``, ``expected`` and ``found`` are text cut to :data:`MAX_CHECK_TEXT` characters each:
    they quote what an export holds, and a forged export's megabyte-long value is reported by a
    prefix, not echoed whole into every report line and the VerifyDeal response. ``deal`` is a
    deal number (1 to 2^31 - 1) or None: a forged export's deal "number" of another type or
    size is named in the detail instead, so every report has a JSON and a protobuf form.
    """

    name: str
    status: Status
    detail: str = ""
    expected: str = ""
    found: str = ""
    deal: int | None = None

    def __post_init__(self) -> None:
        deal = self.deal
        if deal is not None and (type(deal) is not int or not 0 < deal <= MAX_DEAL_NUMBER):
            object.__setattr__(self, "deal", None)
            object.__setattr__(self, "detail", f"deal {quote_prefix(deal)}: {self.detail}")
        for text_field in ("detail", "expected", "found"):
            text = getattr(self, text_field)
            if type(text) is not str:  # a forged export's value where text was expected
                text = str(text)
                object.__setattr__(self, text_field, text)
            if len(text) > MAX_CHECK_TEXT:
                shortened = f"{text[:MAX_CHECK_TEXT]}... ({len(text)} characters)"
                object.__setattr__(self, text_field, shortened)

    @property
    def label(self) -> str:
        """The check's name, prefixed with its deal: ``deal 3 · cut``."""
        return self.name if self.deal is None else f"deal {self.deal} · {self.name}"

    @property
    def failed(self) -> bool:
        """Ran and did not hold."""
        return self.status is Status.FAILED

    def to_dict(self) -> dict[str, Any]:
        """Plain values for JSON output."""
        return {
            "name": self.name,
            "deal": self.deal,
            "status": self.status.value,
            "passed": self.status is Status.PASSED,
            "detail": self.detail,
            "expected": self.expected,
            "found": self.found,
        }


def make_check(
    name: str,
    status: Status,
    detail: str = "",
    expected: str = "",
    found: str = "",
    deal: int | None = None,
) -> AuditCheck:
    """``AuditCheck(name, status, detail, expected, found, deal)``. For the usual check (no deal
    or a plain int in range, texts within :data:`MAX_CHECK_TEXT`), whose ``__post_init__`` would
    change nothing, its fields are set in one step instead of ``__init__``'s setattr per field
    (a verification makes some thirty per deal); anything else takes the constructor."""
    if (
        (deal is None or (type(deal) is int and 0 < deal <= MAX_DEAL_NUMBER))
        and type(detail) is str
        and type(expected) is str
        and type(found) is str
        and len(detail) <= MAX_CHECK_TEXT
        and len(expected) <= MAX_CHECK_TEXT
        and len(found) <= MAX_CHECK_TEXT
    ):
        return _check_as_given(name, status, detail, expected, found, deal)
    return AuditCheck(name, status, detail, expected, found, deal)


def passed_check(name: str, detail: str, found: str, deal: int) -> AuditCheck:
    """``make_check(name, Status.PASSED, detail, "", found, deal)`` for a caller that knows
    ``deal`` is an int from 1 to :data:`MAX_DEAL_NUMBER` and ``detail`` and ``found`` are text
    within :data:`MAX_CHECK_TEXT`: made without testing them again (fair dealing's passes,
    some ten a deal)."""
    return _check_as_given(name, _PASSED, detail, "", found, deal)


def _check_as_given(
    name: str, status: Status, detail: str, expected: str, found: str, deal: int | None
) -> AuditCheck:
    """The check of fields ``__post_init__`` would leave as they are, set in one step
    (from_fields' two steps, written out) instead of ``__init__``'s setattr per field."""
    check: AuditCheck = _new(AuditCheck)
    _set_attribute(
        check,
        "__dict__",
        {
            "name": name,
            "status": status,
            "detail": detail,
            "expected": expected,
            "found": found,
            "deal": deal,
        },
    )
    return check


_PASSED: Final = Status.PASSED  # read once: a member read off its enum class costs a hook call
_STATUS_OF: Final = attrgetter("status")
_new: Final = object.__new__
_set_attribute: Final = object.__setattr__


@dataclass(frozen=True)
class AuditReport:
    """Every check in the order it ran.

    ``ok``: nothing failed (or was skipped). ``complete``: nothing is pending, i.e. no deal is
    still being played. ``holds``: both, which is when ``sapsam audit verify`` exits 0.
    """

    subject: str
    checks: tuple[AuditCheck, ...]
    deals_verified: int = 0
    events_checked: int = 0
    anchor: Anchor | None = None
    """Set when every event is included under a checkpoint signed by a pinned key."""
    verdicts: bool = False
    """True for a verification judged by the three verdicts (an export's: ``verify_export`` with
    ``trust``); False for the database audits, which end in OK / INCOMPLETE / FAILED."""

    @property
    def verdict(self) -> Verdict:
        """FAILED if a check failed or was skipped; else ANCHORED with an anchor; else
        INTERNALLY_CONSISTENT_ONLY."""
        if not self.ok:
            return Verdict.FAILED
        if self.anchor is not None:
            return Verdict.ANCHORED
        return Verdict.INTERNALLY_CONSISTENT_ONLY

    def with_checks(self, checks: Sequence[AuditCheck]) -> AuditReport:
        """This report with more checks at the end (another source of failures, e.g. receipts);
        a failed one makes the verdict FAILED and drops the anchor from what is claimed."""
        added = tuple(checks)
        failed = any(check.status in (Status.FAILED, Status.SKIPPED) for check in added)
        return replace(self, checks=self.checks + added, anchor=None if failed else self.anchor)

    @property
    def ok(self) -> bool:
        """True when no check failed or was skipped (pending deals are not failures)."""
        # In C loops (a verifier asks this of every report it makes, of 30 to 300 checks).
        statuses = list(map(_STATUS_OF, self.checks))
        return Status.FAILED not in statuses and Status.SKIPPED not in statuses

    @property
    def complete(self) -> bool:
        """True when nothing is pending: every deal in the subject is finished and checked."""
        return all(check.status is not Status.PENDING for check in self.checks)

    @property
    def holds(self) -> bool:
        """Everything holds: nothing failed and nothing is pending."""
        return self.ok and self.complete

    @property
    def pending_deals(self) -> tuple[int, ...]:
        """The deals still being played (their cards cannot be checked yet)."""
        return tuple(
            sorted(
                {
                    check.deal
                    for check in self.checks
                    if check.status is Status.PENDING and check.deal is not None
                }
            )
        )

    @property
    def failed(self) -> tuple[AuditCheck, ...]:
        """The checks that ran and failed, in order."""
        return tuple(check for check in self.checks if check.failed)

    @property
    def first_divergence(self) -> AuditCheck | None:
        """The first check that failed: where the record stops holding."""
        failed = self.failed
        return failed[0] if failed else None

    def named(self, name: str, deal: int | None = None) -> AuditCheck:
        """The check called ``name`` (of ``deal``); ``KeyError`` if there is none."""
        for check in self.checks:
            if check.name == name and (deal is None or check.deal == deal):
                return check
        raise KeyError(name if deal is None else f"deal {deal} {name}")

    def failed_names(self) -> tuple[str, ...]:
        """Names of the failed checks (without their deal)."""
        return tuple(check.name for check in self.failed)

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON values."""
        first = self.first_divergence
        return {
            "subject": self.subject,
            "ok": self.ok,
            "complete": self.complete,
            "holds": self.holds,
            "deals_verified": self.deals_verified,
            "events_checked": self.events_checked,
            "first_divergence": None if first is None else first.to_dict(),
            **(
                {
                    "verdict": self.verdict.value,
                    "anchor": None if self.anchor is None else self.anchor.to_dict(),
                }
                if self.verdicts
                else {}
            ),
            "checks": [check.to_dict() for check in self.checks],
        }


def render_text(report: AuditReport, before: Sequence[str] = (), after: Sequence[str] = ()) -> str:
    """The human report: one line per check with what it confirms in a phrase, the first
    divergence in words, then a verdict (always the last line). ``before`` and ``after`` are
    lines shown before the checks and after them (the players, the deals' accounts)."""
    lines = [f"Audit of {report.subject}", *before]
    for check in report.checks:
        text = f"{SYMBOLS[check.status]} {check.label}"
        if check.detail:
            text += f": {check.detail}"
        phrase = check_phrase(check.name, check.found)
        prefix = PHRASE_PREFIXES.get(check.status.value)
        if phrase and prefix is not None:
            text += f" — {prefix}{phrase}"
        lines.append(text)
        if check.failed and (check.expected or check.found):
            lines.append(f"    expected {check.expected or '-'}")
            lines.append(f"    found    {check.found or '-'}")
    lines.extend(after)
    first = report.first_divergence
    if first is not None:
        lines.append(f"First divergence: {first.label}: {first.detail}")
    if report.verdicts:
        lines.append(verdict_line(report))
        return "\n".join(lines)
    if not report.ok:
        verdict = f"FAILED: {plural(len(report.failed), 'check')} failed"
    elif not report.complete:
        waiting = ", ".join(map(str, report.pending_deals)) or "-"
        verdict = (
            "INCOMPLETE: nothing failed, but not everything could be checked yet "
            f"(deals still being played: {waiting})"
        )
    else:
        verdict = "OK: everything holds"
    lines.append(
        f"{verdict} ({plural(report.deals_verified, 'deal')} verified, "
        f"{plural(report.events_checked, 'event')} checked)"
    )
    return "\n".join(lines)


def verdict_line(report: AuditReport) -> str:
    """The verdict in words: ``ANCHORED: …``, ``INTERNALLY CONSISTENT ONLY: …`` or ``FAILED: …``,
    with what was verified and, for a deal still being played, that its cards wait."""
    verdict = report.verdict
    counts = (
        f"{plural(report.deals_verified, 'deal')} verified,"
        f" {plural(report.events_checked, 'event')} checked"
    )
    if verdict is Verdict.FAILED:
        text = f"FAILED: {plural(len(report.failed) or 1, 'check')} failed ({counts})"
    elif verdict is Verdict.ANCHORED:
        assert report.anchor is not None
        text = f"ANCHORED: {report.anchor.describe()} ({counts})"
    else:
        text = (
            "INTERNALLY CONSISTENT ONLY: every check within the file holds, but nothing anchors "
            f"it outside the file ({_why_not_anchored(report)}; {counts})"
        )
    if verdict is not Verdict.FAILED and not report.complete:
        waiting = ", ".join(map(str, report.pending_deals)) or "-"
        text += f"; INCOMPLETE: deals still being played, not checkable yet: {waiting}"
    return text


def _why_not_anchored(report: AuditReport) -> str:
    for name in ("checkpoint", "inclusion", "consistency"):
        for check in report.checks:
            if check.name == name and check.status is Status.NOT_COVERED:
                return check.detail
    return "no anchor"


def merge(subject: str, reports: Sequence[AuditReport]) -> AuditReport:
    """One report from several (e.g. the offline checks plus the database's own)."""
    return AuditReport(
        subject=subject,
        checks=tuple(check for report in reports for check in report.checks),
        deals_verified=sum(report.deals_verified for report in reports),
        events_checked=sum(report.events_checked for report in reports),
        anchor=reports[0].anchor if reports else None,
        verdicts=any(report.verdicts for report in reports),
    )
