"""The ``player_signatures`` vectors of docs/fairness-vectors.json (docs/fairness.md §19): a player
key's registration and each signed move (commit, reveal, announcement, open face's placements and
Pineapple's discard openings), made with a fixed Ed25519 private key. ``sapsam.fairness.vectors``
puts them in the file.
"""

from __future__ import annotations

import uuid
from typing import Any

from sapsam.fairness import player_keys
from sapsam.fairness.commitments import arrangement_commitment
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.open_face.board import Placement

PLACED_0 = ("Ad", "7c 7d", "Kc Tc")


PLACED_1 = ("", "9s", "Ac")
"""The open-face placements of the ``place`` vectors: street 0's five cards; a Pineapple street
1 (two cards placed, the third discarded under the commitment)."""


DISCARDS_OPENED = ((1, "2c"), (2, "Kd"))
"""The ``discards-reveal`` vector's openings: street 1's and street 2's discard, each with a
nonce of sixteen bytes equal to its street."""


def _rows(rows: tuple[str, str, str]) -> Placement:
    return Placement(*(parse_cards(row) for row in rows))


def signature_vectors(table_id: uuid.UUID, player: str) -> list[dict[str, Any]]:
    """A player key's registration, a signed commit, reveal and announcement (docs/fairness.md §19),
    made with a fixed Ed25519 private key (RFC 8032 signatures are deterministic), by ``player``
    (the vectors' first player id)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    private = bytes(range(32))
    key = Ed25519PrivateKey.from_private_bytes(private)
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    rows = ("2s 2h Ad", "7c 7d 9s 5h 3d", "Tc Jc Qc Kc Ac")
    arrangement = Arrangement.parse(*rows)
    nonce = bytes(16)
    commitment = arrangement_commitment(
        table_id, 2, 0, arrangement, nonce, scheme=2, player_id=player
    )
    common = {"private_key": private.hex(), "public_key": public.hex(), "player_id": player}
    moves = [
        (
            "registration",
            {},
            player_keys.registration_message(player, public),
        ),
        (
            "commit",
            {
                "table_id": str(table_id),
                "deal_number": 2,
                "seat": 0,
                "scheme": 2,
                "commitment": commitment.hex(),
            },
            player_keys.commit_message(table_id, 2, 0, player, 2, commitment),
        ),
        (
            "reveal",
            {
                "table_id": str(table_id),
                "deal_number": 2,
                "seat": 0,
                "front": rows[0],
                "middle": rows[1],
                "back": rows[2],
                "nonce": nonce.hex(),
            },
            player_keys.reveal_message(table_id, 2, 0, player, arrangement, nonce),
        ),
        (
            "announce",
            {"table_id": str(table_id), "deal_number": 2, "seat": 0, "surrender": True},
            player_keys.announce_message(table_id, 2, 0, player, True),
        ),
        (
            "place",
            {
                "table_id": str(table_id),
                "deal_number": 2,
                "seat": 0,
                "street": 0,
                "front": "Ad",
                "middle": "7c 7d",
                "back": "Kc Tc",
                "discard_commitment": "",
            },
            player_keys.place_message(table_id, 2, 0, player, 0, _rows(PLACED_0)),
        ),
        (
            "place",
            {
                "table_id": str(table_id),
                "deal_number": 2,
                "seat": 0,
                "street": 1,
                "front": "",
                "middle": "9s",
                "back": "Ac",
                "discard_commitment": commitment.hex(),
            },
            player_keys.place_message(
                table_id,
                2,
                0,
                player,
                1,
                _rows(PLACED_1),
                commitment,
            ),
        ),
        (
            "fantasyland-commit",
            {
                "table_id": str(table_id),
                "deal_number": 2,
                "seat": 0,
                "scheme": 2,
                "commitment": commitment.hex(),
            },
            player_keys.commit_message(
                table_id,
                2,
                0,
                player,
                2,
                commitment,
                tag=player_keys.TAG_FANTASYLAND_COMMIT_SIGNATURE,
            ),
        ),
        (
            "fantasyland-reveal",
            {
                "table_id": str(table_id),
                "deal_number": 2,
                "seat": 0,
                "front": rows[0],
                "middle": rows[1],
                "back": rows[2],
                "nonce": nonce.hex(),
            },
            player_keys.reveal_message(
                table_id,
                2,
                0,
                player,
                arrangement,
                nonce,
                tag=player_keys.TAG_FANTASYLAND_REVEAL_SIGNATURE,
            ),
        ),
        (
            "discards-reveal",
            {
                "table_id": str(table_id),
                "deal_number": 2,
                "seat": 0,
                "openings": [
                    {"street": street, "cards": cards, "nonce": bytes([street] * 16).hex()}
                    for street, cards in DISCARDS_OPENED
                ],
            },
            player_keys.discards_reveal_message(
                table_id,
                2,
                0,
                player,
                [
                    (street, parse_cards(cards), bytes([street] * 16))
                    for street, cards in DISCARDS_OPENED
                ],
            ),
        ),
    ]
    return [
        {
            "kind": kind,
            "input": {**common, **fields},
            "expected": {"message": message.hex(), "signature": key.sign(message).hex()},
        }
        for kind, fields, message in moves
    ]
