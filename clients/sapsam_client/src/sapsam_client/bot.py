"""``sapsam-bot``: a bot that takes a seat and plays a series, against any sapsam server.

::

    sapsam-bot --server 127.0.0.1:50051 --table tables/<uuid> --strategy solver
    sapsam-bot --create --seat-count 4 --seats-here 4 --deals 8 --strategy random

With ``--table`` the bot joins that table; with ``--create`` it creates one (printing
``table: tables/<uuid>`` first, so others can join) and joins it. ``--seats-here N`` plays N seats
from this one process (a thread and a player each). Strategies: ``solver`` plays the solver's
rows, ``random`` random legal rows (``--seed`` makes them repeatable). Each bot registers a
fresh player unless ``--token`` is given. One line per scored deal, then the standings.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from sapsam_client.client import DEFAULT_SERVER, Client, connect, seat_position
from sapsam_client.errors import SapsamError
from sapsam_client.generated.v1 import table_event_pb2, table_pb2
from sapsam_client.rules import (
    RulesUnavailableError,
    random_arranger,
    rules_module,
    solver_arranger,
)
from sapsam_client.seat import Arranger, SeriesOutcome

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
    parser.add_argument("--seat", type=int, help="take this seat number")
    parser.add_argument("--seats-here", type=int, default=1, help="seats this process plays")
    parser.add_argument("--seat-count", type=int, default=4, help="with --create: seats, 2-4")
    parser.add_argument("--deals", type=int, help="with --create: deals in the series")
    parser.add_argument("--preset", help="with --create: rule set preset (default pagat)")
    parser.add_argument("--quiet", action="store_true", help="print only the standings")
    return parser


def _client(arguments: argparse.Namespace, token: str | None = None) -> Client:
    return connect(
        arguments.server,
        token=token,
        tls=arguments.tls,
        root_certificates=arguments.ca_cert,
    )


def play_seat(
    client: Client,
    table: str,
    arranger: Arranger,
    seat: int | None = None,
    report: bool = True,
) -> SeriesOutcome:
    """Join ``table`` (at ``seat`` or the lowest free one) and play its series to the end."""
    taken = client.join_table(table, seat)

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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bot; the exit code is 0 when the series was played to the end."""
    arguments = build_parser().parse_args(argv)
    try:
        rules_module("solver")  # fail now, with the install hint, if the rules are missing
        first = _client(arguments, arguments.token)
        if arguments.token is None:
            first.register(arguments.name)
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
                client.register(f"{arguments.name} {index + 1}")
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
