"""docs/fairness-vectors.json against the code, and against a second verifier written from the spec.

The second verifier (``_spec*`` below) uses only hashlib, hmac and struct, and follows
docs/fairness.md step by step, as a third party would; it shares no code with sapsam.fairness.
With the second reading of docs/rules.md (``spec_rules_reading``) it verifies every published
deal of the file too, the seats set on their behalf included: no vector needs sapsam's solver.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import struct
import uuid
from pathlib import Path
from typing import Any

import pytest
from spec_rules_reading import ROWS, spec_foul, spec_key, spec_units

from sapsam.fairness import (
    arrangement_commitment,
    check_reveal,
    cut_deck,
    cutter_for,
    deal_hands,
    deal_record,
    draw_dealer,
    hands_for_deal,
    lot_commitment,
    record_key,
    seed_commitment,
    shuffle_deck,
    shuffle_key,
)
from sapsam.fairness.commitments import encode_rows
from sapsam.fairness.example_deals import simple_arrangement
from sapsam.fairness.published import PublishedDeal
from sapsam.fairness.shuffle import acceptance_limit, lot_key, stream_block
from sapsam.fairness.vectors import DEAL_INPUTS, build_vectors
from sapsam.fairness.verify import verify_deal
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import format_cards, parse_cards
from sapsam.rules.open_face.board import Placement

VECTORS_PATH = Path(__file__).resolve().parents[2] / "docs" / "fairness-vectors.json"
VECTORS: dict[str, Any] = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
DEALS = VECTORS["deals"]


def _contributions(values: list[str | None]) -> tuple[bytes | None, ...]:
    return tuple(None if value is None else bytes.fromhex(value) for value in values)


def test_the_file_has_two_three_and_four_seat_deals_with_and_without_contributions() -> None:
    kinds = {
        (deal["input"]["seat_count"], any(c is not None for c in deal["input"]["contributions"]))
        for deal in DEALS
    }
    assert len(DEALS) >= 6
    assert kinds == {(n, contributed) for n in (2, 3, 4) for contributed in (False, True)}


def test_the_file_is_what_the_generator_builds() -> None:
    # A change to the code that changes any byte of any vector must come with a new file.
    assert build_vectors() == VECTORS


@pytest.mark.parametrize("vector", DEALS, ids=[deal["name"] for deal in DEALS])
def test_deal_vector(vector: dict[str, Any]) -> None:
    given, expected = vector["input"], vector["expected"]
    table_id = uuid.UUID(given["table_id"])
    deal_number, seed = given["deal_number"], bytes.fromhex(given["seed"])
    contributions = _contributions(given["contributions"])
    cut, dealer, seats = given["cut_position"], given["dealer"], given["seat_count"]

    assert seed_commitment(table_id, deal_number, seed).hex() == expected["seed_commitment"]
    key = shuffle_key(seed, contributions, table_id, deal_number)
    assert key.hex() == expected["shuffle_key"]
    assert stream_block(key, 0).hex() == expected["stream_block_0"]
    deck = shuffle_deck(seed, contributions, table_id, deal_number)
    assert format_cards(deck) == expected["deck"]
    assert list(deck) == expected["deck_indices"]
    assert cutter_for(dealer, seats) == expected["cutter"]
    assert format_cards(cut_deck(deck, cut)) == expected["cut_deck"]
    hands = hands_for_deal(seed, contributions, table_id, deal_number, cut, dealer, seats)
    assert [format_cards(hand) for hand in hands] == expected["hands"]
    assert hands == deal_hands(cut_deck(deck, cut), dealer, seats)
    assert record_key(table_id, deal_number, seed).hex() == expected["record_key"]
    record = deal_record(seed, contributions, table_id, deal_number, cut, dealer, seats)
    assert record.deck.hex() == expected["record"]["deck"]
    assert record.cut_deck.hex() == expected["record"]["cut_deck"]
    assert [digest.hex() for digest in record.hands] == expected["record"]["hands"]


@pytest.mark.parametrize("vector", VECTORS["lots"])
def test_lot_vector(vector: dict[str, Any]) -> None:
    given, expected = vector["input"], vector["expected"]
    table_id, lot_seed = uuid.UUID(given["table_id"]), bytes.fromhex(given["lot_seed"])
    lot = draw_dealer(lot_seed, table_id, given["seat_count"])
    assert lot_commitment(table_id, lot_seed).hex() == expected["lot_commitment"]
    assert lot_key(table_id, lot_seed).hex() == expected["lot_key"]
    assert format_cards(lot.cards) == expected["cards"]
    assert lot.dealer == expected["dealer"]
    assert lot.cards[lot.dealer] == max(lot.cards)


@pytest.mark.parametrize("vector", VECTORS["arrangement_commitments"])
def test_arrangement_commitment_vector(vector: dict[str, Any]) -> None:
    given, expected = vector["input"], vector["expected"]
    table_id = uuid.UUID(given["table_id"])
    arrangement = Arrangement.parse(given["front"], given["middle"], given["back"])
    nonce = bytes.fromhex(given["nonce"])
    assert encode_rows(arrangement).hex() == expected["rows_encoding"]
    bound = {"scheme": given.get("scheme", 1), "player_id": given.get("player_id")}
    found = arrangement_commitment(
        table_id, given["deal_number"], given["seat"], arrangement, nonce, **bound
    )
    assert found.hex() == expected["commitment"]
    assert check_reveal(
        found, table_id, given["deal_number"], given["seat"], arrangement, nonce, **bound
    )
    if bound["scheme"] == 2:
        # Scheme 2 binds the player: the same rows and nonce under scheme 1, or for another
        # player, commit to something else.
        assert not check_reveal(
            found, table_id, given["deal_number"], given["seat"], arrangement, nonce
        )
        assert not check_reveal(
            found,
            table_id,
            given["deal_number"],
            given["seat"],
            arrangement,
            nonce,
            scheme=2,
            player_id=given["player_id"] + "x",
        )


def test_the_file_has_scheme_1_and_scheme_2_vectors_for_the_same_rows() -> None:
    """Existing scheme 1 vectors are kept as they were (no ``scheme`` field); the scheme 2 ones
    commit the first vector's rows and nonce for two players, three different commitments."""
    vectors = VECTORS["arrangement_commitments"]
    scheme_2 = [vector for vector in vectors if vector["input"].get("scheme") == 2]
    assert len(scheme_2) == 2 and all("scheme" not in v["input"] for v in vectors[:5])
    commitments = {vectors[0]["expected"]["commitment"]} | {
        vector["expected"]["commitment"] for vector in scheme_2
    }
    assert len(commitments) == 3
    assert any(deal.get("commitment_schemes") for deal in VECTORS["published_deals"])


def test_the_two_orderings_in_the_file_commit_alike() -> None:
    first, second = VECTORS["arrangement_commitments"][:2]
    assert first["input"]["front"] != second["input"]["front"]
    assert first["expected"]["commitment"] == second["expected"]["commitment"]
    others = {
        vector["expected"]["commitment"] for vector in VECTORS["arrangement_commitments"][2:5]
    }
    assert first["expected"]["commitment"] not in others


@pytest.mark.parametrize("vector", VECTORS["sampler"])
def test_sampler_vector(vector: dict[str, Any]) -> None:
    bound, word = vector["bound"], int(vector["word"], 16)
    assert acceptance_limit(bound) == vector["limit"]
    assert vector["index"] == (word % bound if word < vector["limit"] else None)


def test_the_file_shows_both_an_accepted_and_a_rejected_word() -> None:
    assert {vector["index"] is None for vector in VECTORS["sampler"]} == {True, False}


@pytest.mark.parametrize("published", VECTORS["published_deals"])
def test_published_deal_vector_verifies(published: dict[str, Any]) -> None:
    deal = PublishedDeal.from_dict(published)
    assert deal.to_dict() == published
    report = verify_deal(deal)
    assert report.ok, report.to_dict()
    assert report.failed == ()


# --- A second verifier, written from docs/fairness.md alone -------------------------------------


def _lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


_TAG = b"sapsam/fairness/v1/"


def _spec_seed_commitment(table: uuid.UUID, deal: int, seed: bytes) -> bytes:
    message = _lp(_TAG + b"seed-commitment") + table.bytes + struct.pack(">Q", deal) + _lp(seed)
    return hashlib.sha256(message).digest()


def _spec_shuffle(key: bytes) -> list[int]:
    def words() -> Any:
        counter = 0
        while True:
            block = hmac.new(key, struct.pack(">Q", counter), hashlib.sha256).digest()
            yield from struct.unpack(">8I", block)
            counter += 1

    stream = words()
    deck = list(range(52))
    for i in range(51, 0, -1):
        n = i + 1
        limit = 2**32 - (2**32 % n)
        word = next(stream)
        while word >= limit:
            word = next(stream)
        j = word % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def _spec_hands(vector_input: dict[str, Any]) -> tuple[bytes, list[list[int]]]:
    key, _, _, hands = _spec_deal(vector_input)
    return key, hands


def _spec_deal(vector_input: dict[str, Any]) -> tuple[bytes, list[int], list[int], list[list[int]]]:
    """§6-§9: the shuffle key, the shuffled deck, the cut deck and the hands."""
    table = uuid.UUID(vector_input["table_id"])
    deal = vector_input["deal_number"]
    seed = bytes.fromhex(vector_input["seed"])
    seats = vector_input["seat_count"]
    encoded = bytes([seats])
    for value in vector_input["contributions"]:
        encoded += b"\x00" if value is None else b"\x01" + _lp(bytes.fromhex(value))
    key = hashlib.sha256(
        _lp(_TAG + b"shuffle-key") + table.bytes + struct.pack(">Q", deal) + _lp(seed) + encoded
    ).digest()
    shuffled = _spec_shuffle(key)
    cut = vector_input["cut_position"]
    deck = shuffled[cut:] + shuffled[:cut]
    hands: list[list[int]] = [[] for _ in range(seats)]
    for k in range(13 * seats):
        hands[(vector_input["dealer"] + 1 + k) % seats].append(deck[k])
    return key, shuffled, deck, hands


@pytest.mark.parametrize("vector", DEALS, ids=[deal["name"] for deal in DEALS])
def test_an_independent_verifier_reproduces_the_deal_vectors(vector: dict[str, Any]) -> None:
    given, expected = vector["input"], vector["expected"]
    table = uuid.UUID(given["table_id"])
    commitment = _spec_seed_commitment(table, given["deal_number"], bytes.fromhex(given["seed"]))
    assert commitment.hex() == expected["seed_commitment"]
    key, hands = _spec_hands(given)
    assert key.hex() == expected["shuffle_key"]
    assert [list(parse_cards(hand)) for hand in expected["hands"]] == hands


@pytest.mark.parametrize("vector", VECTORS["arrangement_commitments"])
def test_an_independent_verifier_reproduces_the_commitment_vectors(vector: dict[str, Any]) -> None:
    given = vector["input"]
    rows = b"".join(
        _lp(bytes(sorted(parse_cards(given[name])))) for name in ("front", "middle", "back")
    )
    message = _spec_commitment_message(
        uuid.UUID(given["table_id"]),
        given["deal_number"],
        given["seat"],
        given.get("scheme", 1),
        given.get("player_id"),
        rows,
        bytes.fromhex(given["nonce"]),
    )
    assert hashlib.sha256(message).hexdigest() == vector["expected"]["commitment"]


def _spec_commitment_message(
    table: uuid.UUID,
    deal: int,
    seat: int,
    scheme: int,
    player_id: str | None,
    rows: bytes,
    nonce: bytes,
) -> bytes:
    """§12 (scheme 1) and §12.1 (scheme 2: its own tag, the player id after the seat)."""
    if scheme == 1:
        tag, player = _TAG + b"arrangement-commitment", b""
    else:
        assert scheme == 2 and player_id is not None
        tag, player = b"sapsam/fairness/v2/arrangement-commitment", _lp(player_id.encode())
    return _lp(tag) + table.bytes + struct.pack(">QB", deal, seat) + player + rows + _lp(nonce)


def test_the_worked_example_in_the_spec_matches_the_code() -> None:
    text = (VECTORS_PATH.parent / "fairness.md").read_text(encoding="utf-8")
    example = text[text.index("## 15. Worked example") : text.index("## 16.")]
    stated = dict(re.findall(r"^`?([a-z_\[\]0-9]+) += ([0-9a-f]{64})`?$", example, re.MULTILINE))
    inputs = DEAL_INPUTS[1]
    table_id, deal, seed = inputs["table_id"], inputs["deal_number"], inputs["seed"]
    contributions = inputs["contributions"]
    key = shuffle_key(seed, contributions, table_id, deal)
    record = deal_record(seed, contributions, table_id, deal, 26, 1, 2)
    deck = shuffle_deck(seed, contributions, table_id, deal)
    hands = deal_hands(cut_deck(deck, 26), 1, 2)
    arrangement = simple_arrangement(hands[0])
    assert str(arrangement) == "3s 4h 5d / 2s 8s Ts Kc Ad / 2h 6c 6h Qc Qd"
    assert stated == {
        "seed_commitment": seed_commitment(table_id, deal, seed).hex(),
        "shuffle_key": key.hex(),
        "block[0]": stream_block(key, 0).hex(),
        "block[1]": stream_block(key, 1).hex(),
        "record_key": record_key(table_id, deal, seed).hex(),
        "deck_digest": record.deck.hex(),
        "cut_digest": record.cut_deck.hex(),
        "hand_digest[0]": record.hands[0].hex(),
        "hand_digest[1]": record.hands[1].hex(),
        "commitment": arrangement_commitment(
            table_id, deal, 0, arrangement, bytes(range(16))
        ).hex(),
    }
    assert format_cards(deck[:26]) in " ".join(example.split())
    for seat, hand in enumerate(hands):
        assert f"seat {seat}: {format_cards(hand)}" in example


_SUITS = "cdhs"
_RANKS = "23456789TJQKA"


def _spec_index(card: str) -> int:
    """§3: rank * 4 + suit."""
    return _RANKS.index(card[0]) * 4 + _SUITS.index(card[1])


def _spec_card(index: int) -> str:
    return _RANKS[index // 4] + _SUITS[index % 4]


@pytest.mark.parametrize("published", VECTORS["published_deals"])
def test_an_independent_verifier_passes_every_published_deal(published: dict[str, Any]) -> None:
    """§13 from fairness.md and rules.md alone: the deal, its record, every reveal, the
    arrangements set on a seat's behalf (legal, and scored as recorded), the fouls and scores."""
    table = uuid.UUID(published["table_id"])
    deal, seed = published["deal_number"], bytes.fromhex(published["seed"])
    seats = published["seat_count"]
    assert _spec_seed_commitment(table, deal, seed).hex() == published["seed_commitment"]
    _, shuffled, cut_deck_, hands = _spec_deal(
        {**published, "seat_count": seats, "seed": published["seed"]}
    )
    key = hashlib.sha256(
        _lp(_TAG + b"record-key") + table.bytes + struct.pack(">Q", deal) + _lp(seed)
    ).digest()

    def mac(message: bytes) -> str:
        return hmac.new(key, message, hashlib.sha256).hexdigest()

    record = published["record"]
    assert mac(_lp(_TAG + b"deck") + bytes(shuffled)) == record["deck"]
    assert mac(_lp(_TAG + b"cut-deck") + bytes(cut_deck_)) == record["cut_deck"]
    assert [
        mac(_lp(_TAG + b"hand") + bytes([seat]) + _lp(bytes(hand)))
        for seat, hand in enumerate(hands)
    ] == record["hands"]

    dealt = [" ".join(_spec_card(index) for index in hand) for hand in hands]
    set_for = published.get("solver_arrangements") or [None] * seats
    # §14: written only when a seat committed under scheme 2; otherwise every seat is scheme 1.
    schemes = published.get("commitment_schemes") or [1] * seats
    players = published.get("players") or [None] * seats
    scored: list[dict[str, str] | None] = []
    for seat in range(seats):
        reveal = published["reveals"][seat]
        if reveal is not None:
            rows = b"".join(
                _lp(bytes(sorted(_spec_index(card) for card in reveal[name].split())))
                for name in ROWS
            )
            message = _spec_commitment_message(
                table,
                deal,
                seat,
                schemes[seat],
                players[seat],
                rows,
                bytes.fromhex(reveal["nonce"]),
            )
            assert hashlib.sha256(message).hexdigest() == published["seat_commitments"][seat]
            scored.append(reveal)
        elif published["solver_seats"][seat]:
            # §13: recorded, and legal for the seat's dealt cards; no solver needed.
            recorded = set_for[seat]
            assert recorded is not None, "every solver seat of the vectors is recorded"
            assert spec_foul(recorded, dealt[seat]) is None
            scored.append(recorded)
        else:
            assert set_for[seat] is None
            scored.append(None)
    fouls = [
        rows is None or spec_foul(rows, dealt[seat]) is not None for seat, rows in enumerate(scored)
    ]
    assert fouls == published["recorded"]["fouls"]

    totals = [0] * seats
    pairs = []
    for a in range(seats):
        for b in range(a + 1, seats):
            if fouls[a] or fouls[b]:
                rows_won = [0 if fouls[a] and fouls[b] else -1 if fouls[a] else 1] * 3
            else:
                first, second = scored[a], scored[b]
                assert first is not None and second is not None
                keys = [(spec_key(first[name]), spec_key(second[name])) for name in ROWS]
                rows_won = [(mine > theirs) - (mine < theirs) for mine, theirs in keys]
            delta = spec_units(published["rule_set"], rows_won)
            pairs.append({"seats": [a, b], "rows": rows_won, "delta": delta})
            totals[a] += delta
            totals[b] -= delta
    assert pairs == published["recorded"]["pairs"]
    assert totals == published["recorded"]["totals"]


def test_the_solver_vector_records_its_arrangement() -> None:
    (solver,) = [deal for deal in VECTORS["published_deals"] if any(deal["solver_seats"])]
    recorded = solver["solver_arrangements"]
    assert [rows is not None for rows in recorded] == solver["solver_seats"]


@pytest.mark.parametrize("vector", VECTORS["lots"])
def test_an_independent_verifier_reproduces_the_lot_vectors(vector: dict[str, Any]) -> None:
    """§11 alone: the lot commitment and key, the lot deck by §7-§8, the highest card deals."""
    given, expected = vector["input"], vector["expected"]
    table, lot_seed = uuid.UUID(given["table_id"]), bytes.fromhex(given["lot_seed"])
    commitment = hashlib.sha256(_lp(_TAG + b"lot-commitment") + table.bytes + _lp(lot_seed))
    key = hashlib.sha256(_lp(_TAG + b"lot-key") + table.bytes + _lp(lot_seed)).digest()
    assert commitment.hexdigest() == expected["lot_commitment"] and key.hex() == expected["lot_key"]
    drawn = _spec_shuffle(key)[: given["seat_count"]]
    assert " ".join(_spec_card(card) for card in drawn) == expected["cards"]
    assert drawn.index(max(drawn)) == expected["dealer"]


@pytest.mark.parametrize("vector", VECTORS["sampler"])
def test_an_independent_verifier_reproduces_the_sampler_vectors(vector: dict[str, Any]) -> None:
    bound, word = vector["bound"], int(vector["word"], 16)
    limit = 2**32 - (2**32 % bound)
    assert limit == vector["limit"]
    assert vector["index"] == (None if word >= limit else word % bound)


def test_the_scheme_2_message_in_the_spec_hashes_to_its_vector() -> None:
    """§12.1's message, read from the page byte by byte, is the scheme 2 vector's."""
    text = (VECTORS_PATH.parent / "fairness.md").read_text(encoding="utf-8")
    section = text[text.index("### 12.1") :]
    block = section[section.index("The 155-byte message:") :].split("```")[1]
    tokens = [
        token
        for line in block.splitlines()
        for token in line.split()
        if re.fullmatch(r"(?:[0-9a-f]{2})+", token)
    ]
    message = bytes.fromhex("".join(tokens))
    assert len(message) == 155
    (vector,) = [
        vector
        for vector in VECTORS["arrangement_commitments"]
        if vector["input"].get("player_id") == "0d5a7b1e-4c3f-4a2b-9e8d-7c6b5a493827"
    ]
    digest = hashlib.sha256(message).hexdigest()
    assert digest == vector["expected"]["commitment"]
    assert f"`commitment = {digest}`" in section


@pytest.mark.parametrize("vector", VECTORS["player_signatures"], ids=lambda v: v["kind"])
def test_an_independent_reading_of_section_19_reproduces_the_signature_vectors(
    vector: dict[str, Any],
) -> None:
    """§19 alone: each message from its fields, signed with the vector's key by the
    ``cryptography`` package's RFC 8032 Ed25519 (deterministic), and sapsam's own messages."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    from sapsam.fairness import player_keys

    given = vector["input"]
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(given["private_key"]))
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    assert public.hex() == given["public_key"]
    player = _lp(given["player_id"].encode())
    if vector["kind"] == "registration":
        message = _lp(b"sapsam/player-key/v1/registration") + player + _lp(public)
        ours = player_keys.registration_message(given["player_id"], public)
    else:
        table = uuid.UUID(given["table_id"])
        where = table.bytes + struct.pack(">QB", given["deal_number"], given["seat"]) + player
        if vector["kind"] == "commit":
            commitment = bytes.fromhex(given["commitment"])
            message = (
                _lp(b"sapsam/player-signature/v1/commit")
                + where
                + bytes([given["scheme"]])
                + _lp(commitment)
            )
            ours = player_keys.commit_message(
                table, given["deal_number"], given["seat"], given["player_id"], 2, commitment
            )
        elif vector["kind"] == "announce":
            message = (
                _lp(b"sapsam/player-signature/v1/announce")
                + where
                + bytes([1 if given["surrender"] else 0])
            )
            ours = player_keys.announce_message(
                table, given["deal_number"], given["seat"], given["player_id"], given["surrender"]
            )
        elif vector["kind"] == "fantasyland-commit":
            commitment = bytes.fromhex(given["commitment"])
            message = (
                _lp(b"sapsam/player-signature/v1/fantasyland-commit")
                + where
                + bytes([given["scheme"]])
                + _lp(commitment)
            )
            ours = player_keys.commit_message(
                table,
                given["deal_number"],
                given["seat"],
                given["player_id"],
                2,
                commitment,
                tag=player_keys.TAG_FANTASYLAND_COMMIT_SIGNATURE,
            )
        elif vector["kind"] == "discards-reveal":
            openings = given["openings"]
            message = _lp(b"sapsam/player-signature/v1/discards-reveal") + where
            message += bytes([len(openings)])
            for opening in openings:
                message += (
                    bytes([opening["street"]])
                    + _lp(bytes(sorted(_spec_index(card) for card in opening["cards"].split())))
                    + _lp(bytes.fromhex(opening["nonce"]))
                )
            ours = player_keys.discards_reveal_message(
                table,
                given["deal_number"],
                given["seat"],
                given["player_id"],
                [
                    (o["street"], parse_cards(o["cards"]), bytes.fromhex(o["nonce"]))
                    for o in openings
                ],
            )
        elif vector["kind"] == "place":
            rows = b"".join(
                _lp(bytes(sorted(_spec_index(card) for card in given[name].split())))
                for name in ROWS
            )
            discard = bytes.fromhex(given["discard_commitment"])
            message = (
                _lp(b"sapsam/player-signature/v1/place")
                + where
                + bytes([given["street"]])
                + rows
                + _lp(discard)
            )
            placement = Placement(*(parse_cards(given[name]) for name in ROWS))
            ours = player_keys.place_message(
                table,
                given["deal_number"],
                given["seat"],
                given["player_id"],
                given["street"],
                placement,
                discard or None,
            )
        else:
            tag = (
                player_keys.TAG_FANTASYLAND_REVEAL_SIGNATURE
                if vector["kind"] == "fantasyland-reveal"
                else player_keys.TAG_REVEAL_SIGNATURE
            )
            rows = b"".join(
                _lp(bytes(sorted(_spec_index(card) for card in given[name].split())))
                for name in ROWS
            )
            nonce = bytes.fromhex(given["nonce"])
            message = _lp(b"sapsam/player-signature/v1/" + vector["kind"].encode()) + where
            message += rows + _lp(nonce)
            arrangement = Arrangement.parse(given["front"], given["middle"], given["back"])
            ours = player_keys.reveal_message(
                table,
                given["deal_number"],
                given["seat"],
                given["player_id"],
                arrangement,
                nonce,
                tag=tag,
            )
    assert message.hex() == vector["expected"]["message"] == ours.hex()
    signature = key.sign(message)
    assert signature.hex() == vector["expected"]["signature"]
    assert player_keys.signature_holds(public, message, signature)
    assert not player_keys.signature_holds(public, message + b"\0", signature)
    text = (VECTORS_PATH.parent / "fairness.md").read_text(encoding="utf-8")
    assert vector["expected"]["signature"] in text[text.index("## 19.") :]
