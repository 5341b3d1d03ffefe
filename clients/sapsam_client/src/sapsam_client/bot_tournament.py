"""``sapsam-bot --tournament``: a bot that follows its player through a tournament::

    sapsam-bot --tournament tournaments/<uuid> --token <token> --player players/<id>

The operator enters the player (``sapsam tournament register``); the bot, given the player's
token, finds the player's seat in each round as the tournament seats it and plays that table's
series (an open-face tournament's round: its table's set, with the SDK's open-face solver bot)
(``sapsam_client.tournament_play.follow_tournament``, the one way a seat is followed from
round to round; ``sapsam tournament bot`` runs the same for many players). It says when the
tournament is paused, resumed, cancelled, or when its player forfeited, and stops when the
tournament is complete or cancelled. ``--commitments FILE`` keeps open commitments, so a bot
restarted between confirming and revealing still reveals; rerunning the same command takes the
player's seat up again.
"""

from __future__ import annotations

import argparse
import sys
import threading

from sapsam_client.commitment_file import CommitmentFile
from sapsam_client.errors import SapsamError
from sapsam_client.receipt_check import ReceiptCheckError
from sapsam_client.rules import RulesUnavailableError, rules_module
from sapsam_client.tournament_calls import tournament_name
from sapsam_client.tournament_play import (
    TournamentNotices,
    follow_tournament,
    tell_changes,
    told_before_deals,
)
from sapsam_proto.v1 import tournament_pb2


def play_tournament(arguments: argparse.Namespace) -> int:
    """Follow the player through the tournament; 0 once it is over, 1 on a refusal, 2 when
    the command cannot run."""
    from sapsam_client.bot import _client, _token_player, arranger_for

    if arguments.token is None:
        print("sapsam-bot: --tournament needs --token, the player's token", file=sys.stderr)
        return 2
    player = _token_player(arguments)
    if player is None:
        print(
            "sapsam-bot: --tournament needs the token's player: give --player players/<id>",
            file=sys.stderr,
        )
        return 2
    tournament = tournament_name(arguments.tournament)
    told = threading.Event()
    try:
        rules_module("solver")  # fail now, with the install hint, if the rules are missing
        client = _client(arguments, arguments.token)
        notices = TournamentNotices(tournament, player)

        def say(line: str) -> None:
            print(line, flush=True)

        told = tell_changes(client, notices, say)

        def sat_down(round_number: int, seat: str) -> None:
            if not arguments.quiet:
                print(f"round {round_number}: {seat}", flush=True)

        keeper = None if arguments.commitments is None else CommitmentFile(arguments.commitments)
        tables = follow_tournament(
            client,
            tournament,
            player,
            arranger_for(arguments.strategy, arguments.seed),
            on_round=sat_down,
            on_event=told_before_deals(client, notices, say),  # a resume before its deal
            keeper=keeper,
            seed=arguments.seed or 0,
        )
        told.set()
        view = client.get_tournament(tournament)
        for line in notices.changes(view):
            print(line, flush=True)
        ended = "cancelled" if view.status == tournament_pb2.TOURNAMENT_STATUS_CANCELLED else "over"
        played = f"{len(tables)} {'table' if len(tables) == 1 else 'tables'}"
        print(f"the tournament is {ended}: this bot played {played}", flush=True)
        client.close()
        return 0
    except (RulesUnavailableError, ReceiptCheckError) as error:
        print(f"sapsam-bot: {error}", file=sys.stderr)
        return 2
    except SapsamError as error:
        print(f"sapsam-bot: {error}", file=sys.stderr)
        return 1
    finally:
        told.set()
