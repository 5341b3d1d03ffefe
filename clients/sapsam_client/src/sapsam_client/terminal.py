"""``sapsam-play``: Chinese poker at a sapsam table, from a terminal (80×24 is enough).

::

    sapsam-play --server 127.0.0.1:50051                 # go back to a table, or pick one
    sapsam-play --table tables/<uuid> --name Ann         # join that table
    sapsam-play --create --seats 4 --deals 8             # create a table and wait for players

The first run registers a player and saves its token (``--token-file``, else
``$SAPSAM_TOKEN_FILE``, else ``sapsam/tokens.json`` in the user's config folder); later runs reuse
it. Open commitments are kept next to it (``commitments.json``) until revealed, so a restarted
session can still reveal, and so are the server's signed receipts of every move (``receipts/``,
or ``--receipts DIR``: ``sapsam_client.receipts``).

Without ``--table`` or ``--create``, the tables where you hold a seat and the series is not over
are offered first (``sapsam_client.my_tables``), then the open ones; Enter creates a new table.
A server that restarts is waited for (``--reconnect-seconds``, default 600) and the game goes on
where it was (the person is told when the server stops answering and when it answers again);
Ctrl-C, or a server gone for good, prints the command that takes your seat up again.

Each deal shows your 13 cards sorted; the solver's suggestion for the table's rules, each row
named, only when you ask for it (``hint``), and it is never sent unless you take it. Type the rows
one at a time (``sapsam_client.row_entry``): each card is checked against your hand and the rows
already set, accepted rows are kept, the cards left are shown, the last row fills itself; ``swap
Ks 7d``, ``u`` (undo), ``r`` (start again), ``s`` (take the suggestion), ``hint`` (show it) and
``?`` (help, listing them all) work at any row prompt, and Enter before any row takes the
suggestion. A foul is announced before
you confirm, and the confirmation takes only y/yes or n/no. Cards show with suit symbols, hearts and
diamonds in red, where the terminal supports it (``--plain``: letters, no colour). Committing,
confirming and revealing need no typing: the commitment is computed here and only its hash is sent
until every seat has confirmed. While the table waits for other seats, a status line says for whom
and for how long (the deadline counted down, or the time waited). After each deal, and before the
next deal's cards: every seat's revealed rows with each row named, each row against each other seat
from your side ("front: your pair of kings beat Bob's pair of jacks"), the points, and the standings
by display name. Other seats' cards are never shown before the reveal (the server does not send them
either).

At an open-face table (``--preset ofc_classic`` and the other ``ofc_`` presets, or any open-face
table joined) the session is ``sapsam_client.open_face_play``'s: every seat's rows as they fill,
your cards of each street placed by one letter a card (f, m, b), ``hint`` for the solver's
suggestion, and Fantasyland hands set face down and opened at the end.

At a tournament's table (``sapsam_client.tournament_play``) the person is told when the
tournament is paused ("the tournament is paused (since 14:02:11 UTC: fire drill); waiting for the
operator to resume"), resumed, cancelled, or when the player forfeited.

A deal that ends while the person types its rows (the operator voids it, or the time runs out) is
said at once and nothing is sent for it (``sapsam_client.deal_watch``). A seat the operator gives
to another player keeps its series total: a series total is the seat's, and the standings name
such a seat by both players (``results_text.standing_label``).
"""

from __future__ import annotations

import argparse
import itertools
import os
import signal
import sys
import textwrap
import threading
from collections.abc import Sequence
from pathlib import Path

from sapsam_client import player_records, tournament_play
from sapsam_client import seat as seat_module
from sapsam_client.card_style import style_for
from sapsam_client.client import DEFAULT_SERVER, Client, connect
from sapsam_client.commitment_file import CommitmentFile
from sapsam_client.errors import SapsamError, UnauthenticatedError, UnavailableError
from sapsam_client.my_tables import resume_command, unfinished_tables
from sapsam_client.open_face_play import OpenFacePlayer, is_open_face
from sapsam_client.player_key import KEY_FILE_NAME
from sapsam_client.prompts import SessionEndedError, Terminal
from sapsam_client.receipt_check import ReceiptCheckError
from sapsam_client.receipts import ReceiptFolder, default_folder
from sapsam_client.results_text import label, seat_labels, seat_lost_line
from sapsam_client.rules import RulesUnavailableError, rules_module
from sapsam_client.seat import Seat
from sapsam_client.seat_types import CommitmentKeeper, EventHandler, SeatReplacedError
from sapsam_client.table_options import OPEN_FACE_PRESET_NAMES, add_table_creation_options
from sapsam_client.table_view import TableView
from sapsam_client.tokens import SavedPlayer, load_player, save_player, token_file
from sapsam_client.tournament_play import (
    TournamentNotices,
    tell_changes,
    told_before_deals,
    tournament_of_table,
)
from sapsam_client.waiting import duration
from sapsam_proto.v1 import table_pb2

__all__ = [
    "Terminal",
    "build_parser",
    "choose_table",
    "main",
    "run",
    "sign_in",
    "take_seat",
]


# -- session set-up -----------------------------------------------------------------------------


DESCRIPTION = """\
Play Chinese poker at a sapsam table from a terminal (80x24 is enough).

The first run registers a player and saves its token; later runs reuse it. Without --table or
--create you are offered your unfinished tables, then the open ones; Enter creates a new table.
Ctrl-C, or a server gone for good, prints the command that takes your seat up again.

examples:
    sapsam-play --server 127.0.0.1:50051                  go back to a table, or pick one
    sapsam-play --table tables/<uuid> --name Ann          join that table
    sapsam-play --create --seat-count 4 --deals 8         create a table, wait for players
"""


def build_parser() -> argparse.ArgumentParser:
    """The command line. ``--seats`` is the old spelling of ``--seat-count`` (the name every
    sapsam command uses), still accepted and not shown."""
    parser = argparse.ArgumentParser(
        prog="sapsam-play",
        description=DESCRIPTION,
        epilog="\n".join(textwrap.wrap(player_records.EPILOG, 79)),
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
    parser.add_argument(
        "--name", help="your display name when registering (default: asked at the prompt)"
    )
    parser.add_argument(
        "--token-file",
        help="where the player's token is saved (default: $SAPSAM_TOKEN_FILE, else"
        " sapsam/tokens.json in the user's config folder)",
    )
    parser.add_argument(
        "--new-player",
        action="store_true",
        help="register a new player even if a token is saved for this server",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--table", help="join this table (tables/<uuid> or the uuid)")
    where.add_argument("--create", action="store_true", help="create a table and join it")
    parser.add_argument(
        "--seat", type=int, help="take this seat number, from 0 (default: the lowest free one)"
    )
    add_table_creation_options(parser)
    parser.add_argument("--seats", type=int, dest="seat_count", help=argparse.SUPPRESS)
    # How often a tournament's table reads the tournament for a pause or a resume; tests set it
    # long, to show that a resume is told before the next deal without waiting for a read.
    parser.add_argument(
        "--tournament-check-seconds",
        type=_check_seconds,
        default=tournament_play.NOTICE_SECONDS,
        help=argparse.SUPPRESS,
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help="cards as plain letters (As Td), no colour, no status redrawn in place (default:"
        " suit symbols and colour where the terminal supports them)",
    )
    parser.add_argument(
        "--receipts",
        type=Path,
        help="keep the server's signed receipts in this folder (default: 'receipts' beside the"
        " token file)",
    )
    parser.add_argument(
        "--reconnect-seconds",
        type=float,
        default=600.0,
        help="how long to keep trying a server out of reach before giving up (default:"
        " %(default)g)",
    )
    return parser


def _check_seconds(text: str) -> float:
    """A number of seconds from 0.1 to a day."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0.1 <= seconds <= 86_400:
        raise argparse.ArgumentTypeError(f"{text!r}: give seconds from 0.1 to 86400")
    return seconds


def sign_in(client: Client, arguments: argparse.Namespace, terminal: Terminal) -> SavedPlayer:
    """Reuse the saved token for this server, or register and save a new one."""
    path = token_file(arguments.token_file)
    saved = None if arguments.new_player else load_player(path, arguments.server)
    if saved is not None:
        client.token = saved.token
        try:
            client.get_player(saved.player)
            return saved
        except UnauthenticatedError:
            terminal.say("the saved token is not known to this server: registering anew")
    name = arguments.name or terminal.prompt("Your name: ") or "player"
    registered = client.register(name)
    player = SavedPlayer(registered.player, registered.display_name, registered.token)
    save_player(path, arguments.server, player)
    terminal.say(f"registered as {player.display_name}; the token is saved in")
    terminal.say(f"  {path}")
    return player


def choose_table(
    client: Client, arguments: argparse.Namespace, terminal: Terminal, player: str | None = None
) -> str:
    """The table to sit at: given, created, or picked from the player's unfinished tables
    (``player``: ``players/{id}``) and the open ones."""
    if arguments.table:
        return str(arguments.table)
    if not arguments.create:
        mine = unfinished_tables(client, player)[:9] if player else []
        if mine:
            terminal.say("your unfinished tables:")
        for number, held in enumerate(mine, start=1):
            terminal.say(f"  {number}) {held.describe()}")
        names = {held.table.name for held in mine}
        open_tables = [
            table
            for table in itertools.islice(client.list_tables(table_pb2.TABLE_STATUS_OPEN), 20)
            if table.name not in names
        ][:9]
        if open_tables:
            terminal.say("open tables:")
        for number, table in enumerate(open_tables, start=len(mine) + 1):
            taken = sum(1 for seat in table.seats if seat.player)
            terminal.say(
                f"  {number}) {table.name}  {taken}/{table.seat_count} seated, "
                f"{table.rule_set.name}, {table.rule_set.series_length}"
                f" {'deal' if table.rule_set.series_length == 1 else 'deals'}"
            )
        choices = [held.table.name for held in mine] + [table.name for table in open_tables]
        if choices:
            answer = terminal.prompt("Join which table (number), or Enter for a new one? ")
            if answer.isdigit() and 1 <= int(answer) <= len(choices):
                return choices[int(answer) - 1]
    if arguments.preset in OPEN_FACE_PRESET_NAMES:  # open face: a set of as many deals as seats
        if arguments.deals is not None:
            terminal.say("--deals does not apply to open face (a set has one deal per seat)")
        created = client.create_open_face_table(arguments.seat_count, preset=arguments.preset)
    else:
        created = client.create_table(
            arguments.seat_count, preset=arguments.preset, series_length=arguments.deals
        )
    terminal.say(f"created {created.name} ({created.seat_count} seats): share this name")
    return created.name


def take_seat(
    client: Client,
    table: str,
    player: str,
    seat: int | None,
    keeper: CommitmentKeeper | None = None,
) -> Seat:
    """Join ``table``, or take up the seat this player already holds there (with the open
    commitments ``keeper`` kept, so a deal confirmed before a restart can still be revealed):
    ``sapsam_client.seat.take_seat``."""
    return seat_module.take_seat(client, table, seat, player=player, keeper=keeper)


def run(arguments: argparse.Namespace, terminal: Terminal) -> int:
    """The whole session; the exit code."""
    rules_module("solver")  # the suggestion, values and foul warnings need the rules extra
    saved_beside = token_file(arguments.token_file)
    receipts = ReceiptFolder(arguments.receipts or default_folder(saved_beside))
    client = connect(
        arguments.server,
        tls=arguments.tls,
        root_certificates=arguments.ca_cert,
        receipts=receipts,
        reconnect_seconds=arguments.reconnect_seconds,
    )
    receipts.pin_from(client.channel)  # the server key, on first use: receipts are checked
    client.on_reachability = lambda error: terminal.say(
        connection_notice(error, arguments.reconnect_seconds)
    )
    player = sign_in(client, arguments, terminal)
    terminal.say(f"playing as {player.display_name} on {arguments.server}")
    table_name = choose_table(client, arguments, terminal, player.player)
    arguments.resume = resume_command(arguments, table_name)  # said on Ctrl-C (see main)
    keeper = CommitmentFile(saved_beside.with_name("commitments.json"))
    # The player's signing key lives beside the token and commitments (docs/fairness.md §19).
    if arguments.token_file:
        client.key_path = saved_beside.with_name(KEY_FILE_NAME)
    try:
        seat = take_seat(client, table_name, player.player, arguments.seat, keeper)
    except SapsamError as error:
        if not isinstance(error, UnavailableError):
            arguments.resume = None  # refused a seat there (full, no such table): none to resume
        raise
    terminal.say(f"you sit at seat {seat.position} of {seat.table}")
    if is_open_face(client.get_table(seat.table)):
        OpenFacePlayer(client, seat, terminal, keeper).play()
        terminal.say("thanks for playing")
        client.close()
        return 0
    view = TableView(terminal, client, seat)
    # A tournament's table: its pauses, resumes, a cancellation, a forfeit are said as they come
    # (a paused tournament's table starts no deal, and says nothing of why), on lines of their
    # own even while the person is asked for rows; a resume before the deal it lets start.
    tournament = tournament_of_table(client, seat.table)
    told = threading.Event()
    on_event: EventHandler = view.show_event
    if tournament is not None:
        notices = TournamentNotices(tournament, player.player)
        every = arguments.tournament_check_seconds
        told = tell_changes(client, notices, terminal.interrupt, every)
        on_event = told_before_deals(client, notices, terminal.interrupt, view.show_event)
    view.refresh()
    view.waiting.start()
    try:
        seat.play_series(
            view.arranger,
            on_event=on_event,
            declarer=view.declarer,
            announcer=view.announcer,
        )
    except SeatReplacedError as error:
        view.waiting.stop()
        labels = seat_labels(client.get_table(seat.table).seats)  # the new player's name
        terminal.say(seat_lost_line(error.seat, label(labels, error.seat)))
        client.close()
        return 1  # the series was not played to the end, and there is nothing to resume
    finally:
        told.set()
        view.waiting.stop()
    terminal.say("the series is over; thanks for playing")
    client.close()  # now, not in the interpreter's teardown (grpc's channel deallocation)
    return 0


def connection_notice(error: SapsamError | None, reconnect_seconds: float) -> str:
    """What the person is told when the server stops answering (``error``) and when it answers
    again (None)."""
    if error is None:
        return "connected to the server again"
    return (
        f"the server does not answer ({error.reason}): trying again for up to"
        f" {duration(reconnect_seconds)}"
    )


def redraw_line(text: str) -> None:
    """Write ``text`` over the current line of the terminal (``\r``, then "erase to the end of
    the line"), without a newline."""
    sys.stdout.write(f"\r{text}\033[K")
    sys.stdout.flush()


def screen(plain: bool) -> Terminal:
    """The terminal as this process has it: suit symbols and colour where supported, the status
    redrawn in place on a terminal that can (not ``TERM=dumb``, not with ``--plain``)."""
    style = style_for(sys.stdout, os.environ, plain)
    term = os.environ.get("TERM", "")
    live = not plain and sys.stdout.isatty() and term not in ("", "dumb")
    return Terminal(
        input,
        lambda line: print(line, flush=True),
        style=style,
        redraw=redraw_line if live else None,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``sapsam-play``."""
    words = sys.argv[1:] if argv is None else list(argv)
    # `sapsam-play history` and `sapsam-play dispute DEAL`: sapsam_client.player_records.
    if words and words[0] in player_records.COMMANDS:
        return player_records.main(words)
    arguments = build_parser().parse_args(argv)
    terminal = screen(arguments.plain)
    if argv is None:
        signal.signal(signal.SIGINT, lambda _number, _frame: _leave_on_ctrl_c(arguments))
    try:
        return run(arguments, terminal)
    except (RulesUnavailableError, ReceiptCheckError) as error:
        print(f"sapsam-play: {error}", file=sys.stderr)
        return 2
    except SapsamError as error:
        print(f"sapsam-play: {error}", file=sys.stderr)
        _say_resume(arguments)
        return 1
    except (SessionEndedError, KeyboardInterrupt):
        print("\nbye")
        _say_resume(arguments)
        if argv is None:
            # Run as the program: leave now. Ctrl-C may have interrupted a grpc call, and then
            # freeing its channel can wait for ever (seen: grpc's _ChannelCallState.__del__);
            # the token, commitments and receipts are already on disk.
            sys.stdout.flush()
            os._exit(130)
        return 130


def _leave_on_ctrl_c(arguments: argparse.Namespace) -> None:
    """Ctrl-C, run as the program: say bye and how to resume, and leave at once, from the signal
    handler rather than by unwinding a KeyboardInterrupt (freeing a grpc call's state on the way
    out can wait for ever: grpc's _ChannelCallState.__del__); the token, commitments and
    receipts are already on disk."""
    print("\nbye", flush=True)
    _say_resume(arguments)
    sys.stdout.flush()
    os._exit(130)


def _say_resume(arguments: argparse.Namespace) -> None:
    """Print the command that takes the seat up again, once there is a table."""
    resume = getattr(arguments, "resume", None)
    if resume:
        print(f"to resume: {resume}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
