"""Anonymous floods are bounded: a peer address gets a few database look-ups of tokens the server
does not know, then RATE_LIMITED (with RetryInfo) before any look-up; a made-up token repeated is
answered from memory; a player with a working token from the same address is unaffected."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Api, bearer, error_reason
from grpc_status import rpc_status

from sapsam.api.limits import CallerLimits
from sapsam.api.server import ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam_proto.v1 import player_service_pb2, table_service_pb2

LOOKUP_BURST = 5
LIMITS = CallerLimits(token_lookups_per_second=0.01, token_lookup_burst=LOOKUP_BURST)
GET_TABLE = table_service_pb2.GetTableRequest(name="tables/00000000-0000-0000-0000-000000000007")


@pytest.fixture
def api(database_url: str) -> Iterator[Api]:
    running = start_server(
        ServerConfig(
            listen="127.0.0.1:0", operator_token=OPERATOR_TOKEN, grace_seconds=1, limits=LIMITS
        ),
        build_services(database_url),
    )
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            yield Api(channel, database_url)
    finally:
        running.stop()


def _refusal(api: Api, token: str) -> tuple[grpc.StatusCode, str, Any]:
    with pytest.raises(grpc.RpcError) as raised:
        api.tables.GetTable(GET_TABLE, metadata=bearer(token), timeout=10)
    code, reason, _, _ = error_reason(raised.value)
    return code, reason, raised.value


def test_unknown_tokens_are_looked_up_a_few_times_per_address(api: Api) -> None:
    player = api.register("legit")
    # Its first call looks its token up (one of the address's look-ups); then memory knows it.
    api.call("GetPlayer", player_service_pb2.GetPlayerRequest(name=player.name), player.token)
    made_up = [f"sps_{secrets.token_urlsafe(32)}" for _ in range(LOOKUP_BURST + 3)]
    outcomes = [_refusal(api, token)[:2] for token in made_up]
    unauthenticated = (grpc.StatusCode.UNAUTHENTICATED, "UNKNOWN_TOKEN")
    limited = (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
    assert outcomes == [unauthenticated] * (LOOKUP_BURST - 1) + [limited] * 4
    # The refusal says when to retry (RetryInfo).
    status = rpc_status.from_call(_refusal(api, f"sps_{secrets.token_urlsafe(32)}")[2])
    assert status is not None
    assert any(detail.type_url.endswith("google.rpc.RetryInfo") for detail in status.details)
    # A made-up token already seen is answered from memory: no look-up, so not limited.
    assert _refusal(api, made_up[0])[:2] == unauthenticated
    # The player at the same address still works, and may still register (a public method,
    # where a token the limit keeps from being looked up is ignored).
    api.call("GetPlayer", player_service_pb2.GetPlayerRequest(name=player.name), player.token)
    registered = api.players.RegisterPlayer(
        player_service_pb2.RegisterPlayerRequest(request_id="r-1", display_name="second"),
        metadata=bearer(f"sps_{secrets.token_urlsafe(32)}"),
        timeout=10,
    )
    assert registered.token
