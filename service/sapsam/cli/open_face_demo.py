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
import time
from typing import Any, Final

from sapsam.cli.open_face_demo_play import (
    FAILED,
    client_missing,
    demo_server,
    finish,
    play_bots,
    preset_rules,
    print_deal_header,
    print_seat_score,
    print_set_over,
    seat_bots,
    seat_number,
    verify,
)
from sapsam.cli.wording import plural

MOVE_SECONDS: Final = 3
"""The demo table's time per placement: short, so the deliberate timeout costs little."""
SEED_TRIES: Final = 2000
HUNTER: Final = 0
"""The seat dealt a Fantasyland-earning hand in deal 1."""


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
    dealer = seat_number(table.dealer_seat)
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
    table = operator.create_open_face_table(seats, preset=preset, move_seconds=MOVE_SECONDS)
    print(f"table {table.name} ({preset}, {plural(seats, 'seat')})")
    bots = seat_bots(address, table.name, seats, late_seat=seats - 1)
    operator.choose_dealer(table.name)
    rows = _start_chosen_deal(operator, tables, operator.get_table(table.name), seats)
    bots[HUNTER].planned[1] = rows
    print(f"  deal 1's seed is chosen so that seat {HUNTER} earns a Fantasyland")
    return table.name, play_bots(bots, lambda: _watch(operator, table.name))


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
            print(f"  seat {seat_number(event.cards_placed.seat)} timed out: placed for it")
        elif kind == "deal_scored":
            score = event.deal_scored.open_face
            seen.deals += 1
            seen.fantasylands += len(fantasy)
            print_deal_header(score)
            for seat in score.seats:
                print_seat_score(seat, fantasy)
            fantasy = set()
        elif kind == "series_completed":
            print_set_over(event)
    return seen


def run_open_face_demo(arguments: argparse.Namespace) -> int:
    """The open-face demo (see the module docstring)."""
    if client_missing():
        return FAILED
    from sapsam.rules.open_face.presets import OPEN_FACE_PRESETS

    preset, seats = arguments.preset, arguments.seat_count
    if preset_rules(OPEN_FACE_PRESETS, "open-face", preset, seats) is None:
        return FAILED
    started = time.monotonic()
    with demo_server(arguments, prefix="sapsam-demo-ofc-") as demo:
        table, seen = _play_set(demo.operator, demo.tables, demo.address, preset, seats)
        ok = verify(demo.database_url, table, seen.deals)
        fantasylands, timeouts = seen.fantasylands, seen.timeouts
        print(
            f"{plural(fantasylands, 'Fantasyland')}, {plural(timeouts, 'timeout')}; "
            f"verification: {'PASSED' if ok else 'FAILED'}"
        )
        return finish(ok and fantasylands > 0 and timeouts > 0, started)
