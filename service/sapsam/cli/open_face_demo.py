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
from typing import Any, Final

from sapsam.cli import open_face_demo_play as play
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
    dealer = play.seat_number(table.dealer_seat)
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


def _play_set(
    operator: Any, tables: Any, address: str, preset: str, seats: int
) -> tuple[str, _Seen]:
    """The set at a new table: its name, and what the watch saw (Fantasylands, timeouts)."""
    table = operator.create_open_face_table(seats, preset=preset, move_seconds=MOVE_SECONDS)
    print(f"table {table.name} ({preset}, {plural(seats, 'seat')})")
    bots = play.seat_bots(address, table.name, seats, late_seat=seats - 1)
    operator.choose_dealer(table.name)
    rows = _start_chosen_deal(operator, tables, operator.get_table(table.name), seats)
    bots[HUNTER].planned[1] = rows
    print(f"  deal 1's seed is chosen so that seat {HUNTER} earns a Fantasyland")
    return table.name, play.play_bots(bots, operator, table.name, _Seen())


class _Seen(play.DealWatch):
    def __init__(self) -> None:
        super().__init__()
        self.timeouts = 0

    def other(self, kind: str, event: Any) -> None:
        if kind == "fantasyland_timed_out":
            self.fantasy.add(event.fantasyland_timed_out.seat)
            self.timeouts += 1
        elif kind == "cards_placed" and event.cards_placed.automatic == "timeout":
            self.timeouts += 1
            print(f"  seat {play.seat_number(event.cards_placed.seat)} timed out: placed for it")


def _passed(seen: _Seen, verified: bool) -> bool:
    fantasylands, timeouts = seen.fantasylands, seen.timeouts
    print(
        f"{plural(fantasylands, 'Fantasyland')}, {plural(timeouts, 'timeout')}; "
        f"verification: {'PASSED' if verified else 'FAILED'}"
    )
    return verified and fantasylands > 0 and timeouts > 0


def run_open_face_demo(arguments: argparse.Namespace) -> int:
    """The open-face demo (see the module docstring)."""
    from sapsam.rules.open_face.presets import OPEN_FACE_PRESETS

    seats = arguments.seat_count
    return play.run_demo(arguments, OPEN_FACE_PRESETS, "open-face", seats, _play_set, _passed)
