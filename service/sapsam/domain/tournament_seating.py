"""The tournament seating draw: who sits at which table, from a committed seed.

Pure code built from the fair-dealing constructions (docs/fairness.md §1, §7, §8) with its own
domain-separation tags, so a seating hash can never stand for a deal's hash:

    seating_commitment = SHA-256(lp("sapsam/tournament/v1/seating-commitment")
                                 || uuid(tournament_id) || u64(round) || lp(seed))
    seating_key        = SHA-256(lp("sapsam/tournament/v1/seating-key")
                                 || uuid(tournament_id) || u64(round) || lp(seed))

The draw orders the entrants canonically (by the UTF-8 bytes of their player ids), shuffles them
with Fisher–Yates driven by the counter stream of ``seating_key`` with rejection sampling (exactly
the deal's shuffle, over players instead of cards), and deals the shuffled list into tables in
order. Re-seating "by standings" sorts the entrants by total (highest first) and breaks equal
totals by the round's drawn order, so even that is verifiable and never favours a player id.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from typing import Final

from sapsam.fairness.encoding import (
    SEED_BYTES,
    FairnessError,
    length_prefixed,
    require_seed,
    u64,
)
from sapsam.fairness.shuffle import draw_index, fisher_yates, stream_words

TAG_PREFIX: Final = b"sapsam/tournament/v1/"
TAG_SEATING_COMMITMENT: Final = TAG_PREFIX + b"seating-commitment"
TAG_SEATING_KEY: Final = TAG_PREFIX + b"seating-key"
MIN_TABLE_SEATS: Final = 2
MAX_TABLE_SEATS: Final = 4

__all__ = [
    "SEED_BYTES",
    "draw_order",
    "seat_by_standings",
    "seat_randomly",
    "seating_commitment",
    "seating_key",
    "table_sizes",
]


def _round_bytes(round_number: int) -> bytes:
    if isinstance(round_number, bool) or not isinstance(round_number, int) or round_number < 1:
        raise FairnessError(f"round must be an integer >= 1, not {round_number!r}")
    return u64(round_number)


def _tournament_bytes(tournament_id: uuid.UUID) -> bytes:
    if not isinstance(tournament_id, uuid.UUID):
        raise FairnessError(f"tournament id must be a UUID, not {type(tournament_id).__name__}")
    return tournament_id.bytes


def seating_commitment(tournament_id: uuid.UUID, round_number: int, seed: bytes) -> bytes:
    """The 32-byte commitment to a round's seating seed, published when the tournament is made."""
    return hashlib.sha256(
        length_prefixed(TAG_SEATING_COMMITMENT)
        + _tournament_bytes(tournament_id)
        + _round_bytes(round_number)
        + length_prefixed(require_seed(seed, "seating seed"))
    ).digest()


def seating_key(tournament_id: uuid.UUID, round_number: int, seed: bytes) -> bytes:
    """The HMAC key of the round's counter stream."""
    return hashlib.sha256(
        length_prefixed(TAG_SEATING_KEY)
        + _tournament_bytes(tournament_id)
        + _round_bytes(round_number)
        + length_prefixed(require_seed(seed, "seating seed"))
    ).digest()


def canonical_entrants(entrants: Sequence[str]) -> tuple[str, ...]:
    """The entrants in canonical order: by the UTF-8 bytes of their ids; duplicates refused."""
    ordered = tuple(sorted(entrants, key=lambda player: player.encode()))
    if len(set(ordered)) != len(ordered):
        raise FairnessError("the entrants hold a player twice")
    return ordered


def draw_order(
    tournament_id: uuid.UUID, round_number: int, seed: bytes, entrants: Sequence[str]
) -> tuple[str, ...]:
    """The entrants shuffled by the round's seed (Fisher–Yates from the last position down)."""
    players = list(canonical_entrants(entrants))
    words = stream_words(seating_key(tournament_id, round_number, seed))
    fisher_yates(players, lambda bound: draw_index(words, bound))
    return tuple(players)


def table_sizes(entrant_count: int, seats_per_table: int) -> tuple[int, ...]:
    """How many players sit at each table: as many tables of ``seats_per_table`` as the entrants
    fill, the remainder spread so sizes differ by at most one (larger tables first).

    Tables start from ``ceil(entrants / seats_per_table)``; while that would leave a table with
    fewer than 2 players, one table fewer is used (so 3 entrants at 2 seats per table make one
    table of 3). Raises ``FairnessError`` for fewer than 2 entrants.
    """
    if entrant_count < MIN_TABLE_SEATS:
        raise FairnessError(f"a seating needs at least 2 entrants, not {entrant_count}")
    if not MIN_TABLE_SEATS <= seats_per_table <= MAX_TABLE_SEATS:
        raise FairnessError(f"seats per table must be 2 to 4, not {seats_per_table}")
    tables = -(-entrant_count // seats_per_table)
    while tables > 1 and entrant_count // tables < MIN_TABLE_SEATS:
        tables -= 1
    base, extra = divmod(entrant_count, tables)
    sizes = tuple(base + 1 if index < extra else base for index in range(tables))
    if max(sizes) > MAX_TABLE_SEATS:
        raise FairnessError(f"{entrant_count} entrants cannot be seated at tables of 2 to 4")
    return sizes


def _deal_into_tables(order: Sequence[str], sizes: Sequence[int]) -> tuple[tuple[str, ...], ...]:
    tables: list[tuple[str, ...]] = []
    start = 0
    for size in sizes:
        tables.append(tuple(order[start : start + size]))
        start += size
    return tuple(tables)


def seat_randomly(
    tournament_id: uuid.UUID,
    round_number: int,
    seed: bytes,
    entrants: Sequence[str],
    seats_per_table: int,
) -> tuple[tuple[str, ...], ...]:
    """Per table, its players in seat order: the drawn order dealt into tables of
    :func:`table_sizes`, table 0 first, seat 0 first."""
    order = draw_order(tournament_id, round_number, seed, entrants)
    return _deal_into_tables(order, table_sizes(len(order), seats_per_table))


def seat_by_standings(
    tournament_id: uuid.UUID,
    round_number: int,
    seed: bytes,
    totals: Mapping[str, int],
    seats_per_table: int,
) -> tuple[tuple[str, ...], ...]:
    """Strongest together: entrants by total, highest first, equal totals in the round's drawn
    order, dealt into tables of :func:`table_sizes` (table 0 holds the leaders)."""
    drawn = draw_order(tournament_id, round_number, seed, list(totals))
    rank_in_draw = {player: index for index, player in enumerate(drawn)}
    order = sorted(drawn, key=lambda player: (-totals[player], rank_in_draw[player]))
    return _deal_into_tables(order, table_sizes(len(order), seats_per_table))
