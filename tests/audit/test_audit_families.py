"""The verifier's framework hands each deal to the checks of the table's game family: an export
of the closed game verifies as before, and one whose TableCreated names a family this verifier
does not check fails a ``family`` check instead of being judged as another game."""

from __future__ import annotations

from dataclasses import replace

import pytest
from forged_histories import history, recorded

from sapsam.audit import Requester, select_table, verify_export, write_lines
from sapsam.audit.deal_events import DealEvents
from sapsam.audit.families import (
    AUDIT_FAMILIES,
    CLOSED_AUDIT,
    OPEN_FACE_AUDIT,
    DealContext,
    audit_family_for,
)
from sapsam.audit.report import Status
from sapsam.domain import families
from sapsam.domain.events import Event, TableCreated
from sapsam.domain.family import FAMILY_KEY, UnknownFamilyError


def _export_lines(events: list[Event]) -> list[str]:
    return list(write_lines(select_table(recorded(events), Requester.operator())))


def test_a_closed_table_verifies_through_the_closed_checks() -> None:
    events = history(3, 2)
    created = events[0]
    assert isinstance(created, TableCreated)
    assert audit_family_for(created) is CLOSED_AUDIT
    report = verify_export(_export_lines(events))
    assert report.ok and report.deals_verified == 2
    names = {check.name for check in report.checks}
    assert {"sequence", "dealer_rotation", "scores"} <= names and "family" not in names


def test_a_table_of_an_unknown_family_fails_the_family_check() -> None:
    events = history(2, 1)
    created = events[0]
    assert isinstance(created, TableCreated)
    events[0] = replace(created, rule_set={**created.rule_set, FAMILY_KEY: "draughts"})
    report = verify_export(_export_lines(events))
    assert not report.ok and report.deals_verified == 0
    failed = [check for check in report.checks if check.status is Status.FAILED]
    assert [check.name for check in failed] == ["family"]
    assert (
        "'draughts'" in failed[0].detail and "known families: closed, open_face" in failed[0].detail
    )
    # The framework's own checks still ran: the chain of the (rechained) export holds.
    assert any(c.name == "chain" and c.status is Status.PASSED for c in report.checks)


def test_the_verifier_checks_every_family_the_domain_plays() -> None:
    assert set(AUDIT_FAMILIES) == set(families.FAMILIES) == {"closed", "open_face"}


def test_an_export_without_table_created_is_checked_as_the_closed_game() -> None:
    assert audit_family_for(None) is CLOSED_AUDIT
    checks, totals = CLOSED_AUDIT.deal_checks(
        DealEvents(1),
        DealContext(None, None, 2, "close", None, ()),
    )
    assert totals is None
    assert [check.name for check in checks][-1] == "fair_dealing"


def test_an_open_face_table_is_not_judged_as_a_closed_one() -> None:
    events = history(2, 1)
    created = events[0]
    assert isinstance(created, TableCreated)
    open_face = replace(created, rule_set={FAMILY_KEY: "open_face", "name": "ofc_classic"})
    assert audit_family_for(open_face) is OPEN_FACE_AUDIT
    draughts = replace(created, rule_set={FAMILY_KEY: "draughts", "name": "x"})
    with pytest.raises(UnknownFamilyError, match="'draughts', which this verifier does not"):
        audit_family_for(draughts)
