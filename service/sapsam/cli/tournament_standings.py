"""``sapsam tournament standings`` and ``leaderboard``: by display name, as a table, CSV or JSON.

Both read the database directly, as the other ``sapsam tournament`` actions do. The standings are
the tournament's own (``TournamentState.standings``: every entrant, equal totals sharing a place,
the configured tie-break, forfeited players kept by total and marked); the leaderboard sums
started tournaments, overall or per rule set and month (docs/tournaments.md).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from sapsam.cli.tournament_common import (
    CommandError,
    connection,
    database_options,
    guarded,
    parse_id,
    services,
)
from sapsam.cli.tournament_output import (
    FORMAT_HELP,
    FORMATS,
    LEADERBOARD_COLUMNS,
    STANDING_COLUMNS,
    display_name,
    render,
)
from sapsam.cli.wording import plural

MAX_LEADERBOARD_LINES = 1000


def add_actions(actions: Any) -> None:
    """Add ``standings`` and ``leaderboard`` to the ``tournament`` subcommand."""
    standings = actions.add_parser(
        "standings",
        help="print a tournament's standings",
        description="Print a tournament's standings, best first, players by display name."
        " Equal totals share a place (1, 1, 3) unless the tournament was created with a"
        " tie-break; a player who forfeited keeps its place by total and is marked.",
    )
    standings.add_argument("tournament", help="the tournament: its id, or tournaments/{id}")
    standings.add_argument("--format", choices=FORMATS, default="table", help=FORMAT_HELP)
    database_options(standings)
    standings.set_defaults(handler=guarded(_standings))

    board = actions.add_parser(
        "leaderboard",
        help="print a leaderboard across tournaments",
        description="Print a leaderboard: each player's credited deal results summed over the"
        " tournaments that started, best first, by display name. Equal totals share a place.",
    )
    board.add_argument("--rule-set", help="only tournaments of this rule set (default: every one)")
    board.add_argument(
        "--period", help="only tournaments started in this UTC month, YYYY-MM (default: all time)"
    )
    board.add_argument(
        "--limit",
        type=int,
        default=20,
        help=f"lines to print, 1 to {MAX_LEADERBOARD_LINES} (default: 20)",
    )
    board.add_argument("--format", choices=FORMATS, default="table", help=FORMAT_HELP)
    database_options(board)
    board.set_defaults(handler=guarded(_leaderboard))


def _standings(arguments: argparse.Namespace) -> int:
    from sapsam.store.player_names import display_names

    tournament_id = parse_id(arguments.tournament, "tournaments/")

    async def load() -> Any:
        async with services(arguments) as tournaments:
            return await tournaments.load(tournament_id)

    state = asyncio.run(load())
    standings = state.standings()
    with connection(arguments) as opened:
        names = display_names(opened, [line.player_id for line in standings])
    lines = [
        {
            "place": line.place,
            "display_name": display_name(names, line.player_id),
            "total": line.total,
            "deals_won": line.deals_won,
            "deals_played": line.deals_played,
            "player": f"players/{line.player_id}",
            "forfeited": line.player_id in state.forfeited,
        }
        for line in standings
    ]
    phase = state.phase.value
    final = phase in ("COMPLETE", "CANCELLED")
    status = {"COMPLETE": "final", "CANCELLED": "final: the tournament was cancelled"}.get(
        phase, f"so far, after {state.rounds_completed} of {plural(state.rounds, 'round')}"
    )
    meta = {
        "tournament": f"tournaments/{tournament_id}",
        "name": state.name,
        "status": phase,
        "final": final,
        "tie_break": state.tie_break.value,
    }
    title = f"{state.name}: standings ({status}; equal totals share a place)"
    print(render(title, meta, lines, STANDING_COLUMNS, arguments.format))
    return 0


def _leaderboard(arguments: argparse.Namespace) -> int:
    from sapsam.store.player_names import display_names
    from sapsam.store.tournament_queries import leaderboard_page

    if not 1 <= arguments.limit <= MAX_LEADERBOARD_LINES:
        raise CommandError(f"--limit must be 1 to {MAX_LEADERBOARD_LINES}")

    async def page() -> Any:
        async with services(arguments) as tournaments, tournaments.store.connection() as opened:
            return await leaderboard_page(
                opened, arguments.rule_set, arguments.period, 0, arguments.limit
            )

    rows, total = asyncio.run(page())
    with connection(arguments) as opened:
        names = display_names(opened, [row.player_id for row in rows])
    lines = [
        {
            "place": row.place,
            "display_name": display_name(names, row.player_id),
            "total": row.total,
            "deals_played": row.deals_played,
            "tournaments_played": row.tournaments_played,
            "player": f"players/{row.player_id}",
        }
        for row in rows
    ]
    scope = ", ".join(
        part
        for part in (
            f"rule set {arguments.rule_set}" if arguments.rule_set else "",
            f"month {arguments.period}" if arguments.period else "",
        )
        if part
    )
    players = "player" if total == 1 else "players"
    title = f"leaderboard ({scope or 'all tournaments'}; {total} {players}; equal totals share"
    title += " a place)"
    meta = {"rule_set": arguments.rule_set, "period": arguments.period, "players": total}
    print(render(title, meta, lines, LEADERBOARD_COLUMNS, arguments.format))
    return 0
