"""The offline verifier's ``player_signature[s]`` check over open face's signed moves
(docs/fairness.md §19, docs/audit.md §4.2): a set in which seat 0's player signed every
placement and its Fantasyland hand verifies; a placement rewritten under the player's signature,
an unsigned placement after signed ones, or a signed placement the service made is named."""

from __future__ import annotations

import dataclasses
import uuid

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from open_face_deals import PLAYERS, TABLE_ID, export_lines, fantasyland_table, open_face_table

from sapsam.audit import verify_export
from sapsam.audit.report import AuditReport, Status
from sapsam.domain.events import Event
from sapsam.domain.open_face.events import (
    CardsPlaced,
    DiscardCommitted,
    DiscardsRevealed,
    FantasylandCommitted,
    FantasylandRevealed,
)
from sapsam.domain.open_face.table_state import OpenFaceTablePhase
from sapsam.fairness import player_keys
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.open_face.board import Placement

KEY = Ed25519PrivateKey.from_private_bytes(bytes([9]) * 32)
PUBLIC = KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()


def _message(
    event: Event, following: Event | None = None, table_id: uuid.UUID = TABLE_ID
) -> bytes | None:
    """Seat 0's message for one of its own open-face moves (a placement with the discard
    commitment recorded right after it, if any), None for any other event."""
    if getattr(event, "seat", None) != 0:
        return None
    player = PLAYERS[0]
    if isinstance(event, CardsPlaced) and event.automatic is None:
        rows = Placement(*(parse_cards(row) for row in (event.front, event.middle, event.back)))
        discard = None
        if isinstance(following, DiscardCommitted) and following.seat == 0:
            discard = bytes.fromhex(following.commitment)
        return player_keys.place_message(
            table_id, event.deal_number, 0, player, event.street, rows, discard
        )
    if isinstance(event, FantasylandCommitted):
        return player_keys.commit_message(
            table_id,
            event.deal_number,
            0,
            player,
            2,
            bytes.fromhex(event.commitment),
            tag=player_keys.TAG_FANTASYLAND_COMMIT_SIGNATURE,
        )
    if isinstance(event, DiscardsRevealed) and all(event.nonces):
        return player_keys.discards_reveal_message(
            table_id,
            event.deal_number,
            0,
            player,
            [
                (street, parse_cards(cards), bytes.fromhex(nonce))
                for street, cards, nonce in zip(
                    event.streets, event.cards, event.nonces, strict=True
                )
            ],
        )
    if isinstance(event, FantasylandRevealed) and event.nonce:
        rows = Arrangement.of_card_rows(
            parse_cards(event.front), parse_cards(event.middle), parse_cards(event.back)
        )
        return player_keys.reveal_message(
            table_id,
            event.deal_number,
            0,
            player,
            rows,
            bytes.fromhex(event.nonce),
            tag=player_keys.TAG_FANTASYLAND_REVEAL_SIGNATURE,
        )
    return None


def _signed(events: list[Event]) -> list[Event]:
    """The set as recorded had seat 0's player a key: each of its own moves signed."""
    out: list[Event] = []
    for index, event in enumerate(events):
        message = _message(event, events[index + 1] if index + 1 < len(events) else None)
        if message is not None:
            event = dataclasses.replace(  # type: ignore[call-arg]
                event, player_key=PUBLIC, signature=KEY.sign(message).hex()
            )
        out.append(event)
    return out


@pytest.fixture(scope="module")
def signed_set() -> list[Event]:
    table = fantasyland_table()
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        table.play_deal()
    return _signed(list(table.events))


def _verify(events: list[Event]) -> AuditReport:
    return verify_export(export_lines(events))


def _signature_checks(report: AuditReport) -> list[tuple[str, Status, int | None]]:
    return [
        (check.name, check.status, check.deal)
        for check in report.checks
        if check.name.startswith("player_signature")
    ]


def _first(events: list[Event], kind: type[Event], seat: int = 0) -> int:
    return next(
        i
        for i, event in enumerate(events)
        if isinstance(event, kind)
        and getattr(event, "seat", None) == seat
        and getattr(event, "automatic", None) is None
    )


def test_a_set_with_seat_0s_moves_signed_verifies(signed_set: list[Event]) -> None:
    assert any(isinstance(e, FantasylandRevealed) and e.signature for e in signed_set)
    report = _verify(signed_set)
    assert report.ok, [c for c in report.checks if c.status is Status.FAILED]
    checks = _signature_checks(report)
    assert checks and all(
        name == "player_signature[0]" and status is Status.PASSED for name, status, _ in checks
    )


def test_a_placement_rewritten_under_the_players_signature_fails_it(
    signed_set: list[Event],
) -> None:
    index = _first(signed_set, CardsPlaced)
    placed = signed_set[index]
    assert isinstance(placed, CardsPlaced) and placed.street == 0 and len(placed.back) >= 1
    # The operator moves one of the player's back cards to the middle, re-chaining every hash.
    forged = dataclasses.replace(
        placed,
        middle=(*placed.middle, placed.back[0]),
        back=placed.back[1:],
    )
    report = _verify([*signed_set[:index], forged, *signed_set[index + 1 :]])
    failed = [c for c in report.checks if c.status is Status.FAILED]
    assert ("player_signature[0]", placed.deal_number) in [(c.name, c.deal) for c in failed]
    detail = next(c.detail for c in failed if c.name == "player_signature[0]")
    assert "placement" in detail and "does not verify" in detail


def test_an_unsigned_placement_after_signed_ones_is_named(signed_set: list[Event]) -> None:
    indexes = [
        i
        for i, e in enumerate(signed_set)
        if isinstance(e, CardsPlaced) and e.seat == 0 and e.signature is not None
    ]
    later = indexes[1]
    stripped = dataclasses.replace(signed_set[later], player_key=None, signature=None)  # type: ignore[call-arg]
    report = _verify([*signed_set[:later], stripped, *signed_set[later + 1 :]])
    failed = [c for c in report.checks if c.status is Status.FAILED]
    assert [c.name for c in failed] == ["player_signature[0]"]
    assert "placement is unsigned" in failed[0].detail


def test_a_set_recorded_before_signing_verifies_and_a_signed_scheme_1_move_is_named(
    signed_set: list[Event],
) -> None:
    unsigned = [
        dataclasses.replace(e, player_key=None, signature=None, signing_scheme=1)  # type: ignore[call-arg]
        if isinstance(e, CardsPlaced | FantasylandCommitted | FantasylandRevealed)
        else e
        for e in signed_set
    ]
    report = _verify(unsigned)
    assert report.ok and not _signature_checks(report)
    index = _first(signed_set, CardsPlaced)
    old = dataclasses.replace(signed_set[index], signing_scheme=1)  # type: ignore[call-arg]
    report = _verify([*signed_set[:index], old, *signed_set[index + 1 :]])
    failed = [c for c in report.checks if c.status is Status.FAILED]
    assert [c.name for c in failed] == ["player_signature[0]"]
    assert "signing scheme 1" in failed[0].detail


def test_a_signed_move_the_service_made_is_named() -> None:
    """A placement the service made (``automatic``: here seat 0's timeout and the moves made for
    its hand after it) is never signed: one carrying the player's key and a signature (of its
    own, valid message) is named by player_signature."""
    table = open_face_table("ofc_classic", 2, move_seconds=30)
    table.start_deal()
    table.play_deal(late={0})
    signed_set = _signed(list(table.events))
    assert _verify(signed_set).ok
    index = next(
        i
        for i, e in enumerate(signed_set)
        if isinstance(e, CardsPlaced) and e.seat == 0 and e.automatic is not None
    )
    made = signed_set[index]
    assert isinstance(made, CardsPlaced)
    message = _message(dataclasses.replace(made, automatic=None))
    assert message is not None
    forged = dataclasses.replace(made, player_key=PUBLIC, signature=KEY.sign(message).hex())
    report = _verify([*signed_set[:index], forged, *signed_set[index + 1 :]])
    failed = [c for c in report.checks if c.status is Status.FAILED]
    assert [(c.name, c.deal) for c in failed] == [("player_signature[0]", made.deal_number)]
    assert "never signed" in failed[0].detail and made.automatic in failed[0].detail


def test_a_signed_pineapple_placement_binds_its_discard_commitment() -> None:
    """The ``place`` message holds the discard commitment recorded with the placement: a
    commitment swapped for another (re-chained) breaks the player's signature."""
    table = open_face_table("pineapple", 2)
    table.start_deal()
    table.play_deal()
    events = _signed(list(table.events))
    report = _verify(events)
    assert report.ok, [c for c in report.checks if c.status is Status.FAILED]
    assert ("player_signature[0]", Status.PASSED, 1) in _signature_checks(report)
    index = next(i for i, e in enumerate(events) if isinstance(e, DiscardCommitted) and e.seat == 0)
    assert isinstance(events[index - 1], CardsPlaced) and events[index - 1].signature
    swapped = dataclasses.replace(events[index], commitment="ab" * 32)  # type: ignore[call-arg]
    report = _verify([*events[:index], swapped, *events[index + 1 :]])
    failed = {c.name for c in report.checks if c.status is Status.FAILED}
    assert "player_signature[0]" in failed


def test_a_pineapple_opening_of_discards_is_signed_and_checked() -> None:
    """``DiscardsRevealed`` carries the player's ``discards-reveal`` signature: it verifies;
    stripped (after signed moves) or made over other openings it is named."""
    table = open_face_table("pineapple", 2)
    table.start_deal()
    table.play_deal()
    events = _signed(list(table.events))
    index = next(i for i, e in enumerate(events) if isinstance(e, DiscardsRevealed) and e.seat == 0)
    opened = events[index]
    assert isinstance(opened, DiscardsRevealed) and opened.signature and opened.player_key
    assert _verify(events).ok
    stripped = dataclasses.replace(opened, player_key=None, signature=None)
    report = _verify([*events[:index], stripped, *events[index + 1 :]])
    failed = [c for c in report.checks if c.status is Status.FAILED]
    assert [c.name for c in failed] == ["player_signature[0]"]
    assert "discards' opening is unsigned" in failed[0].detail
    other = player_keys.discards_reveal_message(
        TABLE_ID, opened.deal_number, 0, PLAYERS[0], [(1, parse_cards("2c"), bytes(16))]
    )
    forged = dataclasses.replace(opened, signature=KEY.sign(other).hex())
    report = _verify([*events[:index], forged, *events[index + 1 :]])
    failed = [c for c in report.checks if c.status is Status.FAILED]
    assert [c.name for c in failed] == ["player_signature[0]"]
    assert "does not verify" in failed[0].detail
