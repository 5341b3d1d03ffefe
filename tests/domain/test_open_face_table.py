"""An open-face table behind the family seam: created with an open-face rule set, it is decided
and evolved by the open-face family through ``sapsam.domain.table``'s ``decide``/``evolve``, as
the application will drive it; whole sets are played from real seeds, entropy and cuts, with
Fantasyland carried to the next deal and the button staying for it (issue #18 rules 1, 3, 4)."""

from __future__ import annotations

import pytest
from open_face_deals import (
    CODEC,
    TABLE_ID,
    DrivenTable,
    fantasyland_table,
    open_face_table,
    seeded,
)

from sapsam.domain import families
from sapsam.domain.commands import (
    CreateTable,
    RevealSeed,
    StartDeal,
)
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import (
    DealScored,
    DealStarted,
    SeriesCompleted,
    TableCreated,
)
from sapsam.domain.family import FAMILY_KEY
from sapsam.domain.open_face.family import OPEN_FACE, open_face_view
from sapsam.domain.open_face.table_state import OpenFaceTable, OpenFaceTablePhase
from sapsam.domain.table import decide, fold
from sapsam.log.records import RecordedEvent
from sapsam.rules.open_face.presets import open_face_preset
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.store.projection_folds import table_state_row


def test_an_open_face_table_is_played_by_the_open_face_family() -> None:
    table = open_face_table()
    created = table.events[0]
    assert isinstance(created, TableCreated)
    assert created.rule_set[FAMILY_KEY] == "open_face"
    assert created.rule_set["series_length"] == 3  # the frame's key: as many deals as seats
    assert families.family_of_rule_set(created.rule_set) is OPEN_FACE
    assert isinstance(table.state, OpenFaceTable)
    assert families.family_of_state(table.state) is OPEN_FACE
    assert table.state.rules == open_face_preset("ofc_classic")
    assert table.state.phase is OpenFaceTablePhase.BETWEEN_DEALS
    # The same events replay to the same table, through the codec and the seam.
    decoded = [CODEC.decode(*CODEC.encode(event)) for event in table.events]
    assert fold(decoded) == table.state


def test_a_closed_command_is_not_an_open_face_move() -> None:
    table = open_face_table()
    with pytest.raises(DomainError) as raised:
        decide(table.state, CreateTable(TABLE_ID, DEFAULT_RULE_SET, 2, bytes(32), "ann"))
    assert raised.value.reason is Reason.INVALID_ARGUMENT


def test_a_deal_from_start_to_score() -> None:
    table = open_face_table(seats=3)
    table.start_deal()
    assert table.state.phase is OpenFaceTablePhase.PLAYING
    table.play_deal()
    scored = [event for event in table.events if isinstance(event, DealScored)]
    assert len(scored) == 1 and sum(scored[0].totals) == 0
    assert table.state.series_totals == scored[0].totals
    assert table.state.phase in (OpenFaceTablePhase.BETWEEN_DEALS,)
    assert len(scored[0].pairs) == 3


def test_a_wrong_seed_is_refused_and_a_deal_ends_only_with_its_own() -> None:
    table = open_face_table(seats=2)
    table.start_deal()
    seed = table.seed
    table.seed = seeded("another seed")
    with pytest.raises(DomainError) as raised:
        table.play_deal()
    assert raised.value.reason is Reason.SEED_MISMATCH
    table.run(RevealSeed(seed))
    assert table.state.scored


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("preset", ["ofc_classic", "ofc_turbo"])
def test_a_whole_set_has_as_many_button_moves_as_seats(preset: str, seats: int) -> None:
    table = open_face_table(preset, seats)
    dealers = []
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        dealers.append(table.state.dealer)
        table.play_deal(solver=True)
    started = [event for event in table.events if isinstance(event, DealStarted)]
    completed = [event for event in table.events if isinstance(event, SeriesCompleted)]
    assert len(completed) == 1 and completed[0].deals_played == len(started)
    assert table.state.button_moves == seats
    # The button passes left after each deal, except before a Fantasyland (001).
    for previous, current, before in zip(dealers, dealers[1:], started, strict=False):
        stays = any(cards is not None for cards in _fantasyland_after(table, before.deal_number))
        expected = previous if stays else (previous + 1) % seats  # type: ignore[operator]
        assert current == expected
    with pytest.raises(DomainError) as raised:
        decide(table.state, StartDeal(bytes(32)))
    assert raised.value.reason is Reason.SERIES_COMPLETE
    assert sum(table.state.series_totals) == 0


def _fantasyland_after(table: DrivenTable, deal_number: int) -> tuple[int | None, ...]:
    """Who plays Fantasyland in the deal after ``deal_number``, as the log says."""
    state = fold(table.events[: _index_after_score(table, deal_number)])
    assert isinstance(state, OpenFaceTable)
    return state.next_fantasyland


def _index_after_score(table: DrivenTable, deal_number: int) -> int:
    for index, event in enumerate(table.events):
        if isinstance(event, DealScored) and event.deal_number == deal_number:
            return index + 1
    raise AssertionError(deal_number)


def test_a_fantasyland_earned_is_played_next_deal_with_the_button_staying() -> None:
    table = fantasyland_table()
    state = table.state
    dealer_before = state.dealer
    assert any(cards is not None for cards in state.next_fantasyland)
    table.start_deal()
    assert table.state.dealer == dealer_before  # the button did not move
    play = table.state.play
    assert play is not None and play.fantasyland == state.next_fantasyland
    table.play_deal()
    view = open_face_view(table.state, None)
    assert view is not None
    assert all(seat.board is not None and seat.board.complete for seat in view.seats)


def test_the_read_models_fold_an_open_face_table_as_any_other() -> None:
    # The frame's contract (docs/architecture.md): the store reads the same keys of every
    # family's TableCreated and folds the frame's events; it needs nothing of open face.
    table = open_face_table("ofc_turbo", 2)
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        table.play_deal(solver=True)
    stream = f"table-{TABLE_ID}"
    recorded = [
        RecordedEvent(version, stream, version, *CODEC.encode(event), {}, b"")
        for version, event in enumerate(table.events, start=1)
    ]
    row = table_state_row(recorded)
    assert row is not None
    assert row["rule_set_name"] == "ofc_turbo" and row["series_length"] == 2
    assert row["seat_count"] == 2 and row["players"] == ["ann", "bob"]
    assert row["phase"] == "SERIES_COMPLETE"
    assert row["series_totals"] == list(table.state.series_totals)
    assert row["version"] == len(table.events)
    # And the log it would hold replays, through the default codec, to the same table.
    decoded = [CODEC.decode(event.type, event.schema_version, event.data) for event in recorded]
    assert fold(decoded) == table.state
