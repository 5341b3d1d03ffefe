"""Signed play-or-surrender announcements, checked offline (docs/fairness.md §19, §20).

Three players with keys sign every move, their announcements included; the honest deal verifies
with each seat's ``player_signature``. A forger who re-chains the stream cannot make a player
surrender: flipping a signed announcement fails its signature, and an unsigned one recorded for a
player who signed its commit fails as unsigned. The server's announcement for a missed turn stays
unsigned and verifies; one carrying a signature is named. A deal recorded before announcements
were signed (``SurrenderAnnounced`` of schema 1, the players signing their commits and reveals)
verifies as it did.

Pure: the deal is decided by the domain and recorded as the store would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from test_audit_surrender import (
    NOW_MS,
    PLAYERS,
    RULES,
    TABLE_ID,
    Json,
    _forged,
    _of,
    _recorded,
    _verify,
)

from sapsam import fairness
from sapsam.audit import Requester, read_export, select_deal, verify_export, write_lines
from sapsam.audit.pinned_player_keys import pinned_key_checks
from sapsam.audit.sample_series import chained
from sapsam.domain.commands import (
    AnnounceSurrender,
    ChooseDealer,
    CommitArrangement,
    ConfirmArrangement,
    CreateTable,
    CutDeck,
    DealCards,
    PlayerSignature,
    RevealArrangement,
    RevealSeed,
    SeatPlayer,
    StartDeal,
    TimeOutSeats,
)
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import SurrenderAnnounced
from sapsam.domain.table import INITIAL_STATE, decide, evolve
from sapsam.domain.table_surrender import announcing_order
from sapsam.fairness import player_keys
from sapsam.log.records import RecordedEvent
from sapsam.rules.solver import solve

KEYS = {
    player: Ed25519PrivateKey.from_private_bytes(bytes([n + 7]) * 32)
    for n, player in enumerate(PLAYERS)
}


def _public(player: str) -> bytes:
    return KEYS[player].public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def _signature(player: str, message: bytes) -> PlayerSignature:
    return PlayerSignature(_public(player), KEYS[player].sign(message))


def _deal(miss_last_turn: bool = False) -> list[Json]:
    """One signed deal at a 3-seat table with surrender: the first seat in turn surrenders, the
    others play (the last lets its turn pass with ``miss_last_turn``); every seat reveals."""
    state = INITIAL_STATE
    events: list[Json] = []

    def run(command: object) -> None:
        nonlocal state
        for event in decide(state, command):
            state = evolve(state, event)
            type_name, schema_version, data = DEFAULT_CODEC.encode(event)
            events.append({"type": type_name, "schema_version": schema_version, "data": data})

    lot_seed = bytes(range(32))
    lot = fairness.lot_commitment(TABLE_ID, lot_seed)
    run(CreateTable(TABLE_ID, RULES, 3, lot, created_by="operator"))
    for seat, player in enumerate(PLAYERS):
        run(SeatPlayer(player_id=player, seat=seat))
    run(ChooseDealer(lot_seed=lot_seed))
    seed = bytes(range(1, 33))
    run(StartDeal(seed_commitment=fairness.seed_commitment(TABLE_ID, 1, seed)))
    deal = state.deal
    assert deal is not None
    run(CutDeck(player_id=PLAYERS[fairness.cutter_for(deal.dealer, 3)], position=17))
    arguments = (seed, deal.contributions, TABLE_ID, 1, 17, deal.dealer, 3)
    run(DealCards(deal_record=fairness.deal_record(*arguments), now_ms=NOW_MS))
    hands = fairness.hands_for_deal(*arguments)
    chosen = [(solve(hand, RULES), bytes([seat + 1]) * 16) for seat, hand in enumerate(hands)]
    for seat, (arrangement, nonce) in enumerate(chosen):
        player = PLAYERS[seat]
        commitment = fairness.arrangement_commitment(TABLE_ID, 1, seat, arrangement, nonce)
        message = player_keys.commit_message(TABLE_ID, 1, seat, player, 1, commitment)
        run(
            CommitArrangement(
                player,
                commitment,
                signature=_signature(player, message),
                player_keys=(_public(player),),
            )
        )
        run(ConfirmArrangement(player_id=player, now_ms=NOW_MS))
    order = announcing_order(deal.dealer, 3)
    for turn, seat in enumerate(order):
        player, surrender = PLAYERS[seat], turn == 0
        if miss_last_turn and turn == len(order) - 1:
            run(TimeOutSeats(now_ms=NOW_MS + 10**6))
            continue
        message = player_keys.announce_message(TABLE_ID, 1, seat, player, surrender)
        signed = _signature(player, message)
        run(AnnounceSurrender(player, surrender, NOW_MS + turn, None, signed, (_public(player),)))
    for seat, (arrangement, nonce) in enumerate(chosen):
        player = PLAYERS[seat]
        message = player_keys.reveal_message(TABLE_ID, 1, seat, player, arrangement, nonce)
        signed = _signature(player, message)
        run(
            RevealArrangement(
                player, arrangement, nonce, hands[seat], None, signed, (_public(player),)
            )
        )
    run(RevealSeed(seed=seed))
    return events


@pytest.fixture(scope="module")
def honest() -> list[Json]:
    return _deal()


def _failed_detail(report: Any, name: str) -> str:
    return next(check.detail for check in report.checks if check.name == name)


def test_the_honest_signed_deal_verifies_with_every_seats_signatures(honest: list[Json]) -> None:
    announced = _of(honest, "SurrenderAnnounced")
    assert len(announced) == 3
    assert all(data["signature"] and data["signing_scheme"] == 2 for data in announced)
    report = _verify(honest)
    assert report.ok, report.failed_names()
    passed = {check.name for check in report.checks if not check.failed}
    assert {f"player_signature[{seat}]" for seat in range(3)} <= passed


def test_a_surrender_flipped_under_the_players_signature_fails_it(honest: list[Json]) -> None:
    """The forger turns the second seat's "play" into a surrender and keeps its signature."""
    second = _of(honest, "AnnouncementsOpened")[0]["order"][1]

    def flip(events: list[Json]) -> None:
        for data in _of(events, "SurrenderAnnounced"):
            if data["seat"] == second:
                data["surrender"] = True

    report = _verify(_forged(honest, flip))
    failed = report.failed_names()
    assert "chain" not in failed and f"player_signature[{second}]" in failed, failed
    detail = _failed_detail(report, f"player_signature[{second}]")
    assert "the announcement" in detail and "does not verify for player" in detail


def test_an_unsigned_surrender_recorded_for_a_player_who_signs_is_named(
    honest: list[Json],
) -> None:
    """The operator records a surrender the player never made, without a signature: the
    player signed its commit in the same deal, so the announcement must be signed too."""
    second = _of(honest, "AnnouncementsOpened")[0]["order"][1]

    def strip(events: list[Json]) -> None:
        for data in _of(events, "SurrenderAnnounced"):
            if data["seat"] == second:
                data.update(surrender=True, player_key=None, signature=None)

    report = _verify(_forged(honest, strip))
    failed = report.failed_names()
    assert "chain" not in failed and f"player_signature[{second}]" in failed, failed
    detail = _failed_detail(report, f"player_signature[{second}]")
    assert "the announcement is unsigned" in detail and PLAYERS[second] in detail


def test_the_servers_announcement_for_a_missed_turn_is_unsigned_and_verifies() -> None:
    events = _deal(miss_last_turn=True)
    missed = [data for data in _of(events, "SurrenderAnnounced") if data["timed_out"]]
    assert len(missed) == 1 and missed[0]["signature"] is None and missed[0]["player_key"] is None
    report = _verify(events)
    assert report.ok, report.failed_names()

    # A signature on it (a player's "play" passed off as its missed turn) is named.
    signed = next(data for data in _of(events, "SurrenderAnnounced") if not data["timed_out"])

    def sign_the_timeout(forged: list[Json]) -> None:
        for data in _of(forged, "SurrenderAnnounced"):
            if data["timed_out"]:
                data.update(player_key=signed["player_key"], signature=signed["signature"])

    seat = missed[0]["seat"]
    report = _verify(_forged(events, sign_the_timeout))
    assert f"player_signature[{seat}]" in report.failed_names()
    assert "never signed" in _failed_detail(report, f"player_signature[{seat}]")


def test_a_deal_from_before_signed_announcements_still_verifies(honest: list[Json]) -> None:
    """Announcements of schema 1 (no key, signature or scheme), the players signing their
    commits and reveals: as recorded before this change. They read as unsigned, scheme 1."""

    def as_recorded_before(events: list[Json]) -> None:
        for event in events:
            if event["type"] == "SurrenderAnnounced":
                event["schema_version"] = 1
                for name in ("player_key", "signature", "signing_scheme"):
                    del event["data"][name]

    before = _forged(honest, as_recorded_before)
    first = next(event for event in before if event["type"] == "SurrenderAnnounced")
    decoded = DEFAULT_CODEC.decode(first["type"], first["schema_version"], first["data"])
    assert isinstance(decoded, SurrenderAnnounced)
    assert (decoded.player_key, decoded.signature, decoded.signing_scheme) == (None, None, 1)
    report = _verify(before)
    assert report.ok, report.failed_names()
    passed = {check.name for check in report.checks if not check.failed}
    assert {f"player_signature[{seat}]" for seat in range(3)} <= passed


def test_the_stored_rules_v6_tables_verify_their_unsigned_announcements() -> None:
    """tests/unit/data/rules_v6_log.json, recorded by ``sapsam demo`` before announcements were
    signed: its players signed every commit and reveal, and announced unsigned (schema 1)."""
    log = json.loads(
        (Path(__file__).parents[1] / "unit" / "data" / "rules_v6_log.json").read_text()
    )
    verified = 0
    for table in log["tables"]:
        events = table["events"]
        announced = [event for event in events if event["type"] == "SurrenderAnnounced"]
        if not announced:
            continue
        assert {event["schema_version"] for event in announced} == {1}
        recorded = _chained(table["stream"], events)
        for number in sorted({event["data"]["deal_number"] for event in announced}):
            export = write_lines(select_deal(recorded, number, Requester.operator()))
            report = verify_export(export)
            assert report.ok, report.failed_names()
            signed = [check for check in report.checks if check.name.startswith("player_sig")]
            assert signed and not any(check.failed for check in signed)
            verified += 1
    assert verified >= 2


def _chained(stream_id: str, events: list[Json]) -> list[RecordedEvent]:
    encoded = ((event["type"], event["schema_version"], event["data"]) for event in events)
    return chained(stream_id, encoded)


def test_a_surrender_re_signed_with_a_forgers_key_fails_the_players_pinned_key(
    honest: list[Json],
) -> None:
    """The forger signs the surrender with a key of its own: the signature verifies under the
    recorded key, but a reader who pins the player's key sees the move signed by another."""
    second = _of(honest, "AnnouncementsOpened")[0]["order"][1]
    player = PLAYERS[second]
    forger = Ed25519PrivateKey.generate()
    message = player_keys.announce_message(TABLE_ID, 1, second, player, True)
    forged_key = forger.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def resign(events: list[Json]) -> None:
        for data in _of(events, "SurrenderAnnounced"):
            if data["seat"] == second:
                data.update(
                    surrender=True,
                    player_key=forged_key.hex(),
                    signature=forger.sign(message).hex(),
                )

    forged = _forged(honest, resign)
    lines = list(write_lines(select_deal(_recorded(forged), 1, Requester.operator())))
    assert f"player_signature[{second}]" not in verify_export(lines).failed_names()
    checks = pinned_key_checks(read_export(lines), {player: frozenset({_public(player)})})
    assert [check.name for check in checks if check.failed] == [f"pinned_player_key[{player}]"]
    assert "the announcement of deal 1" in checks[0].detail
