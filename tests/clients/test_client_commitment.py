"""The client's own commitment code equals the published vectors and the server's code."""

from __future__ import annotations

import json
import secrets
import uuid
from pathlib import Path

import pytest

from sapsam import fairness
from sapsam.rules.arrangement import Arrangement
from sapsam_client.commitment import (
    CardError,
    Rows,
    arrangement_commitment,
    canonical,
    card_index,
    card_text,
    encode_rows,
    fresh_nonce,
    row_problem,
)

VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "fairness-vectors.json").read_text()
)["arrangement_commitments"]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["expected"]["commitment"][:12])
def test_the_client_reproduces_the_published_vectors(vector: dict[str, dict[str, object]]) -> None:
    given = vector["input"]
    rows = Rows.of(
        str(given["front"]).split(), str(given["middle"]).split(), str(given["back"]).split()
    )
    nonce = bytes.fromhex(str(given["nonce"]))
    assert encode_rows(rows).hex() == vector["expected"]["rows_encoding"]
    player = given.get("player_id")
    commitment = arrangement_commitment(
        str(given["table_id"]),
        int(str(given["deal_number"])),
        int(str(given["seat"])),
        rows,
        nonce,
        scheme=int(str(given.get("scheme", 1))),
        player_id=None if player is None else str(player),
    )
    assert commitment.hex() == vector["expected"]["commitment"]


def test_the_client_equals_the_server_on_random_rows() -> None:
    for _ in range(200):
        deck = list(range(52))
        cards = [deck.pop(secrets.randbelow(len(deck))) for _ in range(13)]
        table = uuid.uuid4()
        deal, seat = 1 + secrets.randbelow(1000), secrets.randbelow(4)
        nonce = secrets.token_bytes(16 + secrets.randbelow(49))
        rows = Rows.of(
            (card_text(c) for c in cards[:3]),
            (card_text(c) for c in cards[3:8]),
            (card_text(c) for c in cards[8:]),
        )
        server_side = fairness.arrangement_commitment(
            table, deal, seat, Arrangement.of(cards[:3], cards[3:8], cards[8:]), nonce
        )
        assert arrangement_commitment(table, deal, seat, rows, nonce) == server_side
        player = str(uuid.uuid4())
        server_side_2 = fairness.arrangement_commitment(
            table,
            deal,
            seat,
            Arrangement.of(cards[:3], cards[3:8], cards[8:]),
            nonce,
            scheme=2,
            player_id=player,
        )
        client_side_2 = arrangement_commitment(
            table, deal, seat, rows, nonce, scheme=2, player_id=player
        )
        assert client_side_2 == server_side_2 != server_side


def test_cards_read_like_the_server_reads_them() -> None:
    assert card_index("2c") == 0 and card_index("As") == 51
    assert card_index("td") == card_index("Td") == card_index("10d") == 33
    assert card_index("Q♠") == card_index("Qs")
    assert canonical(["As", "2c", "Td"]) == ("2c", "Td", "As")
    for bad in ("", "1c", "Ax", "Asd", "Z"):
        with pytest.raises(CardError):
            card_index(bad)


def test_nonces_are_fresh_and_sized() -> None:
    nonces = {fresh_nonce() for _ in range(100)}
    assert len(nonces) == 100 and all(len(nonce) == 32 for nonce in nonces)
    rows = Rows.of(["2c", "3c", "4c"], ["5c"] * 5, ["6c"] * 5)
    with pytest.raises(ValueError):
        arrangement_commitment(uuid.uuid4(), 1, 0, rows, b"short")


def test_row_problems_are_named() -> None:
    dealt = ["2c", "3c", "4c", "5c", "6c", "7c", "8c", "9c", "Tc", "Jc", "Qc", "Kc", "Ac"]
    good = Rows.of(dealt[:3], dealt[3:8], dealt[8:])
    assert row_problem(good, dealt) == ""
    assert "front row has 2" in row_problem(Rows.of(dealt[:2], dealt[2:8], dealt[8:]), dealt)
    assert "twice" in row_problem(Rows.of(dealt[:3], dealt[3:8], dealt[7:12]), dealt)
    assert "not in your hand: As" in row_problem(
        Rows.of(dealt[:3], dealt[3:8], [*dealt[8:12], "As"]), dealt
    )
