"""sapsam tournament bot TOURNAMENT --server HOST:PORT --player players/ID=TOKEN …: plays the
players it is given (or --new N new players it registers and enters), each following its player
from round to round until the tournament ends, saying where each sits down
(``sapsam.cli.tournament_bots``, whose follower ``sapsam-bot --tournament`` runs for one player).
The bots need their players' tokens.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from sapsam.cli.tournament_common import CANNOT_RUN, CommandError, guarded
from sapsam.cli.tournament_server import (
    INTERRUPTED,
    refusal,
    server_options,
    tournament_resource,
)
from sapsam.cli.wording import plural


def add_action(actions: Any) -> None:
    """Add ``bot`` to the ``tournament`` subcommand."""
    bot = actions.add_parser(
        "bot",
        help="bots that play their players' seats from round to round",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bot.add_argument("tournament", help="the tournament: its id, or tournaments/{id}")
    server_options(bot, operator=False)
    bot.add_argument(
        "--player",
        action="append",
        default=[],
        metavar="players/ID=TOKEN",
        help="play as this player, with its bearer token (repeatable); the player must be entered",
    )
    bot.add_argument(
        "--new",
        type=int,
        default=0,
        help="also register this many new players, enter them (registration must be open) and"
        " play them (default: 0)",
    )
    bot.add_argument(
        "--strategy",
        choices=("solver", "random"),
        default="solver",
        help="how the bots arrange their hands (default: solver)",
    )
    bot.set_defaults(handler=guarded(_bots))


def _bots(arguments: argparse.Namespace) -> int:
    import grpc

    from sapsam.cli import tournament_bots

    if arguments.new < 0 or (not arguments.player and not arguments.new):
        raise CommandError("give --player players/ID=TOKEN (repeatable) or --new N (N from 1)")
    tournament = tournament_resource(arguments.tournament)
    with grpc.insecure_channel(arguments.server) as channel:
        try:
            bots = [_bot_for(channel, given, arguments.strategy) for given in arguments.player]
            fresh = []
            if arguments.new:
                fresh = tournament_bots.register_bots(arguments.server, arguments.new)
            for bot in fresh:
                tournament_bots.enter(channel, bot, tournament)
                print(f"{bot.display_name} ({bot.player}) entered", flush=True)
        except grpc.RpcError as error:
            raise refusal(error, arguments.server) from None
    bots += fresh

    def sat_down(bot: tournament_bots.TournamentBot, round_number: int, seat: str) -> None:
        print(f"{bot.display_name}: round {round_number}, {seat}", flush=True)

    threads = tournament_bots.run_bots(arguments.server, bots, tournament, on_round=sat_down)
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(1.0)
    except KeyboardInterrupt:
        return INTERRUPTED
    failed = [bot for bot in bots if bot.error is not None]
    for bot in failed:
        print(f"sapsam tournament: {bot.display_name} stopped: {bot.error}", file=sys.stderr)
    # A table is counted once however many of these bots sat at it (two bots at one table: one
    # table, two seats; tried: "4 bots played 8 tables" of a tournament of 4 tables).
    seats = sum(len(bot.tables_played) for bot in bots)
    tables = len({table for bot in bots for table in bot.tables_played})
    at = "" if seats == tables else f" ({plural(seats, 'seat')})"
    print(
        f"the tournament is over: {plural(len(bots), 'bot')} played at"
        f" {plural(tables, 'table')}{at}"
    )
    return CANNOT_RUN if failed else 0


def _bot_for(channel: Any, given: str, strategy: str) -> Any:
    """A bot for ``players/ID=TOKEN``, named as the player is."""
    from sapsam.cli import tournament_bots
    from sapsam_proto.v1 import player_service_pb2, player_service_pb2_grpc

    player, separator, token = given.partition("=")
    if not separator or not token:
        raise CommandError(f"--player {given!r}: give players/ID=TOKEN")
    player = player if player.startswith("players/") else f"players/{player}"
    profile = player_service_pb2_grpc.PlayerServiceStub(channel).GetPlayer(
        player_service_pb2.GetPlayerRequest(name=player),
        metadata=(("authorization", f"Bearer {token}"),),
        timeout=30,
    )
    return tournament_bots.TournamentBot(profile.player.display_name, player, token, strategy)
