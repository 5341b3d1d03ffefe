"""``sapsam players revoke players/{player}``: revoke every token of a player on the database.

The operator's way to lock a player out without a server running, or without the operator
token at hand (the RPC is PlayerService.RevokePlayerTokens). It uses ``--database-url`` (else
``DATABASE_URL``) or the embedded PostgreSQL in ``--data-dir``, like the store's commands, and
prints one JSON object. Running servers refuse the tokens from their next look-up (each trusts a
token it looked up for at most a second).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from sapsam.api import resources
from sapsam.api.api_error import ApiError
from sapsam.cli.store_commands import add_database_options
from sapsam.log.records import DatabaseOpenError
from sapsam.store import player_tokens
from sapsam.store.embedded import async_database_connection

FAILED = 1
USAGE = 2


def register(subparsers: Any) -> None:
    """Add the ``players`` subcommand."""
    players = subparsers.add_parser(
        "players", help="manage players", description="Manage registered players."
    )
    actions = players.add_subparsers(dest="players_action", metavar="ACTION", required=True)
    revoke = actions.add_parser(
        "revoke", help="revoke every token of a player", description=_revoke.__doc__
    )
    revoke.add_argument("player", help="the player's resource name, players/{player}")
    add_database_options(revoke)
    revoke.set_defaults(handler=_revoke)


def _revoke(arguments: argparse.Namespace) -> int:
    """Revoke every working token of the player: each is refused from then on (TOKEN_REVOKED)."""
    try:
        player_id = str(resources.parse_player(arguments.player, "player"))
    except ApiError as error:
        print(f"sapsam players revoke: {error.message}", file=sys.stderr)
        return USAGE

    async def revoke() -> int | None:
        async with async_database_connection(
            arguments.database_url, arguments.data_dir
        ) as connection:
            if not await player_tokens.player_exists(connection, player_id):
                return None
            return await player_tokens.revoke_player_tokens(connection, player_id, "")

    try:
        revoked = asyncio.run(revoke())
    except DatabaseOpenError as error:
        print(error, file=sys.stderr)
        return FAILED
    if revoked is None:
        print(f"sapsam players revoke: no player {arguments.player}", file=sys.stderr)
        return USAGE
    print(json.dumps({"player": resources.player_name(player_id), "revoked_tokens": revoked}))
    return 0
