"""``sapsam tournament …``: the operator's tournament commands, straight on the database.

- ``create --name N --seats 4 --rounds 2 --deals 8 --max-entrants 32 --closes-in-minutes 60``
  (``--preset``, ``--reseating random|standings``, ``--tie-break none|deals_won``) prints the id;
- ``register ID PLAYER…`` / ``unregister ID PLAYER`` enter or withdraw players (player ids);
- ``start ID`` closes registration, seats round 1 by the committed draw, opens its tables;
- ``show ID``, ``standings ID``, ``list``, ``leaderboard [--rule-set R] [--period YYYY-MM]``;
- ``verify ID`` checks the seating draw, every credited deal and the standings (the same as
  ``sapsam audit verify --tournament ID``);
- ``follow-results`` runs the results process on its own until SIGTERM or SIGINT (servers run one
  already);
- ``demo``: twelve bots play a 3-table, 2-round tournament over gRPC on a fresh embedded database;
  prints each round's tables and the standings, then verifies every deal and the seating.

The database is ``--database-url``, else ``DATABASE_URL``, else the embedded one in ``--data-dir``.
Exit status: 0 on success, 1 when a check fails, 2 when the command cannot run.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Final

FAILED: Final = 1
CANNOT_RUN: Final = 2
DEMO_PLAYERS: Final = 12
DEMO_SECONDS: Final = 600


class CommandError(Exception):
    """The command cannot run; the message is shown as one line."""


def register(subparsers: Any) -> None:
    """Add the ``tournament`` subcommand and its actions."""
    parser = subparsers.add_parser(
        "tournament", help="run tournaments (operator)", description=__doc__.split("\n\n")[0]
    )
    actions = parser.add_subparsers(dest="tournament_action", metavar="ACTION", required=True)

    create = actions.add_parser("create", help="create a tournament; prints its id")
    create.add_argument("--name", required=True, help="the tournament's title")
    create.add_argument("--preset", default="pagat", help="rule set preset (default pagat)")
    create.add_argument("--seats", type=int, default=4, help="players per table, 2-4")
    create.add_argument("--rounds", type=int, default=2, help="number of rounds")
    create.add_argument("--deals", type=int, default=8, help="deals per round")
    create.add_argument("--max-entrants", type=int, default=64, help="most players")
    create.add_argument(
        "--closes-in-minutes", type=int, default=60, help="registration closes after this"
    )
    create.add_argument("--reseating", choices=("random", "standings"), default="random")
    create.add_argument("--tie-break", choices=("none", "deals_won"), default="none")
    _database_options(create)
    create.set_defaults(handler=_guarded(_create))

    for action, helptext, handler in (
        ("register", "register players (by player id)", _register),
        ("unregister", "withdraw players before the start", _unregister),
    ):
        sub = actions.add_parser(action, help=helptext)
        sub.add_argument("tournament", help="tournament id")
        sub.add_argument("players", nargs="+", help="player ids (uuid or players/{id})")
        _database_options(sub)
        sub.set_defaults(handler=_guarded(handler))

    for action, helptext, handler in (
        ("start", "close registration and seat round 1", _start),
        ("show", "print the tournament and its tables", _show),
        ("standings", "print the standings", _standings),
        ("verify", "verify seating, every credited deal and the standings", _verify),
    ):
        sub = actions.add_parser(action, help=helptext)
        sub.add_argument("tournament", help="tournament id (uuid or tournaments/{id})")
        _database_options(sub)
        sub.set_defaults(handler=_guarded(handler))

    listing = actions.add_parser("list", help="list tournaments, newest first")
    _database_options(listing)
    listing.set_defaults(handler=_guarded(_list))

    board = actions.add_parser("leaderboard", help="print a leaderboard across tournaments")
    board.add_argument("--rule-set", help="only this rule set name")
    board.add_argument("--period", help="only tournaments started in this month, YYYY-MM")
    board.add_argument("--limit", type=int, default=20, help="lines to print")
    _database_options(board)
    board.set_defaults(handler=_guarded(_leaderboard))

    follow = actions.add_parser("follow-results", help="run the results process until stopped")
    _database_options(follow)
    follow.set_defaults(handler=_guarded(_follow_results))

    demo = actions.add_parser("demo", help="12 bots, 3 tables of 4, 2 rounds, verified")
    demo.add_argument("--deals", type=int, default=2, help="deals per round (default 2)")
    demo.add_argument("--database-url", help="use this PostgreSQL, not a fresh embedded one")
    demo.set_defaults(handler=_guarded(_demo))


def _database_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database-url", help="PostgreSQL to use (default: DATABASE_URL, else embedded)"
    )
    parser.add_argument(
        "--data-dir", help="embedded server's data folder (default: SAPSAM_DATA_DIR or user data)"
    )


def _guarded(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(arguments: argparse.Namespace) -> int:
        from sapsam.domain.errors import DomainError

        try:
            return handler(arguments)
        except CommandError as error:
            print(f"sapsam tournament: {error}", file=sys.stderr)
            return CANNOT_RUN
        except DomainError as error:
            print(f"sapsam tournament: {error.reason.value}: {error.message}", file=sys.stderr)
            return CANNOT_RUN

    return run


def _id(text: str, prefix: str) -> uuid.UUID:
    try:
        return uuid.UUID(text.removeprefix(prefix))
    except ValueError:
        raise CommandError(f"{text!r} is not an id") from None


@contextmanager
def _prepared_database(arguments: argparse.Namespace) -> Iterator[tuple[str, Any]]:
    """The chosen database (migrated first, the read models prepared): its URL and an unopened
    store on it."""
    from sapsam.log.records import DatabaseOpenError
    from sapsam.store.embedded import open_database
    from sapsam.store.event_store import EventStore
    from sapsam.store.projections import registered_projectors
    from sapsam.store.table_projections import projectors as table_projectors

    try:
        with open_database(
            arguments.database_url, getattr(arguments, "data_dir", None), migrate=True
        ) as handle:
            store = EventStore.unopened(
                handle.url, projectors=[*table_projectors(), *registered_projectors()]
            )
            store.prepare()
            yield handle.url, store
    except DatabaseOpenError as error:
        raise CommandError(str(error)) from None


@contextmanager
def _connection(arguments: argparse.Namespace) -> Iterator[Any]:
    """A synchronous connection to the prepared database, for the offline readers."""
    import psycopg

    with _prepared_database(arguments) as (url, _), psycopg.connect(url, autocommit=True) as opened:
        yield opened


@asynccontextmanager
async def _services(arguments: argparse.Namespace) -> AsyncIterator[Any]:
    """A tournament service over the chosen database (migrated first); its pool on the command's
    event loop."""
    from sapsam.app.tables import TableService
    from sapsam.app.tournament_control import TournamentControl

    with _prepared_database(arguments) as (_, store):
        await store.open()
        try:
            yield TournamentControl(store, TableService(store))
        finally:
            await store.close()


def _create(arguments: argparse.Namespace) -> int:
    from sapsam.app.tournaments import TournamentSettings
    from sapsam.rules.ruleset import RuleSetError, preset

    try:
        rule_set = preset(arguments.preset)
    except RuleSetError as error:
        raise CommandError(str(error)) from None

    async def create() -> Any:
        async with _services(arguments) as tournaments:
            return await tournaments.create(
                _settings(tournaments.clock()), "operator", f"cli-{uuid.uuid4()}"
            )

    def _settings(now: int) -> TournamentSettings:
        return TournamentSettings(
            name=arguments.name,
            rule_set=rule_set,
            seats_per_table=arguments.seats,
            rounds=arguments.rounds,
            deals_per_round=arguments.deals,
            registration_opens_ms=now,
            registration_closes_ms=now + arguments.closes_in_minutes * 60_000,
            max_entrants=arguments.max_entrants,
            reseating=arguments.reseating,
            tie_break=arguments.tie_break,
        )

    outcome = asyncio.run(create())
    print(f"tournaments/{outcome.tournament_id}")
    return 0


def _register(arguments: argparse.Namespace) -> int:
    return _for_each_player(arguments, lambda service: service.register, "registered")


def _unregister(arguments: argparse.Namespace) -> int:
    return _for_each_player(arguments, lambda service: service.unregister, "withdrew")


def _for_each_player(
    arguments: argparse.Namespace,
    method: Callable[[Any], Callable[..., Awaitable[object]]],
    done: str,
) -> int:
    """Call ``method(service)(tournament, player, request_id)`` for each player named (one
    request each) and say ``done`` for each."""
    tournament_id = _id(arguments.tournament, "tournaments/")

    async def each() -> None:
        async with _services(arguments) as tournaments:
            for player in arguments.players:
                player_id = str(_id(player, "players/"))
                await method(tournaments)(tournament_id, player_id, f"cli-{uuid.uuid4()}")
                print(f"{done} players/{player_id}")

    asyncio.run(each())
    return 0


def _start(arguments: argparse.Namespace) -> int:
    tournament_id = _id(arguments.tournament, "tournaments/")

    async def start() -> Any:
        async with _services(arguments) as tournaments:
            return await tournaments.start(tournament_id, "operator", f"cli-{uuid.uuid4()}")

    print("\n".join(_table_lines(asyncio.run(start()).state)))
    return 0


def _table_lines(state: Any) -> list[str]:
    lines = []
    for number in range(1, state.current_round + 1):
        lines.append(f"round {number}:")
        for table in state.round_tables(number):
            players = ", ".join(player[:8] for player in table.players)
            credited = len(table.credited)
            lines.append(
                f"  table {table.index} tables/{table.table_id} ({credited} deals credited): "
                f"{players}"
            )
    return lines


async def _load(arguments: argparse.Namespace, tournament_id: uuid.UUID) -> Any:
    async with _services(arguments) as tournaments:
        return await tournaments.load(tournament_id)


def _show(arguments: argparse.Namespace) -> int:
    tournament_id = _id(arguments.tournament, "tournaments/")
    state = asyncio.run(_load(arguments, tournament_id))
    print(f"tournaments/{tournament_id}  {state.name!r}  {state.phase.value}")
    print(
        f"rules {state.rule_set.name}, {state.seats_per_table} per table, {state.rounds} rounds of "
        f"{state.deals_per_round} deals, reseating {state.reseating.value}, tie-break "
        f"{state.tie_break.value}, {len(state.entrants or state.registered)} players"
    )
    print("\n".join(_table_lines(state)))
    return 0


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


def _standings(arguments: argparse.Namespace) -> int:
    tournament_id = _id(arguments.tournament, "tournaments/")
    state = asyncio.run(_load(arguments, tournament_id))
    final = "final" if state.phase.value == "COMPLETE" else "so far"
    print(f"standings ({final}; equal totals share a place):")
    print("\n".join(_standing_lines(state.standings())))
    return 0


def _verify(arguments: argparse.Namespace) -> int:
    from sapsam.audit.report import render_text
    from sapsam.audit.tournament_audit import verify_tournament

    tournament_id = _id(arguments.tournament, "tournaments/")
    with _connection(arguments) as connection:
        report = verify_tournament(connection, tournament_id)
    print(render_text(report))
    return 0 if report.holds else FAILED


def _list(arguments: argparse.Namespace) -> int:
    with _connection(arguments) as connection:
        rows = connection.execute(
            "SELECT tournament_id, name, phase, entrant_count, current_round, rounds"
            " FROM tournaments ORDER BY created_at_ms DESC, tournament_id DESC"
        ).fetchall()
    for row in rows:
        where = f"round {row[4]}/{row[5]}"
        print(f"tournaments/{row[0]}  {row[2]:<14} {where}  {row[3]:>3} players  {row[1]}")
    return 0


def _leaderboard(arguments: argparse.Namespace) -> int:
    from sapsam.store.tournament_queries import leaderboard_page

    async def page() -> Any:
        async with _services(arguments) as tournaments, tournaments.store.connection() as opened:
            return await leaderboard_page(
                opened, arguments.rule_set, arguments.period, 0, arguments.limit
            )

    rows, total = asyncio.run(page())
    print(f"leaderboard ({total} players; equal totals share a place):")
    for row in rows:
        print(
            f"{row.place:>3} {row.player_id:<36} {row.total:+6d}  "
            f"{row.deals_played} deals, {row.tournaments_played} tournaments"
        )
    return 0


def _follow_results(arguments: argparse.Namespace) -> int:
    from sapsam.app.tournament_results import ResultsProcess
    from sapsam.store.background import StopSignal

    async def follow() -> None:
        stopping = StopSignal()
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(number, stopping.set)
        async with _services(arguments) as tournaments:
            await ResultsProcess(tournaments).run(stopping)

    asyncio.run(follow())
    return 0


def _demo(arguments: argparse.Namespace) -> int:
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
                        rule_set_preset="pagat",
                        seats_per_table=4,
                        rounds=2,
                        deals_per_round=arguments.deals,
                        registration_close_time=closes,
                        max_entrants=DEMO_PLAYERS,
                    ),
                    metadata=operator,
                ).tournament
                print(
                    f"{tournament.name}: 3 tables of 4, 2 rounds of {arguments.deals} deals; "
                    f"seating commitments published: {len(tournament.seating_commitments)}"
                )
                bots = tournament_bots.register_bots(target, DEMO_PLAYERS)
                for bot in bots:
                    tournament_bots.enter(channel, bot, tournament.name)
                threads = tournament_bots.run_bots(target, bots, tournament.name)
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
                _load(argparse.Namespace(database_url=url, data_dir=None), tournament_id)
            )
            for number in (1, 2):
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
