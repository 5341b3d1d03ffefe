"""``sapsam demo --preset pineapple`` (``make demo-pineapple``): three solver bots play a Pineapple
set over gRPC with a Fantasyland, shown and then verified (issue #19).

The server and the database are ``sapsam demo``'s (an embedded PostgreSQL in a temporary folder,
or ``--database-url``). The operator creates a table of the preset (``pineapple`` or
``pineapple_2_7``; 3 seats, or ``--seat-count 2``); each seat is played by the SDK's open-face
bot (``sapsam_client.open_face_bot``) in a thread: on every street after the first it places 2 of
its 3 cards and discards 1, committed as a hash (the card and nonce kept by the client), and once
every hand is complete it opens its discards with a signed ``RevealDiscards``. The demo watches
as a spectator, who sees each discard only as "a card was discarded" until the openings, and
prints each deal's rows, discards, score and the set's totals (``FL`` a Fantasyland hand, ``DEAD``
a dead one). Then the table's log is exported and verified (``sapsam audit verify``'s checks:
every placement legal and in turn, every discard against its commitment and the dealt cards, the
streets from the published seed, the scores recomputed, the players' signatures).

Deterministic: deal 1's seed is chosen (as the server would deal it) so that seat 0's bot, which
goes for Fantasyland with a high pair, earns it by playing as it always plays (its moves are a
pure function of its cards, ``choose_street``), and deal 2 is then its Fantasyland: 14 cards,
13 set face down and committed, 1 discarded. Exit status 0 when a Fantasyland was played and
every deal verified, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import secrets
import sys
import threading
import time
import uuid
from typing import Any, Final

from sapsam.cli.wording import plural

FAILED: Final = 1
PINEAPPLE_SEATS: Final = 3
SEED_TRIES: Final = 4000
BOT_SECONDS: Final = 300


def _seat_number(name: str) -> int:
    return int(name.rsplit("/", 1)[1])


def _rows_text(rows: Any) -> str:
    return " | ".join(" ".join(row) for row in (rows.front, rows.middle, rows.back))


def hunted_fantasyland(
    rules: Any, table_id: uuid.UUID, dealer: int, seats: int, seed: bytes
) -> bool:
    """Whether seat 0's hunting bot (bot seed 0) earns a Fantasyland in deal 1 dealt from
    ``seed`` (no entropy; the cutter cuts where its bot does), playing as it plays."""
    from sapsam import fairness
    from sapsam.fairness.open_face_deal import deal_streets, street_schedule
    from sapsam.rules.open_face.board import Board
    from sapsam.rules.open_face.fantasyland import next_fantasyland
    from sapsam.rules.open_face.scoring import judge_hand
    from sapsam_client.open_face_bot import choose_street, placement_seed

    cutter = fairness.cutter_for(dealer, seats)
    cut = 1 + (cutter + 1) % 51  # the cutter bot's (seed = its seat) cut in deal 1
    schedule = street_schedule(rules.dealt_street_cards, (None,) * seats)
    deck = fairness.shuffle_deck(seed, (None,) * seats, table_id, 1)
    streets = deal_streets(fairness.cut_deck(deck, cut), dealer, schedule)
    lowest = "23456789TJQKA".index(rules.fantasyland_entry_rank or "Q")
    first = [card.rank for card in streets[0][0] if card.rank >= lowest]
    if len(first) == len(set(first)):
        return False  # no high pair on the first street: the hunter would not try
    board = Board()
    for street, cards in enumerate(streets):
        placement, _ = choose_street(
            rules, board, cards[0], placement_seed(0, 1, street), hunt=True
        )
        board = board.with_placement(placement)
    return next_fantasyland(rules, judge_hand(rules, board), 0) is not None


def fantasyland_seed(table: Any, seats: int) -> bytes | None:
    """A deal-1 seed under which seat 0 earns a Fantasyland (``hunted_fantasyland``), found by
    dealing seeds as the server would; None if none of ``SEED_TRIES`` does."""
    from sapsam_client.open_face_bot import open_face_rules

    rules = open_face_rules(table.open_face_rule_set)
    table_id = uuid.UUID(table.name.removeprefix("tables/"))
    dealer = _seat_number(table.dealer_seat)
    for attempt in range(SEED_TRIES):
        seed = hashlib.sha256(f"sapsam demo-pineapple {table_id} {attempt}".encode()).digest()
        if hunted_fantasyland(rules, table_id, dealer, seats, seed):
            return seed
    return None


class _Seen:
    def __init__(self) -> None:
        self.fantasylands = 0
        self.deals = 0
        self.discards_committed = 0
        self.discards_opened = 0


def _watch(operator: Any, table: str) -> _Seen:
    seen = _Seen()
    fantasy: set[str] = set()
    committed: dict[str, int] = {}
    opened: dict[str, list[str]] = {}
    for event in operator.watch(table):
        kind = event.WhichOneof("payload")
        if kind == "fantasyland_committed":
            fantasy.add(event.fantasyland_committed.seat)
        elif kind == "discard_committed":
            seat = event.discard_committed.seat
            committed[seat] = committed.get(seat, 0) + 1
            seen.discards_committed += 1
        elif kind == "discards_revealed":
            revealed = event.discards_revealed
            opened[revealed.seat] = [card for d in revealed.discards for card in d.cards]
            seen.discards_opened += len(revealed.discards)
        elif kind == "deal_scored":
            score = event.deal_scored.open_face
            seen.deals += 1
            seen.fantasylands += len(fantasy)
            print(f"deal {score.deal.rsplit('/', 1)[1]}")
            for seat in score.seats:
                notes = ("  FL" if seat.seat in fantasy else "") + ("  DEAD" if seat.dead else "")
                line = f"  {_seat_number(seat.seat)} {_rows_text(seat.rows)}"
                print(f"{line:<52}{seat.score_delta:+4d} ({seat.series_total:+d}){notes}")
                thrown = opened.get(seat.seat)
                if thrown:
                    made = committed.get(seat.seat, 0)
                    print(f"    discarded {' '.join(thrown)} ({made} committed)")
            fantasy, committed, opened = set(), {}, {}
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
    report = verify_audit_export(select_table(recorded, Requester.operator(), table[7:]))
    return report.ok, report.deals_verified


def _play(operator: Any, tables: Any, address: str, preset: str, seats: int) -> tuple[str, _Seen]:
    from sapsam import fairness
    from sapsam_client import connect
    from sapsam_client.open_face_bot import OpenFaceBot

    table = operator.create_open_face_table(seats, preset=preset)
    print(f"table {table.name} ({preset}, {plural(seats, 'seat')})")
    bots = []
    for seat in range(seats):
        client = connect(address)
        registration = client.register(f"solver bot {seat}")
        joined = client.join_table(table.name, seat=seat)
        player_id = registration.player.removeprefix("players/")
        bots.append(OpenFaceBot(client, table.name, joined.name, player_id, seed=seat, hunt=True))
    operator.choose_dealer(table.name)
    chosen = fantasyland_seed(operator.get_table(table.name), seats)
    if chosen is not None:
        # Deal 1 is dealt from a seed chosen so that a Fantasyland is shown; it is committed,
        # revealed and verified as any other, and every later deal's seed is the CSPRNG's.
        print("  deal 1's seed is chosen so that seat 0 earns a Fantasyland")
        once = iter([chosen])
        tables.deal_seeds = lambda: next(once, None) or fairness.new_seed()
    threads = [threading.Thread(target=bot.play, daemon=True) for bot in bots]
    for thread in threads:
        thread.start()
    seen = _watch(operator, table.name)
    for thread in threads:
        thread.join(BOT_SECONDS)
    for bot in bots:
        bot.stop.set()
    return table.name, seen


def run_pineapple_demo(arguments: argparse.Namespace) -> int:
    """The Pineapple demo (see the module docstring)."""
    try:
        from sapsam_client import connect
    except ImportError as error:
        from sapsam.cli.demo_command import missing_client_message

        print(f"sapsam demo: {missing_client_message(error)}", file=sys.stderr)
        return FAILED
    from sapsam.api.server import ServerConfig, start_server
    from sapsam.cli.bootstrap import build_services
    from sapsam.cli.demo_command import demo_database, describe_demo_database
    from sapsam.rules.open_face.presets import PINEAPPLE_PRESETS

    rules = PINEAPPLE_PRESETS.get(arguments.preset)
    if rules is None:
        known = ", ".join(PINEAPPLE_PRESETS)
        print(
            f"sapsam demo: unknown Pineapple preset {arguments.preset!r} ({known})", file=sys.stderr
        )
        return FAILED
    # sapsam demo's default of 4 seats is more than Pineapple seats: 3 then.
    seats = PINEAPPLE_SEATS if arguments.seat_count == 4 else arguments.seat_count
    if not rules.min_seats <= seats <= rules.max_seats:
        print(
            f"sapsam demo: --seat-count must be {rules.min_seats} to {rules.max_seats} under "
            f"preset {arguments.preset!r}, not {arguments.seat_count}",
            file=sys.stderr,
        )
        return FAILED

    started = time.monotonic()
    operator_token = secrets.token_urlsafe(24)
    with demo_database(arguments.database_url, prefix="sapsam-demo-pineapple-") as database_url:
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
            table, seen = _play(operator, tables, address, arguments.preset, seats)
            print("verifying the table from the log")
            verified, count = _verify(database_url, table)
            ok = verified and count == seen.deals
            print(f"  {table}: {'ok' if ok else 'FAILED'} ({plural(count, 'deal')} verified)")
            print(
                f"{plural(seen.fantasylands, 'Fantasyland')}, "
                f"{plural(seen.discards_committed, 'discard')} committed, "
                f"{seen.discards_opened} opened; verification: {'PASSED' if ok else 'FAILED'}"
            )
            ok = ok and seen.fantasylands > 0
            if ok:
                print(f"demo finished in {time.monotonic() - started:.1f} s")
            return 0 if ok else FAILED
        finally:
            server.stop()
