"""``sapsam demo --preset ofc_classic`` (``make demo-ofc``): four bots play an open-face set over
gRPC, shown and then verified (issue #18).

The server and the database are ``sapsam demo``'s (an embedded PostgreSQL in a temporary folder,
or ``--database-url``). The operator creates an open-face table of the preset with a short move
time; four players take its seats, each played by the solver bot of the SDK
(``sapsam_client.open_face_bot``) in a thread, one of which lets its first turn's time run out,
so the server's sweeper places for it (a timeout). The demo watches the table as a spectator and
prints each deal's rows, its score and the set's total, ``FL`` for a Fantasyland hand and
``DEAD`` for a dead one. Then the table's log is exported and verified (``sapsam audit
verify``'s checks: every placement legal and in turn, the streets dealt from the published
seed, the scores recomputed).

The Fantasyland is certain, not hoped for: the operator starts deal 1 itself, dealt from a seed
chosen (``sapsam.fairness.fantasyland_deals``) so that seat 0 is dealt cards it can set with a
pair of queens or better in front and its rows in order, and seat 0's bot places each street's
cards into those rows (a move needing no solver, so it is made well within the move time). The
seed is committed, revealed and verified as any other; every later deal's is the CSPRNG's.

Exit status 0 when a Fantasyland and a timeout were played and every deal verified, 1 otherwise.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import threading
import time
from typing import Any, Final

from sapsam.cli.wording import plural

FAILED: Final = 1
MOVE_SECONDS: Final = 3
"""The demo table's time per placement: short, so the deliberate timeout costs little."""
SEED_TRIES: Final = 2000
BOT_SECONDS: Final = 300
HUNTER: Final = 0
"""The seat dealt a Fantasyland-earning hand in deal 1."""


def _seat_number(name: str) -> int:
    return int(name.rsplit("/", 1)[1])


def _rows_text(rows: Any) -> str:
    return " | ".join(" ".join(row) for row in (rows.front, rows.middle, rows.back))


def _start_chosen_deal(operator: Any, tables: Any, table: Any, seats: int) -> Any:
    """Start deal 1 from a seed under which the hunter can earn a Fantasyland (dealt as the
    server deals: no entropy, the deck cut where the cutter's bot cuts); the rows that earn it,
    as the SDK carries rows."""
    import uuid

    from sapsam import fairness
    from sapsam.fairness.fantasyland_deals import earning_seed
    from sapsam_client.commitment import Rows
    from sapsam_client.open_face_bot import open_face_rules

    rules = open_face_rules(table.open_face_rule_set)
    table_id = uuid.UUID(table.name.removeprefix("tables/"))
    dealer = _seat_number(table.dealer_seat)
    cutter = fairness.cutter_for(dealer, seats)
    seed, rows = earning_seed(
        table_id,
        dealer,
        HUNTER,
        streets=rules.street_cards,
        cut=1 + (cutter + 1) % 51,  # the cutter bot's (seed = its seat) cut in deal 1
        label=f"sapsam demo-ofc {table_id}",
        seats=seats,
        entry_rank=rules.fantasyland_entry_rank or "Q",
        attempts=SEED_TRIES,
    )
    # Every seed drawn while the operator's StartDeal runs (a retried call draws again) is the
    # chosen one; no other deal starts meanwhile (the bots are not playing yet).
    tables.deal_seeds = lambda: seed
    try:
        operator.start_deal(table.name)
    finally:
        tables.deal_seeds = fairness.new_seed
    return Rows.of(*((str(card) for card in row) for row in rows))


def _play_set(operator: Any, tables: Any, address: str, preset: str, seats: int) -> tuple[str, Any]:
    """The set at a new table: its name, and what the watch saw (Fantasylands, timeouts)."""
    from sapsam_client import connect
    from sapsam_client.open_face_bot import OpenFaceBot

    table = operator.create_open_face_table(seats, preset=preset, move_seconds=MOVE_SECONDS)
    print(f"table {table.name} ({preset}, {plural(seats, 'seat')})")
    bots = []
    for seat in range(seats):
        client = connect(address)
        registration = client.register(f"solver bot {seat}")
        joined = client.join_table(table.name, seat=seat)
        player_id = registration.player.removeprefix("players/")
        late = seat == seats - 1
        bots.append(
            OpenFaceBot(
                client, table.name, joined.name, player_id, seed=seat, late_once=late, hunt=True
            )
        )
    operator.choose_dealer(table.name)
    rows = _start_chosen_deal(operator, tables, operator.get_table(table.name), seats)
    bots[HUNTER].planned[1] = rows
    print(f"  deal 1's seed is chosen so that seat {HUNTER} earns a Fantasyland")
    threads = [threading.Thread(target=bot.play, daemon=True) for bot in bots]
    for thread in threads:
        thread.start()
    seen = _watch(operator, table.name)
    for thread in threads:
        thread.join(BOT_SECONDS)
    for bot in bots:
        bot.stop.set()
    return table.name, seen


class _Seen:
    def __init__(self) -> None:
        self.fantasylands = 0
        self.timeouts = 0
        self.deals = 0


def _watch(operator: Any, table: str) -> _Seen:
    seen = _Seen()
    fantasy: set[str] = set()
    for event in operator.watch(table):
        kind = event.WhichOneof("payload")
        if kind == "fantasyland_committed":
            fantasy.add(event.fantasyland_committed.seat)
        elif kind == "fantasyland_timed_out":
            fantasy.add(event.fantasyland_timed_out.seat)
            seen.timeouts += 1
        elif kind == "cards_placed" and event.cards_placed.automatic == "timeout":
            seen.timeouts += 1
            print(f"  seat {_seat_number(event.cards_placed.seat)} timed out: placed for it")
        elif kind == "deal_scored":
            score = event.deal_scored.open_face
            seen.deals += 1
            seen.fantasylands += len(fantasy)
            print(f"deal {score.deal.rsplit('/', 1)[1]}")
            for seat in score.seats:
                notes = ("  FL" if seat.seat in fantasy else "") + ("  DEAD" if seat.dead else "")
                line = f"  {_seat_number(seat.seat)} {_rows_text(seat.rows)}"
                print(f"{line:<52}{seat.score_delta:+4d} ({seat.series_total:+d}){notes}")
            fantasy = set()
        elif kind == "series_completed":
            standings = sorted(event.series_completed.standings, key=lambda s: s.place)
            shown = ", ".join(f"seat {_seat_number(s.seat)} {s.total:+d}" for s in standings)
            print(f"set over: {shown}"[:80])
    return seen


def _verify(database_url: str, table: str) -> tuple[bool, int]:
    """The table's whole log exported and verified; (ok, deals verified)."""
    import psycopg

    from sapsam.audit import Requester, select_table
    from sapsam.audit.verifier import verify_audit_export
    from sapsam.store.offline_reads import read_stream

    with psycopg.connect(database_url) as connection:
        recorded = read_stream(connection, "table-" + table.removeprefix("tables/"))
    export = select_table(recorded, Requester.operator(), table.removeprefix("tables/"))
    report = verify_audit_export(export)
    return report.ok, report.deals_verified


def run_open_face_demo(arguments: argparse.Namespace) -> int:
    """The open-face demo (see the module docstring)."""
    try:
        from sapsam_client import connect
    except ImportError as error:
        from sapsam.cli.demo_command import missing_client_message

        print(f"sapsam demo: {missing_client_message(error)}", file=sys.stderr)
        return FAILED
    from sapsam.api.server import ServerConfig, start_server
    from sapsam.cli.bootstrap import build_services
    from sapsam.cli.demo_command import demo_database, describe_demo_database
    from sapsam.rules.open_face.presets import OPEN_FACE_PRESETS

    rules = OPEN_FACE_PRESETS.get(arguments.preset)
    if rules is None:
        known = ", ".join(OPEN_FACE_PRESETS)
        print(
            f"sapsam demo: unknown open-face preset {arguments.preset!r} ({known})", file=sys.stderr
        )
        return FAILED
    if not rules.min_seats <= arguments.seat_count <= rules.max_seats:
        print(
            f"sapsam demo: --seat-count must be {rules.min_seats} to {rules.max_seats} under "
            f"preset {arguments.preset!r}, not {arguments.seat_count}",
            file=sys.stderr,
        )
        return FAILED

    started = time.monotonic()
    operator_token = secrets.token_urlsafe(24)
    with demo_database(arguments.database_url, prefix="sapsam-demo-ofc-") as database_url:
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
            table, seen = _play_set(
                operator, tables, address, arguments.preset, arguments.seat_count
            )
            print("verifying the table from the log")
            verified, count = _verify(database_url, table)
            ok = verified and count == seen.deals
            print(f"  {table}: {'ok' if ok else 'FAILED'} ({plural(count, 'deal')} verified)")
            fantasylands, timeouts = seen.fantasylands, seen.timeouts
            print(
                f"{plural(fantasylands, 'Fantasyland')}, {plural(timeouts, 'timeout')}; "
                f"verification: {'PASSED' if ok else 'FAILED'}"
            )
            ok = ok and fantasylands > 0 and timeouts > 0
            if ok:
                print(f"demo finished in {time.monotonic() - started:.1f} s")
            return 0 if ok else FAILED
        finally:
            server.stop()
