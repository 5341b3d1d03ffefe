"""The offline verifier checks an open-face set (issue #18, "Fairness and audit"): its events are
built with the domain's pure functions, exported in memory and verified through the verifier's
pure entry point (``verify_export`` on the export's lines; no store, no I/O). An honest set
verifies, with a Fantasyland and the button staying for it; each forgery fails its own check."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from open_face_deals import (
    PLAYERS,
    TABLE_ID,
    DrivenTable,
    export_lines,
    fantasyland_table,
    open_face_table,
    seeded,
)

from sapsam import fairness
from sapsam.audit import verify_export
from sapsam.audit.deal_events import DealEvents
from sapsam.audit.families import AUDIT_FAMILIES, OPEN_FACE_AUDIT, DealContext, audit_family_for
from sapsam.audit.report import AuditReport, Status
from sapsam.domain.commands import ReplaceSeat, RevealSeed, VoidDeal
from sapsam.domain.events import (
    DealerChosen,
    DealScored,
    DealStarted,
    DealVoided,
    Event,
    PlayerSeated,
    SeatReplaced,
    SeedRevealed,
    SeriesCompleted,
    TableCreated,
)
from sapsam.domain.open_face.commands import DealStreet, PlaceCards, PlaceForSeat
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.events import (
    CardsPlaced,
    FantasylandCommitted,
    FantasylandRevealed,
    FantasylandRevealsOpened,
    FantasylandTimedOut,
    StreetDealt,
)
from sapsam.domain.open_face.table_state import OpenFaceTablePhase
from sapsam.fairness.open_face_deal import street_digest
from sapsam.rules.cards import DECK
from sapsam.rules.open_face.board import legal_placements


def _verify(events: list[Event]) -> AuditReport:
    return verify_export(export_lines(events))


def _failed(report: AuditReport) -> list[tuple[str, int | None]]:
    return [(c.name, c.deal) for c in report.checks if c.status is Status.FAILED]


def _fantasyland_set() -> DrivenTable:
    """A whole two-seat set in which seat 0 played a Fantasyland (the button stayed for it)."""
    table = fantasyland_table()
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        table.play_deal()
    return table


@pytest.fixture(scope="module")
def fantasyland_set() -> list[Event]:
    return list(_fantasyland_set().events)


def test_open_face_is_a_family_the_verifier_checks() -> None:
    table = open_face_table()
    created = table.events[0]
    assert isinstance(created, TableCreated)
    assert audit_family_for(created) is OPEN_FACE_AUDIT
    assert set(AUDIT_FAMILIES) == {"closed", "open_face"}
    rules = OPEN_FACE_AUDIT.read_rules(created)
    assert rules is not None and rules.name == "ofc_classic" and rules.series_length == 3


@pytest.mark.parametrize(("preset", "seats"), [("ofc_classic", 3), ("ofc_turbo", 4)])
def test_an_honest_open_face_set_verifies(preset: str, seats: int) -> None:
    table = open_face_table(preset, seats)
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        table.play_deal(solver=True)
    report = _verify(table.events)
    assert report.ok, _failed(report)
    assert report.deals_verified == table.state.deal_number
    names = {check.name for check in report.checks if check.status is Status.PASSED}
    assert {"seed", "streets", "placements", "fantasyland", "scores"} <= names
    assert {"series_totals", "standings"} <= names


def test_a_set_with_a_fantasyland_counts_button_moves_not_deals(
    fantasyland_set: list[Event],
) -> None:
    completed = [e for e in fantasyland_set if isinstance(e, SeriesCompleted)]
    assert len(completed) == 1 and completed[0].deals_played == 3  # two seats, three deals
    assert any(isinstance(e, FantasylandRevealed) for e in fantasyland_set)
    report = _verify(fantasyland_set)
    assert report.ok, _failed(report)
    assert report.deals_verified == 3


def test_a_series_ended_by_deal_count_fails_the_scores_check(
    fantasyland_set: list[Event],
) -> None:
    # Cut after deal 2 with a SeriesCompleted: two deals for two seats, but the button moved
    # only once (it stayed for the Fantasyland).
    index = _index(fantasyland_set, DealScored, 2)
    scored = fantasyland_set[index]
    assert isinstance(scored, DealScored)
    done = SeriesCompleted(deals_played=2, standings=())
    forged = [*fantasyland_set[: index + 1], done]
    assert ("scores", 2) in _failed(_verify(forged))


def _index(events: list[Event], kind: type[Event], deal: int, skip: int = 0) -> int:
    found = [
        i
        for i, e in enumerate(events)
        if isinstance(e, kind) and getattr(e, "deal_number", None) == deal
    ]
    return found[skip]


def _forge(
    events: list[Event], kind: type[Event], deal: int, change: Callable[[Event], Event]
) -> list[Event]:
    index = _index(events, kind, deal)
    return [*events[:index], change(events[index]), *events[index + 1 :]]


def test_a_placement_out_of_turn_fails_the_placements_check(
    fantasyland_set: list[Event],
) -> None:
    first = _index(fantasyland_set, CardsPlaced, 1)
    a, b = fantasyland_set[first], fantasyland_set[first + 1]
    assert isinstance(a, CardsPlaced) and isinstance(b, CardsPlaced) and a.seat != b.seat
    forged = list(fantasyland_set)
    forged[first], forged[first + 1] = b, a
    report = _verify(forged)
    assert _failed(report)[0] == ("placements", 1)
    detail = next(c.detail for c in report.checks if c.name == "placements")
    assert "seat" in detail and "places now" in detail


def test_a_card_not_dealt_to_that_seat_fails_the_placements_check(
    fantasyland_set: list[Event],
) -> None:
    first = _index(fantasyland_set, CardsPlaced, 1)
    mine, theirs = fantasyland_set[first], fantasyland_set[first + 1]
    assert isinstance(mine, CardsPlaced) and isinstance(theirs, CardsPlaced)
    theirs_cards = {*theirs.front, *theirs.middle, *theirs.back}
    stolen = sorted(theirs_cards)[0]
    row = "back" if mine.back else "middle" if mine.middle else "front"
    cards = getattr(mine, row)
    changed = dataclasses.replace(mine, **{row: (stolen, *cards[1:])})
    forged = list(fantasyland_set)
    forged[first] = changed
    report = _verify(forged)
    assert _failed(report)[0] == ("placements", 1)
    assert "not the cards the seed dealt" in next(
        c.detail for c in report.checks if c.name == "placements"
    )


def test_a_changed_street_card_fails_the_streets_check(fantasyland_set: list[Event]) -> None:
    # The digest of street 1 for seat 1 pins another card than the seed dealt.
    key = fairness.record_key(TABLE_ID, 1, _seed_of(fantasyland_set, 1))
    index = _index(fantasyland_set, StreetDealt, 1, skip=1)
    street = fantasyland_set[index]
    assert isinstance(street, StreetDealt) and street.street == 1
    other = next(card for card in DECK if str(card) not in _placed(fantasyland_set, 1))
    forged_digest = street_digest(key, 1, 1, (other,)).hex()
    changed = dataclasses.replace(street, digests=(street.digests[0], forged_digest))
    forged = [*fantasyland_set[:index], changed, *fantasyland_set[index + 1 :]]
    report = _verify(forged)
    assert _failed(report)[0] == ("streets", 1)


def _seed_of(events: list[Event], deal: int) -> bytes:
    revealed = events[_index(events, SeedRevealed, deal)]
    assert isinstance(revealed, SeedRevealed)
    return bytes.fromhex(revealed.seed)


def _placed(events: list[Event], deal: int) -> set[str]:
    return {
        card
        for e in events
        if isinstance(e, CardsPlaced) and e.deal_number == deal
        for card in (*e.front, *e.middle, *e.back)
    }


def test_a_fantasyland_hand_not_matching_its_commitment_fails_the_fantasyland_check(
    fantasyland_set: list[Event],
) -> None:
    def swap(event: Event) -> Event:
        assert isinstance(event, FantasylandRevealed)
        middle, back = event.middle, event.back
        return dataclasses.replace(
            event, middle=(back[0], *middle[1:]), back=(middle[0], *back[1:])
        )

    report = _verify(_forge(fantasyland_set, FantasylandRevealed, 2, swap))
    assert _failed(report)[0] == ("fantasyland", 2)
    assert "commitment" in next(
        c.detail for c in report.checks if c.name == "fantasyland" and c.deal == 2
    )


def test_a_rescored_total_fails_the_scores_check(fantasyland_set: list[Event]) -> None:
    def rescore(event: Event) -> Event:
        assert isinstance(event, DealScored)
        totals = (event.totals[0] + 1, event.totals[1] - 1)
        return dataclasses.replace(event, totals=totals)

    report = _verify(_forge(fantasyland_set, DealScored, 1, rescore))
    assert ("scores", 1) in _failed(report)
    assert report.deals_verified == 2  # deals 2 and 3 still verify on their own


def _play_with_timeout(table: DrivenTable, late_seat: int) -> None:
    """Play the current deal; ``late_seat`` lets its time run out on its first street, and the
    rest of its hand is placed for it (the rule set's timeout policy)."""
    key = fairness.record_key(TABLE_ID, table.state.deal_number, table.seed)
    while table.state.phase is OpenFaceTablePhase.PLAYING:
        play = table.state.play
        assert play is not None
        if play.phase is OpenFacePhase.DEALING:
            street = play.streets_dealt
            digests = tuple(
                street_digest(key, street, seat, cards) if cards else b""
                for seat, cards in enumerate(table.cards[street])
            )
            table.run(DealStreet(digests, now_ms=1_000))
            continue
        seat = play.turn
        assert seat is not None and play.phase is OpenFacePhase.PLACING
        street = play.streets_dealt - 1
        dealt = table.cards[street][seat]
        if seat == late_seat or play.automatic[seat]:
            assert play.deadline_ms is not None
            table.run(PlaceForSeat(dealt, play.deadline_ms, timed_out=not play.automatic[seat]))
        else:
            placement = legal_placements(play.boards[seat], dealt)[0]
            table.run(PlaceCards(PLAYERS[seat], street, placement, dealt))
    table.run(RevealSeed(table.seed))


@pytest.mark.parametrize("preset", ["ofc_classic", "ofc_russian"])
def test_timeouts_are_checked_against_the_rule_sets_policy(preset: str) -> None:
    table = open_face_table(preset, 2, move_seconds=30)
    table.start_deal()
    _play_with_timeout(table, late_seat=1)
    events = table.events
    placed = [e for e in events if isinstance(e, CardsPlaced) and e.seat == 1]
    assert placed[0].automatic == "timeout"
    report = _verify(events)
    assert report.ok, _failed(report)

    # A timeout recorded where the policy places the cards elsewhere fails.
    first = events.index(placed[0])
    moved = dataclasses.replace(
        placed[0], front=placed[0].back, back=placed[0].front, middle=placed[0].middle
    )
    if moved != placed[0]:
        forged = [*events[:first], moved, *events[first + 1 :]]
        assert _failed(_verify(forged))[0] == ("placements", 1)
    # A seat's own move recorded as automatic, with no deadline passed, fails too.
    own = next(e for e in events if isinstance(e, CardsPlaced) and e.seat == 0)
    at = events.index(own)
    forged = [*events[:at], dataclasses.replace(own, automatic="timeout"), *events[at + 1 :]]
    assert _failed(_verify(forged))[0] == ("placements", 1)


def test_a_deal_without_the_deals_before_it_is_not_covered(fantasyland_set: list[Event]) -> None:
    # A deal starts from what the deals before it decided (Fantasyland, the button): without
    # them it is not judged, neither passed nor failed.
    created = fantasyland_set[0]
    assert isinstance(created, TableCreated)
    seated = [e for e in fantasyland_set if isinstance(e, PlayerSeated)]
    chosen = next(e for e in fantasyland_set if isinstance(e, DealerChosen))
    start = _index(fantasyland_set, DealStarted, 2)
    end = _index(fantasyland_set, DealStarted, 3)
    deal = DealEvents(2, fantasyland_set[start:end], list(range(start, end)))
    context = DealContext(created, chosen, 2, "close", None, seated)
    checks, totals = OPEN_FACE_AUDIT.deal_checks(deal, context)
    assert totals is None
    assert {check.status for check in checks} == {Status.NOT_COVERED}


def test_a_seed_not_matching_its_commitment_fails_the_seed_check(
    fantasyland_set: list[Event],
) -> None:
    def other_seed(event: Event) -> Event:
        assert isinstance(event, SeedRevealed)
        return dataclasses.replace(event, seed=bytes(32).hex())

    report = _verify(_forge(fantasyland_set, SeedRevealed, 3, other_seed))
    assert _failed(report)[0] == ("seed", 3)
    statuses = {c.name: c.status for c in report.checks if c.deal == 3}
    assert statuses["streets"] is Status.SKIPPED and statuses["scores"] is Status.SKIPPED


def test_a_malformed_placement_fails_a_check_and_does_not_raise(
    fantasyland_set: list[Event],
) -> None:
    def garbage(event: Event) -> Event:
        assert isinstance(event, CardsPlaced)
        return dataclasses.replace(event, front=("Zz",), middle=(), back=())

    report = _verify(_forge(fantasyland_set, CardsPlaced, 3, garbage))
    assert _failed(report)[0] == ("placements", 3)


# -- a Fantasyland's timeout, 003's early end, a voided deal, a seat replaced ---------------


def _set_with_fantasyland_timeout(preset: str) -> list[Event]:
    """A heads-up set: seat 1 times out in deal 1 while seat 0 earns Fantasyland, which seat 0
    then lets time out in deal 2; the set played to its end."""
    table = fantasyland_table(preset, 2, move_seconds=30, late={1})
    table.start_deal()
    table.play_deal(late={0})
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        table.play_deal()
    return list(table.events)


@pytest.mark.parametrize("preset", ["ofc_classic", "ofc_russian"])
def test_a_set_with_a_timed_out_fantasyland_verifies(preset: str) -> None:
    events = _set_with_fantasyland_timeout(preset)
    assert any(isinstance(e, FantasylandTimedOut) for e in events)
    report = _verify(events)
    assert report.ok, _failed(report)
    completed = [e for e in events if isinstance(e, SeriesCompleted)]
    scored = [e for e in events if isinstance(e, DealScored)]
    assert completed[0].deals_played == len(scored)
    if preset == "ofc_russian":  # 003: the set ends once the Fantasyland is played
        assert len(scored) == 2


def test_a_forged_fantasyland_setting_or_timeout_fails_the_fantasyland_check() -> None:
    events = _set_with_fantasyland_timeout("ofc_russian")

    def swap(event: Event) -> Event:
        assert isinstance(event, FantasylandRevealed) and event.nonce == ""
        return dataclasses.replace(
            event, front=event.back[:3], back=(*event.front, *event.back[3:])
        )

    report = _verify(_forge(events, FantasylandRevealed, 2, swap))
    assert _failed(report)[0] == ("fantasyland", 2)
    assert "not what the rules decide" in next(
        c.detail for c in report.checks if c.name == "fantasyland" and c.deal == 2
    )
    # A timeout where no deadline was recorded (the rule set had no move time) can only be the
    # operator's ForceSeatTimeout: the hand is then the service's, and the seat's own opening
    # of it after that is refused.
    honest = fantasyland_table("ofc_classic", 2)
    honest.start_deal()
    honest.play_deal()
    at = _index(honest.events, FantasylandCommitted, 2)
    forged = [*honest.events[:at], FantasylandTimedOut(deal_number=2, seat=0)]
    rest = honest.events[at + 1 :]
    # The honest log's reveals opened for the committed hand: none are due for a timed-out one.
    report = _verify([*forged, *rest])
    assert _failed(report)[0] == ("fantasyland", 2)
    assert "FantasylandRevealsOpened recorded where the rules open none" in next(
        c.detail for c in report.checks if c.name == "fantasyland" and c.deal == 2
    )
    rest = [e for e in rest if not isinstance(e, FantasylandRevealsOpened)]
    report = _verify([*forged, *rest])
    assert _failed(report)[0] == ("fantasyland", 2)
    assert "FantasylandRevealed of seat 0 is refused by the rules" in next(
        c.detail for c in report.checks if c.name == "fantasyland" and c.deal == 2
    )


def test_a_set_ended_early_without_a_timeout_fails_the_scores_check() -> None:
    table = open_face_table("ofc_russian", 3)
    table.start_deal()
    table.play_deal()
    done = SeriesCompleted(deals_played=1, standings=())
    report = _verify([*table.events, done])
    assert ("scores", 1) in _failed(report)


def test_a_voided_deal_and_a_replaced_seat_verify_and_a_forged_voiding_fails() -> None:
    table = fantasyland_table("ofc_classic", 2)
    table.start_deal()
    table.run_street(now_ms=1_000)
    table.run(VoidDeal("a fault", table.seed))
    table.run(ReplaceSeat(1, "eve"))
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        table.play_deal()
    events = list(table.events)
    report = _verify(events)
    assert report.ok, _failed(report)
    assert report.deals_verified == 3  # deal 2 voided, deals 1, 3 and 4 scored

    def other_seed(event: Event) -> Event:
        assert isinstance(event, DealVoided)
        return dataclasses.replace(event, seed=seeded("not the deal's").hex())

    report = _verify(_forge(events, DealVoided, 2, other_seed))
    assert ("seed", 2) in _failed(report)
    # Replacing a seat in the middle of a deal is refused by the rules.
    at = _index(events, DealStarted, 3) + 1
    moved = [e for e in events if not isinstance(e, SeatReplaced)]
    moved.insert(at - 1, SeatReplaced(seat=1, previous_player_id=PLAYERS[1], player_id="eve"))
    assert _failed(_verify(moved))
