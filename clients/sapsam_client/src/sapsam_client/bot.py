"""``sapsam-bot``: a bot that takes a seat and plays a series, against any sapsam server.

::

    sapsam-bot --server 127.0.0.1:50051 --table tables/<uuid> --strategy solver
    sapsam-bot --create --seat-count 4 --seats-here 4 --deals 8 --strategy random

With ``--table`` the bot joins that table; with ``--create`` it creates one (printing
``table: tables/<uuid>`` first, so others can join) and joins it; with ``--tournament`` it plays
its player's seat in every round of a tournament (``sapsam_client.bot_tournament``).
``--seats-here N`` plays N seats from this one process (a thread and a player each).
Strategies: ``solver`` plays the solver's rows, ``random`` random legal rows (``--seed`` makes
them repeatable). At an open-face table (issue #18) every seat is played by the open-face solver
bot (``sapsam_client.open_face_bot``), whatever the strategy. Each bot registers a fresh player
unless ``--token`` is given. One line per scored deal, then the standings.

A player that already holds a seat at the table (taken in advance, or by a bot that restarted)
plays that seat instead of joining again::

    sapsam-bot --table tables/<uuid> --token <token> --player players/<id> --commitments bot.json

The seat is found by the player's name among the table's seats: ``--player``, else the player
saved with this token for this server in the token file (``$SAPSAM_TOKEN_FILE``, as
``sapsam-play`` saves it); without either, ``--seat N`` names the seat the player holds.
``--commitments FILE`` keeps open commitments on disk, so a bot restarted between confirming and
revealing can still reveal.

By default a bot keeps its players' tokens and its open commitments in a state file
(``sapsam_client.bot_state``: ``--state FILE``, else one under the user's state folder per server,
table and ``--seat``; ``--no-state`` keeps none), so the same command run again takes up the same
seats and reveals what they committed. A server out of reach is tried again with back-off for
``--reconnect-seconds`` (default 600) before the bot gives up; the watch resumes where it broke.
When the bot stops early (Ctrl-C, the server gone for good) it prints the command that resumes
it. Every signed receipt the server returns is kept in ``--receipts DIR``
(default: ``receipts`` beside ``--commitments``, else beside the token file;
``sapsam_client.receipts``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from sapsam_client.bot_state import BotState, SharedKeeper, StateDamagedError, StateInUseError
from sapsam_client.client import DEFAULT_SERVER, Client, connect, seat_position
from sapsam_client.commitment_file import CommitmentFile
from sapsam_client.errors import SapsamError
from sapsam_client.receipt_check import ReceiptCheckError
from sapsam_client.receipts import ReceiptFolder, default_folder
from sapsam_client.rules import (
    RulesUnavailableError,
    random_arranger,
    rules_module,
    solver_arranger,
)
from sapsam_client.seat import take_seat
from sapsam_client.seat_types import (
    Announcer,
    Arranger,
    CommitmentKeeper,
    SeatReplacedError,
    SeriesOutcome,
)
from sapsam_client.surrender_choice import expected_value_announcer
from sapsam_client.table_options import add_table_creation_options
from sapsam_client.tokens import SavedPlayer, load_player, token_file
from sapsam_proto.v1 import table_event_pb2, table_pb2

STRATEGIES = ("solver", "random")
RECONNECT_SECONDS = 600.0
"""How long a bot keeps trying a server out of reach, by default (``--reconnect-seconds``)."""
CREATE_ONLY_OPTIONS = ("--seat-count", "--deals", "--preset")
DESCRIPTION = """\
A bot that takes a seat at a sapsam table and plays a series, against any sapsam server.

With --table it joins that table; with --create it creates one (printing "table: tables/<uuid>"
first, so others can join) and joins it. Each bot registers a fresh player unless --token is
given. It keeps its players' tokens and open commitments in a state file, so the same command
run again takes up the same seats. One line per scored deal, then the standings.

With --tournament it follows one player through a tournament: each round it finds the seat the
tournament gave the player (--token, and --player unless the token file knows it), plays that
table's series, waits out a pause, and stops when the tournament is complete or cancelled.

examples:
    sapsam-bot --server 127.0.0.1:50051 --table tables/<uuid> --strategy solver
    sapsam-bot --create --seat-count 4 --seats-here 4 --deals 8 --strategy random
    sapsam-bot --tournament tournaments/<uuid> --token <token> --player players/<id>
"""


def arranger_for(strategy: str, seed: int | None) -> Arranger:
    """The arranger a strategy name stands for."""
    if strategy == "solver":
        return solver_arranger
    if strategy == "random":
        return random_arranger(seed)
    raise ValueError(f"unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})")


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="sapsam-bot",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--server", default=DEFAULT_SERVER, help="host:port of the server (default: %(default)s)"
    )
    parser.add_argument("--tls", action="store_true", help="connect with TLS (default: plaintext)")
    parser.add_argument(
        "--ca-cert",
        type=Path,
        help="PEM root certificates to trust with --tls (default: the system's)",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--table", help="join this table (tables/<uuid> or the uuid)")
    where.add_argument("--create", action="store_true", help="create a table and join it")
    where.add_argument(
        "--tournament",
        help="play the seat of the --token's player in every round of this tournament"
        " (tournaments/<uuid> or the uuid), from round to round until it ends; the player is"
        " entered by the operator (sapsam tournament register)",
    )
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="solver",
        help="solver: the solver's rows; random: random legal rows (default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=int, help="seed of the random strategy (default: a fresh one each run)"
    )
    parser.add_argument(
        "--name",
        default="bot",
        help="display name, numbered per seat with --seats-here (default: %(default)s)",
    )
    parser.add_argument(
        "--token",
        help="play as the player of this token instead of registering one (default: register)",
    )
    parser.add_argument(
        "--player",
        help="with --token: the token's player (players/<id>), to find a seat it already holds",
    )
    parser.add_argument(
        "--seat", type=int, help="take this seat number (or, with --token, the seat already held)"
    )
    parser.add_argument(
        "--commitments", type=Path, help="keep open commitments in this file (survive a restart)"
    )
    parser.add_argument(
        "--receipts",
        type=Path,
        help="keep the server's signed receipts in this folder (default: 'receipts' beside"
        " --commitments, else beside the saved token file)",
    )
    state = parser.add_mutually_exclusive_group()
    state.add_argument(
        "--state",
        type=Path,
        help="keep the players' tokens and open commitments in this file, to take the same"
        " seats up again when rerun (default: a file per server, table, --seat and --name in the"
        " user's state folder)",
    )
    state.add_argument(
        "--no-state", action="store_true", help="keep no state file (a rerun joins anew)"
    )
    parser.add_argument(
        "--reconnect-seconds",
        type=float,
        default=RECONNECT_SECONDS,
        help="how long to keep trying a server out of reach before giving up (default:"
        " %(default)g)",
    )
    parser.add_argument(
        "--seats-here",
        type=int,
        default=1,
        help="seats this process plays, a thread and a player each (default: %(default)s)",
    )
    add_table_creation_options(parser)
    parser.add_argument(
        "--quiet", action="store_true", help="print only the standings (default: a line a deal)"
    )
    return parser


def _client(arguments: argparse.Namespace, token: str | None = None) -> Client:
    receipts = receipt_folder(arguments)
    client = connect(
        arguments.server,
        token=token,
        tls=arguments.tls,
        root_certificates=arguments.ca_cert,
        receipts=receipts,
        reconnect_seconds=arguments.reconnect_seconds,
    )
    receipts.pin_from(client.channel)  # the server key, on first use: receipts are checked
    return client


def receipt_folder(arguments: argparse.Namespace) -> ReceiptFolder:
    """Where the receipts go: ``--receipts``, else beside ``--commitments``, else beside the
    saved token file; one folder object per process (its threads share it)."""
    folder = getattr(arguments, "receipt_folder", None)
    if folder is None:
        beside = arguments.commitments or token_file()
        folder = ReceiptFolder(arguments.receipts or default_folder(beside))
        arguments.receipt_folder = folder
    assert isinstance(folder, ReceiptFolder)
    return folder


def play_seat(
    client: Client,
    table: str,
    arranger: Arranger,
    seat: int | None = None,
    report: bool = True,
    *,
    player: str | None = None,
    keeper: CommitmentKeeper | None = None,
    announcer: Announcer | None = None,
) -> SeriesOutcome:
    """Join ``table`` (at ``seat`` or the lowest free one), or take up the seat the client's
    player already holds there (see ``take_seat``), and play its series to the end. At a table
    with surrender, ``announcer`` decides play or surrender (by default
    ``sapsam_client.surrender_choice.expected_value_announcer``)."""
    taken = take_seat(client, table, seat, player=player, keeper=keeper)
    view = client.get_table(table)
    if view.HasField("open_face_rule_set"):
        return _play_open_face(client, view, taken.name, seat, keeper)

    def on_event(event: table_event_pb2.TableEvent) -> None:
        if report and event.WhichOneof("payload") == "deal_scored":
            result = event.deal_scored.result
            mine = result.seats[taken.position]
            foul = " (foul)" if mine.foul else ""
            print(
                f"{taken.name}: deal {result.deal_number} {mine.score_delta:+d}{foul}, "
                f"total {mine.series_total:+d}",
                flush=True,
            )

    chooser = expected_value_announcer() if announcer is None else announcer
    return taken.play_series(arranger, on_event=on_event, announcer=chooser)


def _play_open_face(
    client: Client,
    view: table_pb2.Table,
    seat_name: str,
    seed: int | None,
    keeper: CommitmentKeeper | None = None,
) -> SeriesOutcome:
    """An open-face table's seat, played by the SDK's solver bot (``open_face_bot``) to the end
    of its set, a Fantasyland hand kept by ``keeper`` (the state file, ``--commitments``) until
    opened; the outcome's standings from the seats' set totals (its ``results`` stay empty:
    an open-face deal's record is its events)."""
    from sapsam_client.open_face_bot import OpenFaceBot

    holder = next(entry.player for entry in view.seats if entry.name == seat_name)
    bot = OpenFaceBot(
        client, view.name, seat_name, holder.removeprefix("players/"), seed=seed or 0, keeper=keeper
    )
    bot.play()
    final = client.get_table(view.name)
    totals = [entry.series_total for entry in final.seats]
    return SeriesOutcome(
        standings=[
            table_pb2.Standing(
                seat=entry.name,
                player=entry.player,
                total=entry.series_total,
                place=1 + sum(total > entry.series_total for total in totals),
            )
            for entry in final.seats
        ]
    )


def format_standings(standings: Sequence[table_pb2.Standing], names: dict[str, str]) -> list[str]:
    """Standings lines: place (shared places marked ``=``), seat, player, total."""
    places = [standing.place for standing in standings]
    lines = []
    for standing in sorted(standings, key=lambda s: (s.place, seat_position(s.seat))):
        shared = "=" if places.count(standing.place) > 1 else " "
        who = names.get(standing.seat, standing.player)
        lines.append(
            f"{standing.place:>2}{shared} seat {seat_position(standing.seat)}  "
            f"{who:<20} {standing.total:+d}"
        )
    return lines


def _token_player(arguments: argparse.Namespace) -> str | None:
    """The player ``--token`` belongs to: ``--player``, else the one saved with that token for
    this server in the token file, else unknown."""
    if arguments.token is None:
        return None
    if arguments.player:
        player: str = arguments.player
        return player if player.startswith("players/") else f"players/{player}"
    saved = load_player(token_file(), arguments.server)
    return saved.player if saved is not None and saved.token == arguments.token else None


def open_state(arguments: argparse.Namespace, table: str) -> BotState | None:
    """The bot's state file for ``table`` (``--state``, else the first free default one), or
    None with ``--no-state``."""
    if arguments.no_state:
        return None
    if arguments.state is not None:
        return BotState(arguments.state)
    return BotState.claim(arguments.server, table, arguments.seat, name=arguments.name)


def resume_command(argv: Sequence[str], table: str) -> str:
    """The command line that takes this bot's seats up again: ``argv`` with ``--table`` for
    ``--create`` (and without the options that only creating uses)."""
    words: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word == "--create":
            words += ["--table", table]
        elif word in CREATE_ONLY_OPTIONS:
            skip = True
        elif not word.startswith(tuple(f"{option}=" for option in CREATE_ONLY_OPTIONS)):
            words.append(word)
    return shlex.join(["sapsam-bot", *words])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bot; the exit code is 0 when the series was played to the end."""
    words = list(sys.argv[1:] if argv is None else argv)
    arguments = build_parser().parse_args(words)
    if arguments.tournament:
        from sapsam_client.bot_tournament import play_tournament

        return play_tournament(arguments)
    table: str | None = arguments.table
    state: BotState | None = None
    known = {"table": table}  # what the Ctrl-C handler says, kept current
    if argv is None:
        signal.signal(signal.SIGINT, lambda _number, _frame: _leave_on_ctrl_c(words, known))
    try:
        rules_module("solver")  # fail now, with the install hint, if the rules are missing
        first = _client(arguments, arguments.token)
        state = open_state(arguments, table) if table else None
        players: dict[int, str | None] = {0: _token_player(arguments)}
        registered: SavedPlayer | None = None
        if arguments.token is None:
            saved = state.player(0) if state is not None else None
            if saved is not None:
                first.token = saved.token
                players[0] = saved.player
            else:
                new = first.register(arguments.name)
                registered = SavedPlayer(new.player, new.display_name, new.token)
                players[0] = new.player
        if arguments.create:
            created = first.create_table(
                arguments.seat_count, preset=arguments.preset, series_length=arguments.deals
            )
            table = created.name
            known["table"] = table
            print(f"table: {table}", flush=True)
            state = open_state(arguments, table)
        assert table is not None
        if state is not None and registered is not None:
            state.keep_player(0, registered)
        keeper: CommitmentKeeper | None = state
        if arguments.commitments is not None:
            keeper = SharedKeeper(CommitmentFile(arguments.commitments))
        outcomes: list[SeriesOutcome] = []
        errors: list[BaseException] = []
        ended: list[int] = []  # the seats whose threads have ended
        settled = threading.Condition()  # notified as each seat's thread ends

        def run(index: int) -> None:
            try:
                client = first
                if index > 0:
                    saved = state.player(index) if state is not None else None
                    client = _client(arguments, saved.token if saved else None)
                    if saved is None:
                        new = client.register(f"{arguments.name} {index + 1}")
                        saved = SavedPlayer(new.player, new.display_name, new.token)
                        if state is not None:
                            state.keep_player(index, saved)
                    players[index] = saved.player
                seed = None if arguments.seed is None else arguments.seed + index
                seat = None if arguments.seat is None else arguments.seat + index
                assert table is not None
                outcomes.append(
                    play_seat(
                        client,
                        table,
                        arranger_for(arguments.strategy, seed),
                        seat,
                        report=not arguments.quiet,
                        player=players.get(index),
                        keeper=keeper,
                        announcer=expected_value_announcer(seed=seed),
                    )
                )
            except BaseException as error:  # reported by the main thread
                errors.append(error)
            finally:
                with settled:
                    ended.append(index)
                    settled.notify()

        threads = [
            threading.Thread(target=run, args=(index,), daemon=True)
            for index in range(max(1, arguments.seats_here))
        ]
        for thread in threads:
            thread.start()
        # Until every seat has played its series, or one fails: the table waits for a failed
        # seat, so the others would wait for ever (their threads are daemons, left behind).
        with settled:
            settled.wait_for(lambda: bool(errors) or len(ended) == len(threads))
        if errors:
            raise errors[0]
        table_now = first.get_table(table)
        names = {seat.name: seat.display_name for seat in table_now.seats}
        if outcomes and outcomes[0].standings:
            print("standings:")
            for line in format_standings(outcomes[0].standings, names):
                print(line)
        return 0
    except (RulesUnavailableError, ReceiptCheckError) as error:
        print(f"sapsam-bot: {error}", file=sys.stderr)
        return 2
    except (StateInUseError, StateDamagedError) as error:
        print(f"sapsam-bot: {error}", file=sys.stderr)
        return 1
    except SeatReplacedError as error:
        print(f"sapsam-bot: {error}", file=sys.stderr)  # nothing to resume: the seat is gone
        return 1
    except SapsamError as error:
        print(f"sapsam-bot: {error}", file=sys.stderr)
        if error.reason not in _NO_SEAT_TO_RESUME:
            _say_resume(words, table)
        if argv is None and threading.active_count() > 1:
            # Run as the program, other seats still in their calls: leave now, as on Ctrl-C
            # (freeing their channels at the interpreter's exit could wait for ever).
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)
        return 1
    except KeyboardInterrupt:
        _say_resume(words, table)
        if argv is None:
            # Run as the program: leave now (as sapsam-play does: freeing a channel whose call
            # Ctrl-C interrupted can wait for ever); the state file is already on disk.
            sys.stdout.flush()
            os._exit(130)
        return 130
    finally:
        if state is not None:
            state.close()  # a bot run after this one in the process may take the file up


_NO_SEAT_TO_RESUME = frozenset({"TABLE_FULL", "SEAT_TAKEN", "TABLE_NOT_FOUND"})
"""Refusals of a seat: rerunning the command could only be refused again, so no resume hint."""


def _leave_on_ctrl_c(argv: Sequence[str], known: dict[str, str | None]) -> None:
    """Ctrl-C, run as the program: say how to resume and leave at once, from the signal
    handler rather than by unwinding a KeyboardInterrupt (freeing a grpc call's state on the way
    out can wait for ever); the state file is already on disk."""
    _say_resume(argv, known["table"])
    sys.stdout.flush()
    os._exit(130)


def _say_resume(argv: Sequence[str], table: str | None) -> None:
    """Print the command that resumes this bot, once it has a table."""
    if table is not None:
        print(f"to resume: {resume_command(argv, table)}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
