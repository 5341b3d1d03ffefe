"""The seating draw is held to docs/tournament-vectors.json, and the vectors to an independent
reading of docs/tournaments.md (hashlib and hmac only, no sapsam code)."""

from __future__ import annotations

import hashlib
import hmac
import json
import struct
import uuid
from pathlib import Path
from typing import Any

from sapsam.domain.tournament_seating import (
    draw_order,
    seat_by_standings,
    seat_randomly,
    seating_commitment,
    seating_key,
    table_sizes,
)

VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "tournament-vectors.json").read_text()
)


def lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def spec_hash(tag: bytes, case: dict[str, Any]) -> bytes:
    return hashlib.sha256(
        lp(b"sapsam/tournament/v1/" + tag)
        + uuid.UUID(case["tournament_id"]).bytes
        + struct.pack(">Q", case["round"])
        + lp(bytes.fromhex(case["seed"]))
    ).digest()


def spec_shuffle(key: bytes, players: list[str]) -> list[str]:
    def words() -> Any:
        counter = 0
        while True:
            block = hmac.digest(key, struct.pack(">Q", counter), "sha256")
            yield from struct.unpack(">8I", block)
            counter += 1

    stream = words()
    order = sorted(players, key=lambda player: player.encode())
    for position in range(len(order) - 1, 0, -1):
        bound = position + 1
        limit = 2**32 - 2**32 % bound
        word = next(stream)
        while word >= limit:
            word = next(stream)
        other = word % bound
        order[position], order[other] = order[other], order[position]
    return order


def test_random_seating_vectors() -> None:
    for case in VECTORS["random"]:
        tournament = uuid.UUID(case["tournament_id"])
        seed = bytes.fromhex(case["seed"])
        number = case["round"]
        assert spec_hash(b"seating-commitment", case).hex() == case["commitment"]
        assert spec_hash(b"seating-key", case).hex() == case["key"]
        assert spec_shuffle(bytes.fromhex(case["key"]), case["entrants"]) == case["draw_order"]
        assert seating_commitment(tournament, number, seed).hex() == case["commitment"]
        assert seating_key(tournament, number, seed).hex() == case["key"]
        assert list(draw_order(tournament, number, seed, case["entrants"])) == case["draw_order"]
        assert (
            list(table_sizes(len(case["entrants"]), case["seats_per_table"])) == case["table_sizes"]
        )
        tables = seat_randomly(tournament, number, seed, case["entrants"], case["seats_per_table"])
        assert [list(table) for table in tables] == case["tables"]


def test_standings_seating_vectors() -> None:
    for case in VECTORS["standings"]:
        tournament = uuid.UUID(case["tournament_id"])
        seed = bytes.fromhex(case["seed"])
        key = spec_hash(b"seating-key", case)
        drawn = spec_shuffle(key, list(case["totals"]))
        assert drawn == case["draw_order"]
        order = sorted(drawn, key=lambda p: (-case["totals"][p], drawn.index(p)))
        assert [order[0:4], order[4:8]] == case["tables"]
        tables = seat_by_standings(
            tournament, case["round"], seed, case["totals"], case["seats_per_table"]
        )
        assert [list(table) for table in tables] == case["tables"]
