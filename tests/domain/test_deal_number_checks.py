"""A command naming a deal acts only in that deal: a late arrangement never lands in the next."""

from __future__ import annotations

from test_table import NONCE, PLAYERS, TABLE_ID, ready_table

from sapsam import fairness
from sapsam.domain.commands import CommitArrangement, ConfirmArrangement, RevealArrangement
from sapsam.domain.errors import Reason
from sapsam.domain.events import ArrangementCommitted
from sapsam.rules.solver import solve


def test_commit_confirm_and_reveal_for_a_past_deal_are_refused() -> None:
    table = ready_table(2)
    table.play_deal()
    table.start_deal()
    table.cut(17, 0)
    late = fairness.arrangement_commitment(TABLE_ID, 1, 1, solve(table.hands()[1]), NONCE)
    error = table.refused(
        CommitArrangement(player_id=PLAYERS[1], commitment=late, deal_number=1), Reason.WRONG_DEAL
    )
    assert str(error) == "this call is for deal 1, but the current deal is 2"
    table.refused(
        ConfirmArrangement(player_id=PLAYERS[1], now_ms=0, deal_number=1), Reason.WRONG_DEAL
    )
    rows = solve(table.hands()[1])
    table.refused(
        RevealArrangement(PLAYERS[1], rows, NONCE, table.hands()[1], deal_number=1),
        Reason.WRONG_DEAL,
    )


def test_the_deal_is_checked_before_the_phase() -> None:
    table = ready_table(2)
    table.refused(
        CommitArrangement(player_id=PLAYERS[0], commitment=bytes(32), deal_number=1),
        Reason.WRONG_DEAL,  # no deal has started: not WRONG_PHASE, the call is for a deal
    )


def test_the_current_deal_or_none_is_accepted() -> None:
    table = ready_table(2)
    table.play_deal()
    table.start_deal()
    table.cut(17, 0)
    for seat, number in ((0, 2), (1, None)):
        (event,) = table.run(
            CommitArrangement(player_id=PLAYERS[seat], commitment=bytes(32), deal_number=number)
        )
        assert isinstance(event, ArrangementCommitted) and event.deal_number == 2
