"""The tournament queries: lists, standings and leaderboards, read from the read models.

Each query runs in one store session (``sapsam.app.store_interface``); the rows come back as the
store reads them, in the order and with the places the store's statements give (``rank()``:
equal totals share a place).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sapsam.app.store_interface import LeaderboardLine, StandingLine, Store


@dataclass(frozen=True)
class Leaderboard:
    """A page of a leaderboard, the number of players on it, and one player's neighbourhood."""

    lines: Sequence[LeaderboardLine]
    total: int
    around: Sequence[LeaderboardLine]


async def tournament_page(
    store: Store, phases: Sequence[str] | None, after: tuple[int, str] | None, limit: int
) -> list[tuple[str, int]]:
    """Up to ``limit`` tournament ids with their creation time, newest first, only those in
    ``phases`` unless None, after ``after`` (a listed tournament's creation time and id)."""
    async with store.session() as session:
        return await session.tournament_page(phases, after, limit)


async def standings(
    store: Store, tournament_id: uuid.UUID, tie_break: str, offset: int, limit: int
) -> tuple[Sequence[StandingLine], int]:
    """A page of a tournament's standings from ``offset`` (best first), and the line count."""
    async with store.session() as session:
        return await session.standings_page(str(tournament_id), tie_break, offset, limit)


async def leaderboard(
    store: Store,
    rule_set: str | None,
    period: str | None,
    offset: int,
    limit: int,
    around_player: str | None = None,
    radius: int = 0,
) -> Leaderboard:
    """A page of the leaderboard (of one rule set and period, unless None) and, with
    ``around_player`` and a ``radius``, that player's lines either side."""
    async with store.session() as session:
        lines, total = await session.leaderboard_page(rule_set, period, offset, limit)
        around: Sequence[LeaderboardLine] = ()
        if around_player is not None and radius:
            around = await session.leaderboard_around(rule_set, period, around_player, radius)
    return Leaderboard(lines, total, around)
