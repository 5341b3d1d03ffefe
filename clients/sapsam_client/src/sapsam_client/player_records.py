"""``sapsam-play history`` and ``sapsam-play dispute DEAL``: a player's own record.

::

    sapsam-play history [--limit 20]                 # your scored deals, newest first
    sapsam-play dispute tables/<uuid>/deals/3        # fetch that deal and verify it here
    sapsam-play dispute DEAL --save deal.jsonl       # ... and keep the export
    sapsam-play dispute DEAL --file deal.jsonl       # verify an export saved before

Both act as the player whose token ``sapsam-play`` saved for this server (``--token-file``, as
when playing); neither registers anyone. ``history`` lists ``ListMyDeals``; ``dispute`` fetches
the deal's export (``ExportDeal``, allowed to a seated player once the deal is scored), verifies
it locally with the sapsam package's verifier (``sapsam_client.dispute``; the ``audit`` extra),
anchored under the server key the receipts folder pinned when you first played (or
``--server-key``), checks it against the receipts kept for the table, and prints the verdict in
plain words. Exit status as ``sapsam audit verify``: 0 ANCHORED, 4 INTERNALLY CONSISTENT ONLY,
1 FAILED, 2 when it cannot run (no saved player, the deal still being played, not your table,
a server that cannot be reached or refuses the call, a malformed ``--server-key``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from sapsam_client.client import DEFAULT_SERVER, Client, connect
from sapsam_client.connection import deal_number, table_id
from sapsam_client.dispute import NotThisDealError, VerifierUnavailableError, verifier_module
from sapsam_client.errors import SapsamError
from sapsam_client.player_key import KEY_FILE_NAME
from sapsam_client.receipt_check import ReceiptCheckError, ServerKey
from sapsam_client.receipts import ReceiptFolder, default_folder
from sapsam_client.tokens import SavedPlayer, load_player, token_file
from sapsam_proto.v1 import table_service_pb2

COMMANDS: Final = ("history", "dispute")
"""The first words of a ``sapsam-play`` command line that run this module."""
CANNOT_RUN: Final = 2
EPILOG: Final = (
    "Your record: 'sapsam-play history' lists your scored deals; 'sapsam-play dispute DEAL' "
    "fetches one and verifies it here (see 'sapsam-play history --help', 'sapsam-play dispute "
    "--help')."
)
_REFUSALS: Final = {
    "DEAL_NOT_FINISHED": "that deal is still being played: a player may take a deal home once "
    "it is scored (its results shown); try again then",
    "NOT_SEATED": "you held no seat at that table: a player may dispute only their own deals",
    "DEAL_NOT_FOUND": "there is no such deal at that table",
    "TABLE_NOT_FOUND": "there is no such table on this server",
    "BAD_RESOURCE_NAME": "a deal is named tables/<uuid>/deals/<number>, as 'history' prints it",
}


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``history`` and ``dispute``."""
    parser = argparse.ArgumentParser(
        prog="sapsam-play",
        description="Your own record on a sapsam server: the deals you played, and disputes.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    history = commands.add_parser(
        "history",
        help="list your scored deals, newest first",
        description="List your scored deals, newest table first, its latest deal first: when, "
        "the deal, your seat, what it scored for you and your running total.",
    )
    history.add_argument(
        "--limit",
        type=int,
        default=20,
        metavar="N",
        help="show at most this many deals (default: 20)",
    )
    dispute = commands.add_parser(
        "dispute",
        help="fetch one of your deals and verify it here",
        description="Fetch one of your scored deals (its export) and verify it on this machine "
        "with the sapsam package's verifier; print ANCHORED, INTERNALLY CONSISTENT ONLY or "
        "FAILED and why, in plain words.",
    )
    dispute.add_argument("deal", help="the deal, tables/<uuid>/deals/<number>")
    dispute.add_argument(
        "--server-key",
        action="append",
        default=[],
        metavar="VKEY",
        help="the server's key (vkey) you trust, from the operator; repeatable (default: the "
        "key pinned in the receipts folder, else the one the server gives now)",
    )
    dispute.add_argument(
        "--save", type=Path, metavar="FILE", help="also write the export to this file"
    )
    dispute.add_argument(
        "--file",
        type=Path,
        metavar="FILE",
        help="verify this saved export (of the same deal) instead of fetching the deal",
    )
    dispute.add_argument(
        "--report", action="store_true", help="also print every check (the full report)"
    )
    for command in (history, dispute):
        command.add_argument(
            "--server",
            default=DEFAULT_SERVER,
            help=f"host:port of the server (default: {DEFAULT_SERVER})",
        )
        command.add_argument("--tls", action="store_true", help="connect with TLS")
        command.add_argument(
            "--ca-cert", type=Path, metavar="FILE", help="PEM root certificates for TLS"
        )
        command.add_argument(
            "--token-file",
            metavar="FILE",
            help="where sapsam-play saved your token (default: $SAPSAM_TOKEN_FILE, else "
            "sapsam/tokens.json in your config folder)",
        )
        command.add_argument(
            "--receipts",
            type=Path,
            metavar="DIR",
            help="your receipts folder (default: 'receipts' beside the token file)",
        )
    return parser


class CannotRunError(Exception):
    """The command cannot run; the message says why."""


def _client(arguments: argparse.Namespace) -> Client:
    return _signed_in(arguments)[0]


def _signed_in(arguments: argparse.Namespace) -> tuple[Client, SavedPlayer]:
    """A client acting as the saved player, and that player; its signing key where
    ``sapsam-play`` keeps it (beside ``--token-file``'s file when one is given)."""
    saved = load_player(token_file(arguments.token_file), arguments.server)
    if saved is None:
        raise CannotRunError(
            f"no saved player for {arguments.server}: play once with sapsam-play (it registers "
            "you and saves your token), or give --token-file"
        )
    client = connect(arguments.server, tls=arguments.tls, root_certificates=arguments.ca_cert)
    client.token = saved.token
    if arguments.token_file:
        client.key_path = token_file(arguments.token_file).with_name(KEY_FILE_NAME)
    return client, saved


def _signed(number: int) -> str:
    return f"{number:+d}"


def history_line(deal: table_service_pb2.PlayedDeal) -> str:
    """One deal of the history: when, which, your seat, your score and total."""
    when = (
        deal.score_time.ToDatetime().strftime("%Y-%m-%d %H:%M UTC")
        if deal.HasField("score_time")
        else "-"
    )
    seat = deal.seat.rsplit("/", 1)[1]
    fouled = ", fouled" if deal.fouled else ""
    return (
        f"{when}  {deal.deal}  seat {seat}  {_signed(deal.delta)}{fouled}, total "
        f"{_signed(deal.series_total)}  ({deal.rule_set_name}, {deal.seat_count} seats)"
    )


def run_history(arguments: argparse.Namespace) -> int:
    """Print the player's scored deals."""
    if arguments.limit < 1:
        raise CannotRunError("--limit is at least 1")
    with _client(arguments) as client:
        shown = 0
        for deal in client.deal_history(page_size=min(arguments.limit, 100)):
            if shown == 0:
                print(f"Your scored deals on {arguments.server}, newest first:")
            print("  " + history_line(deal))
            shown += 1
            if shown >= arguments.limit:
                break
        if shown == 0:
            print(f"No scored deals yet on {arguments.server}.")
        else:
            print("Check one on this machine: sapsam-play dispute DEAL")
    return 0


def run_dispute(arguments: argparse.Namespace) -> int:
    """Fetch (or read) the deal's export, verify it here, print the verdict."""
    try:
        deal_number(arguments.deal)
        deal = f"tables/{table_id(arguments.deal)}/deals/{deal_number(arguments.deal)}"
    except ValueError:
        raise CannotRunError(_REFUSALS["BAD_RESOURCE_NAME"]) from None
    for vkey in arguments.server_key:
        try:
            ServerKey.parse(vkey)
        except ReceiptCheckError as error:
            raise CannotRunError(f"--server-key: {error}") from None
    verifier_module("audit.verifier")  # say what is missing before fetching anything
    folder = ReceiptFolder(arguments.receipts or default_folder(token_file(arguments.token_file)))
    export = None
    if arguments.file is not None:
        try:
            export = arguments.file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CannotRunError(f"cannot read {arguments.file}: {error}") from None
    client, saved = _signed_in(arguments)
    with client:
        if export is None:
            print(f"fetching {deal} from {arguments.server} ...")
            export = client.export_deal(deal).export
            if arguments.save is not None:
                try:
                    arguments.save.write_text(export, encoding="utf-8")
                except OSError as error:
                    raise CannotRunError(f"cannot write {arguments.save}: {error}") from None
                print(f"the export is saved in {arguments.save}")
        verdict = client.dispute(
            deal,
            server_keys=arguments.server_key,
            receipts=folder,
            export=export,
            player=saved.player,
        )
    if arguments.report:
        print(verdict.report_text)
    print(verdict.explain())
    return verdict.exit_status


def main(argv: Sequence[str]) -> int:
    """``sapsam-play history|dispute ...``; the exit status."""
    arguments = build_parser().parse_args(list(argv))
    try:
        if arguments.command == "history":
            return run_history(arguments)
        return run_dispute(arguments)
    except CannotRunError as error:
        print(f"sapsam-play: {error}", file=sys.stderr)
        return CANNOT_RUN
    except (VerifierUnavailableError, NotThisDealError, ReceiptCheckError) as error:
        print(f"sapsam-play: {error}", file=sys.stderr)
        return CANNOT_RUN
    except SapsamError as error:
        plain = _REFUSALS.get(error.reason)
        print(f"sapsam-play: {plain or error}", file=sys.stderr)
        # A dispute's 1 is the FAILED verdict: a deal that could not be fetched (the server out
        # of reach, the token refused) was not verified at all.
        return CANNOT_RUN if plain or arguments.command == "dispute" else 1
