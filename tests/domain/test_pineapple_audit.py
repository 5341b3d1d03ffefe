"""The offline verifier checks a Pineapple set (issue #19): every discard against its commitment
and the cards the seed dealt, every placement of 2 of the 3 cards; a tampered discard is caught
(docs/fairness.md §23). Events are built with the domain's pure functions and verified through
``verify_export`` on the export's lines, as tests/domain/test_open_face_audit.py does."""

from __future__ import annotations

import dataclasses

import pytest
from open_face_deals import DrivenTable, export_lines, open_face_table

from sapsam.audit import verify_export
from sapsam.audit.export_reading import read_export
from sapsam.audit.replay import replay
from sapsam.audit.report import AuditReport, Status
from sapsam.domain.events import DeadlinesExtended, Event
from sapsam.domain.open_face.events import CardsPlaced, DiscardCommitted, DiscardsRevealed
from sapsam.domain.open_face.table_state import OpenFaceTablePhase


def _verify(events: list[Event]) -> AuditReport:
    return verify_export(export_lines(events))


def _failed(report: AuditReport) -> list[tuple[str, int | None]]:
    return [(c.name, c.deal) for c in report.checks if c.status is Status.FAILED]


def _played_set(preset: str) -> DrivenTable:
    table = open_face_table(preset, 3)
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        table.play_deal()
    return table


@pytest.fixture(scope="module")
def pineapple_set() -> list[Event]:
    return list(_played_set("pineapple").events)


@pytest.mark.parametrize("preset", ["pineapple", "pineapple_2_7"])
def test_an_honest_pineapple_set_verifies(preset: str) -> None:
    events = list(_played_set(preset).events)
    assert sum(isinstance(e, DiscardCommitted) for e in events) == 3 * 3 * 4
    report = _verify(events)
    assert report.ok, _failed(report)
    assert report.deals_verified == 3
    passed = {c.name for c in report.checks if c.status is Status.PASSED}
    assert {"placements", "discards", "scores"} <= passed
    detail = next(c.detail for c in report.checks if c.name == "discards")
    assert "matches its commitment" in detail


def _forge(events: list[Event], kind: type[Event], skip: int, change: object) -> list[Event]:
    index = [i for i, e in enumerate(events) if isinstance(e, kind)][skip]
    assert callable(change)
    return [*events[:index], change(events[index]), *events[index + 1 :]]


def test_a_tampered_discard_is_caught(pineapple_set: list[Event]) -> None:
    def other_card(event: Event) -> Event:
        assert isinstance(event, DiscardsRevealed)
        # Swap the first two streets' discards: each is a card dealt to the seat, but not on
        # the street its commitment names.
        first, second, *rest = event.cards
        return dataclasses.replace(event, cards=(second, first, *rest))

    forged = _forge(pineapple_set, DiscardsRevealed, 0, other_card)
    assert ("discards", 1) in _failed(_verify(forged))


def test_a_discard_opened_with_another_nonce_is_caught(pineapple_set: list[Event]) -> None:
    def other_nonce(event: Event) -> Event:
        assert isinstance(event, DiscardsRevealed)
        return dataclasses.replace(event, nonces=("00" * 16, *event.nonces[1:]))

    forged = _forge(pineapple_set, DiscardsRevealed, 1, other_nonce)
    assert ("discards", 1) in _failed(_verify(forged))


def test_a_placement_without_its_commitment_is_caught(pineapple_set: list[Event]) -> None:
    index = next(i for i, e in enumerate(pineapple_set) if isinstance(e, DiscardCommitted))
    forged = [*pineapple_set[:index], *pineapple_set[index + 1 :]]
    assert ("placements", 1) in _failed(_verify(forged))


def test_a_discard_committed_without_its_placement_is_caught(
    pineapple_set: list[Event],
) -> None:
    """A ``DiscardCommitted`` recorded on its own (a second one after a placement's, or one
    moved away from its placement): the discards check names it."""
    index = next(i for i, e in enumerate(pineapple_set) if isinstance(e, DiscardCommitted))
    again = [*pineapple_set[: index + 1], pineapple_set[index], *pineapple_set[index + 1 :]]
    failed = _failed(_verify(again))
    assert ("discards", 1) in failed
    report = _verify(again)
    detail = next(c.detail for c in report.checks if c.name == "discards" and c.deal == 1)
    assert "without the placement it belongs to" in detail
    # Moved before its placement: the placement then lacks its commitment too.
    moved = [
        *pineapple_set[: index - 1],
        pineapple_set[index],
        pineapple_set[index - 1],
        *pineapple_set[index + 1 :],
    ]
    assert ("discards", 1) in _failed(_verify(moved))


def test_a_placement_of_a_card_not_dealt_is_caught(pineapple_set: list[Event]) -> None:
    index = next(
        i for i, e in enumerate(pineapple_set) if isinstance(e, CardsPlaced) and e.street == 1
    )
    event = pineapple_set[index]
    assert isinstance(event, CardsPlaced)
    dealt_elsewhere = dataclasses.replace(event, front=(*event.front, "2c"))
    forged = [*pineapple_set[:index], dealt_elsewhere, *pineapple_set[index + 1 :]]
    assert ("placements", 1) in _failed(_verify(forged))


def test_the_replay_tells_the_discards(pineapple_set: list[Event]) -> None:
    frames = replay(read_export(export_lines(pineapple_set)))
    text = "\n".join(frame.happened for frame in frames)
    assert "discarded a card" in text
    assert "opened its discards" in text
    assert "streets 5+2+2+2+2, 1 more dealt and discarded unseen a street" in text


def test_discards_opened_by_the_service_after_the_deadline_verify() -> None:
    table = open_face_table("pineapple", 3, move_seconds=30)
    table.unopened = {2}
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        table.play_deal()
    opened = [e for e in table.events if isinstance(e, DiscardsRevealed) and e.seat == 2]
    assert opened and all(set(e.nonces) == {""} for e in opened)
    report = _verify(table.events)
    assert report.ok, _failed(report)
    # The service's opening must be the cards left off the board: another is caught.
    index = table.events.index(opened[0])
    event = opened[0]
    first, second, *rest = event.cards
    forged = dataclasses.replace(event, cards=(second, first, *rest))
    events = [*table.events[:index], forged, *table.events[index + 1 :]]
    assert ("discards", 1) in _failed(_verify(events))


def test_an_outage_over_the_discards_deadline_extends_it_and_the_set_verifies() -> None:
    """No outage is held against a seat: the discards' deadline fell while no server served, so
    the sweep's first TimeOutDiscards extends it (stage ``discarding``) instead of opening the
    seat's discards; they are opened only past the extended deadline, and the audit re-decides
    both."""
    table = open_face_table("pineapple", 3, move_seconds=30)
    table.unopened = {2}
    table.discard_outage_ms = 60_000
    table.start_deal()
    table.play_deal()
    extensions = [
        e for e in table.events if isinstance(e, DeadlinesExtended) and e.stage == "discarding"
    ]
    assert len(extensions) == 1 and extensions[0].seats == (2,)
    extension = extensions[0]
    assert extension.deadline_ms == extension.unserved_until_ms + 5_000
    after = table.events[table.events.index(extension) + 1 :]
    assert any(isinstance(e, DiscardsRevealed) and e.seat == 2 for e in after)
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        table.play_deal()
    report = _verify(table.events)
    assert report.ok, _failed(report)
    # An extension of a deadline the deal never had is caught.
    index = table.events.index(extension)
    forged = dataclasses.replace(extension, previous_deadline_ms=extension.previous_deadline_ms - 1)
    events = [*table.events[:index], forged, *table.events[index + 1 :]]
    assert not _verify(events).ok
