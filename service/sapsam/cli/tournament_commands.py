"""sapsam tournament …: run tournaments from the command line (the operator's console).

docs/tournaments.md walks through a whole tournament with these commands. They work on the
database directly (--database-url, else DATABASE_URL, else the embedded one in
--data-dir), as the operator who runs the server; watch and bot talk to a running
server over gRPC.

  create         create a tournament; prints its id
  register       enter players by display name or id (unknown ones are refused)
  unregister     withdraw players before the start
  start          close registration; seat round 1 by the committed draw
  show           the tournament, its rounds and tables, by display name
  standings      the standings (--format table, csv or json)
  leaderboard    a leaderboard across tournaments (--format table, csv or json)
  list           every tournament, newest first
  watch          live: progress, whom each table awaits, stuck tables
  pause, resume  hold a tournament's rounds and clocks, and let them go on
  cancel         end a tournament before its last round
  forfeit        a player leaves the tournament
  reseat         give a forfeited player's seat to another player
  bot            bots that play their players' seats from round to round
  verify         check the seating, every credited deal and the standings
  follow-results run the results process on its own (servers run one already)
  demo           12 bots play a 3-table, 2-round tournament; it is verified

Exit status: 0 on success, 1 when a check fails, 2 when the command cannot run (nothing is
written then).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import textwrap
import uuid
from typing import Any, Final

from sapsam.cli.tournament_common import (
    FAILED,
    CommandError,
    connection,
    database_options,
    guarded,
    parse_id,
    resolve_players,
    services,
)
from sapsam.cli.wording import plural

MAX_LISTED: Final = 1000
DESCRIBED: Final = argparse.RawDescriptionHelpFormatter


def _action(actions: Any, name: str, summary: str, details: str = "") -> argparse.ArgumentParser:
    """A ``tournament`` action whose --help starts with ``summary`` and explains ``details``."""
    description = f"{summary[0].upper()}{summary[1:]}." + (
        f"\n\n{fill(details)}" if details else ""
    )
    parser: argparse.ArgumentParser = actions.add_parser(
        name, help=summary, description=description, formatter_class=DESCRIBED
    )
    return parser


def fill(text: str) -> str:
    """A paragraph of --help, wrapped as argparse wraps its own."""
    return textwrap.fill(text, 79)


def _tournament_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tournament", help="the tournament: its id, or tournaments/{id}")


def register(subparsers: Any) -> None:
    """Add the ``tournament`` subcommand and its actions."""
    from sapsam.cli import (
        tournament_bot_command,
        tournament_control_commands,
        tournament_demo,
        tournament_standings,
        tournament_watch,
    )

    parser = subparsers.add_parser(
        "tournament",
        help="run tournaments (operator)",
        description=__doc__,
        formatter_class=DESCRIBED,
    )
    actions = parser.add_subparsers(dest="tournament_action", metavar="ACTION", required=True)

    create = _action(
        actions,
        "create",
        "create a tournament; prints its id",
        "The seating seed of every round is drawn now and only its commitment recorded, so the"
        " draw cannot be chosen after the players are known. Registration opens now.",
    )
    create.add_argument("--name", required=True, help="the tournament's title, 1 to 100 characters")
    create.add_argument(
        "--preset",
        default="pagat",
        help="the rule set preset every table plays (default: pagat); an open-face preset "
        "(ofc_classic, ..., pineapple, pineapple_2_7) plays one set a table a round, so --deals "
        "must equal the seats",
    )
    create.add_argument(
        "--seat-count",
        type=int,
        default=4,
        help="players per table, 2 to 4 (default: 4); tables hold one fewer when the entrants do"
        " not divide",
    )
    create.add_argument("--seats", type=int, dest="seat_count", help=argparse.SUPPRESS)
    create.add_argument("--rounds", type=int, default=2, help="number of rounds (default: 2)")
    create.add_argument(
        "--deals", type=int, default=8, help="deals each table plays per round (default: 8)"
    )
    create.add_argument(
        "--max-entrants", type=int, default=64, help="the most players who may enter (default: 64)"
    )
    create.add_argument(
        "--closes-in-minutes",
        type=int,
        default=60,
        help="registration closes this many minutes from now (default: 60); start closes it too",
    )
    create.add_argument(
        "--reseating",
        choices=("random", "standings"),
        default="random",
        help="how rounds 2 on are seated: a fresh random draw, or strongest together by total"
        " (default: random)",
    )
    create.add_argument(
        "--tie-break",
        choices=("none", "deals_won"),
        default="none",
        help="what separates equal totals: nothing (they share the place) or more deals won"
        " (default: none)",
    )
    database_options(create)
    create.set_defaults(handler=guarded(_create))

    for name, summary, details, handler in (
        (
            "register",
            "enter players in the tournament",
            "Name each player by display name or by id (players/{id}, or the bare id). A name"
            " that no player has, or that several have, is refused, and then nobody is entered.",
            _register,
        ),
        (
            "unregister",
            "withdraw players before the start",
            "After the start a player leaves by forfeiting (sapsam tournament forfeit).",
            _unregister,
        ),
    ):
        sub = _action(actions, name, summary, details)
        _tournament_argument(sub)
        sub.add_argument("players", nargs="+", help="display names or ids (players/{id})")
        database_options(sub)
        sub.set_defaults(handler=guarded(handler))

    for name, summary, details, handler in (
        (
            "start",
            "close registration and seat round 1",
            "Seats round 1 by the committed draw (its seed is revealed), creates its tables,"
            " seats the players and draws each table's dealer; prints the tables.",
            _start,
        ),
        ("show", "print the tournament, its rounds and tables", "", _show),
        (
            "verify",
            "verify the seating, every credited deal and the standings",
            "The same report as sapsam audit verify --tournament ID; exit 1 when a check fails.",
            _verify,
        ),
    ):
        sub = _action(actions, name, summary, details)
        _tournament_argument(sub)
        database_options(sub)
        sub.set_defaults(handler=guarded(handler))

    listing = _action(actions, "list", "list tournaments, newest first")
    listing.add_argument(
        "--limit",
        type=int,
        default=50,
        help=f"the most tournaments to list, 1 to {MAX_LISTED} (default: 50)",
    )
    database_options(listing)
    listing.set_defaults(handler=guarded(_list))

    tournament_standings.add_actions(actions)
    tournament_watch.add_actions(actions)
    tournament_bot_command.add_action(actions)
    tournament_control_commands.add_actions(actions)

    follow = _action(
        actions,
        "follow-results",
        "run the results process until stopped (SIGTERM or Ctrl-C)",
        "Credits each finished deal of a tournament table and seats the next rounds. Every"
        " server process runs one already; this is for a database no server follows.",
    )
    database_options(follow)
    follow.set_defaults(handler=guarded(_follow_results))

    demo = _action(
        actions,
        "demo",
        "twelve bots play 3 tables of 4 for 2 rounds, then it is verified",
        "A server on a fresh embedded database (or --database-url) plays the tournament over"
        " gRPC and prints each round's tables, the standings and the verification. With an"
        " open-face preset (--preset ofc_classic) four bots play 2 tables of 2 for 2 rounds,"
        " one open-face set a table each round.",
    )
    demo.add_argument(
        "--deals", type=int, help="deals per round (default: 2; not with an open-face preset)"
    )
    demo.add_argument(
        "--preset",
        default="pagat",
        help="the rule set preset (default: pagat; an open-face one, e.g. ofc_classic,"
        " ofc_turbo or pineapple, plays open-face tables)",
    )
    demo.add_argument(
        "--database-url", help="play in this PostgreSQL (default: a fresh embedded database)"
    )
    demo.set_defaults(handler=guarded(tournament_demo.run_demo))


def _create(arguments: argparse.Namespace) -> int:
    from sapsam.app.tournaments import TournamentSettings
    from sapsam.rules.open_face.parameters import OpenFaceRules
    from sapsam.rules.open_face.presets import every_open_face_preset
    from sapsam.rules.presets import preset
    from sapsam.rules.ruleset import RuleSet, RuleSetError

    rule_set: RuleSet | OpenFaceRules
    open_face = every_open_face_preset()
    if arguments.preset in open_face:  # one set a table a round: --deals = --seats
        rule_set = open_face[arguments.preset]
    else:
        try:
            rule_set = preset(arguments.preset)
        except RuleSetError as error:
            raise CommandError(str(error)) from None

    def _settings(now: int) -> TournamentSettings:
        return TournamentSettings(
            name=arguments.name,
            rule_set=rule_set,
            seats_per_table=arguments.seat_count,
            rounds=arguments.rounds,
            deals_per_round=arguments.deals,
            registration_opens_ms=now,
            registration_closes_ms=now + arguments.closes_in_minutes * 60_000,
            max_entrants=arguments.max_entrants,
            reseating=arguments.reseating,
            tie_break=arguments.tie_break,
        )

    async def create() -> Any:
        async with services(arguments) as tournaments:
            return await tournaments.create(
                _settings(tournaments.clock()), "operator", f"cli-{uuid.uuid4()}"
            )

    outcome = asyncio.run(create())
    print(f"tournaments/{outcome.tournament_id}")
    return 0


def _register(arguments: argparse.Namespace) -> int:
    return _for_each_player(arguments, "register", "entered")


def _unregister(arguments: argparse.Namespace) -> int:
    return _for_each_player(arguments, "unregister", "withdrew")


def _for_each_player(arguments: argparse.Namespace, method: str, done: str) -> int:
    """Resolve every player named (all before any is used), then call the service's ``method``
    for each (one request each) and say ``done`` for each, by name."""
    from sapsam.store.player_names import display_names

    tournament_id = parse_id(arguments.tournament, "tournaments/")
    with connection(arguments) as opened:
        players = resolve_players(opened, arguments.players)
        names = display_names(opened, players)

    async def each() -> None:
        async with services(arguments) as tournaments:
            await tournaments.load(tournament_id)  # an unknown tournament: nothing is done
            for player_id in players:
                call = getattr(tournaments, method)
                await call(tournament_id, player_id, f"cli-{uuid.uuid4()}")
                print(f"{done} {names.get(player_id, '')} (players/{player_id})")

    asyncio.run(each())
    return 0


def _start(arguments: argparse.Namespace) -> int:
    tournament_id = parse_id(arguments.tournament, "tournaments/")

    async def start() -> Any:
        async with services(arguments) as tournaments:
            return await tournaments.start(tournament_id, "operator", f"cli-{uuid.uuid4()}")

    state = asyncio.run(start()).state
    print("\n".join(_table_lines(state, _names_of(arguments, state))))
    return 0


def _names_of(arguments: argparse.Namespace, state: Any) -> dict[str, str]:
    """The display names of the tournament's players."""
    from sapsam.store.player_names import display_names

    with connection(arguments) as opened:
        return display_names(opened, [*state.entrants, *state.registered])


def _table_lines(state: Any, names: dict[str, str]) -> list[str]:
    lines = []
    for number in range(1, state.current_round + 1):
        lines.append(f"round {number}:")
        for table in state.round_tables(number):
            players = ", ".join(
                names.get(player, player[:8])
                + (" (forfeited)" if player in state.forfeited else "")
                for player in table.holders
            )
            credited = plural(len(table.credited), "deal")
            lines.append(
                f"  table {table.index} tables/{table.table_id} ({credited} credited): {players}"
            )
    return lines


async def load_state(arguments: argparse.Namespace, tournament_id: uuid.UUID) -> Any:
    async with services(arguments) as tournaments:
        return await tournaments.load(tournament_id)


def _show(arguments: argparse.Namespace) -> int:
    tournament_id = parse_id(arguments.tournament, "tournaments/")
    state = asyncio.run(load_state(arguments, tournament_id))
    names = _names_of(arguments, state)
    print(f"tournaments/{tournament_id}  {state.name!r}  {state.phase.value}")
    count = len(state.entrants or state.registered)
    print(
        f"rules {state.rule_set.name}, {state.seats_per_table} per table, "
        f"{plural(state.rounds, 'round')} of {plural(state.deals_per_round, 'deal')}, reseating "
        f"{state.reseating.value}, tie-break {state.tie_break.value}, {plural(count, 'player')}"
    )
    if state.pause_reason:
        print(f"paused: {state.pause_reason}")
    if state.cancel_reason:
        print(f"cancelled: {state.cancel_reason}")
    for player, round_number in state.forfeited.items():
        print(f"{names.get(player, player)} forfeited in round {round_number}")
    print("\n".join(_table_lines(state, names)))
    return 0


def _verify(arguments: argparse.Namespace) -> int:
    from sapsam.audit.report import render_text
    from sapsam.audit.tournament_audit import verify_tournament

    tournament_id = parse_id(arguments.tournament, "tournaments/")
    with connection(arguments) as opened:
        report = verify_tournament(opened, tournament_id)
    print(render_text(report))
    return 0 if report.holds else FAILED


def _list(arguments: argparse.Namespace) -> int:
    from sapsam.app.tournament_queries import tournament_page

    if not 1 <= arguments.limit <= MAX_LISTED:
        raise CommandError(f"--limit must be 1 to {MAX_LISTED}")

    async def listed() -> list[Any]:
        async with services(arguments) as tournaments:
            page = await tournament_page(tournaments.store, None, None, arguments.limit)
            return [await tournaments.load(uuid.UUID(str(item))) for item, _ in page]

    for state in asyncio.run(listed()):
        where = f"round {state.current_round}/{state.rounds}"
        count = plural(len(state.entrants or state.registered), "player")
        print(
            f"tournaments/{state.tournament_id}  {state.phase.value:<14} {where}  {count:>11}"
            f"  {state.name}"
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
        async with services(arguments) as tournaments:
            await ResultsProcess(tournaments).run(stopping)

    asyncio.run(follow())
    return 0
