"""Choosing a deal in which a seat earns Fantasyland, for the open-face tests of every layer
(tests/domain/open_face_deals.py, tests/api/test_open_face_fantasyland_api.py,
tests/clients/test_play_open_face.py): the rows that earn it, and a first deal's seed that deals
a seat cards for them."""

from __future__ import annotations

import hashlib
import uuid
from itertools import combinations

from sapsam import fairness
from sapsam.fairness.open_face_deal import deal_streets, street_schedule
from sapsam.rules.cards import Card
from sapsam.rules.hands import evaluate3, evaluate5
from sapsam.rules.open_face.dead import rows_in_order

Rows = tuple[tuple[Card, ...], ...]


def fantasy_rows(cards: tuple[Card, ...]) -> Rows | None:
    """Rows for these 13 cards with a pair of queens or better in front and the rows in order
    (the hand earns Fantasyland), or None when there are none."""
    queen = "23456789TJQKA".index("Q")
    for first, second in combinations(cards, 2):
        if first.rank != second.rank or first.rank < queen:
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
    attempts: int = 400,
) -> tuple[bytes, Rows]:
    """The first seed of ``label 0``, ``label 1``, ... (SHA-256) under which ``seat`` of a
    two-seat table's first deal (no entropy, the deck cut at ``cut``, the preset's ``streets``)
    is dealt cards it can set to earn Fantasyland, and those rows."""
    schedule = street_schedule(streets, (None, None))
    for attempt in range(attempts):
        seed = hashlib.sha256(f"{label} {attempt}".encode()).digest()
        deck = fairness.shuffle_deck(seed, (None, None), table_id, 1)
        dealt = deal_streets(fairness.cut_deck(deck, cut), dealer, schedule)
        rows = fantasy_rows(tuple(card for street in dealt for card in street[seat]))
        if rows is not None:
            return seed, rows
    raise AssertionError(f"no seed in {attempts} lets the seat earn a Fantasyland")
