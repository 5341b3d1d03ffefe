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
import uuid
from typing import Any, Final

from sapsam.cli import open_face_demo_play as play
from sapsam.cli.wording import plural

PINEAPPLE_SEATS: Final = 3
SEED_TRIES: Final = 4000


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
    dealer = play.seat_number(table.dealer_seat)
    for attempt in range(SEED_TRIES):
        seed = hashlib.sha256(f"sapsam demo-pineapple {table_id} {attempt}".encode()).digest()
        if hunted_fantasyland(rules, table_id, dealer, seats, seed):
            return seed
    return None


class _Seen(play.DealWatch):
    def __init__(self) -> None:
        super().__init__()
        self.discards_committed = 0
        self.discards_opened = 0
        self.committed: dict[str, int] = {}
        self.opened: dict[str, list[str]] = {}

    def other(self, kind: str, event: Any) -> None:
        if kind == "discard_committed":
            seat = event.discard_committed.seat
            self.committed[seat] = self.committed.get(seat, 0) + 1
            self.discards_committed += 1
        elif kind == "discards_revealed":
            revealed = event.discards_revealed
            self.opened[revealed.seat] = [card for d in revealed.discards for card in d.cards]
            self.discards_opened += len(revealed.discards)

    def seat_scored(self, seat: Any) -> None:
        thrown = self.opened.get(seat.seat)
        if thrown:
            made = self.committed.get(seat.seat, 0)
            print(f"    discarded {' '.join(thrown)} ({made} committed)")

    def deal_over(self) -> None:
        self.committed, self.opened = {}, {}


def _play(operator: Any, tables: Any, address: str, preset: str, seats: int) -> tuple[str, _Seen]:
    from sapsam import fairness

    table = operator.create_open_face_table(seats, preset=preset)
    print(f"table {table.name} ({preset}, {plural(seats, 'seat')})")
    bots = play.seat_bots(address, table.name, seats)
    operator.choose_dealer(table.name)
    chosen = fantasyland_seed(operator.get_table(table.name), seats)
    if chosen is not None:
        # Deal 1 is dealt from a seed chosen so that a Fantasyland is shown; it is committed,
        # revealed and verified as any other, and every later deal's seed is the CSPRNG's.
        print("  deal 1's seed is chosen so that seat 0 earns a Fantasyland")
        once = iter([chosen])
        tables.deal_seeds = lambda: next(once, None) or fairness.new_seed()
    return table.name, play.play_bots(bots, operator, table.name, _Seen())


def _passed(seen: _Seen, verified: bool) -> bool:
    print(
        f"{plural(seen.fantasylands, 'Fantasyland')}, "
        f"{plural(seen.discards_committed, 'discard')} committed, "
        f"{seen.discards_opened} opened; verification: {'PASSED' if verified else 'FAILED'}"
    )
    return verified and seen.fantasylands > 0


def run_pineapple_demo(arguments: argparse.Namespace) -> int:
    """The Pineapple demo (see the module docstring)."""
    from sapsam.rules.open_face.presets import PINEAPPLE_PRESETS

    # sapsam demo's default of 4 seats is more than Pineapple seats: 3 then.
    seats = PINEAPPLE_SEATS if arguments.seat_count == 4 else arguments.seat_count
    return play.run_demo(arguments, PINEAPPLE_PRESETS, "Pineapple", seats, _play, _passed)
