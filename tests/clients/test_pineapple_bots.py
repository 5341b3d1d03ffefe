"""Pineapple through the clients (issue #19) over a real gRPC server: ``sapsam-bot``'s seats (the
SDK's open-face bot, the solver choosing each discard) play a 3-seat set of each Pineapple
preset; every discard is committed with its placement, kept on the client and opened with a
signed ``RevealDiscards`` at the end of the deal; the set verifies from the log, the players'
signatures of the openings included. An unsigned or forged opening from a player with a key is
refused, writing nothing; the operator's ``ForceSeatTimeout`` opens a seat's discards from the
seed in the discards phase, and that set verifies too."""

from __future__ import annotations

import threading
import time
import uuid

import grpc
import pytest
from open_face_sets import operator_token, play_bot_set, recorded, verified

from sapsam_client import connect
from sapsam_client.discards import KeptDiscard, discards_reveal_message
from sapsam_client.errors import SapsamError
from sapsam_client.open_face_bot import OpenFaceBot
from sapsam_proto.v1 import (
    open_face_pb2,
    operator_service_pb2,
    operator_service_pb2_grpc,
    table_pb2,
    table_service_pb2,
)

SEATS = 3


@pytest.mark.parametrize("preset", ["pineapple", "pineapple_2_7"])
def test_sapsam_bot_plays_a_pineapple_set_and_opens_every_discard_signed(
    preset: str,
    address: str,
    database_url: str,
    operator_metadata: tuple[tuple[str, str], ...],
) -> None:
    operator = connect(address, token=operator_token(operator_metadata))
    table = operator.create_open_face_table(SEATS, preset=preset)
    assert table.open_face_rule_set.street_discards == 1
    outcomes = play_bot_set(address, table.name, SEATS, 120)
    assert operator.get_table(table.name).phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    assert sum(standing.total for standing in outcomes[0].standings) == 0

    events, report = verified(database_url, table.name)
    assert report.ok, [check for check in report.checks if check.status.value != "passed"]
    assert report.deals_verified >= SEATS
    committed = [event.data for event in events if event.type == "DiscardCommitted"]
    opened = [event.data for event in events if event.type == "DiscardsRevealed"]
    # A normal hand discards once a street after the first (a move the service makes for it,
    # and a Fantasyland hand's 14th card, commit none: anyone recomputes them from the seed).
    assert committed
    assert sum(len(data["streets"]) for data in opened) == len(committed)
    # Every opening was the player's own, signed (none left to the server's deadline).
    assert all(data["nonces"][0] and data["signature"] and data["player_key"] for data in opened)
    signatures = {check.name for check in report.checks if check.name.startswith("player_sig")}
    assert signatures == {f"player_signature[{seat}]" for seat in range(SEATS)}
    assert any(check.name == "discards" for check in report.checks)


class KeepsDiscardsClosed(OpenFaceBot):
    """A bot that does not open its discards in deal 1 (its player stepped away)."""

    def _reveal_discards(self, number: int) -> bool:
        return False if number == 1 else super()._reveal_discards(number)


def test_an_opening_unsigned_or_forged_is_refused_and_the_operator_opens_the_discards(
    address: str,
    database_url: str,
    operator_metadata: tuple[tuple[str, str], ...],
) -> None:
    operator = connect(address, token=operator_token(operator_metadata))
    table = operator.create_open_face_table(SEATS, preset="pineapple").name
    bots = []
    for seat in range(SEATS):
        client = connect(address)
        player = client.register(f"bot {seat}").player.removeprefix("players/")
        joined = client.join_table(table, seat).name
        kind = KeepsDiscardsClosed if seat == 0 else OpenFaceBot
        bots.append(kind(client, table, joined, player, seed=seat))
    threads = [threading.Thread(target=bot.play, daemon=True) for bot in bots]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 60
        while True:
            view = operator.get_table(table)
            seat0 = view.open_face.seats[0] if view.open_face.seats else None
            waiting = (
                view.deal_number == 1
                and view.open_face.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_DISCARDS
                and seat0 is not None
                and all(
                    not entry.discards_made or entry.discards or entry.seat == seat0.seat
                    for entry in view.open_face.seats
                )
            )
            if waiting:
                break
            assert time.monotonic() < deadline, view
            time.sleep(0.05)
        assert seat0 is not None and seat0.discards_made == 4 and not seat0.discards
        first = bots[0]
        kept = first.client.discard_keeper.load_discards(first.seat)[1]
        assert [opening.street for opening in kept] == [1, 2, 3, 4]
        before = len(recorded(database_url, table))

        # The player has a key (its placements were signed): an unsigned opening is refused.
        first.client.sign_moves = False
        with pytest.raises(SapsamError) as refused:
            first.client.reveal_discards(first.seat, deal=1, player=first.player_id)
        assert refused.value.reason == "SIGNATURE_REQUIRED"
        first.client.sign_moves = True
        # Signed, but over other openings than those sent: BAD_SIGNATURE.
        key = first.client.key_for(f"players/{first.player_id}")
        assert key is not None
        forged = [KeptDiscard(1, o.street, o.cards, bytes(16), o.commitment) for o in kept]
        message = discards_reveal_message(
            table.removeprefix("tables/"), 1, 0, first.player_id, forged
        )
        request = table_service_pb2.RevealDiscardsRequest(
            request_id=str(uuid.uuid4()),
            seat=first.seat,
            discards=[
                table_service_pb2.DiscardOpening(cards=list(o.cards), nonce=o.nonce) for o in kept
            ],
            deal_number=1,
            signature=table_service_pb2.PlayerSignature(
                public_key=key.public_key, signature=key.sign(message)
            ),
        )
        with pytest.raises(grpc.RpcError) as bad:
            first.client.tables.RevealDiscards(request, metadata=first.client.metadata())
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "BAD_SIGNATURE" in str(bad.value.trailing_metadata())
        assert len(recorded(database_url, table)) == before  # nothing written

        # The operator times the seat out: its discards are opened from the seed, no nonce.
        stub = operator_service_pb2_grpc.OperatorServiceStub(grpc.insecure_channel(address))
        stub.ForceSeatTimeout(
            operator_service_pb2.ForceSeatTimeoutRequest(
                request_id=str(uuid.uuid4()), table=table, seat=0
            ),
            metadata=operator_metadata,
        )
        opened = [
            event.data
            for event in recorded(database_url, table)
            if event.type == "DiscardsRevealed" and event.data["seat"] == 0
        ]
        assert len(opened) == 1 and opened[0]["nonces"] == ["", "", "", ""]
        assert opened[0]["signature"] is None
        assert opened[0]["cards"] == [" ".join(o.cards) for o in kept]
        for thread in threads:
            thread.join(120)
    finally:
        for bot in bots:
            bot.stop.set()
    assert operator.get_table(table).phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    _, report = verified(database_url, table)
    assert report.ok, [check for check in report.checks if check.status.value != "passed"]
