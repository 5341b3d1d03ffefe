"""Open face through the table service over a real PostgreSQL (issue #18): a table created from an
open-face rule set, its streets dealt and its forced placements made in the append of the move
that made them due, the seed revealed and scored after the last hand, refusals that write
nothing, a seat's own hand, and a timeout enforced by the deadline sweep."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from open_face_sample import (
    PLAYERS,
    Nonces,
    load,
    play_one_move,
    play_set,
    rules_of,
    seated_open_face_table,
    start_and_cut,
)

from sapsam.app.tables import TableService
from sapsam.cli import main
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import DealScored, SeedRevealed, SeriesCompleted
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.events import CardsPlaced, StreetDealt
from sapsam.domain.open_face.table_state import OpenFaceTablePhase
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.open_face.board import Placement, legal_placements
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000_000

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def service(database_url: str, clock: Clock) -> AsyncIterator[TableService]:
    store = await EventStore.connect(database_url, projectors=projectors())
    store.prepare()
    try:
        yield TableService(store, clock=clock)
    finally:
        await store.close()


async def _event_count(service: TableService) -> int:
    async with service.store.connection() as connection:
        row = await (await connection.execute("SELECT count(*) FROM events")).fetchone()
    assert row is not None
    return int(row[0])


async def _decoded(service: TableService, table_id: object) -> list[object]:
    assert hasattr(table_id, "hex")
    return [service.decode(recorded) for recorded in await service.events(table_id)]  # type: ignore[arg-type]


@pytest.mark.parametrize(("seats", "preset"), [(2, "ofc_turbo"), (3, "ofc_turbo")])
async def test_a_whole_set_is_played_and_verifies_from_the_log(
    service: TableService,
    database_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    seats: int,
    preset: str,
) -> None:
    table_id = await seated_open_face_table(service, seats, rules_of(preset))
    final = await play_set(service, table_id)
    assert final.phase is OpenFaceTablePhase.SERIES_COMPLETE
    events = await _decoded(service, table_id)
    scored = [event for event in events if isinstance(event, DealScored)]
    assert len(scored) >= seats and sum(final.series_totals) == 0
    assert len([event for event in events if isinstance(event, SeedRevealed)]) == len(scored)
    assert sum(isinstance(event, SeriesCompleted) for event in events) == 1
    # The export of the log verifies offline, every deal re-decided from the published seeds.
    code = main(["audit", "export", "--table", str(table_id), "--database-url", database_url])
    exported = capsys.readouterr().out
    assert code == 0
    path = tmp_path / "table.jsonl"
    path.write_text(exported, encoding="utf-8")
    code = main(["audit", "verify", str(path), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True, report
    assert report["deals_verified"] == len(scored)


async def test_the_first_street_is_dealt_with_the_cut_and_each_seat_sees_its_own_cards(
    service: TableService,
) -> None:
    table_id = await seated_open_face_table(service, 3, rules_of("ofc_classic"))
    with pytest.raises(DomainError) as raised:
        await service.own_hand(table_id, PLAYERS[0])
    assert raised.value.reason is Reason.WRONG_PHASE
    state = await start_and_cut(service, table_id)
    play = state.play
    assert play is not None and play.streets_dealt == 1 and play.phase is OpenFacePhase.PLACING
    hands = {player: await service.own_hand(table_id, player) for player in PLAYERS[:3]}
    seen = set()
    for player, hand in hands.items():
        assert len(hand.cards) == 5 and hand.open_face is not None
        seen.update(hand.cards)
        for seat_view in hand.open_face.seats:
            # Its own dealt cards, nobody else's; every board (empty yet) face up.
            assert (seat_view.dealt is not None) == (seat_view.player_id == player)
            assert seat_view.board is not None and not seat_view.board.cards
    assert len(seen) == 15
    with pytest.raises(DomainError) as raised:
        await service.own_hand(table_id, "zed")
    assert raised.value.reason is Reason.NOT_SEATED


async def test_refused_moves_write_nothing(service: TableService) -> None:
    table_id = await seated_open_face_table(service, 2, rules_of("ofc_classic"))
    state = await start_and_cut(service, table_id)
    play = state.play
    assert play is not None and play.turn is not None
    on_turn = state.seats[play.turn]
    other = state.seats[1 - play.turn]
    assert on_turn is not None and other is not None
    hand = await service.own_hand(table_id, on_turn)
    good = legal_placements(hand.open_face.seats[play.turn].board, hand.cards)[0]  # type: ignore[union-attr,arg-type]
    before = await _event_count(service)
    other_hand = await service.own_hand(table_id, other)
    refusals = [
        (
            service.place_cards(
                table_id,
                other,
                0,
                legal_placements(
                    other_hand.open_face.seats[1 - play.turn].board,  # type: ignore[union-attr,arg-type]
                    other_hand.cards,
                )[0],
                "out-of-turn",
            ),
            Reason.NOT_YOUR_TURN,
        ),
        (service.place_cards(table_id, on_turn, 1, good, "wrong-street"), Reason.INVALID_ARGUMENT),
        (
            service.place_cards(
                table_id, on_turn, 0, Placement(front=hand.cards[:5]), "too-many-in-front"
            ),
            Reason.BAD_CARDS,
        ),
        (
            service.place_cards(table_id, on_turn, 0, good, "wrong-deal", deal_number=7),
            Reason.WRONG_DEAL,
        ),
        (service.place_cards(table_id, "zed", 0, good, "not-seated"), Reason.NOT_SEATED),
        (service.commit_fantasyland(table_id, on_turn, bytes(32), "no-fl"), Reason.WRONG_PHASE),
        (
            service.reveal_fantasyland(
                table_id, on_turn, Arrangement((), (), ()), bytes(16), "no-fl-reveal"
            ),
            Reason.WRONG_PHASE,
        ),
        (service.commit(table_id, on_turn, bytes(32), "closed-commit"), Reason.WRONG_GAME),
        (service.confirm(table_id, on_turn, "closed-confirm"), Reason.WRONG_GAME),
    ]
    for call, reason in refusals:
        with pytest.raises(DomainError) as raised:
            await call
        assert raised.value.reason is reason, raised.value
    assert await _event_count(service) == before
    placed = await service.place_cards(table_id, on_turn, 0, good, "good")
    assert (await load(service, table_id)).play.turn == 1 - play.turn  # type: ignore[union-attr]
    # A retry answers with the original outcome and appends nothing.
    again = await service.place_cards(table_id, on_turn, 0, good, "good")
    assert again.replayed and again.events == placed.events


async def test_open_face_moves_are_refused_at_a_closed_table(service: TableService) -> None:
    created = await service.create_table(DEFAULT_RULE_SET, 2, "operator", "closed")
    before = await _event_count(service)
    with pytest.raises(DomainError) as raised:
        await service.place_cards(created.table_id, "ann", 0, Placement(), "place")
    assert raised.value.reason == "WRONG_GAME"
    with pytest.raises(DomainError) as raised:
        await service.create_table(rules_of(), 2, "operator", "ofc", "new_series")
    assert raised.value.reason is Reason.INVALID_ARGUMENT
    assert await _event_count(service) == before


async def test_a_placement_past_its_deadline_is_made_by_the_sweep(
    service: TableService, clock: Clock
) -> None:
    table_id = await seated_open_face_table(service, 2, rules_of("ofc_classic", move_seconds=5))
    state = await start_and_cut(service, table_id)
    play = state.play
    assert play is not None and play.deadline_ms == clock.now + 5_000
    assert await service.sweep_deadlines() == 0  # not yet due
    clock.now += 5_000
    assert await service.sweep_deadlines() == 1
    events = await _decoded(service, table_id)
    timed_out = [event for event in events if isinstance(event, CardsPlaced)]
    assert len(timed_out) == 1 and timed_out[0].automatic == "timeout"
    assert timed_out[0].seat == play.turn
    after = await load(service, table_id)
    assert after.play is not None and after.play.turn == 1 - play.turn
    assert after.play.deadline_ms == clock.now + 5_000
    # 001's policy: the hand is dead for the set; the seat's later streets are placed for it in
    # the append that deals them, and the other seat plays on.
    nonces = Nonces()
    while await play_one_move(service, table_id, nonces):
        pass
    events = await _decoded(service, table_id)
    automatic = [
        event for event in events if isinstance(event, CardsPlaced) and event.seat == play.turn
    ]
    assert all(event.automatic is not None for event in automatic) and len(automatic) == 9
    assert sum(isinstance(event, StreetDealt) for event in events) == 9
    scored = [event for event in events if isinstance(event, DealScored)]
    assert len(scored) == 1 and scored[0].fouls[play.turn]
