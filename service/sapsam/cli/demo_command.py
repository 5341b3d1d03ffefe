"""``sapsam demo``: a whole series played by bots over gRPC, shown and then verified.

Starts an embedded PostgreSQL in a temporary folder (or, with ``--database-url``, uses that
database: migrated if behind, and the table played stays in it) and the game service on a free
port, creates a table as the operator, and starts one ``sapsam-bot`` process per seat (solver
and random-legal bots by turns). It watches the table like any spectator, printing each deal's
reveal (every seat's rows, fouls, row-by-row results, scores) and the final standings, where
equal totals share a place. Then it reads the table's events back from the log and verifies
every deal with ``verify_deal`` (docs/fairness.md §13), printing the verdict. The embedded
database is removed afterwards; a ``--database-url`` database keeps the table.

Exit status 0 when the series was played and every deal verified, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from sapsam.cli.wording import plural

FAILED: Final = 1
BOT_SECONDS: Final = 120
STRATEGIES: Final = ("solver", "random")
OUTCOME: Final = {1: "won", 2: "lost", 3: "tie"}


def register(subparsers: Any) -> None:
    """Add the ``demo`` subcommand."""
    parser = subparsers.add_parser(
        "demo",
        help="bots play a series over gRPC; then every deal is verified",
        description=__doc__,
    )
    parser.add_argument(
        "--seat-count", type=int, default=4, help="seats at the table, 2 to 4 (default 4)"
    )
    # The old spelling, for scripts: every sapsam command now says --seat-count.
    parser.add_argument("--seats", type=int, dest="seat_count", help=argparse.SUPPRESS)
    parser.add_argument("--deals", type=int, default=8, help="deals in the series (default 8)")
    parser.add_argument(
        "--preset",
        default="pagat",
        help="rule set preset, as sapsam rules list shows them (default pagat); an open-face "
        "preset (ofc_classic, ofc_turbo, ...) plays an open-face set instead, with a "
        "Fantasyland and a timeout; pineapple or pineapple_2_7 a 3-seat Pineapple set with "
        "a Fantasyland",
    )
    # Issue #17's spelling, accepted as the same option; help and docs show --preset only.
    parser.add_argument("--rules", dest="preset", help=argparse.SUPPRESS)
    parser.add_argument(
        "--database-url",
        help="use this PostgreSQL (migrated if behind; the table played stays in it) instead of "
        "a fresh embedded one in a temporary folder",
    )
    parser.set_defaults(handler=_demo)


@contextmanager
def demo_database(explicit_url: str | None, prefix: str = "sapsam-demo-") -> Iterator[str]:
    """A migrated database: ``explicit_url``, else a fresh embedded one in a temporary folder.

    Shared by ``sapsam demo`` and ``sapsam tournament demo``; ``prefix`` names the folder.
    """
    from sapsam.store import schema
    from sapsam.store.embedded import (
        EMBEDDED_DATABASE,
        database_in,
        ensure_database,
        start_embedded,
    )

    if explicit_url:
        schema.upgrade(explicit_url)
        yield explicit_url
        return
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    server = start_embedded(folder, delete_on_stop=True)
    try:
        ensure_database(server.server_url, EMBEDDED_DATABASE)
        url = database_in(server.server_url, EMBEDDED_DATABASE)
        schema.upgrade(url)
        yield url
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def missing_client_message(error: ImportError) -> str:
    """What to install when the bots' SDK (``sapsam-client``, the ``demo`` extra) is missing."""
    return (
        f"the bots need the client package, and {error.name or 'a module'} is missing:"
        " pip install 'sapsam[demo]' (from a source checkout: pip install -e clients/sapsam_proto"
        " -e clients/sapsam_client)"
    )


def describe_demo_database(explicit_url: str | None) -> str:
    """Where a demo's data lives, for its first line; never the URL (it may hold a password)."""
    if explicit_url:
        return "the PostgreSQL given by --database-url; what is played stays in it"
    return "embedded PostgreSQL in a temporary folder, removed afterwards"


def _seat_number(name: str) -> int:
    return int(name.rsplit("/", 1)[1])


def _deal_lines(result: Any, names: dict[str, str]) -> list[str]:
    """One deal's reveal, results and scores, in lines of at most 80 characters."""
    lines = [f"deal {result.deal_number}  (dealer seat {_seat_number(result.dealer_seat)})"]
    for seat in result.seats:
        rows = seat.arrangement
        shown = " | ".join(" ".join(row) for row in (rows.front, rows.middle, rows.back))
        said = "  FOUL" if seat.foul else ""
        if seat.natural and seat.natural != "none":  # a table with naturals (rules §2.9)
            said += f"  declared {seat.natural.replace('_', ' ')}"
        who = names.get(seat.seat, "")[:14]
        line = f"  {_seat_number(seat.seat)} {who:<14} {shown}"
        if len(line) + len(said) <= 80:
            lines.append(line + said)
        else:  # a long natural's name (a foul besides): under the rows, on a line of its own
            lines += [line, " " * 19 + said.lstrip()]
    for pair in result.pairs:
        first, second = _seat_number(pair.first_seat), _seat_number(pair.second_seat)
        outcomes = ", ".join(
            f"{row} {OUTCOME.get(outcome, '?')}"
            for row, outcome in (
                ("front", pair.front),
                ("middle", pair.middle),
                ("back", pair.back),
            )
        )
        lines.append(f"  seat {first} v {second}: {outcomes}  {pair.first_seat_delta:+d}")
    scores = "  ".join(
        f"{_seat_number(seat.seat)}: {seat.score_delta:+d} ({seat.series_total:+d})"
        for seat in result.seats
    )
    lines.append(f"  scores (total): {scores}")
    return lines


def _announcement(announced: Any) -> str:
    """A seat's play-or-surrender announcement in a few words (docs/rules.md §2.8)."""
    from sapsam_proto.v1 import table_pb2

    choice = "surrenders" if announced.choice == table_pb2.SURRENDER_CHOICE_SURRENDER else "plays"
    late = " (timed out)" if announced.timed_out else ""
    return f"seat {_seat_number(announced.seat)} {choice}{late}"


def _wrapped(lead: str, items: list[str], width: int = 80) -> list[str]:
    """``items`` joined by commas after ``lead``, in lines of at most ``width`` characters."""
    lines = [lead]
    for index, item in enumerate(items):
        text = item + ("," if index < len(items) - 1 else "")
        if len(lines[-1]) + len(text) + 1 > width and lines[-1].strip():
            lines.append(" " * len(lead))
        lines[-1] += ("" if lines[-1].endswith(" ") else " ") + text
    return [line.rstrip() for line in lines]


def _standing_lines(standings: Any, names: dict[str, str]) -> list[str]:
    places = [standing.place for standing in standings]
    lines = ["final standings (equal totals share a place)"]
    for standing in sorted(standings, key=lambda s: (s.place, _seat_number(s.seat))):
        shared = "=" if places.count(standing.place) > 1 else " "
        who = names.get(standing.seat, standing.player)
        lines.append(
            f"  {standing.place}{shared} seat {_seat_number(standing.seat)}  {who:<20} "
            f"{standing.total:+d}"
        )
    return lines


def _verify(database_url: str, table: str, deals: int) -> tuple[bool, list[str]]:
    """Verify every deal of ``table`` from the events the log holds."""
    import psycopg

    from sapsam.domain.event_codec import DEFAULT_CODEC
    from sapsam.domain.published import published_deal
    from sapsam.fairness.verify import verify_deal
    from sapsam.store.offline_reads import read_stream

    stream = "table-" + table.removeprefix("tables/")
    with psycopg.connect(database_url) as connection:
        recorded = read_stream(connection, stream)
    events = [DEFAULT_CODEC.decode(r.type, r.schema_version, r.data) for r in recorded]
    lines = [f"verifying {plural(deals, 'deal')} from the log ({plural(len(events), 'event')})"]
    passed = 0
    for number in range(1, deals + 1):
        report = verify_deal(published_deal(events, number))
        if report.ok:
            passed += 1
            lines.append(f"  deal {number}: ok ({plural(len(report.checks), 'check')})")
        else:
            lines.append(f"  deal {number}: FAILED {', '.join(report.failed + report.skipped)}")
    ok = passed == deals
    lines.append(
        f"verification: {'PASSED' if ok else 'FAILED'} ({passed} of {plural(deals, 'deal')}"
        " verified)"
    )
    return ok, lines


def _ended(bots: list[subprocess.Popen[str]]) -> str | None:
    """Wait for every bot process to end; what a failed one printed, else ``None``."""
    for bot in bots:
        output, _ = bot.communicate(timeout=BOT_SECONDS)
        if bot.returncode != 0:
            return f"a bot failed ({bot.returncode}):\n{output}"
    return None


def watch_and_verify(
    operator: Any,
    database_url: str,
    table: str,
    deals: int,
    wait_for_bots: Callable[[], str | None],
) -> bool:
    """The demo once its bots play ``table``: watch it as a spectator (``operator``, an SDK
    client), printing each deal's announcements and reveal and the final standings; wait for
    the bots (``wait_for_bots`` returns what a failed one said, else ``None``); then verify
    every deal from the log. True when the series was played and every deal verified.

    ``sapsam demo`` plays its seats with ``sapsam-bot`` processes; tests play them in threads
    (tests/clients/test_every_preset_plays.py), so every preset is played through this code."""
    names: dict[str, str] = {}
    standings: list[Any] = []
    announced: list[str] = []  # this deal's announcements, at a table with surrender
    for event in operator.watch(table):
        kind = event.WhichOneof("payload")
        if kind == "player_seated":
            player = operator.get_player(event.player_seated.player)
            names[event.player_seated.seat] = player.display_name
        elif kind == "surrender_announced":
            announced.append(_announcement(event.surrender_announced))
        elif kind == "deal_scored":
            lines = _deal_lines(event.deal_scored.result, names)
            if announced:
                lines[1:1] = _wrapped("  announced: ", announced)
                announced = []
            print("\n".join(lines), flush=True)
        elif kind == "series_completed":
            standings = list(event.series_completed.standings)
    print("\n".join(_standing_lines(standings, names)))
    failure = wait_for_bots()
    if failure is not None:
        print(failure, file=sys.stderr)
        return False
    ok, lines = _verify(database_url, table, deals)
    print("\n".join(lines))
    return ok


def _refused_counts(rule_set: Any, seat_count: int, deals: int) -> str | None:
    """Why ``--seat-count`` or ``--deals`` cannot make a table of ``rule_set``, else None."""
    from sapsam.rules.ruleset import MAX_SERIES_LENGTH

    low, high = rule_set.min_seats, rule_set.max_seats
    if not low <= seat_count <= high:
        seats = f"{low} to {high}" if low < high else f"{low}"
        return f"--seat-count must be {seats} under preset {rule_set.name!r}, not {seat_count}"
    if not 1 <= deals <= MAX_SERIES_LENGTH:
        return f"--deals must be 1 to {MAX_SERIES_LENGTH:,}, not {deals}"
    return None


def _demo(arguments: argparse.Namespace) -> int:
    if arguments.preset.startswith("pineapple"):  # Pineapple (issue #19): its own demo
        from sapsam.cli.pineapple_demo import run_pineapple_demo

        return run_pineapple_demo(arguments)
    if arguments.preset.startswith("ofc_"):  # open face (issue #18): its own demo
        from sapsam.cli.open_face_demo import run_open_face_demo

        return run_open_face_demo(arguments)
    try:
        from sapsam_client import connect
    except ImportError as error:
        print(f"sapsam demo: {missing_client_message(error)}", file=sys.stderr)
        return FAILED
    from sapsam.api.server import ServerConfig, start_server
    from sapsam.cli.bootstrap import build_services
    from sapsam.rules.presets import preset
    from sapsam.rules.ruleset import RuleSetError

    try:
        rule_set = preset(arguments.preset)  # before a database and a server start for nothing
    except RuleSetError as error:
        print(f"sapsam demo: {error}", file=sys.stderr)
        return FAILED
    refused = _refused_counts(rule_set, arguments.seat_count, arguments.deals)
    if refused:
        print(f"sapsam demo: {refused}", file=sys.stderr)
        return FAILED
    started = time.monotonic()
    operator_token = secrets.token_urlsafe(24)
    with demo_database(arguments.database_url) as database_url:
        server = start_server(
            ServerConfig(listen="127.0.0.1:0", operator_token=operator_token, grace_seconds=2),
            build_services(database_url, pool_size=8),
        )
        address = f"127.0.0.1:{server.port}"
        bots: list[subprocess.Popen[str]] = []
        try:
            where = describe_demo_database(arguments.database_url)
            # Two lines: the demo's output stays within 80 columns (tests/clients/test_demo.py).
            print(f"server listening on {address}\n  ({where})")
            operator = connect(address, token=operator_token)
            table = operator.create_table(
                arguments.seat_count, preset=arguments.preset, series_length=arguments.deals
            )
            counts = f"{plural(arguments.seat_count, 'seat')}, {plural(arguments.deals, 'deal')}"
            print(f"table {table.name}: {counts}")
            for seat in range(arguments.seat_count):
                strategy = STRATEGIES[seat % len(STRATEGIES)]
                command = [
                    sys.executable,
                    "-m",
                    "sapsam_client.bot",
                    *("--server", address, "--table", table.name, "--seat", str(seat)),
                    *("--strategy", strategy, "--seed", str(seat), "--quiet"),
                    *("--name", f"{strategy} bot {seat}"),
                ]
                bots.append(
                    subprocess.Popen(
                        command,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT,
                        text=True,
                        env={**os.environ, "PYTHONUNBUFFERED": "1"},
                    )
                )
            ok = watch_and_verify(
                operator,
                database_url,
                table.name,
                arguments.deals,
                wait_for_bots=lambda: _ended(bots),
            )
            if ok:
                print(f"demo finished in {time.monotonic() - started:.1f} s")
            return 0 if ok else FAILED
        finally:
            for bot in bots:
                if bot.poll() is None:
                    bot.kill()
            server.stop()
