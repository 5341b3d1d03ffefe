"""Replacing a seat's player: only between deals, once a deal was played; the next deal is the
new player's."""

from __future__ import annotations

from test_table import ready_table

from sapsam.domain.commands import ReplaceSeat, VoidDeal
from sapsam.domain.errors import Reason
from sapsam.domain.events import SeatReplaced
from sapsam.domain.table import TablePhase


def test_a_seat_changes_hands_between_deals() -> None:
    table = ready_table(2)
    table.refused(ReplaceSeat(seat=1, player_id="zed"), Reason.WRONG_PHASE)  # no deal yet
    table.play_deal()
    (replaced,) = table.run(ReplaceSeat(seat=1, player_id="zed"))
    assert replaced == SeatReplaced(seat=1, previous_player_id="bob", player_id="zed")
    assert table.state.seats == ("ann", "zed")
    assert table.state.seat_of("bob") is None and table.state.phase is TablePhase.BETWEEN_DEALS
    table.start_deal()
    table.refused(ReplaceSeat(seat=0, player_id="yan"), Reason.WRONG_PHASE)  # mid-deal
    # A deal voided is over too: the seat may change hands after it.
    table.run(VoidDeal(reason="stuck", seed=table.seed))
    table.run(ReplaceSeat(seat=0, player_id="yan"))
    assert table.state.seats == ("yan", "zed")


def test_refusals_change_nothing() -> None:
    table = ready_table(2)
    table.play_deal()
    table.refused(ReplaceSeat(seat=2, player_id="zed"), Reason.UNKNOWN_SEAT)
    table.refused(ReplaceSeat(seat=0, player_id="bob"), Reason.ALREADY_SEATED)
    table.refused(ReplaceSeat(seat=0, player_id="ann"), Reason.ALREADY_SEATED)
