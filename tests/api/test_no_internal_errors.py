"""Nothing a client sends makes the server answer UNKNOWN or INTERNAL.

Every RPC gets requests whose fields are filled from a palette of valid, borderline and absurd
values (resource names of this table and of none, huge and negative numbers, empty and oversized
bytes, odd text), sent by a seated player, an outsider and the operator, at a table in the middle
of a deal. Each answer is a success or a documented refusal carrying ErrorInfo.
"""

from __future__ import annotations

import random
from typing import Any

import grpc
from api_client import OPERATOR_TOKEN, Api, error_reason
from google.protobuf.message import Message

from sapsam_proto.v1 import player_service_pb2, table_service_pb2

REQUESTS = (
    table_service_pb2.CreateTableRequest,
    table_service_pb2.GetTableRequest,
    table_service_pb2.ListTablesRequest,
    table_service_pb2.JoinTableRequest,
    table_service_pb2.ChooseDealerRequest,
    table_service_pb2.StartDealRequest,
    table_service_pb2.ContributeEntropyRequest,
    table_service_pb2.CutDeckRequest,
    table_service_pb2.GetMyHandRequest,
    table_service_pb2.GetSuggestionRequest,
    table_service_pb2.CommitArrangementRequest,
    table_service_pb2.DeclareNaturalRequest,
    table_service_pb2.ConfirmArrangementRequest,
    table_service_pb2.RevealArrangementRequest,
    table_service_pb2.AnnounceSurrenderRequest,
    table_service_pb2.GetDealResultRequest,
    table_service_pb2.ListMyDealsRequest,
    table_service_pb2.ListRuleSetsRequest,
    player_service_pb2.RegisterPlayerRequest,
    player_service_pb2.GetPlayerRequest,
)
ROUNDS = 30


def _texts(table: str, seats: list[str], player: str) -> dict[str, list[str]]:
    """String values by field name: mostly meaningful here, some malformed."""
    odd = ["", "x" * 300, "\U0001f0a1 \u2660 \x00 \n", "tables//seats/0", "players/"]
    missing = "tables/00000000-0000-0000-0000-000000000000"
    return {
        "request_id": ["", "r1", "r2", "x" * 65],
        "seat": [*seats, *seats, f"{table}/seats/9", f"{missing}/seats/0", *odd],
        "table": [table, table, table, missing, *odd],
        "name": [table, f"{table}/deals/1", f"{table}/deals/9", player, missing, *odd],
        "display_name": ["ann", "", "x" * 65, "a\x00b"],
        "rule_set_preset": ["pagat", "one_six", "poker", ""],
        "page_token": ["", "garbage"],
        "": odd,
    }


def _value(rng: random.Random, field: Any, texts: dict[str, list[str]]) -> Any:
    kind = field.type
    if kind == field.TYPE_STRING:
        return rng.choice(texts.get(field.name, texts[""]))
    if kind == field.TYPE_BYTES:
        return rng.choice([b"", b"\x00", bytes(16), bytes(range(32)), bytes(65), bytes(1000)])
    if kind == field.TYPE_ENUM:
        return rng.choice([value.number for value in field.enum_type.values] + [99])
    if kind == field.TYPE_UINT32:  # e.g. commitment_scheme: known, unknown and the largest
        return rng.choice([0, 1, 2, 3, 2**32 - 1])
    if kind == field.TYPE_BOOL:  # e.g. CommitArrangement's confirm
        return rng.choice([False, True])
    if kind in (field.TYPE_INT32, field.TYPE_INT64):
        bound = 2**31 - 1
        return rng.choice([0, 1, 2, 4, 5, 51, 52, -1, bound, -bound - 1])
    raise AssertionError(f"no values for field {field.name}")


def _fill(
    rng: random.Random, message: Message, texts: dict[str, list[str]], depth: int = 0
) -> None:
    for field in message.DESCRIPTOR.fields:
        if rng.random() < 0.25:
            continue  # leave some fields unset
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            # e.g. RuleSet.royalty_amounts, pair_units: known, unknown and absurd keys and values
            keys = ["back_flush", "0-1", "", "Zz", "x" * 300, "front_pair_Q"]
            entries = {rng.choice(keys): rng.choice([0, 1, 7, -1, 2**31 - 1]) for _ in range(3)}
            getattr(message, field.name).update(entries)
        elif field.type == field.TYPE_MESSAGE:
            if depth < 2:
                _fill(rng, getattr(message, field.name), texts, depth + 1)
        elif field.is_repeated:
            cards = ["As", "Kd", "2c", "Zz", "10h", "as", "Q♠", ""]
            getattr(message, field.name).extend(rng.choice(cards) for _ in range(rng.randint(0, 6)))
        else:
            setattr(message, field.name, _value(rng, field, texts))


def test_no_request_gets_unknown_or_internal(api: Api) -> None:
    table, players = api.seated_table(2, "pagat")
    outsider = api.register("outsider")
    api.call("StartDeal", table_service_pb2.StartDealRequest(table=table), players[0].token)
    view = api.call("GetTable", table_service_pb2.GetTableRequest(name=table), players[0].token)
    cutter = next(p for p in players if p.seat == view.table.cutter_seat)
    api.call(
        "CutDeck", table_service_pb2.CutDeckRequest(seat=cutter.seat, position=9), cutter.token
    )
    texts = _texts(table, [player.seat for player in players], players[1].name)
    tokens = [players[0].token, players[1].token, outsider.token, OPERATOR_TOKEN]
    rng = random.Random(20261130)
    outcomes: dict[str, int] = {}
    for request_type in REQUESTS:
        method = request_type.DESCRIPTOR.name.removesuffix("Request")
        for _ in range(ROUNDS):
            request = request_type()
            _fill(rng, request, texts)
            try:
                api.call(method, request, rng.choice(tokens))
                outcomes["OK"] = outcomes.get("OK", 0) + 1
            except grpc.RpcError as error:
                assert error.code() not in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL), (
                    method,
                    request,
                    error.details(),
                )
                _, reason, _, _ = error_reason(error)
                outcomes[reason] = outcomes.get(reason, 0) + 1
    # The palette reaches deep: past authentication and parsing into the domain's refusals.
    assert {"BAD_RESOURCE_NAME", "NOT_YOUR_SEAT", "WRONG_PHASE", "OK"} <= outcomes.keys()
