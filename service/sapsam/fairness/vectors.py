"""The test vectors of docs/fairness-vectors.json, built from fixed inputs.

``build_vectors()`` is pure; run ``python -m sapsam.fairness.vectors > docs/fairness-vectors.json``
to regenerate the file after a deliberate change to the spec (the tests then hold the new file to
the code, and a reviewer sees every changed byte in the diff). The published deals among them are
built by ``sapsam.fairness.example_deals``, which the tests and benchmarks also use.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from sapsam.fairness.commitments import arrangement_commitment, encode_rows
from sapsam.fairness.deal import (
    cut_deck,
    cutter_for,
    deal_hands,
    deal_record,
    record_key,
)
from sapsam.fairness.example_deals import (
    VECTOR_TWO_FOUR_RULE_SET,
    bytes_from_label,
    example_published_deal,
)
from sapsam.fairness.open_face_vectors import open_face_deal_vectors
from sapsam.fairness.shuffle import (
    WORD_BITS,
    acceptance_limit,
    draw_dealer,
    lot_commitment,
    lot_key,
    seed_commitment,
    shuffle_deck,
    shuffle_key,
    stream_block,
    stream_words,
)
from sapsam.fairness.signature_vectors import signature_vectors
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import DECK, Card, format_cards

PLAYER_IDS: tuple[str, ...] = (
    "0d5a7b1e-4c3f-4a2b-9e8d-7c6b5a493827",
    "f1e2d3c4-b5a6-4978-8695-a4b3c2d1e0f9",
)
"""Player ids of the scheme 2 vectors (any UTF-8 text of 1 to 128 bytes; sapsam's are UUIDs)."""


DEAL_INPUTS: tuple[dict[str, Any], ...] = (
    {
        "name": "two seats, zero seed, no contributions",
        "table_id": uuid.UUID("00000000-0000-0000-0000-000000000000"),
        "deal_number": 1,
        "seed": bytes(32),
        "contributions": (None, None),
        "cut_position": 1,
        "dealer": 0,
    },
    {
        "name": "two seats, both contributed",
        "table_id": uuid.UUID("5a9c7e3e-1f2b-4c8d-9e0f-112233445566"),
        "deal_number": 2,
        "seed": bytes(range(32)),
        "contributions": (b"seat zero entropy", bytes.fromhex("ff00ff00ff00ff00")),
        "cut_position": 26,
        "dealer": 1,
    },
    {
        "name": "three seats, no contributions",
        "table_id": uuid.UUID("c0ffee00-0000-4000-8000-000000000003"),
        "deal_number": 7,
        "seed": bytes_from_label("three seats seed", 32),
        "contributions": (None, None, None),
        "cut_position": 51,
        "dealer": 2,
    },
    {
        "name": "three seats, only the middle seat contributed",
        "table_id": uuid.UUID("c0ffee00-0000-4000-8000-000000000003"),
        "deal_number": 8,
        "seed": bytes_from_label("three seats seed, deal 8", 32),
        "contributions": (None, bytes([0x01]), None),
        "cut_position": 17,
        "dealer": 0,
    },
    {
        "name": "four seats, no contributions",
        "table_id": uuid.UUID("44444444-4444-4444-8444-444444444444"),
        "deal_number": 1,
        "seed": bytes_from_label("four seats seed", 32),
        "contributions": (None, None, None, None),
        "cut_position": 13,
        "dealer": 3,
    },
    {
        "name": "four seats, every seat contributed, large deal number",
        "table_id": uuid.UUID("44444444-4444-4444-8444-444444444444"),
        "deal_number": 2**40 + 5,
        "seed": bytes_from_label("four seats seed, all contribute", 32),
        "contributions": tuple(bytes_from_label(f"seat {seat}", 16 + seat) for seat in range(4)),
        "cut_position": 30,
        "dealer": 1,
    },
    {
        "name": "four seats, seats 0 and 3 contributed (64 bytes and 1 byte)",
        "table_id": uuid.UUID("44444444-4444-4444-8444-444444444444"),
        "deal_number": 3,
        "seed": bytes_from_label("four seats seed, some contribute", 32),
        "contributions": (
            bytes_from_label("a", 32) + bytes_from_label("b", 32),
            None,
            None,
            b"z",
        ),
        "cut_position": 2,
        "dealer": 2,
    },
)


def _optional_hex(value: bytes | None) -> str | None:
    return None if value is None else value.hex()


def deal_vector(inputs: dict[str, Any]) -> dict[str, Any]:
    """One deal: inputs and every intermediate value a verifier needs to match."""
    table_id: uuid.UUID = inputs["table_id"]
    deal_number: int = inputs["deal_number"]
    seed: bytes = inputs["seed"]
    contributions: tuple[bytes | None, ...] = inputs["contributions"]
    seat_count = len(contributions)
    key = shuffle_key(seed, contributions, table_id, deal_number)
    deck = shuffle_deck(seed, contributions, table_id, deal_number)
    after_cut = cut_deck(deck, inputs["cut_position"])
    hands = deal_hands(after_cut, inputs["dealer"], seat_count)
    record = deal_record(
        seed,
        contributions,
        table_id,
        deal_number,
        inputs["cut_position"],
        inputs["dealer"],
        seat_count,
    )
    return {
        "name": inputs["name"],
        "input": {
            "table_id": str(table_id),
            "deal_number": deal_number,
            "seat_count": seat_count,
            "dealer": inputs["dealer"],
            "seed": seed.hex(),
            "contributions": [_optional_hex(value) for value in contributions],
            "cut_position": inputs["cut_position"],
        },
        "expected": {
            "seed_commitment": seed_commitment(table_id, deal_number, seed).hex(),
            "shuffle_key": key.hex(),
            "stream_block_0": stream_block(key, 0).hex(),
            "deck": format_cards(deck),
            "deck_indices": list(deck),
            "cutter": cutter_for(inputs["dealer"], seat_count),
            "cut_deck": format_cards(after_cut),
            "hands": [format_cards(hand) for hand in hands],
            "record_key": record_key(table_id, deal_number, seed).hex(),
            "record": {
                "deck": record.deck.hex(),
                "cut_deck": record.cut_deck.hex(),
                "hands": [digest.hex() for digest in record.hands],
            },
        },
    }


def lot_vector(table_id: uuid.UUID, lot_seed: bytes, seat_count: int) -> dict[str, Any]:
    """One draw for the first dealer."""
    lot = draw_dealer(lot_seed, table_id, seat_count)
    return {
        "input": {"table_id": str(table_id), "lot_seed": lot_seed.hex(), "seat_count": seat_count},
        "expected": {
            "lot_commitment": lot_commitment(table_id, lot_seed).hex(),
            "lot_key": lot_key(table_id, lot_seed).hex(),
            "cards": format_cards(lot.cards),
            "dealer": lot.dealer,
        },
    }


def commitment_vector(
    table_id: uuid.UUID,
    deal_number: int,
    seat: int,
    rows: tuple[str, str, str],
    nonce: bytes,
    player_id: str | None = None,
) -> dict[str, Any]:
    """One arrangement commitment; rows are given as written (any card order). With a
    ``player_id``, of scheme 2 (its input says ``scheme`` and ``player_id``; scheme 1 vectors
    have neither, as before schemes were numbered)."""
    arrangement = Arrangement.parse(*rows)
    scheme = 1 if player_id is None else 2
    bound = {} if player_id is None else {"scheme": 2, "player_id": player_id}
    return {
        "input": {
            "table_id": str(table_id),
            "deal_number": deal_number,
            "seat": seat,
            **bound,
            "front": rows[0],
            "middle": rows[1],
            "back": rows[2],
            "nonce": nonce.hex(),
        },
        "expected": {
            "rows_encoding": encode_rows(arrangement).hex(),
            "commitment": arrangement_commitment(
                table_id, deal_number, seat, arrangement, nonce, scheme=scheme, player_id=player_id
            ).hex(),
        },
    }


def shuffle_trace(key: bytes, steps: int) -> list[dict[str, Any]]:
    """The first ``steps`` Fisher–Yates steps: position, bound, word, limit, accepted, index."""
    words = stream_words(key)
    deck: list[Card] = list(DECK)
    trace: list[dict[str, Any]] = []
    for position in range(51, 51 - steps, -1):
        bound = position + 1
        limit = acceptance_limit(bound, WORD_BITS)
        while True:
            word = next(words)
            accepted = word < limit
            step = {
                "i": position,
                "bound": bound,
                "word": f"{word:08x}",
                "limit": limit,
                "accepted": accepted,
            }
            if accepted:
                other = word % bound
                step["j"] = other
                step["swap"] = f"{deck[position]} <-> {deck[other]}"
                deck[position], deck[other] = deck[other], deck[position]
                trace.append(step)
                break
            trace.append(step)
    return trace


def sampler_vector(bound: int, word: int) -> dict[str, Any]:
    """One rejection-sampling decision: the limit, and the index or ``None`` if rejected."""
    limit = acceptance_limit(bound, WORD_BITS)
    return {
        "bound": bound,
        "word": f"{word:08x}",
        "limit": limit,
        "index": word % bound if word < limit else None,
    }


def build_vectors() -> dict[str, Any]:
    """Every vector in the file, in a fixed order."""
    table = uuid.UUID("5a9c7e3e-1f2b-4c8d-9e0f-112233445566")
    arrangement_rows = ("2s 2h Ad", "7c 7d 9s 5h 3d", "Tc Jc Qc Kc Ac")
    return {
        "spec": "docs/fairness.md",
        "version": 1,
        "sampler": [
            sampler_vector(bound, word)
            for bound, word in (
                (52, 0x00000000),
                (52, 0xFFFFFFCF),
                (52, 0xFFFFFFD0),
                (52, 0xFFFFFFFF),
                (51, 0xFFFFFFFE),
                (51, 0xFFFFFFFF),
                (2, 0xFFFFFFFF),
                (37, 0x9E3779B9),
            )
        ],
        "deals": [deal_vector(inputs) for inputs in DEAL_INPUTS],
        "worked_example_trace": shuffle_trace(
            shuffle_key(
                DEAL_INPUTS[1]["seed"],
                DEAL_INPUTS[1]["contributions"],
                DEAL_INPUTS[1]["table_id"],
                DEAL_INPUTS[1]["deal_number"],
            ),
            5,
        ),
        "lots": [
            lot_vector(table, bytes(32), 2),
            lot_vector(table, bytes_from_label("lot three", 32), 3),
            lot_vector(uuid.UUID(int=4), bytes_from_label("lot four", 32), 4),
        ],
        "arrangement_commitments": [
            commitment_vector(table, 2, 0, arrangement_rows, bytes(16)),
            # The same rows in another card order: the same commitment.
            commitment_vector(
                table, 2, 0, ("Ad 2h 2s", "3d 5h 7d 7c 9s", "Ac Kc Qc Jc Tc"), bytes(16)
            ),
            commitment_vector(table, 2, 1, arrangement_rows, bytes(16)),
            commitment_vector(table, 2, 0, arrangement_rows, bytes(15) + b"\x01"),
            commitment_vector(
                table, 3, 3, ("3s 3h 4d", "6c 6d 8s 5c 2d", "9c 9d Th Ts As"), bytes(range(64))
            ),
            # Scheme 2 (§12.1): the first vector's rows and nonce, bound to a player id; then
            # the same for another player, which commits to something else.
            commitment_vector(table, 2, 0, arrangement_rows, bytes(16), PLAYER_IDS[0]),
            commitment_vector(table, 2, 0, arrangement_rows, bytes(16), PLAYER_IDS[1]),
        ],
        "player_signatures": signature_vectors(table, PLAYER_IDS[0]),
        "published_deals": [
            example_published_deal(DEAL_INPUTS[1]).to_dict(),
            example_published_deal(
                DEAL_INPUTS[3],
                VECTOR_TWO_FOUR_RULE_SET,
            ).to_dict(),
            example_published_deal(DEAL_INPUTS[5]).to_dict(),
            example_published_deal(DEAL_INPUTS[6], revealed=False).to_dict(),
            example_published_deal(DEAL_INPUTS[2], revealed=False, solver=True).to_dict(),
            example_published_deal(DEAL_INPUTS[1], players=PLAYER_IDS[:2]).to_dict(),
        ],
        "open_face_deals": open_face_deal_vectors(),
    }


if __name__ == "__main__":
    print(json.dumps(build_vectors(), indent=2))
