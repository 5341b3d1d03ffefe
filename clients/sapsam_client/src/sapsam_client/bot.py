"""``sapsam-bot``: a bot that takes a seat and plays a series, against any sapsam server.

::

    sapsam-bot --server 127.0.0.1:50051 --table tables/<uuid> --strategy solver
    sapsam-bot --create --seat-count 4 --seats-here 4 --deals 8 --strategy random

With ``--table`` the bot joins that table; with ``--create`` it creates one (printing
``table: tables/<uuid>`` first, so others can join) and joins it. ``--seats-here N`` plays N seats
from this one process (a thread and a player each). Strategies: ``solver`` plays the solver's
rows, ``random`` random legal rows (``--seed`` makes them repeatable). Each bot registers a
fresh player unless ``--token`` is given. One line per scored deal, then the standings.

A player that already holds a seat at the table (taken in advance, or by a bot that restarted)
plays that seat instead of joining again::

    sapsam-bot --table tables/<uuid> --token <token> --player players/<id> --commitments bot.json

The seat is found by the player's name among the table's seats: ``--player``, else the player
saved with this token for this server in the token file (``$SAPSAM_TOKEN_FILE``, as
``sapsam-play`` saves it); without either, ``--seat N`` names the seat the player holds.
``--commitments FILE`` keeps open commitments on disk, so a bot restarted between confirming and
revealing can still reveal. Every signed receipt the server returns is kept in ``--receipts DIR``
(default: ``receipts`` beside ``--commitments``, else beside the token file;
``sapsam_client.receipts``).
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from sapsam_client.client import DEFAULT_SERVER, Client, connect, seat_position
from sapsam_client.commitment_file import CommitmentFile
from sapsam_client.errors import SapsamError
from sapsam_client.receipts import ReceiptFolder, default_folder
from sapsam_client.rules import (
    RulesUnavailableError,
    random_arranger,
    rules_module,
    solver_arranger,
)
from sapsam_client.seat import (
    Arranger,
    Commitment,
    CommitmentKeeper,
    SeriesOutcome,
    take_seat,
)
from sapsam_client.tokens import load_player, token_file
from sapsam_proto.v1 import table_event_pb2, table_pb2

STRATEGIES = ("solver", "random")


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
        prog="sapsam-bot", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("--server", default=DEFAULT_SERVER, help="host:port of the server")
    parser.add_argument("--tls", action="store_true", help="connect with TLS")
    parser.add_argument("--ca-cert", type=Path, help="PEM root certificates for TLS")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--table", help="join this table (tables/<uuid> or the uuid)")
    where.add_argument("--create", action="store_true", help="create a table and join it")
    parser.add_argument("--strategy", choices=STRATEGIES, default="solver")
    parser.add_argument("--seed", type=int, help="seed of the random strategy")
    parser.add_argument("--name", default="bot", help="display name (numbered per seat)")
    parser.add_argument("--token", help="play as this player instead of registering one")
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
    parser.add_argument("--seats-here", type=int, default=1, help="seats this process plays")
    parser.add_argument("--seat-count", type=int, default=4, help="with --create: seats, 2-4")
    parser.add_argument("--deals", type=int, help="with --create: deals in the series")
    parser.add_argument("--preset", help="with --create: rule set preset (default pagat)")
    parser.add_argument("--quiet", action="store_true", help="print only the standings")
    return parser


def _client(arguments: argparse.Namespace, token: str | None = None) -> Client:
    receipts = receipt_folder(arguments)
    client = connect(
        arguments.server,
        token=token,
        tls=arguments.tls,
        root_certificates=arguments.ca_cert,
        receipts=receipts,
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
) -> SeriesOutcome:
    """Join ``table`` (at ``seat`` or the lowest free one), or take up the seat the client's
    player already holds there (see ``take_seat``), and play its series to the end."""
    taken = take_seat(client, table, seat, player=player, keeper=keeper)

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

    return taken.play_series(arranger, on_event=on_event)


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


class SharedKeeper:
    """A commitment keeper shared by this process's seat threads: one call at a time, so two
    seats never rewrite the same file over each other."""

    def __init__(self, keeper: CommitmentKeeper) -> None:
        self.keeper = keeper
        self.lock = threading.Lock()

    def load(self, seat: str) -> dict[int, Commitment]:
        """The seat's open commitments by deal number."""
        with self.lock:
            return self.keeper.load(seat)

    def save(self, seat: str, committed: Commitment) -> None:
        """Keep a commitment before it is sent."""
        with self.lock:
            self.keeper.save(seat, committed)

    def forget(self, seat: str, deal: int) -> None:
        """Drop a commitment once revealed."""
        with self.lock:
            self.keeper.forget(seat, deal)


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bot; the exit code is 0 when the series was played to the end."""
    arguments = build_parser().parse_args(argv)
    try:
        rules_module("solver")  # fail now, with the install hint, if the rules are missing
        first = _client(arguments, arguments.token)
        players: dict[int, str | None] = {0: _token_player(arguments)}
        if arguments.token is None:
            players[0] = first.register(arguments.name).player
        keeper = (
            None
            if arguments.commitments is None
            else SharedKeeper(CommitmentFile(arguments.commitments))
        )
        table = arguments.table
        if arguments.create:
            created = first.create_table(
                arguments.seat_count, preset=arguments.preset, series_length=arguments.deals
            )
            table = created.name
            print(f"table: {table}", flush=True)
        outcomes: list[SeriesOutcome] = []
        errors: list[BaseException] = []

        def run(index: int) -> None:
            client = first
            if index > 0:
                client = _client(arguments)
                players[index] = client.register(f"{arguments.name} {index + 1}").player
            seed = None if arguments.seed is None else arguments.seed + index
            seat = None if arguments.seat is None else arguments.seat + index
            try:
                outcomes.append(
                    play_seat(
                        client,
                        table,
                        arranger_for(arguments.strategy, seed),
                        seat,
                        report=not arguments.quiet,
                        player=players.get(index),
                        keeper=keeper,
                    )
                )
            except BaseException as error:  # reported by the main thread
                errors.append(error)

        threads = [
            threading.Thread(target=run, args=(index,), daemon=True)
            for index in range(max(1, arguments.seats_here))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        table_now = first.get_table(table)
        names = {seat.name: seat.display_name for seat in table_now.seats}
        if outcomes and outcomes[0].standings:
            print("standings:")
            for line in format_standings(outcomes[0].standings, names):
                print(line)
        return 0
    except RulesUnavailableError as error:
        print(f"sapsam-bot: {error}", file=sys.stderr)
        return 2
    except SapsamError as error:
        print(f"sapsam-bot: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
