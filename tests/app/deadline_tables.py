"""Helpers for the deadline tests: a table dealt, waiting for its seats, on a hand-moved clock."""

from __future__ import annotations

import time
import uuid

from sapsam import fairness
from sapsam.app.tables import TableService
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.solver import solve


class FakeClock:
    """A clock the test moves by hand (Unix milliseconds)."""

    def __init__(self, now_ms: int = 1_000_000) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms

    @staticmethod
    def wall() -> int:
        """The real time now (Unix milliseconds)."""
        return time.time_ns() // 1_000_000


async def dealt_table(
    service: TableService, rules: RuleSet, players: tuple[str, ...], name: str
) -> uuid.UUID:
    """A table of ``players`` with the cards dealt: every seat is arranging."""
    table_id = (
        await service.create_table(rules, len(players), "operator", f"create-{name}")
    ).table_id
    for player in players:
        await service.join(table_id, player, None, f"join-{name}")
    await service.choose_dealer(table_id, "operator", f"dealer-{name}")
    state = (await service.start_deal(table_id, "operator", f"start-{name}")).state
    assert state.deal is not None
    cutter = state.seats[fairness.cutter_for(state.deal.dealer, len(players))]
    assert cutter is not None
    await service.cut(table_id, cutter, 20, f"cut-{name}")
    return table_id


async def confirm_solved(
    service: TableService, table_id: uuid.UUID, player: str
) -> tuple[object, bytes]:
    """``player`` commits and confirms the solver's arrangement; returns it and its nonce."""
    seat, hand = await service.hand_of(table_id, player)
    arrangement = solve(hand)
    nonce = b"n" * 16
    state = await service.load(table_id)
    assert state.deal is not None
    commitment = fairness.arrangement_commitment(
        table_id, state.deal.number, seat, arrangement, nonce
    )
    await service.commit(table_id, player, commitment, f"commit-{table_id}-{state.deal.number}")
    await service.confirm(table_id, player, f"confirm-{table_id}-{state.deal.number}")
    return arrangement, nonce
