"""A command is decided and folded once (issue #18): ``families.decide_folded`` hands an
open-face table's play to ``decide_table_folded``, which returns the events and the table after
them from the one fold the decision makes (whether the move opens the reveals is read off it),
the same as deciding and then folding; and a deal's streets are dealt from its seed once
(``fairness.open_face_deal.deal_of_seed``, kept per deal), however often a step asks."""

from __future__ import annotations

from typing import Any

import pytest
from open_face_deals import fantasyland_table, open_face_table

from sapsam.domain.families import decide_folded
from sapsam.domain.open_face import deal_decide, table_evolve
from sapsam.domain.open_face.commands import PlaceCards
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.events import FantasylandRevealsOpened
from sapsam.domain.open_face.table_state import dealt_streets
from sapsam.domain.table import decide, fold
from sapsam.fairness.open_face_deal import deal_of_seed
from sapsam.rules.open_face.board import legal_placements


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    calls: list[int] = []
    original = getattr(module, name)

    def counted(*args: Any) -> Any:
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_every_move_of_a_set_decides_and_folds_as_decide_then_fold() -> None:
    # Deal 2, heads-up: a Fantasyland hand committed, the other's placements (the last one
    # opens the reveals, read off the fold), each through decide_folded on the table before it.
    other = fantasyland_table("ofc_classic", 2)
    other.start_deal()
    other.run_street(now_ms=1_000)
    other.commit(0)
    while (play := other.state.play) is not None and play.phase is not OpenFacePhase.FANTASYLAND:
        if play.phase is OpenFacePhase.DEALING:
            other.run_street(now_ms=1_000)
            continue
        seat = play.turn
        assert seat is not None
        street = play.streets_dealt - 1
        dealt = other.cards[street][seat]
        placement = legal_placements(play.boards[seat], dealt)[0]
        player = other.state.seats[seat]
        assert player is not None
        command = PlaceCards(player, street, placement, dealt, now_ms=2_000)
        before = other.state
        events, after = decide_folded(before, command)
        assert events == decide(before, command)
        assert after == fold(events, before)
        other.run(command)
    assert isinstance(other.events[-1], FantasylandRevealsOpened)


def test_a_placement_folds_its_deal_once(monkeypatch: pytest.MonkeyPatch) -> None:
    table = open_face_table("ofc_classic", 2)
    table.start_deal()
    table.run_street(now_ms=0)
    play = table.state.play
    assert play is not None and play.turn is not None
    dealt = table.cards[0][play.turn]
    player = table.state.seats[play.turn]
    assert player is not None
    command = PlaceCards(player, 0, legal_placements(play.boards[play.turn], dealt)[0], dealt)
    folds = _counting(monkeypatch, deal_decide, "fold_deal")
    table_folds = _counting(monkeypatch, table_evolve, "evolve_table")
    events, after = decide_folded(table.state, command)
    assert len(events) == 1 and after.version == table.state.version + 1
    assert (len(folds), len(table_folds)) == (1, 0)


def test_a_deals_streets_are_dealt_once() -> None:
    table = open_face_table("ofc_turbo", 3)
    table.start_deal()
    deal_of_seed.cache_clear()
    first = dealt_streets(table.state, table.seed)
    for _ in range(5):
        assert dealt_streets(table.state, table.seed) is first
    info = deal_of_seed.cache_info()
    assert (info.misses, info.hits) == (1, 5)
    assert first == table.cards
