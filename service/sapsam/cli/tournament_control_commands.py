"""``sapsam tournament pause | resume | cancel | forfeit | reseat``: the operator's controls.

The same commands as the TournamentService RPCs of the same names (docs/api.md), on the database
directly; a running server sees them at once (its results process and deadline sweep read the
log). Each prints what it did in a sentence; a refusal (say, resuming a tournament that is not
paused) is one line naming its reason, and writes nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import textwrap
import uuid
from typing import Any, Final

from sapsam.cli.tournament_common import (
    CommandError,
    connection,
    database_options,
    guarded,
    parse_id,
    resolve_players,
    services,
)

DESCRIBED: Final = argparse.RawDescriptionHelpFormatter
REASON_HELP: Final = "why, for the record: 1 to 200 printable characters (shown to the players)"


def add_actions(actions: Any) -> None:
    """Add the control actions to the ``tournament`` subcommand."""
    pause = _action(
        actions,
        "pause",
        "pause a running tournament",
        "Until it resumes: no round is seated, no deal starts at its tables and no deadline"
        " runs out there (a deal in play may be finished). Deadlines that fell in the pause are"
        " extended when it ends, so the pause is never held against a player.",
    )
    pause.add_argument("--reason", required=True, help=REASON_HELP)
    pause.set_defaults(handler=guarded(_pause))

    resume = _action(
        actions,
        "resume",
        "resume a paused tournament",
        "Seats the next round at once when one completed during the pause.",
    )
    resume.set_defaults(handler=guarded(_resume))

    cancel = _action(
        actions,
        "cancel",
        "cancel a tournament before its end",
        "The standings are final as they stand; nothing is credited after this. The tables"
        " are left as they are (void their deals with sapsam tables void if need be).",
    )
    cancel.add_argument("--reason", required=True, help=REASON_HELP)
    cancel.set_defaults(handler=guarded(_cancel))

    forfeit = _action(
        actions,
        "forfeit",
        "a player leaves the tournament",
        "The player sits in no later round and keeps the deals credited to it, staying in the"
        " standings by total, marked as forfeited. Its seat in the current round stays its own"
        " (it times out) until you give it to another player with sapsam tournament reseat.",
    )
    forfeit.add_argument("player", help="the player: display name or id (players/{id})")
    forfeit.add_argument("--reason", required=True, help=REASON_HELP)
    forfeit.set_defaults(handler=guarded(_forfeit))

    reseat = _action(
        actions,
        "reseat",
        "give a forfeited player's seat to another player",
        "Between two deals of the round (pause the tournament first, so that no deal starts"
        " meanwhile): the new player holds the seat from the table's next deal (the deals"
        " before stay the forfeited player's) and plays the later rounds as an entrant.",
    )
    reseat.add_argument("table", help="the table: its id, or tables/{id}")
    reseat.add_argument("seat", type=int, help="the seat number, from 0")
    reseat.add_argument("player", help="who takes the seat: display name or id (players/{id})")
    reseat.set_defaults(handler=guarded(_reseat))


def _action(actions: Any, name: str, summary: str, details: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = actions.add_parser(
        name,
        help=summary,
        description=f"{summary[0].upper()}{summary[1:]}.\n\n{textwrap.fill(details, 79)}",
        formatter_class=DESCRIBED,
    )
    parser.add_argument("tournament", help="the tournament: its id, or tournaments/{id}")
    database_options(parser)
    return parser


def _run(arguments: argparse.Namespace, method: str, *values: Any) -> Any:
    tournament_id = parse_id(arguments.tournament, "tournaments/")

    async def call() -> Any:
        async with services(arguments) as tournaments:
            return await getattr(tournaments, method)(tournament_id, *values, f"cli-{uuid.uuid4()}")

    return asyncio.run(call())


def _one_player(arguments: argparse.Namespace, text: str) -> tuple[str, str]:
    """The player's id and display name."""
    from sapsam.store.player_names import display_names

    with connection(arguments) as opened:
        [player_id] = resolve_players(opened, [text])
        return player_id, display_names(opened, [player_id]).get(player_id, player_id)


def _pause(arguments: argparse.Namespace) -> int:
    outcome = _run(arguments, "pause", arguments.reason)
    print(f"{outcome.state.name} is paused: {arguments.reason}")
    print(f"to resume: sapsam tournament resume tournaments/{outcome.tournament_id}")
    return 0


def _resume(arguments: argparse.Namespace) -> int:
    outcome = _run(arguments, "resume")
    state = outcome.state
    seated = any(recorded.type == "RoundSeated" for recorded in outcome.events)
    note = f"; round {state.current_round} is seated" if seated else ""
    print(f"{state.name} runs again{note}")
    return 0


def _cancel(arguments: argparse.Namespace) -> int:
    outcome = _run(arguments, "cancel", arguments.reason)
    print(f"{outcome.state.name} is cancelled: {arguments.reason}; the standings are final")
    return 0


def _forfeit(arguments: argparse.Namespace) -> int:
    player_id, name = _one_player(arguments, arguments.player)
    outcome = _run(arguments, "forfeit", player_id, arguments.reason)
    state = outcome.state
    print(f"{name} has left {state.name} in round {state.forfeited[player_id]}: {arguments.reason}")
    for table in state.round_tables(state.current_round):
        if player_id in table.holders:
            seat = table.holders.index(player_id)
            print(
                f"their seat is tables/{table.table_id} seat {seat}: give it to another player"
                f" with sapsam tournament reseat tournaments/{outcome.tournament_id}"
                f" tables/{table.table_id} {seat} PLAYER (between two deals), or let it time out"
            )
    return 0


def _reseat(arguments: argparse.Namespace) -> int:
    table_id = parse_id(arguments.table, "tables/")
    if arguments.seat < 0:
        raise CommandError(f"the seat number is from 0, not {arguments.seat}")
    player_id, name = _one_player(arguments, arguments.player)
    outcome = _run(arguments, "replace_seat", table_id, arguments.seat, player_id)
    table = outcome.state.tables[table_id]
    from_deal = table.reassigned[-1][1]
    print(
        f"{name} holds seat {arguments.seat} of tables/{table_id} from deal {from_deal} on, and"
        " plays the later rounds"
    )
    return 0
