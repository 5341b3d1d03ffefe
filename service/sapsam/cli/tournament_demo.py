"""sapsam tournament demo: twelve bots play a 3-table, 2-round tournament over gRPC.

A server on a fresh embedded database (or the PostgreSQL given) plays it; the demo says each round
as it gets under way, then prints each round's tables, the standings and the verification of
every deal and of the seating (exit 1 if a check fails). With an open-face preset
(``--preset ofc_classic``, ``ofc_turbo``, ..., ``pineapple``) four bots play two tables of 2 for
2 rounds, each round one open-face set a table, played by the SDK's open-face bot (issues #18,
#19: at Pineapple each bot commits its discards and opens them, signed, at the end of a deal).
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import time
import uuid
from typing import Any, Final

from sapsam.cli.tournament_commands import load_state
from sapsam.cli.tournament_common import FAILED, CommandError

DEMO_PLAYERS: Final = 12
DEMO_SECONDS: Final = 600
OPEN_FACE_PLAYERS: Final = 4
OPEN_FACE_SEATS: Final = 2
DEMO_ROUNDS: Final = 2
DEFAULT_DEALS: Final = 2


def _layout(arguments: argparse.Namespace) -> tuple[int, int, int]:
    """Players, seats a table and deals a round for the demo's preset (a bad choice refused)."""
    from sapsam.rules.open_face.presets import every_open_face_preset

    if arguments.preset in every_open_face_preset():
        if arguments.deals is not None:
            raise CommandError(
                "--deals: an open-face round is one set a table (as many deals as seats, plus"
                " Fantasyland deals); leave --deals out with an open-face preset"
            )
        return OPEN_FACE_PLAYERS, OPEN_FACE_SEATS, OPEN_FACE_SEATS
    deals = DEFAULT_DEALS if arguments.deals is None else arguments.deals
    return DEMO_PLAYERS, 4, deals


def _standing_lines(standings: Any, names: dict[str, str] | None = None) -> list[str]:
    places = [item.place for item in standings]
    lines = []
    for item in standings:
        shared = "=" if places.count(item.place) > 1 else " "
        who = (names or {}).get(item.player_id, item.player_id)
        lines.append(
            f"{item.place:>3}{shared} {who:<32} {item.total:+5d}  "
            f"({item.deals_won} won of {item.deals_played})"
        )
    return lines


def _round_progress() -> Any:
    """A bot's ``on_round`` that says once per round that it is under way (the demo's progress)."""
    import threading

    said: set[int] = set()
    lock = threading.Lock()

    def sat_down(bot: Any, round_number: int, seat: str) -> None:
        with lock:
            if round_number in said:
                return
            said.add(round_number)
        print(f"round {round_number} under way ...", flush=True)

    return sat_down


def run_demo(arguments: argparse.Namespace) -> int:
    """sapsam tournament demo: see the module docstring."""
    from sapsam.cli.demo_command import missing_client_message

    try:
        import sapsam_client  # noqa: F401 - the bots need it
    except ImportError as error:
        raise CommandError(missing_client_message(error)) from None
    import grpc
    import psycopg
    from google.protobuf.timestamp_pb2 import Timestamp

    from sapsam.api.server import ServerConfig, start_server
    from sapsam.audit.report import render_text
    from sapsam.audit.tournament_audit import verify_tournament
    from sapsam.cli import tournament_bots
    from sapsam.cli.bootstrap import build_services
    from sapsam.cli.demo_command import demo_database, describe_demo_database
    from sapsam_proto.v1 import tournament_service_pb2, tournament_service_pb2_grpc

    players, seats, deals = _layout(arguments)
    open_face = players == OPEN_FACE_PLAYERS
    started = time.monotonic()
    token = secrets.token_urlsafe(24)
    operator = (("authorization", f"Bearer {token}"),)
    with demo_database(arguments.database_url, "sapsam-tournament-demo-") as url:
        # A table command holds two pooled connections; twelve bots want room for both.
        server = start_server(
            ServerConfig(listen="127.0.0.1:0", operator_token=token, grace_seconds=2),
            build_services(url, pool_size=40),
        )
        target = f"127.0.0.1:{server.port}"
        try:
            where = describe_demo_database(arguments.database_url)
            print(f"server listening on {target} ({where})")
            with grpc.insecure_channel(target) as channel:
                stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)
                closes = Timestamp()
                closes.FromMilliseconds(int(time.time() * 1000) + 3_600_000)
                tournament = stub.CreateTournament(
                    tournament_service_pb2.CreateTournamentRequest(
                        request_id="demo",
                        display_name="Demo cup",
                        rule_set_preset=arguments.preset,
                        seats_per_table=seats,
                        rounds=DEMO_ROUNDS,
                        deals_per_round=deals,
                        registration_close_time=closes,
                        max_entrants=players,
                    ),
                    metadata=operator,
                ).tournament
                rounds = (
                    f"{DEMO_ROUNDS} rounds of one {arguments.preset} set a table"
                    if open_face
                    else f"{DEMO_ROUNDS} rounds of {deals} deals"
                )
                print(
                    f"{tournament.name}: {players // seats} tables of {seats}, {rounds}; "
                    f"seating commitments published: {len(tournament.seating_commitments)}"
                )
                bots = tournament_bots.register_bots(target, players)
                for bot in bots:
                    tournament_bots.enter(channel, bot, tournament.name)
                threads = tournament_bots.run_bots(
                    target, bots, tournament.name, on_round=_round_progress()
                )
                stub.StartTournament(
                    tournament_service_pb2.StartTournamentRequest(
                        request_id="start", tournament=tournament.name
                    ),
                    metadata=operator,
                )
                tournament_bots.wait_for(threads, bots, DEMO_SECONDS)
            names = {bot.player.removeprefix("players/"): bot.display_name for bot in bots}
            tournament_id = uuid.UUID(tournament.name.removeprefix("tournaments/"))
            state = asyncio.run(
                load_state(argparse.Namespace(database_url=url, data_dir=None), tournament_id)
            )
            for number in range(1, DEMO_ROUNDS + 1):
                print(f"round {number}:")
                for table in state.round_tables(number):
                    seated = ", ".join(names.get(player, player) for player in table.players)
                    print(f"  table {table.index}: {seated}")
            print("standings (equal totals share a place):")
            print("\n".join(_standing_lines(state.standings(), names)))
            with psycopg.connect(url, autocommit=True) as connection:
                report = verify_tournament(connection, tournament_id)
            print(render_text(report))
            verdict = "PASSED" if report.holds else "FAILED"
            print(
                f"verification: {verdict} (seating of both rounds, {report.deals_verified} deals, "
                "standings)"
            )
            print(f"demo finished in {time.monotonic() - started:.1f} s")
            return 0 if report.holds else FAILED
        finally:
            server.stop()
