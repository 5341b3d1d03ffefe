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

Seen = TypeVar("Seen")


def seat_number(name: str) -> int:
    return int(name.rsplit("/", 1)[1])


def rows_text(rows: Any) -> str:
    return " | ".join(" ".join(row) for row in (rows.front, rows.middle, rows.back))


def print_deal_header(score: Any) -> None:
    print(f"deal {score.deal.rsplit('/', 1)[1]}")


def print_seat_score(seat: Any, fantasy: set[str]) -> None:
    """One seat's line of a scored deal: rows, score, set total, ``FL`` and ``DEAD``."""
    notes = ("  FL" if seat.seat in fantasy else "") + ("  DEAD" if seat.dead else "")
    line = f"  {seat_number(seat.seat)} {rows_text(seat.rows)}"
    print(f"{line:<52}{seat.score_delta:+4d} ({seat.series_total:+d}){notes}")


def print_set_over(event: Any) -> None:
    standings = sorted(event.series_completed.standings, key=lambda s: s.place)
    shown = ", ".join(f"seat {seat_number(s.seat)} {s.total:+d}" for s in standings)
    print(f"set over: {shown}"[:80])


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


def play_bots(bots: list[Any], watch: Callable[[], Seen]) -> Seen:
    """The bots played in threads while ``watch`` follows the table; what it saw."""
    threads = [threading.Thread(target=bot.play, daemon=True) for bot in bots]
    for thread in threads:
        thread.start()
    seen = watch()
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


def finish(ok: bool, started: float) -> int:
    """The demo's exit status (and its time, when it passed)."""
    if ok:
        print(f"demo finished in {time.monotonic() - started:.1f} s")
    return 0 if ok else FAILED
