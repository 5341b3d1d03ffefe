"""The operator's export of a running open-face deal shows what everybody may see at that moment
(issue #18, hidden information): while a Fantasyland hand is being set the other seats'
placements are shown to their own seat only, so the export stops before them; once the hand is
committed they are public and the export carries them."""

from __future__ import annotations

import json

from open_face_deals import PLAYERS, export_lines, fantasyland_table

from sapsam.domain.open_face.commands import PlaceCards
from sapsam.rules.open_face.board import legal_placements


def _types(lines: list[str]) -> list[str]:
    return [json.loads(line)["type"] for line in lines[1:]]


def test_placements_made_while_a_fantasyland_hand_is_set_stay_out_of_the_export() -> None:
    table = fantasyland_table()  # two seats; seat 0 plays Fantasyland in deal 2
    table.start_deal()
    table.run_street(now_ms=1_000)
    play = table.state.play
    assert play is not None and play.fantasyland_hidden and play.turn == 1
    dealt = table.cards[0][1]
    placement = legal_placements(play.boards[1], dealt)[0]
    table.run(PlaceCards(PLAYERS[1], 0, placement, dealt, now_ms=2_000))
    hidden = _types(export_lines(table.events))
    assert hidden[-1] == "StreetDealt"
    assert hidden.count("CardsPlaced") == _types(export_lines(table.events[:-2])).count(
        "CardsPlaced"
    )
    deal_two = _types(export_lines(table.events, deal=2))
    assert "CardsPlaced" not in deal_two and deal_two[-1] == "StreetDealt"

    table.commit(0)
    shown = _types(export_lines(table.events))
    assert shown[-2:] == ["CardsPlaced", "FantasylandCommitted"]
    assert _types(export_lines(table.events, deal=2))[-2:] == [
        "CardsPlaced",
        "FantasylandCommitted",
    ]
