"""A player's signed open-face moves (docs/fairness.md §19): placements, a Fantasyland hand's
commitment and its reveal, Pineapple's opening of discards, given a deal, when this command,
then these events.

A player with a registered key signs them as it signs its commits: unsigned is
SIGNATURE_REQUIRED, a key it has not registered or a signature of another move BAD_SIGNATURE,
each deciding nothing (the deal unchanged); the signed move records the key and the signature.
The service's own placements are unsigned. Schema 1 events read as unsigned, signing scheme 1.
"""

from __future__ import annotations

import dataclasses
import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from open_face_deals import PLAYERS, TABLE_ID, PlayedDeal, first_legal, new_deal

from sapsam import fairness
from sapsam.domain.commands import PlayerSignature
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.open_face.commands import (
    CommitFantasyland,
    PlaceCards,
    PlaceForSeat,
    RevealDiscards,
    RevealFantasyland,
)
from sapsam.domain.open_face.deal_decide import FANTASYLAND_SCHEME
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.events import (
    CardsPlaced,
    DiscardCommitted,
    DiscardsRevealed,
    FantasylandCommitted,
    FantasylandRevealed,
)
from sapsam.fairness import player_keys
from sapsam.rules.open_face.board import Placement
from sapsam.rules.open_face.fantasyland_setting import biggest_row_first
from sapsam.rules.open_face.presets import open_face_preset

CLASSIC = open_face_preset("ofc_classic")
KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
PUBLIC = KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
OTHER = Ed25519PrivateKey.generate()
OTHER_PUBLIC = OTHER.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def _refused(played: PlayedDeal, command: object, reason: Reason) -> None:
    """The command is refused for ``reason`` and the deal is left as it was."""
    before, recorded = played.deal, len(played.events)
    with pytest.raises(DomainError) as refused:
        played.run(command)
    assert refused.value.reason is reason
    assert played.deal == before and len(played.events) == recorded


def _signed(message: bytes, key: Ed25519PrivateKey = KEY) -> PlayerSignature:
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return PlayerSignature(public, key.sign(message))


def test_a_player_with_a_key_signs_its_placement_and_the_event_records_it() -> None:
    played = new_deal(CLASSIC, 2, dealer=1)
    played.deal_street()
    seat = played.deal.turn
    assert seat == 0
    dealt = played.street_cards(0, seat)
    placement = first_legal(played.deal.boards[seat], dealt)
    other = Placement(front=dealt[:1], back=dealt[1:])
    assert sorted(other.back) != sorted(placement.back)

    def place(signature: PlayerSignature | None) -> PlaceCards:
        return PlaceCards(
            PLAYERS[seat], 0, placement, dealt, signature=signature, player_keys=(PUBLIC,)
        )

    def message(street: int, rows: object) -> bytes:
        return player_keys.place_message(TABLE_ID, 1, seat, PLAYERS[seat], street, rows)  # type: ignore[arg-type]

    _refused(played, place(None), Reason.SIGNATURE_REQUIRED)
    # The operator's placement under the player's signature of another one.
    _refused(played, place(_signed(message(0, other))), Reason.BAD_SIGNATURE)
    _refused(played, place(_signed(message(0, placement), OTHER)), Reason.BAD_SIGNATURE)
    signature = _signed(message(0, placement))
    (placed,) = played.run(place(signature))
    assert isinstance(placed, CardsPlaced) and placed.automatic is None
    assert (placed.player_key, placed.signature, placed.signing_scheme) == (
        PUBLIC.hex(),
        signature.signature.hex(),
        2,
    )
    assert DEFAULT_CODEC.decode(*DEFAULT_CODEC.encode(placed)) == placed
    # A player without a key places unsigned, as before.
    dealt = played.street_cards(0, 1)
    (unsigned,) = played.run(
        PlaceCards(PLAYERS[1], 0, first_legal(played.deal.boards[1], dealt), dealt)
    )
    assert isinstance(unsigned, CardsPlaced)
    assert (unsigned.player_key, unsigned.signature) == (None, None)


def test_the_services_placement_for_a_seat_is_unsigned() -> None:
    played = new_deal(CLASSIC, 2, dealer=1, move_seconds=10)
    played.deal_street(now_ms=0)
    seat = played.deal.turn
    assert seat is not None
    dealt = played.street_cards(0, seat)
    (placed,) = played.run(PlaceForSeat(dealt, now_ms=20_000, timed_out=True))
    assert isinstance(placed, CardsPlaced) and placed.automatic is not None
    assert (placed.player_key, placed.signature) == (None, None)


def test_a_fantasyland_hand_is_committed_and_opened_signed() -> None:
    played = new_deal(CLASSIC, 2, dealer=1, fantasyland=(13, None))
    played.deal_street()
    dealt = played.street_cards(0, 0)
    arrangement, _ = biggest_row_first(dealt)
    nonce = hashlib.sha256(b"nonce").digest()[:16]
    commitment = fairness.arrangement_commitment(
        TABLE_ID, 1, 0, arrangement, nonce, scheme=FANTASYLAND_SCHEME, player_id=PLAYERS[0]
    )
    commit_message = player_keys.commit_message(
        TABLE_ID,
        1,
        0,
        PLAYERS[0],
        FANTASYLAND_SCHEME,
        commitment,
        tag=player_keys.TAG_FANTASYLAND_COMMIT_SIGNATURE,
    )

    def commit(signature: PlayerSignature | None) -> CommitFantasyland:
        return CommitFantasyland(PLAYERS[0], commitment, signature=signature, player_keys=(PUBLIC,))

    _refused(played, commit(None), Reason.SIGNATURE_REQUIRED)
    # A closed-game commit signature of the same commitment is no Fantasyland one (its tag).
    closed = player_keys.commit_message(TABLE_ID, 1, 0, PLAYERS[0], 2, commitment)
    _refused(played, commit(_signed(closed)), Reason.BAD_SIGNATURE)
    signature = _signed(commit_message)
    (committed,) = played.run(commit(signature))
    assert committed == FantasylandCommitted(
        1, 0, commitment.hex(), PUBLIC.hex(), signature.signature.hex(), 2
    )
    assert DEFAULT_CODEC.decode(*DEFAULT_CODEC.encode(committed)) == committed
    while played.deal.phase is OpenFacePhase.PLACING or played.deal.phase is OpenFacePhase.DEALING:
        if played.deal.phase is OpenFacePhase.DEALING:
            played.deal_street()
        else:
            played.place_turn()
    reveal_message = player_keys.reveal_message(
        TABLE_ID,
        1,
        0,
        PLAYERS[0],
        arrangement,
        nonce,
        tag=player_keys.TAG_FANTASYLAND_REVEAL_SIGNATURE,
    )

    def reveal(signature: PlayerSignature | None) -> RevealFantasyland:
        return RevealFantasyland(
            PLAYERS[0], arrangement, nonce, dealt, signature=signature, player_keys=(PUBLIC,)
        )

    _refused(played, reveal(None), Reason.SIGNATURE_REQUIRED)
    _refused(played, reveal(_signed(commit_message)), Reason.BAD_SIGNATURE)
    signature = _signed(reveal_message)
    opened = played.run(reveal(signature))
    (revealed,) = [event for event in opened if isinstance(event, FantasylandRevealed)]
    assert (revealed.player_key, revealed.signature, revealed.signing_scheme) == (
        PUBLIC.hex(),
        signature.signature.hex(),
        2,
    )
    assert DEFAULT_CODEC.decode(*DEFAULT_CODEC.encode(revealed)) == revealed


def test_open_face_moves_of_schema_1_read_as_unsigned_scheme_1() -> None:
    placed = DEFAULT_CODEC.decode(
        "CardsPlaced",
        1,
        {
            "deal_number": 1,
            "seat": 0,
            "street": 0,
            "front": ["Ad"],
            "middle": [],
            "back": ["Kc", "Kd", "2s", "3s"],
            "automatic": None,
            "deadline_ms": None,
        },
    )
    assert placed == CardsPlaced(
        1, 0, 0, ("Ad",), (), ("Kc", "Kd", "2s", "3s"), None, None, None, None, 1
    )
    committed = DEFAULT_CODEC.decode(
        "FantasylandCommitted", 1, {"deal_number": 1, "seat": 0, "commitment": "ab" * 32}
    )
    assert committed == FantasylandCommitted(1, 0, "ab" * 32, None, None, 1)
    data = {
        "deal_number": 1,
        "seat": 0,
        "front": ["Ad", "Ac", "2s"],
        "middle": [],
        "back": [],
        "discards": [],
        "nonce": "00" * 16,
        "dead": False,
    }
    revealed = DEFAULT_CODEC.decode("FantasylandRevealed", 1, data)
    assert isinstance(revealed, FantasylandRevealed)
    assert (revealed.player_key, revealed.signature, revealed.signing_scheme) == (None, None, 1)
    for event_type in (FantasylandCommitted, FantasylandRevealed):
        assert event_type.SCHEMA_VERSION == 2
    assert CardsPlaced.SCHEMA_VERSION == 3  # 3: a timeout's placement names who made it


def test_a_signed_pineapple_placement_covers_its_discard_commitment() -> None:
    played = new_deal(open_face_preset("pineapple"), 2, dealer=1)
    played.deal_street()
    while played.deal.streets_dealt < 2:
        if played.deal.phase is OpenFacePhase.PLACING:
            played.place_turn()
        else:
            played.deal_street()
    seat = played.deal.turn
    assert seat is not None
    dealt = played.street_cards(1, seat)
    command = played.discards.place(played.deal, PLAYERS[seat], 1, dealt)
    assert command.discard_commitment is not None

    def message(commitment: bytes | None) -> bytes:
        return player_keys.place_message(
            TABLE_ID, 1, seat, PLAYERS[seat], 1, command.placement, commitment
        )

    def signed(signature: PlayerSignature) -> PlaceCards:
        return dataclasses.replace(command, signature=signature, player_keys=(PUBLIC,))

    # A signature of the placement alone does not stand for the placement with its discard.
    _refused(played, signed(_signed(message(None))), Reason.BAD_SIGNATURE)
    signature = _signed(message(command.discard_commitment))
    placed, discarded = played.run(signed(signature))
    assert isinstance(placed, CardsPlaced) and placed.signature == signature.signature.hex()
    assert isinstance(discarded, DiscardCommitted)
    assert discarded.commitment == command.discard_commitment.hex()


def test_a_player_with_a_key_signs_its_opening_of_discards() -> None:
    """RevealDiscards (docs/fairness.md §23) is signed as the other moves: unsigned
    SIGNATURE_REQUIRED, a signature of other openings or by a key not registered BAD_SIGNATURE,
    each deciding nothing; the signed opening records the key and the signature."""
    played = new_deal(open_face_preset("pineapple"), 2, dealer=1)
    while played.deal.phase in (OpenFacePhase.DEALING, OpenFacePhase.PLACING):
        if played.deal.phase is OpenFacePhase.DEALING:
            played.deal_street()
        else:
            played.place_turn()
    seat = 0
    dealt = tuple(street[seat] for street in played.cards)
    command = played.discards.reveal(played.deal, seat, dealt)
    streets = [street for street, _ in played.deal.discard_commitments[seat]]

    def message(nonces: tuple[bytes, ...]) -> bytes:
        openings = zip(streets, command.cards, nonces, strict=True)
        return player_keys.discards_reveal_message(
            TABLE_ID,
            played.deal.number,
            seat,
            PLAYERS[seat],
            [(street, list(cards), nonce) for street, cards, nonce in openings],
        )

    def signed(signature: PlayerSignature | None) -> RevealDiscards:
        return dataclasses.replace(command, signature=signature, player_keys=(PUBLIC,))

    _refused(played, signed(None), Reason.SIGNATURE_REQUIRED)
    other_nonces = (bytes(16), *command.nonces[1:])
    _refused(played, signed(_signed(message(other_nonces))), Reason.BAD_SIGNATURE)
    _refused(played, signed(_signed(message(command.nonces), OTHER)), Reason.BAD_SIGNATURE)
    signature = _signed(message(command.nonces))
    (opened,) = played.run(signed(signature))
    assert isinstance(opened, DiscardsRevealed)
    assert (opened.player_key, opened.signature) == (PUBLIC.hex(), signature.signature.hex())
