"""What the open-face demos share (``sapsam.cli.open_face_demo`` and ``sapsam.cli.pineapple_demo``):
checking the preset and the seat count, the server on ``sapsam demo``'s database, the solver bots
seated and played in threads, the printed deal lines and set totals, and the verification of the
table's log. Each demo keeps only what its family shows differently (the deal-1 seed it chooses,
the events it counts, its closing line)."""

from __future__ import annotations

import argparse
import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from sapsam.cli.wording import plural

FAILED: Final = 1
BOT_SECONDS: Final = 300


def seat_number(name: str) -> int:
    return int(name.rsplit("/", 1)[1])


def rows_text(rows: Any) -> str:
    return " | ".join(" ".join(row) for row in (rows.front, rows.middle, rows.back))


class DealWatch:
    """What a spectator's watch of the set saw, printed as it goes: each scored deal's seats (rows,
    score, set total, ``FL`` a Fantasyland hand, ``DEAD`` a dead one) and the set's totals. A
    family's demo adds its own events (``other``), lines under a seat (``seat_scored``) and what
    it forgets when a deal is over (``deal_over``)."""

    def __init__(self) -> None:
        self.deals = 0
        self.fantasylands = 0
        self.fantasy: set[str] = set()

    def other(self, kind: str, event: Any) -> None:
        """An event the watch itself does not show."""

    def seat_scored(self, seat: Any) -> None:
        """After a scored seat's line."""

    def deal_over(self) -> None:
        """After a scored deal's lines."""

    def follow(self, operator: Any, table: str) -> None:
        for event in operator.watch(table):
            kind = event.WhichOneof("payload")
            if kind == "fantasyland_committed":
                self.fantasy.add(event.fantasyland_committed.seat)
            elif kind == "deal_scored":
                score = event.deal_scored.open_face
                self.deals += 1
                self.fantasylands += len(self.fantasy)
                print(f"deal {score.deal.rsplit('/', 1)[1]}")
                for seat in score.seats:
                    fl = "  FL" if seat.seat in self.fantasy else ""
                    notes = fl + ("  DEAD" if seat.dead else "")
                    line = f"  {seat_number(seat.seat)} {rows_text(seat.rows)}"
                    print(f"{line:<52}{seat.score_delta:+4d} ({seat.series_total:+d}){notes}")
                    self.seat_scored(seat)
                self.fantasy = set()
                self.deal_over()
            elif kind == "series_completed":
                standings = sorted(event.series_completed.standings, key=lambda s: s.place)
                shown = ", ".join(f"seat {seat_number(s.seat)} {s.total:+d}" for s in standings)
                print(f"set over: {shown}"[:80])
            else:
                self.other(kind, event)


def client_missing() -> bool:
    """Whether the SDK cannot be imported (said on stderr)."""
    try:
        import sapsam_client  # noqa: F401
    except ImportError as error:
        from sapsam.cli.demo_command import missing_client_message

        print(f"sapsam demo: {missing_client_message(error)}", file=sys.stderr)
        return True
    return False


def preset_rules(presets: Mapping[str, Any], family: str, preset: str, seats: int) -> Any | None:
    """The preset's rules, or None (said on stderr) if unknown or ``seats`` does not fit them."""
    rules = presets.get(preset)
    if rules is None:
        known = ", ".join(presets)
        print(f"sapsam demo: unknown {family} preset {preset!r} ({known})", file=sys.stderr)
        return None
    if not rules.min_seats <= seats <= rules.max_seats:
        print(
            f"sapsam demo: --seat-count must be {rules.min_seats} to {rules.max_seats} under "
            f"preset {preset!r}, not {seats}",
            file=sys.stderr,
        )
        return None
    return rules


@dataclass(frozen=True)
class DemoServer:
    database_url: str
    address: str
    tables: Any
    """The server's table service state (its ``deal_seeds`` may be swapped for a chosen seed)."""
    operator: Any


@contextmanager
def demo_server(arguments: argparse.Namespace, prefix: str) -> Iterator[DemoServer]:
    """A server on ``sapsam demo``'s database, with an operator client, stopped after."""
    from sapsam.api.server import ServerConfig, start_server
    from sapsam.cli.bootstrap import build_services
    from sapsam.cli.demo_command import demo_database, describe_demo_database
    from sapsam_client import connect

    operator_token = secrets.token_urlsafe(24)
    with demo_database(arguments.database_url, prefix=prefix) as database_url:
        services = build_services(database_url, pool_size=8)
        tables = services.table_service.tables  # type: ignore[attr-defined]
        server = start_server(
            ServerConfig(listen="127.0.0.1:0", operator_token=operator_token, grace_seconds=2),
            services,
        )
        try:
            address = f"127.0.0.1:{server.port}"
            where = describe_demo_database(arguments.database_url)
            print(f"server listening on {address}\n  ({where})")
            operator = connect(address, token=operator_token)
            yield DemoServer(database_url, address, tables, operator)
        finally:
            server.stop()


def seat_bots(address: str, table: str, seats: int, late_seat: int | None = None) -> list[Any]:
    """A solver bot (bot seed = its seat, hunting Fantasyland) registered and seated at each seat;
    ``late_seat``'s lets its first turn's time run out."""
    from sapsam_client import connect
    from sapsam_client.open_face_bot import OpenFaceBot

    bots = []
    for seat in range(seats):
        client = connect(address)
        registration = client.register(f"solver bot {seat}")
        joined = client.join_table(table, seat=seat)
        player_id = registration.player.removeprefix("players/")
        late = seat == late_seat
        bots.append(
            OpenFaceBot(client, table, joined.name, player_id, seed=seat, late_once=late, hunt=True)
        )
    return bots


Watch = TypeVar("Watch", bound=DealWatch)


def play_bots(bots: list[Any], operator: Any, table: str, seen: Watch) -> Watch:
    """The bots played in threads while ``seen`` follows the table; it, when the set is over."""
    threads = [threading.Thread(target=bot.play, daemon=True) for bot in bots]
    for thread in threads:
        thread.start()
    seen.follow(operator, table)
    for thread in threads:
        thread.join(BOT_SECONDS)
    for bot in bots:
        bot.stop.set()
    return seen


def verify(database_url: str, table: str, deals: int) -> bool:
    """The table's whole log exported and verified, every one of ``deals`` deals (printed)."""
    import psycopg

    from sapsam.audit import Requester, select_table
    from sapsam.audit.verifier import verify_audit_export
    from sapsam.store.offline_reads import read_stream

    print("verifying the table from the log")
    table_id = table.removeprefix("tables/")
    with psycopg.connect(database_url) as connection:
        recorded = read_stream(connection, "table-" + table_id)
    report = verify_audit_export(select_table(recorded, Requester.operator(), table_id))
    ok = report.ok and report.deals_verified == deals
    count = report.deals_verified
    print(f"  {table}: {'ok' if ok else 'FAILED'} ({plural(count, 'deal')} verified)")
    return ok


def run_demo(
    arguments: argparse.Namespace,
    presets: Mapping[str, Any],
    family: str,
    seats: int,
    play_set: Callable[[Any, Any, str, str, int], tuple[str, Watch]],
    passed: Callable[[Watch, bool], bool],
) -> int:
    """A demo of ``family``: the preset and ``seats`` checked, the set played at a new table on
    ``sapsam demo``'s server (``play_set(operator, tables, address, preset, seats)``), its log
    verified; exit status 0 when ``passed(seen, verified)`` (which prints the closing line)."""
    if client_missing() or preset_rules(presets, family, arguments.preset, seats) is None:
        return FAILED
    started = time.monotonic()
    prefix = f"sapsam-demo-{'ofc' if family == 'open-face' else family.lower()}-"
    with demo_server(arguments, prefix=prefix) as demo:
        table, seen = play_set(demo.operator, demo.tables, demo.address, arguments.preset, seats)
        ok = passed(seen, verify(demo.database_url, table, seen.deals))
        if ok:
            print(f"demo finished in {time.monotonic() - started:.1f} s")
        return 0 if ok else FAILED
