"""What the offline verifier checks of each game family's deals, behind one interface.

The verifier's framework (``sapsam.audit.verifier``) checks what every table has whatever its
game: the export's format, the hash chain and its anchors, the events' decoding, the header
against ``TableCreated``, the dealer lot, the players' signatures and the series' running
totals. What a deal of a given game must look like -- the order of its events, who may act
when, how its cards follow from the seed, how it is scored -- is the family's: an
:class:`AuditFamily` per family, found by the family its ``TableCreated``'s rule set names (as
``sapsam.domain.families`` finds the domain's; absent: ``closed``).

Adding a family is a module building its ``AuditFamily`` and one line in ``AUDIT_FAMILIES``;
the framework is not touched (docs/architecture.md, "Game families").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, TypeAlias

from sapsam.audit.closed_deals import closed_deal_checks
from sapsam.audit.deal_events import DealEvents
from sapsam.audit.opening_checks import table_rule_set
from sapsam.audit.report import AuditCheck
from sapsam.domain.events import DealerChosen, PlayerSeated, TableCreated
from sapsam.domain.family import CLOSED_FAMILY, UnknownFamilyError, family_name_of

__all__ = [
    "AUDIT_FAMILIES",
    "CLOSED_AUDIT",
    "OPEN_FACE_AUDIT",
    "AuditFamily",
    "DealContext",
    "audit_family_for",
]


@dataclass(frozen=True)
class DealContext:
    """What the framework knows of the table when it hands one deal to the family."""

    created: TableCreated | None
    """The table's ``TableCreated`` (None: the export has none; the family checks what it can)."""
    chosen: DealerChosen | None
    seat_count: int
    after_series: str
    rules: Any
    """The recorded rule set as the family read it (None: unreadable)."""
    seated: Sequence[PlayerSeated]
    """Who holds each seat as this deal is played."""
    earlier: Sequence[DealEvents] = ()
    """The export's deals before this one, in order (a family whose deals start from what the
    earlier ones decided folds them: open face's Fantasyland and button)."""


DealChecks: TypeAlias = tuple[list[AuditCheck], tuple[int, ...] | None]
"""A deal's checks, and its verified per-seat totals (None: not verified)."""


@dataclass(frozen=True)
class AuditFamily:
    """One family's checks, as the verifier's framework runs them."""

    name: str
    read_rules: Callable[[TableCreated | None], Any]
    """The recorded rule set read by the family, or None when there is none or it is invalid
    (the framework's ``header`` check then fails). The framework reads ``name`` and
    ``series_length`` of it."""
    deal_checks: Callable[
        [DealEvents, DealContext], tuple[list[AuditCheck], tuple[int, ...] | None]
    ]
    """Every check of one deal, and its verified per-seat totals (None: not verified). A
    malformed value must fail a check, never raise (``sapsam.audit.check_guard.safely``)."""
    series_in_deals: bool = True
    """Whether a series is a number of deals (the rule set's ``series_length``), which the
    framework's ``standings`` check counts; False: the family's own checks judge when the
    series ends (open face counts button moves: a Fantasyland deal keeps the button)."""


CLOSED_AUDIT: Final = AuditFamily(
    name=CLOSED_FAMILY,
    read_rules=table_rule_set,
    deal_checks=lambda deal, context: closed_deal_checks(
        deal,
        context.created,
        context.chosen,
        context.seat_count,
        context.after_series,
        context.rules,
        context.seated,
    ),
)
"""The closed game's checks (docs/audit.md; ``sapsam.audit.closed_deals``)."""

OPEN_FACE_FAMILY: Final = "open_face"
"""``sapsam.domain.open_face.table_decide.OPEN_FACE_FAMILY``, named here so that loading this module
does not load open face's domain (tests/packaging/test_cli_imports.py holds the two equal)."""


# Open face's audit module and the domain it re-decides deals with are imported when an open face
# table is first verified: a closed deal's verification never loads them (its start-up, issue #15).
def _read_open_face_rules(created: TableCreated | None) -> Any:
    from sapsam.audit.open_face_deals import read_open_face_rules

    return read_open_face_rules(created)


def _open_face_deal_checks(deal: DealEvents, context: DealContext) -> DealChecks:
    from sapsam.audit.open_face_deals import open_face_deal_checks

    return open_face_deal_checks(
        deal, context.created, context.chosen, context.seated, context.earlier
    )


OPEN_FACE_AUDIT: Final = AuditFamily(
    name=OPEN_FACE_FAMILY,
    read_rules=_read_open_face_rules,
    deal_checks=_open_face_deal_checks,
    series_in_deals=False,
)
"""Open face's checks (docs/audit.md, "Open face"; ``sapsam.audit.open_face_deals``)."""

AUDIT_FAMILIES: Final[Mapping[str, AuditFamily]] = MappingProxyType(
    {CLOSED_AUDIT.name: CLOSED_AUDIT, OPEN_FACE_AUDIT.name: OPEN_FACE_AUDIT}
)
"""Every family the verifier checks, by the name a rule set records."""


def audit_family_for(created: TableCreated | None) -> AuditFamily:
    """The checks for the table ``created`` starts (the closed game's when there is no
    ``TableCreated``). Raises :class:`UnknownFamilyError` for a family this verifier does not
    know, or a malformed family name."""
    if created is None:
        return CLOSED_AUDIT
    recorded = created.rule_set
    if not isinstance(recorded, Mapping):
        return CLOSED_AUDIT  # the header check fails it: "not a valid rule set"
    name = family_name_of(recorded)
    family = AUDIT_FAMILIES.get(name)
    if family is None:
        raise UnknownFamilyError(
            f"the table plays the game family {name!r}, which this verifier does not check "
            f"(known families: {', '.join(AUDIT_FAMILIES)})"
        )
    return family
