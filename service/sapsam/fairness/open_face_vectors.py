"""The open-face vectors of docs/fairness-vectors.json (section ``open_face_deals``;
docs/fairness.md §16 and §22): whole deals built from fixed inputs, with every value an outside
verifier recomputes -- the cut deck, the street schedule, each street's cards and digests, each
placement in turn, a Fantasyland hand's commitment, the final rows, royalties, dead hands and
the score (docs/rules.md §8).

Pure and deterministic. Each seat's rows are chosen in hindsight (``biggest_row_first`` of its
13 cards, never dead; a seat meant to foul gets its middle and back exchanged), then each street's
cards are placed into those rows as they are dealt, in turn clockwise from the dealer's left:
always a legal placement, so the vectors need no solver. A Pineapple seat (``street_discards``)
discards the last card of each street after the first, committed by §23's scheme 3 with a nonce
derived from its label; its rows are chosen from the cards it keeps.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from typing import Any, Final

from sapsam.fairness.commitments import arrangement_commitment, encode_rows
from sapsam.fairness.deal import cut_deck, record_key
from sapsam.fairness.discard_commitments import discard_commitment
from sapsam.fairness.open_face_deal import deal_streets, street_digest, street_schedule
from sapsam.fairness.shuffle import seed_commitment, shuffle_deck
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card, format_cards
from sapsam.rules.open_face.board import Board, Row
from sapsam.rules.open_face.fantasyland_setting import biggest_row_first
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.presets import open_face_preset
from sapsam.rules.open_face.scoring import score_open_face_deal

__all__ = ["OPEN_FACE_DEAL_INPUTS", "open_face_deal_vector", "open_face_deal_vectors"]

FANTASYLAND_SCHEME: Final = 2
"""A Fantasyland hand's commitment scheme (docs/fairness.md §12.1: bound to the player)."""


def _label(label: str, length: int) -> bytes:
    return hashlib.sha256(label.encode()).digest()[:length]


OPEN_FACE_DEAL_INPUTS: Final[tuple[dict[str, Any], ...]] = (
    {
        "name": "open face, two seats, a normal deal",
        "table_id": uuid.UUID("0f0f0f0f-0000-4000-8000-000000000018"),
        "deal_number": 1,
        "seed": _label("open face normal deal", 32),
        "contributions": (None, _label("bob's entropy", 8)),
        "cut_position": 26,
        "dealer": 0,
        "preset": "ofc_classic",
        "players": ("ann", "bob"),
        "fantasyland": (None, None),
        "fouls": (),
    },
    {
        "name": "open face, three seats Turbo, a dead hand",
        "table_id": uuid.UUID("0f0f0f0f-0000-4000-8000-000000000018"),
        "deal_number": 2,
        "seed": _label("open face dead hand", 32),
        "contributions": (None, None, None),
        "cut_position": 7,
        "dealer": 2,
        "preset": "ofc_turbo",
        "players": ("ann", "bob", "cid"),
        "fantasyland": (None, None, None),
        "fouls": (1,),
    },
    {
        "name": "open face, two seats, seat 0 in Fantasyland",
        "table_id": uuid.UUID("0f0f0f0f-0000-4000-8000-000000000018"),
        "deal_number": 3,
        "seed": _label("open face fantasyland", 32),
        "contributions": (_label("ann's entropy", 16), None),
        "cut_position": 40,
        "dealer": 1,
        "preset": "ofc_classic",
        "players": ("ann", "bob"),
        "fantasyland": (13, None),
        "fouls": (),
    },
    {
        "name": "pineapple, three seats, every discard committed",
        "table_id": uuid.UUID("0f0f0f0f-0000-4000-8000-000000000019"),
        "deal_number": 1,
        "seed": _label("pineapple deal", 32),
        "contributions": (None, _label("bob's entropy", 8), None),
        "cut_position": 13,
        "dealer": 1,
        "preset": "pineapple",
        "players": ("ann", "bob", "cid"),
        "fantasyland": (None, None, None),
        "fouls": (),
    },
    {
        # Seat 0's back flush holds the 2♠ against seat 1's back full house: both doubled
        # (8 against 12), so the pair's royalties are 0, not 2 (003's second example).
        "name": "open face Finnish 2♠, two seats, the 2♠ in a back row both sides pay",
        "table_id": uuid.UUID("0f0f0f0f-0000-4000-8000-000000000019"),
        "deal_number": 2,
        "seed": _label("finnish deal 8", 32),
        "contributions": (None, None),
        "cut_position": 19,
        "dealer": 0,
        "preset": "ofc_finnish",
        "players": ("ann", "bob"),
        "fantasyland": (None, None),
        "fouls": (),
    },
)
"""The inputs of each open-face vector: the deal (as §16's ``deals``), the rule set's preset,
the seats' players, who plays Fantasyland (cards at once, or None) and which seats foul."""


def _rows(cards: Sequence[Card], foul: bool) -> Arrangement:
    arrangement, _ = biggest_row_first(cards)
    if foul:  # the middle and the back exchanged: the back is then the weaker
        return Arrangement(arrangement.front, arrangement.back, arrangement.middle)
    return arrangement


def _row_of(arrangement: Arrangement, card: Card) -> Row:
    for row, cards in zip(Row, arrangement.rows, strict=True):
        if card in cards:
            return row
    raise ValueError(f"{card} is in no row")  # pragma: no cover - every card has one


def _text(cards: Sequence[Card]) -> str:
    return format_cards(cards)


def open_face_deal_vector(inputs: dict[str, Any]) -> dict[str, Any]:
    """One open-face deal, played to its score (see the module docstring)."""
    table_id: uuid.UUID = inputs["table_id"]
    number: int = inputs["deal_number"]
    seed: bytes = inputs["seed"]
    contributions: tuple[bytes | None, ...] = inputs["contributions"]
    dealer: int = inputs["dealer"]
    players: tuple[str, ...] = inputs["players"]
    fantasyland: tuple[int | None, ...] = inputs["fantasyland"]
    rules: OpenFaceRules = open_face_preset(inputs["preset"])
    seats = len(players)
    deck = cut_deck(shuffle_deck(seed, contributions, table_id, number), inputs["cut_position"])
    schedule = street_schedule(rules.dealt_street_cards, fantasyland)
    streets = deal_streets(deck, dealer, schedule)
    key = record_key(table_id, number, seed)
    thrown = rules.street_discards
    kept_streets = [
        [cards[: len(cards) - thrown] if index and thrown else cards for cards in street]
        for index, street in enumerate(streets)
    ]
    hands = [
        tuple(card for street in kept_streets for card in street[seat]) for seat in range(seats)
    ]
    settings = [_rows(hands[seat], seat in inputs["fouls"]) for seat in range(seats)]
    order = [(dealer + 1 + step) % seats for step in range(seats)]
    placements: list[dict[str, Any]] = []
    discards: list[dict[str, Any]] = []
    for street, dealt in enumerate(kept_streets):
        for seat in order:
            if fantasyland[seat] is not None or not dealt[seat]:
                continue
            rows: list[list[Card]] = [[], [], []]
            for card in dealt[seat]:
                rows[_row_of(settings[seat], card)].append(card)
            placements.append(
                {
                    "seat": seat,
                    "street": street,
                    "front": _text(rows[0]),
                    "middle": _text(rows[1]),
                    "back": _text(rows[2]),
                }
            )
            if street and thrown:
                discards.append(
                    _discard(table_id, number, seat, players[seat], street, streets, thrown)
                )
    fantasy: list[dict[str, Any]] = []
    for seat, cards in enumerate(fantasyland):
        if cards is None:
            continue
        nonce = _label(f"fantasyland nonce {number} {seat}", 16)
        commitment = arrangement_commitment(
            table_id,
            number,
            seat,
            settings[seat],
            nonce,
            scheme=FANTASYLAND_SCHEME,
            player_id=players[seat],
        )
        fantasy.append(
            {
                "seat": seat,
                "player_id": players[seat],
                "front": _text(settings[seat].front),
                "middle": _text(settings[seat].middle),
                "back": _text(settings[seat].back),
                "nonce": nonce.hex(),
                "rows_encoding": encode_rows(settings[seat]).hex(),
                "commitment": commitment.hex(),
            }
        )
    boards = [Board(*setting.rows) for setting in settings]
    score = score_open_face_deal(rules, boards)
    return {
        "name": inputs["name"],
        "input": {
            "table_id": str(table_id),
            "deal_number": number,
            "seat_count": seats,
            "dealer": dealer,
            "seed": seed.hex(),
            "contributions": [None if value is None else value.hex() for value in contributions],
            "cut_position": inputs["cut_position"],
            "rule_set": rules.to_dict(),
            "players": list(players),
            "fantasyland": list(fantasyland),
        },
        "expected": {
            "seed_commitment": seed_commitment(table_id, number, seed).hex(),
            "cut_deck": _text(deck),
            "schedule": [list(counts) for counts in schedule],
            "record_key": key.hex(),
            "streets": [[_text(cards) for cards in street] for street in streets],
            "street_digests": [
                [
                    street_digest(key, index, seat, cards).hex() if cards else ""
                    for seat, cards in enumerate(street)
                ]
                for index, street in enumerate(streets)
            ],
            "placements": placements,
            "fantasyland": fantasy,
            "rows": [
                {
                    "front": _text(board.front),
                    "middle": _text(board.middle),
                    "back": _text(board.back),
                }
                for board in boards
            ],
            "hands": [
                {"dead": hand.dead, "royalties": list(hand.royalties)} for hand in score.hands
            ],
            "pairs": [
                {
                    "seat_a": pair.seat_a,
                    "seat_b": pair.seat_b,
                    "rows": list(pair.rows),
                    "points": pair.points,
                    "royalties": pair.royalties,
                    "delta": pair.delta,
                }
                for pair in score.pairs
            ],
            "totals": list(score.totals),
            **({"discards": discards} if thrown else {}),
        },
    }


def _discard(
    table_id: uuid.UUID,
    number: int,
    seat: int,
    player: str,
    street: int,
    streets: Sequence[Sequence[Sequence[Card]]],
    thrown: int,
) -> dict[str, Any]:
    """A Pineapple seat's discard of one street: the last card dealt, its nonce, its
    commitment (docs/fairness.md §23)."""
    cards = tuple(streets[street][seat][-thrown:])
    nonce = _label(f"discard nonce {number} {seat} {street}", 16)
    commitment = discard_commitment(table_id, number, seat, player, street, cards, nonce)
    return {
        "seat": seat,
        "street": street,
        "player_id": player,
        "cards": _text(cards),
        "nonce": nonce.hex(),
        "commitment": commitment.hex(),
    }


def open_face_deal_vectors() -> list[dict[str, Any]]:
    """Every open-face vector, in a fixed order."""
    return [open_face_deal_vector(inputs) for inputs in OPEN_FACE_DEAL_INPUTS]
