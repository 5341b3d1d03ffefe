"""Chosen open-face deals in which a seat earns Fantasyland, for the demo and the tests.

Why here: ``sapsam demo --preset ofc_...`` (``sapsam.cli.open_face_demo``) must show a Fantasyland
every time, and the open-face tests of every layer (domain, API, SDK) play one on purpose; all of
them take the deal from here: a first deal's seed under which a seat is dealt cards it can set to
earn Fantasyland (dealt as the server deals: shuffled from the seed with no entropy, cut, dealt by
the preset's streets), and the rows that earn it. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import uuid
from itertools import combinations

from sapsam.fairness.deal import cut_deck
from sapsam.fairness.open_face_deal import deal_streets, street_schedule
from sapsam.fairness.shuffle import shuffle_deck
from sapsam.rules.cards import RANK_CHARS, Card
from sapsam.rules.hands import evaluate3, evaluate5
from sapsam.rules.open_face.dead import rows_in_order

CardRows = tuple[tuple[Card, ...], ...]
"""Front, middle and back."""


def fantasy_rows(cards: tuple[Card, ...], entry_rank: str = "Q") -> CardRows | None:
    """Rows for these 13 cards with a pair of ``entry_rank`` or better in front and the rows in
    order (the hand earns Fantasyland), or None when there are none."""
    lowest = RANK_CHARS.index(entry_rank)
    for first, second in combinations(cards, 2):
        if first.rank != second.rank or first.rank < lowest:
            continue
        rest = [card for card in cards if card not in (first, second)]
        for kicker in rest:
            others = [card for card in rest if card != kicker]
            front = (first, second, kicker)
            for middle in combinations(others, 5):
                back = tuple(card for card in others if card not in middle)
                if rows_in_order(evaluate3(*front), evaluate5(*middle), evaluate5(*back)):
                    return front, middle, back
    return None


def earning_seed(
    table_id: uuid.UUID,
    dealer: int,
    seat: int,
    *,
    streets: tuple[int, ...],
    cut: int,
    label: str,
    seats: int = 2,
    entry_rank: str = "Q",
    attempts: int = 400,
) -> tuple[bytes, CardRows]:
    """The first seed of ``label 0``, ``label 1``, ... (SHA-256) under which ``seat`` of a
    ``seats``-seat table's first deal (no entropy, the deck cut at ``cut``, the preset's
    ``streets``) is dealt cards it can set to earn Fantasyland, and those rows.

    Raises ``LookupError`` when none of ``attempts`` seeds does."""
    schedule = street_schedule(streets, (None,) * seats)
    for attempt in range(attempts):
        seed = hashlib.sha256(f"{label} {attempt}".encode()).digest()
        deck = shuffle_deck(seed, (None,) * seats, table_id, 1)
        dealt = deal_streets(cut_deck(deck, cut), dealer, schedule)
        rows = fantasy_rows(tuple(card for street in dealt for card in street[seat]), entry_rank)
        if rows is not None:
            return seed, rows
    raise LookupError(f"no seed in {attempts} lets seat {seat} earn a Fantasyland")
