"""``sapsam audit replay`` steps through an open-face set (issue #18, "Fairness and audit"):
one frame per event, what happened in sentences, each seat's cards as far as they can be known
offline and who could see them, its rows as placed, and at each score the deal's account. The
export is built in memory from the domain's events, written as ``sapsam audit export`` writes
it, and replayed through the CLI too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from open_face_deals import DrivenTable, export_lines, fantasyland_table, open_face_table

from sapsam.audit import read_export
from sapsam.audit.replay import ReplayFrame, frame_at, replay
from sapsam.audit.replay_rendering import render_replay
from sapsam.audit.verifier import verify_export
from sapsam.cli import main
from sapsam.domain.commands import ReplaceSeat, VoidDeal
from sapsam.domain.open_face.table_state import OpenFaceTablePhase


def _finish(table: DrivenTable) -> None:
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        table.play_deal()


@pytest.fixture(scope="module")
def timed_out_set() -> list[str]:
    """A heads-up 003 set: seat 1 times out in deal 1, in which seat 0 earns Fantasyland; seat 0
    lets its Fantasyland hand time out in deal 2, after which the set ends (003)."""
    table = fantasyland_table("ofc_russian", 2, move_seconds=30, late={1})
    table.start_deal()
    table.play_deal(late={0})
    _finish(table)
    return export_lines(table.events)


def _frames(lines: list[str]) -> list[ReplayFrame]:
    return replay(read_export(lines))


def _told(frames: list[ReplayFrame], event_type: str) -> list[str]:
    return [frame.happened for frame in frames if frame.event_type == event_type]


def test_every_event_is_a_frame_told_in_words(timed_out_set: list[str]) -> None:
    export = read_export(timed_out_set)
    assert verify_export(timed_out_set).ok
    frames = replay(export)
    assert len(frames) == len(export.events)
    assert all(frame.happened != frame.event_type for frame in frames)  # every one in words
    [created] = _told(frames, "TableCreated")
    assert "open-face table" in created and "'ofc_russian'" in created
    streets = _told(frames, "StreetDealt")
    assert streets[0].startswith("street 0 dealt: 5 cards to each seat")
    assert any("a Fantasyland hand of 13 to seat 0" in told for told in streets)
    placed = _told(frames, "CardsPlaced")
    assert any("placed" in told and "face up and final" in told for told in placed)
    assert any("the service placed" in told and "its time ran out" in told for told in placed)
    [timed_out] = _told(frames, "FantasylandTimedOut")
    assert "did not set its Fantasyland hand in time" in timed_out
    [opened] = _told(frames, "FantasylandRevealed")
    assert opened.startswith("the service opened the hand it set for seat 0")
    scored = _told(frames, "DealScored")
    assert "royalties" in scored[0] and "against" in scored[0]
    assert "next deal Fantasyland for seat 0; the button stays" in scored[0]
    [completed] = _told(frames, "SeriesCompleted")
    assert "it ended early" in completed


def test_each_seat_s_cards_show_to_it_alone_until_the_seed_is_out(
    timed_out_set: list[str],
) -> None:
    frames = _frames(timed_out_set)
    first_street = next(frame for frame in frames if frame.event_type == "StreetDealt")
    for view in first_street.seats:
        assert view.cards is not None and len(view.cards.split()) == 5
        assert view.seen_by == f"seat {view.seat} only"
        assert view.arrangement == "-|-|-"
    scored = next(frame for frame in frames if frame.event_type == "DealScored")
    for view in scored.seats:
        assert view.seen_by == "everyone"
        assert view.cards is not None and len(view.cards.split()) == 13
        assert view.arrangement is not None and "-" not in view.arrangement.split("|")


def test_a_fantasyland_hand_shows_only_once_opened(timed_out_set: list[str]) -> None:
    frames = _frames(timed_out_set)
    timed_out = next(frame for frame in frames if frame.event_type == "FantasylandTimedOut")
    assert "time ran out" in timed_out.seats[0].status and timed_out.seats[0].arrangement is None
    opened = next(frame for frame in frames if frame.event_type == "FantasylandRevealed")
    assert opened.seats[0].arrangement is not None
    assert opened.seats[0].status.startswith("Fantasyland hand opened")


def test_while_the_fantasyland_is_set_the_others_rows_are_theirs_alone() -> None:
    table = fantasyland_table("ofc_classic", 2)
    table.start_deal()
    table.play_deal()
    _finish(table)
    frames = _frames(export_lines(table.events))
    deal_two = [frame for frame in frames if frame.deal_number == 2]
    street = next(frame for frame in deal_two if frame.event_type == "StreetDealt")
    placed = next(frame for frame in deal_two if frame.event_type == "CardsPlaced")
    committed = next(frame for frame in deal_two if frame.event_type == "FantasylandCommitted")
    assert frames.index(committed) < frames.index(placed)  # the driver commits at once
    assert "Fantasyland: setting its hand" in street.seats[0].status
    assert "set face down" in committed.seats[0].status


def test_a_voided_deal_and_a_replaced_seat_are_told() -> None:
    table = fantasyland_table("ofc_classic", 2)
    table.start_deal()
    table.run_street(now_ms=1_000)
    table.run(VoidDeal("a fault", table.seed))
    table.run(ReplaceSeat(1, "eve"))
    _finish(table)
    frames = _frames(export_lines(table.events))
    [voided] = _told(frames, "DealVoided")
    assert "voided deal 2" in voided and "the same dealer deals again" in voided
    voided_frame = next(frame for frame in frames if frame.event_type == "DealVoided")
    assert all(view.status == "deal voided" for view in voided_frame.seats)
    assert all(view.seen_by == "everyone" for view in voided_frame.seats)  # its seed is out
    [replaced] = _told(frames, "SeatReplaced")
    assert "gave seat 1 to player eve" in replaced


def test_sapsam_audit_replay_prints_an_open_face_set(
    timed_out_set: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "open_face.jsonl"
    path.write_text("\n".join(timed_out_set) + "\n", encoding="utf-8")
    assert main(["audit", "replay", str(path), "--plain"]) == 0
    text = capsys.readouterr().out
    assert "street 0 dealt" in text and "deal 2 scored" in text
    assert main(["audit", "replay", str(path), "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(read_export(timed_out_set).events)
    assert json.loads(lines[-1])["phase"] == "SERIES_COMPLETE"
    assert main(["audit", "replay", str(path), "--plain", "--at", "7"]) == 0
    shown = capsys.readouterr().out
    assert shown.count("\nv") == 1 and "\nv7 StreetDealt" in shown  # that frame alone


def test_the_text_replay_renders_every_frame() -> None:
    table = open_face_table("ofc_turbo", 3)
    _finish(table)
    lines = export_lines(table.events)
    export = read_export(lines)
    frames = replay(export)
    texts = list(render_replay(export, frames))
    assert len(texts) == len(frames) + 1  # the players, then each frame
    assert frame_at(frames, 10) == frames[9]


def test_a_deal_export_replays_its_fantasyland_from_its_own_first_street() -> None:
    # Deal 2's export lacks deal 1, which earned seat 0 its Fantasyland: the verifier leaves the
    # deal not covered, and the replay reads who plays Fantasyland from the deal's first street.
    table = fantasyland_table("ofc_classic", 2)
    table.start_deal()
    table.play_deal()
    lines = export_lines(table.events, deal=2)
    frames = _frames(lines)
    committed = next(frame for frame in frames if frame.event_type == "FantasylandCommitted")
    assert committed.seats[0].status == "Fantasyland hand set face down"
    assert committed.totals_from == "deal 2's score"
