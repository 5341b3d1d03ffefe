"""Signed receipts on a real server over a socket: every mutating TableService and
TournamentService call returns one that verifies against the pinned server key and names
exactly the events the call appended (stream, versions, positions, types, chained hashes); a
retried request id returns the same receipt, byte for byte; a tampered one fails."""

from __future__ import annotations

import os
import uuid
from typing import Any

import psycopg
import pytest
from scenarios import Chosen, Seated, World, cup_request

from sapsam import fairness
from sapsam.log.receipt import open_receipt
from sapsam.log.signed_note import NoteVerificationError, VerifierKey
from sapsam.rules.presets import preset
from sapsam.rules.solver import solve
from sapsam_proto.v1 import (
    receipt_pb2,
    table_service_pb2,
    tournament_service_pb2,
    transparency_service_pb2_grpc,
)
from sapsam_proto.v1 import transparency_service_pb2 as transparency


def _pinned(world: World) -> tuple[str, list[VerifierKey]]:
    stub = transparency_service_pb2_grpc.TransparencyServiceStub(world.api.channel)
    key = stub.GetServerKey(transparency.GetServerKeyRequest())
    return key.origin, [VerifierKey.parse(key.verifier_key)]


def _logged(world: World, stream: str, first: int, last: int) -> list[tuple[Any, ...]]:
    with psycopg.connect(world.database_url) as connection:
        rows = connection.execute(
            "SELECT version, position, type, hash, metadata->>'request_id' FROM events"
            " WHERE stream_id = %s AND version BETWEEN %s AND %s ORDER BY version",
            [stream, first, last],
        ).fetchall()
    return [(int(v), int(p), t, bytes(h), r) for v, p, t, h, r in rows]


def _check(world: World, response: Any, method: str) -> receipt_pb2.Receipt:
    """The response's receipt verifies, its parsed fields are the note's, and it names exactly
    the events the log holds for those versions."""
    assert response.HasField("receipt"), f"{method} returned no receipt"
    message: receipt_pb2.Receipt = response.receipt
    origin, keys = _pinned(world)
    opened = open_receipt(message.signed_note, keys, origin)
    receipt = opened.receipt
    assert (
        (message.log, message.stream) == (receipt.log, receipt.stream) == (origin, receipt.stream)
    )
    assert (message.first_version, message.last_version) == (
        receipt.first_version,
        receipt.last_version,
    )
    assert (message.request_id, message.recorded_time) == (receipt.request_id, receipt.time)
    assert message.key_id == keys[0].key_id
    assert [(e.version, e.position, e.type, e.hash) for e in message.events] == [
        (e.version, e.position, e.type, e.hash) for e in receipt.events
    ]
    logged = _logged(world, receipt.stream, receipt.first_version, receipt.last_version)
    assert [row[:4] for row in logged] == [
        (e.version, e.position, e.type, e.hash) for e in receipt.events
    ]
    assert {row[4] for row in logged} == {receipt.request_id}
    assert f"/{method}/" in receipt.request_id
    if "version" in response.DESCRIPTOR.fields_by_name:
        assert response.version == receipt.last_version
    return message


def test_every_table_call_returns_a_receipt_of_what_it_appended(world: World) -> None:
    creator = world.player("creator")
    created = world.table_call(
        "CreateTable",
        table_service_pb2.CreateTableRequest(
            request_id=str(uuid.uuid4()), seat_count=2, rule_set_preset="pagat"
        ),
        creator.token,
    )
    _check(world, created, "CreateTable")
    table = created.table.name
    table_id = uuid.UUID(table.rsplit("/", 1)[1])
    players = [world.player(f"p{index}") for index in range(2)]
    for player in players:
        joined = world.table_call(
            "JoinTable",
            table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=table),
            player.token,
        )
        _check(world, joined, "JoinTable")
        player.seat = joined.seat
    dealer = world.table_call(
        "ChooseDealer",
        table_service_pb2.ChooseDealerRequest(request_id=str(uuid.uuid4()), table=table),
        players[0].token,
    )
    _check(world, dealer, "ChooseDealer")
    started = world.table_call(
        "StartDeal",
        table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table),
        players[0].token,
    )
    _check(world, started, "StartDeal")
    entropy = world.table_call(
        "ContributeEntropy",
        table_service_pb2.ContributeEntropyRequest(
            request_id=str(uuid.uuid4()), seat=players[1].seat, entropy=os.urandom(16)
        ),
        players[1].token,
    )
    _check(world, entropy, "ContributeEntropy")
    seated = Seated(table, players)
    cutter = world.cutter(seated)
    cut = world.table_call(
        "CutDeck",
        table_service_pb2.CutDeckRequest(
            request_id=str(uuid.uuid4()), seat=cutter.seat, position=9
        ),
        cutter.token,
    )
    assert [e.type for e in _check(world, cut, "CutDeck").events] == ["DeckCut", "CardsDealt"]
    chosen: dict[str, Chosen] = {}
    for player in players:
        pick = Chosen(solve(world.hand(player), preset("pagat")), os.urandom(16))
        chosen[player.seat] = pick
        commitment = fairness.arrangement_commitment(
            table_id, 1, player.position, pick.arrangement, pick.nonce
        )
        committed = world.table_call(
            "CommitArrangement",
            table_service_pb2.CommitArrangementRequest(
                request_id=str(uuid.uuid4()), seat=player.seat, commitment=commitment
            ),
            player.token,
        )
        _check(world, committed, "CommitArrangement")
        confirmed = world.table_call(
            "ConfirmArrangement",
            table_service_pb2.ConfirmArrangementRequest(
                request_id=str(uuid.uuid4()), seat=player.seat
            ),
            player.token,
        )
        _check(world, confirmed, "ConfirmArrangement")
    last = None
    for player in players:
        last = world.table_call(
            "RevealArrangement",
            table_service_pb2.RevealArrangementRequest(
                request_id=str(uuid.uuid4()),
                seat=player.seat,
                arrangement=chosen[player.seat].rows(),
                nonce=chosen[player.seat].nonce,
            ),
            player.token,
        )
        _check(world, last, "RevealArrangement")
    assert last is not None
    types = [event.type for event in last.receipt.events]
    assert types[:3] == ["ArrangementRevealed", "SeedRevealed", "DealScored"]


def test_a_retried_request_id_returns_the_same_receipt_bytes(world: World) -> None:
    seated = world.seated()
    deal = world.dealt(seated)
    player = seated.players[0]
    pick = Chosen(solve(world.hand(player), preset("pagat")), os.urandom(16))
    commitment = fairness.arrangement_commitment(
        seated.table_id, int(deal.rsplit("/", 1)[1]), player.position, pick.arrangement, pick.nonce
    )
    request = table_service_pb2.CommitArrangementRequest(
        request_id="commit-once", seat=player.seat, commitment=commitment
    )
    first = world.table_call("CommitArrangement", request, player.token)
    again = world.table_call("CommitArrangement", request, player.token)
    _check(world, first, "CommitArrangement")
    assert again.receipt.signed_note.encode() == first.receipt.signed_note.encode()
    assert again.SerializeToString(deterministic=True) == first.SerializeToString(
        deterministic=True
    )


def test_a_tampered_receipt_fails(world: World) -> None:
    seated = world.seated()
    response = world.table_call(
        "StartDeal",
        table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=seated.table),
        seated.players[0].token,
    )
    origin, keys = _pinned(world)
    note = response.receipt.signed_note
    open_receipt(note, keys, origin)
    event = response.receipt.events[0]
    forged = note.replace(
        f"event {event.version} {event.position} ", f"event {event.version} {event.position + 1} "
    )
    assert forged != note
    with pytest.raises(NoteVerificationError):
        open_receipt(forged, keys, origin)


def test_every_tournament_call_returns_a_receipt(world: World) -> None:
    stub = world.tournaments
    created = stub.CreateTournament(cup_request("Receipts cup"), metadata=world.operator)
    _check(world, created, "CreateTournament")
    name = created.tournament.name
    entrants = [world.player(f"entrant {index}") for index in range(3)]
    for entrant in entrants:
        registered = stub.RegisterTournamentPlayer(
            tournament_service_pb2.RegisterTournamentPlayerRequest(
                request_id=str(uuid.uuid4()), tournament=name
            ),
            metadata=(("authorization", f"Bearer {entrant.token}"),),
        )
        _check(world, registered, "RegisterTournamentPlayer")
    left = stub.UnregisterTournamentPlayer(
        tournament_service_pb2.UnregisterTournamentPlayerRequest(
            request_id=str(uuid.uuid4()), tournament=name
        ),
        metadata=(("authorization", f"Bearer {entrants[2].token}"),),
    )
    _check(world, left, "UnregisterTournamentPlayer")
    start = tournament_service_pb2.StartTournamentRequest(request_id="start-cup", tournament=name)
    started = stub.StartTournament(start, metadata=world.operator)
    _check(world, started, "StartTournament")
    again = stub.StartTournament(start, metadata=world.operator)
    assert again.receipt.signed_note == started.receipt.signed_note
