"""The open-face vectors of docs/fairness-vectors.json (``open_face_deals``: a normal deal, a dead
hand, a Fantasyland deal), read as an outside verifier would: §22's deal order and street
digests and §12.1's Fantasyland commitment recomputed from docs/fairness.md alone (hashlib, hmac
and struct), every placement replayed in turn through the domain, and the score recomputed with
docs/rules.md §8's rules (the dead hand's payments by hand)."""

from __future__ import annotations

import hashlib
import hmac
import json
import struct
import uuid
from pathlib import Path
from typing import Any

import pytest

from sapsam import fairness
from sapsam.domain.open_face.commands import (
    CommitFantasyland,
    DealStreet,
    PlaceCards,
    RevealDiscards,
    RevealFantasyland,
)
from sapsam.domain.open_face.deal_decide import decide_deal
from sapsam.domain.open_face.deal_evolve import evolve_deal
from sapsam.domain.open_face.deal_state import OpenFacePhase, open_deal
from sapsam.fairness.open_face_vectors import open_face_deal_vectors
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import format_cards, parse_cards
from sapsam.rules.open_face.board import Placement
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.scoring import score_open_face_deal

VECTORS_PATH = Path(__file__).resolve().parents[2] / "docs" / "fairness-vectors.json"
OPEN_FACE = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))["open_face_deals"]
NAMES = [vector["name"] for vector in OPEN_FACE]
RANKS = "23456789TJQKA"
SUITS = "cdhs"


def _lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _index(card: str) -> int:
    """docs/fairness.md §3: rank * 4 + suit, clubs diamonds hearts spades."""
    return RANKS.index(card[0]) * 4 + SUITS.index(card[1])


def _cards(text: str) -> list[str]:
    return text.split() if text else []


def test_the_file_holds_a_normal_deal_a_dead_hand_and_a_fantasyland_deal() -> None:
    assert open_face_deal_vectors() == OPEN_FACE
    assert any(not any(hand["dead"] for hand in v["expected"]["hands"]) for v in OPEN_FACE)
    assert any(any(hand["dead"] for hand in v["expected"]["hands"]) for v in OPEN_FACE)
    assert any(v["expected"]["fantasyland"] for v in OPEN_FACE)


@pytest.mark.parametrize("vector", OPEN_FACE, ids=NAMES)
def test_an_outside_verifier_deals_the_streets_by_section_22(vector: dict[str, Any]) -> None:
    given, expected = vector["input"], vector["expected"]
    deck = _cards(expected["cut_deck"])
    seats, dealer = given["seat_count"], given["dealer"]
    streets_cards = given["rule_set"]["street_cards"]
    discarded = given["rule_set"].get("street_discards", 0)
    # Schedule: a normal seat gets street_cards[t] (and street_discards more after the first,
    # §23); a Fantasyland seat m cards on street 0.
    schedule = [
        [
            count + (discarded if t else 0) if at_once is None else (at_once if t == 0 else 0)
            for at_once in given["fantasyland"]
        ]
        for t, count in enumerate(streets_cards)
    ]
    assert schedule == expected["schedule"]
    # Deal: from the top, within a street one card at a time clockwise from the dealer's left.
    top, dealt = 0, []
    for counts in schedule:
        received: list[list[str]] = [[] for _ in range(seats)]
        for _ in range(max(counts)):
            for step in range(seats):
                seat = (dealer + 1 + step) % seats
                if len(received[seat]) < counts[seat]:
                    received[seat].append(deck[top])
                    top += 1
        dealt.append(received)
    assert [[" ".join(cards) for cards in street] for street in dealt] == expected["streets"]
    # Street record: HMAC(record_key, lp(tag) || u8(t) || u8(s) || lp(card bytes in order)).
    key = bytes.fromhex(expected["record_key"])
    for t, street in enumerate(dealt):
        for seat, cards in enumerate(street):
            message = (
                _lp(b"sapsam/fairness/v1/street")
                + bytes([t, seat])
                + _lp(bytes(_index(card) for card in cards))
            )
            digest = hmac.new(key, message, hashlib.sha256).hexdigest() if cards else ""
            assert digest == expected["street_digests"][t][seat]


@pytest.mark.parametrize("vector", OPEN_FACE, ids=NAMES)
def test_an_outside_verifier_opens_each_fantasyland_commitment(vector: dict[str, Any]) -> None:
    given = vector["input"]
    table = uuid.UUID(given["table_id"])
    for hand in vector["expected"]["fantasyland"]:
        rows = b"".join(
            _lp(bytes(sorted(_index(card) for card in _cards(hand[name]))))
            for name in ("front", "middle", "back")
        )
        assert rows.hex() == hand["rows_encoding"]
        message = (
            _lp(b"sapsam/fairness/v2/arrangement-commitment")
            + table.bytes
            + struct.pack(">QB", given["deal_number"], hand["seat"])
            + _lp(hand["player_id"].encode())
            + rows
            + _lp(bytes.fromhex(hand["nonce"]))
        )
        assert hashlib.sha256(message).hexdigest() == hand["commitment"]


PINEAPPLE = [vector for vector in OPEN_FACE if "discards" in vector["expected"]]


def test_the_file_holds_a_pineapple_deal_with_its_discards() -> None:
    (vector,) = PINEAPPLE
    assert len(vector["expected"]["discards"]) == 3 * 4


@pytest.mark.parametrize("vector", PINEAPPLE, ids=[v["name"] for v in PINEAPPLE])
def test_an_outside_verifier_opens_each_discard_commitment(vector: dict[str, Any]) -> None:
    # §23: SHA-256(lp(tag) || table_id || u64(deal) || u8(seat) || lp(player) || u8(street)
    # || lp(cards ascending) || lp(nonce)); each discard a dealt card of its street not placed.
    given, expected = vector["input"], vector["expected"]
    table = uuid.UUID(given["table_id"])
    placed = {
        (p["seat"], p["street"]): {*_cards(p["front"]), *_cards(p["middle"]), *_cards(p["back"])}
        for p in expected["placements"]
    }
    for discard in expected["discards"]:
        seat, street = discard["seat"], discard["street"]
        cards = _cards(discard["cards"])
        dealt = set(_cards(expected["streets"][street][seat]))
        assert set(cards) <= dealt and not set(cards) & placed[(seat, street)]
        assert set(cards) | placed[(seat, street)] == dealt
        message = (
            _lp(b"sapsam/fairness/v3/discard-commitment")
            + table.bytes
            + struct.pack(">QB", given["deal_number"], seat)
            + _lp(discard["player_id"].encode())
            + bytes([street])
            + _lp(bytes(sorted(_index(card) for card in cards)))
            + _lp(bytes.fromhex(discard["nonce"]))
        )
        assert hashlib.sha256(message).hexdigest() == discard["commitment"]


@pytest.mark.parametrize("vector", OPEN_FACE, ids=NAMES)
def test_every_placement_is_legal_and_in_turn_and_the_score_follows(
    vector: dict[str, Any],
) -> None:
    given, expected = vector["input"], vector["expected"]
    table = uuid.UUID(given["table_id"])
    seed = bytes.fromhex(given["seed"])
    assert (
        fairness.seed_commitment(table, given["deal_number"], seed).hex()
        == (expected["seed_commitment"])
    )
    rules = OpenFaceRules.from_dict(given["rule_set"])
    players = tuple(given["players"])
    deal = open_deal(
        table, players, rules, given["deal_number"], given["dealer"], tuple(given["fantasyland"])
    )
    streets = [[tuple(parse_cards(_cards(c))) for c in street] for street in expected["streets"]]
    placements = iter(expected["placements"])

    def run(command: object) -> None:
        nonlocal deal
        for event in decide_deal(deal, command):
            deal = evolve_deal(deal, event)

    fantasy = {hand["seat"]: hand for hand in expected["fantasyland"]}
    thrown = {(d["seat"], d["street"]): d for d in expected.get("discards", ())}
    while deal.phase is not OpenFacePhase.COMPLETE:
        if deal.phase is OpenFacePhase.DEALING:
            street = deal.streets_dealt
            digests = tuple(bytes.fromhex(d) for d in expected["street_digests"][street])
            run(DealStreet(digests))
            for seat, hand in fantasy.items():
                if street == 0:
                    run(CommitFantasyland(players[seat], bytes.fromhex(hand["commitment"])))
        elif deal.phase is OpenFacePhase.PLACING:
            placed = next(placements)
            assert placed["seat"] == deal.turn  # in turn, clockwise from the dealer's left
            rows = [parse_cards(_cards(placed[name])) for name in ("front", "middle", "back")]
            discard = thrown.get((placed["seat"], placed["street"]))
            run(
                PlaceCards(
                    players[placed["seat"]],
                    placed["street"],
                    Placement(*rows),
                    streets[placed["street"]][placed["seat"]],
                    discard_commitment=None
                    if discard is None
                    else bytes.fromhex(discard["commitment"]),
                )
            )
        elif deal.phase is OpenFacePhase.DISCARDS:
            for seat in deal.seats:
                mine = sorted((d for d in thrown.values() if d["seat"] == seat), key=_street)
                run(
                    RevealDiscards(
                        players[seat],
                        tuple(parse_cards(_cards(d["cards"])) for d in mine),
                        tuple(bytes.fromhex(d["nonce"]) for d in mine),
                        tuple(street[seat] for street in streets),
                    )
                )
        else:
            for seat, hand in fantasy.items():
                arrangement = Arrangement.parse(hand["front"], hand["middle"], hand["back"])
                nonce = bytes.fromhex(hand["nonce"])
                run(RevealFantasyland(players[seat], arrangement, nonce, streets[0][seat]))
    assert next(placements, None) is None
    assert [
        {name: format_cards(sorted(getattr(board, name))) for name in ("front", "middle", "back")}
        for board in deal.boards
    ] == expected["rows"]
    score = score_open_face_deal(rules, deal.boards)
    assert [hand.dead for hand in score.hands] == [hand["dead"] for hand in expected["hands"]]
    assert list(score.totals) == expected["totals"]
    assert sum(expected["totals"]) == 0


def _street(discard: dict[str, Any]) -> int:
    street: int = discard["street"]
    return street


def test_the_dead_hand_pays_six_and_each_opponents_royalties() -> None:
    # docs/rules.md §8.4: a dead hand scores nothing, pays 6 to each opponent plus the opponent's
    # royalties; its own royalties do not count.
    vector = next(v for v in OPEN_FACE if "dead hand" in v["name"])
    hands, pairs = vector["expected"]["hands"], vector["expected"]["pairs"]
    dead = next(seat for seat, hand in enumerate(hands) if hand["dead"])
    assert hands[dead]["royalties"] == [0, 0, 0]
    for pair in pairs:
        if dead not in (pair["seat_a"], pair["seat_b"]):
            continue
        other = pair["seat_b"] if pair["seat_a"] == dead else pair["seat_a"]
        owed = 6 + sum(hands[other]["royalties"])
        assert pair["delta"] == (-owed if pair["seat_a"] == dead else owed)


def test_the_finnish_two_of_spades_doubles_both_royalties_of_its_row() -> None:
    # docs/rules.md §8.12, Finnish 2♠ ``row`` (003's second example): between the live hand
    # holding the 2♠ and each opponent, both royalties of the row it sits in count twice.
    vector = next(v for v in OPEN_FACE if "Finnish" in v["name"])
    assert vector["input"]["rule_set"]["finnish_two_of_spades"] == "row"
    hands, rows = vector["expected"]["hands"], vector["expected"]["rows"]
    (pair,) = vector["expected"]["pairs"]
    names = ("front", "middle", "back")
    holder, row = next(
        (seat, index)
        for seat, board in enumerate(rows)
        for index, name in enumerate(names)
        if "2s" in _cards(board[name])
    )
    royalties = [list(hand["royalties"]) for hand in hands]
    assert royalties[0][row] and royalties[1][row]  # both sides pay in that row
    plain = sum(royalties[0]) - sum(royalties[1])
    for seat in (0, 1):
        royalties[seat][row] *= 2
    doubled = sum(royalties[0]) - sum(royalties[1])
    assert doubled != plain and pair["royalties"] == doubled
    assert holder in (0, 1)
