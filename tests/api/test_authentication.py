"""Authentication over a real server: the one accepted header form, and a token's lifecycle
(rotation, revocation by the operator, expiry) as docs/api.md's Authentication section states it."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import grpc
import psycopg
import pytest
from api_client import OPERATOR_TOKEN, Api, bearer, error_reason
from database_roles import new_role
from serving import serving_api

from sapsam.cli import main as sapsam_main
from sapsam.store.schema import grant_service_role
from sapsam_proto.v1 import player_service_pb2, table_service_pb2

UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED


@pytest.fixture(scope="module")
def api(database_factory: Any) -> Iterator[Api]:
    """One server for the module (each test registers its own players), tokens without expiry."""
    name, url = database_factory.create(migrated=True)
    try:
        with serving_api(url) as api:
            yield api
    finally:
        database_factory.drop(name)


def _refused(call: Any, request: Any, metadata: Any) -> tuple[grpc.StatusCode, str, str]:
    with pytest.raises(grpc.RpcError) as raised:
        response = call(request, metadata=metadata)
        if isinstance(response, Iterator):
            list(response)
    code, reason, _, _ = error_reason(raised.value)
    return code, reason, raised.value.details() or ""


def _who(api: Api, metadata: Any) -> str:
    """The caller's player name, through CreateTable's creator (any caller may create)."""
    table = api.tables.CreateTable(
        table_service_pb2.CreateTableRequest(seat_count=2), metadata=metadata
    ).table
    return str(table.creator)


def _rotate(api: Api, token: str, request_id: str) -> str:
    response = api.players.RotateToken(
        player_service_pb2.RotateTokenRequest(request_id=request_id), metadata=bearer(token)
    )
    return str(response.token)


def _reason(api: Api, token: str) -> str:
    """The reason a token is refused on an ordinary call ('' if it works)."""
    try:
        _who(api, bearer(token))
    except grpc.RpcError as error:
        code, reason, _, _ = error_reason(error)
        assert code == UNAUTHENTICATED
        return reason
    return ""


# -- the header --------------------------------------------------------------------------------


def _variants(token: str) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    one = "authorization"
    return [
        ("lowercase scheme", ((one, f"bearer {token}"),)),
        ("uppercase scheme", ((one, f"BEARER {token}"),)),
        ("two spaces", ((one, f"Bearer  {token}"),)),
        ("leading space", ((one, f" Bearer {token}"),)),
        ("trailing space", ((one, f"Bearer {token} "),)),
        ("empty token", ((one, "Bearer "),)),
        ("no token", ((one, "Bearer"),)),
        ("bad characters", ((one, f"Bearer {token}!x"),)),
        ("comma", ((one, f"Bearer {token},{token}"),)),
        ("space inside", ((one, f"Bearer {token} {token}"),)),
        ("another scheme", ((one, "Basic dXNlcjpwYXNz"),)),
        ("too long", ((one, "Bearer " + "a" * 513),)),
        ("two headers, same token", ((one, f"Bearer {token}"), (one, f"Bearer {token}"))),
        ("two headers, second bad", ((one, f"Bearer {token}"), (one, "Bearer sps_nobody"))),
    ]


def test_only_exactly_one_bearer_header_is_accepted(api: Api) -> None:
    player = api.register("Ann")
    assert _who(api, bearer(player.token)) == player.name  # the exact form works
    for label, metadata in _variants(player.token):
        # A unary call, a streamed one, and the public RegisterPlayer: all refuse it alike.
        for call, request in (
            (api.tables.CreateTable, table_service_pb2.CreateTableRequest(seat_count=2)),
            (api.tables.WatchTable, table_service_pb2.WatchTableRequest(table="tables/x")),
            (
                api.players.RegisterPlayer,
                player_service_pb2.RegisterPlayerRequest(display_name="Bo"),
            ),
        ):
            code, reason, message = _refused(call, request, metadata)
            assert (code, reason) == (UNAUTHENTICATED, "BAD_AUTHORIZATION_HEADER"), label
            assert player.token not in message and "dXNlcjpwYXNz" not in message, label
            assert "exactly once" in message, label


def test_missing_and_unknown_tokens_keep_their_reasons(api: Api) -> None:
    request = table_service_pb2.CreateTableRequest(seat_count=2)
    assert _refused(api.tables.CreateTable, request, ())[:2] == (UNAUTHENTICATED, "MISSING_TOKEN")
    unknown = _refused(api.tables.CreateTable, request, bearer("sps_nobody"))
    assert unknown[:2] == (UNAUTHENTICATED, "UNKNOWN_TOKEN")


# -- rotation ----------------------------------------------------------------------------------


def test_rotation_retires_the_old_token_at_once_and_retries_get_the_same_new_token(
    api: Api,
) -> None:
    player = api.register("Ann")
    request_id = str(uuid.uuid4())
    new = _rotate(api, player.token, request_id)
    assert new != player.token and new.startswith("sps_") and len(new) == len(player.token)
    assert _reason(api, player.token) == "TOKEN_REVOKED"
    assert _who(api, bearer(new)) == player.name
    # The answer was lost: the retry, which can only carry the old token, gets the same token.
    assert _rotate(api, player.token, request_id) == new
    # The answer had arrived after all: a retry with the new token gets it too.
    assert _rotate(api, new, request_id) == new
    # The old token does nothing else: not another rotation, not any other call.
    refused = _refused(
        api.players.RotateToken,
        player_service_pb2.RotateTokenRequest(request_id=str(uuid.uuid4())),
        bearer(player.token),
    )
    assert refused[:2] == (UNAUTHENTICATED, "TOKEN_REVOKED")
    assert _reason(api, player.token) == "TOKEN_REVOKED"
    # A second rotation: the first rotation's token is retired in turn, and so is its retry.
    newer = _rotate(api, new, str(uuid.uuid4()))
    assert _who(api, bearer(newer)) == player.name
    assert _reason(api, new) == "TOKEN_REVOKED"
    retried = _refused(
        api.players.RotateToken,
        player_service_pb2.RotateTokenRequest(request_id=request_id),
        bearer(player.token),
    )
    assert retried[:2] == (UNAUTHENTICATED, "TOKEN_REVOKED")
    # The first rotation's request id, sent with the live token, names another rotation.
    reused = _refused(
        api.players.RotateToken,
        player_service_pb2.RotateTokenRequest(request_id=request_id),
        bearer(newer),
    )
    assert reused[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")


def test_rotation_needs_a_request_id_and_a_player(api: Api) -> None:
    player = api.register("Ann")
    missing = _refused(
        api.players.RotateToken, player_service_pb2.RotateTokenRequest(), bearer(player.token)
    )
    assert missing[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "MISSING_FIELD")
    assert _who(api, bearer(player.token)) == player.name  # nothing was rotated
    operator = _refused(
        api.players.RotateToken,
        player_service_pb2.RotateTokenRequest(request_id="r"),
        bearer(OPERATOR_TOKEN),
    )
    assert operator[:2] == (grpc.StatusCode.PERMISSION_DENIED, "PLAYERS_ONLY")


def test_a_retry_with_the_old_token_is_answered_only_within_the_window(api: Api) -> None:
    player = api.register("Ann")
    request_id = str(uuid.uuid4())
    new = _rotate(api, player.token, request_id)
    with psycopg.connect(api.database_url, autocommit=True) as connection:
        connection.execute(
            "UPDATE player_tokens SET issued_at = now() - interval '11 minutes'"
            " WHERE rotation_request_id = %s",
            [request_id],
        )
    late = _refused(
        api.players.RotateToken,
        player_service_pb2.RotateTokenRequest(request_id=request_id),
        bearer(player.token),
    )
    assert late[:2] == (UNAUTHENTICATED, "TOKEN_REVOKED")
    assert _rotate(api, new, request_id) == new  # the new token's holder still gets its answer


def test_concurrent_retries_of_one_rotation_all_get_the_same_token(api: Api) -> None:
    player = api.register("Ann")
    request_id = str(uuid.uuid4())
    results: list[str] = []
    errors: list[BaseException] = []

    def rotate() -> None:
        try:
            results.append(_rotate(api, player.token, request_id))
        except Exception as error:  # collected, and asserted on below
            errors.append(error)

    threads = [threading.Thread(target=rotate) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(set(results)) == 1
    assert _who(api, bearer(results[0])) == player.name
    with psycopg.connect(api.database_url) as connection:
        rows = connection.execute(
            "SELECT count(*) FILTER (WHERE revoked_at IS NULL), count(*) FROM player_tokens"
            " WHERE player_id = %s",
            [player.name.removeprefix("players/")],
        ).fetchone()
    assert rows == (1, 2)


# -- revocation --------------------------------------------------------------------------------


def _revoke(api: Api, token: str, player: str, request_id: str) -> Any:
    return api.players.RevokePlayerTokens(
        player_service_pb2.RevokePlayerTokensRequest(request_id=request_id, player=player),
        metadata=bearer(token),
    )


def test_the_operator_revokes_a_players_tokens_and_a_player_may_not(api: Api) -> None:
    ann, bo = api.register("Ann"), api.register("Bo")
    refused = _refused(
        api.players.RevokePlayerTokens,
        player_service_pb2.RevokePlayerTokensRequest(request_id="r", player=bo.name),
        bearer(ann.token),
    )
    assert refused[:2] == (grpc.StatusCode.PERMISSION_DENIED, "OPERATOR_ONLY")
    assert _reason(api, bo.token) == ""
    request_id = str(uuid.uuid4())
    first = _revoke(api, OPERATOR_TOKEN, bo.name, request_id)
    assert (first.player, first.revoked_token_count) == (bo.name, 1)
    assert _reason(api, bo.token) == "TOKEN_REVOKED"
    assert _reason(api, ann.token) == ""  # only Bo's
    assert _revoke(api, OPERATOR_TOKEN, bo.name, request_id) == first  # a repeat: same answer
    # The same request id naming another player is another request: refused, Ann keeps her token.
    reused = _refused(
        api.players.RevokePlayerTokens,
        player_service_pb2.RevokePlayerTokensRequest(request_id=request_id, player=ann.name),
        bearer(OPERATOR_TOKEN),
    )
    assert reused[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
    assert _reason(api, ann.token) == ""
    assert _revoke(api, OPERATOR_TOKEN, bo.name, "").revoked_token_count == 0
    revoked_rotation = _refused(
        api.players.RotateToken,
        player_service_pb2.RotateTokenRequest(request_id="r"),
        bearer(bo.token),
    )
    assert revoked_rotation[:2] == (UNAUTHENTICATED, "TOKEN_REVOKED")
    nobody = f"players/{uuid.uuid4()}"
    unknown = _refused(
        api.players.RevokePlayerTokens,
        player_service_pb2.RevokePlayerTokensRequest(player=nobody),
        bearer(OPERATOR_TOKEN),
    )
    assert unknown[:2] == (grpc.StatusCode.NOT_FOUND, "PLAYER_NOT_FOUND")


def test_revoking_a_rotated_players_tokens_ends_the_rotation_retry_too(api: Api) -> None:
    ann = api.register("Ann")
    request_id = str(uuid.uuid4())
    new = _rotate(api, ann.token, request_id)
    assert _revoke(api, OPERATOR_TOKEN, ann.name, "").revoked_token_count == 1
    assert _reason(api, new) == "TOKEN_REVOKED"
    retry = _refused(
        api.players.RotateToken,
        player_service_pb2.RotateTokenRequest(request_id=request_id),
        bearer(ann.token),
    )
    assert retry[:2] == (UNAUTHENTICATED, "TOKEN_REVOKED")


def test_the_revoke_command_revokes_on_the_database(
    api: Api, capsys: pytest.CaptureFixture[str]
) -> None:
    ann = api.register("Ann")
    assert _reason(api, ann.token) == ""  # the server now holds the working token in memory
    arguments = ["players", "revoke", ann.name, "--database-url", api.database_url]
    assert sapsam_main(arguments) == 0
    assert f'"player": "{ann.name}", "revoked_tokens": 1' in capsys.readouterr().out
    # The server drops it within about a second (it asks which tokens were retired every second,
    # long before its cache would expire); poll rather than sleep a fixed time.
    assert _poll(lambda: _reason(api, ann.token) == "TOKEN_REVOKED")
    assert sapsam_main(["players", "revoke", "players/x", "--database-url", api.database_url]) == 2
    nobody = f"players/{uuid.uuid4()}"
    assert sapsam_main(["players", "revoke", nobody, "--database-url", api.database_url]) == 2
    assert "no player" in capsys.readouterr().err


def _poll(condition: Any, timeout: float = 10.0) -> bool:
    event = threading.Event()
    waited = 0.0
    while waited < timeout:
        if condition():
            return True
        event.wait(0.05)
        waited += 0.05
    return False


# -- expiry ------------------------------------------------------------------------------------


@pytest.fixture
def short_lived(database_url: str) -> Iterator[Api]:
    """A server whose tokens live one day."""
    with serving_api(database_url, token_ttl=timedelta(days=1)) as api:
        yield api


def _age(database_url: str, player: str, age: str) -> None:
    """Pretend the player's working token was issued ``age`` ago (no sleeping)."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute(
            "UPDATE player_tokens SET issued_at = now() - %s::interval"
            " WHERE player_id = %s AND revoked_at IS NULL",
            [age, player.removeprefix("players/")],
        )


def test_a_token_past_the_servers_lifetime_is_expired(short_lived: Api) -> None:
    api = short_lived
    old, young, rotating = api.register("Old"), api.register("Young"), api.register("Rotating")
    _age(api.database_url, old.name, "25 hours")
    _age(api.database_url, young.name, "23 hours")
    _age(api.database_url, rotating.name, "23 hours")
    assert _reason(api, old.token) == "TOKEN_EXPIRED"
    assert _reason(api, young.token) == ""
    expired_rotation = _refused(
        api.players.RotateToken,
        player_service_pb2.RotateTokenRequest(request_id="r"),
        bearer(old.token),
    )
    assert expired_rotation[:2] == (UNAUTHENTICATED, "TOKEN_EXPIRED")
    # Rotating before the end issues a token with a whole new lifetime.
    fresh = _rotate(api, rotating.token, str(uuid.uuid4()))
    assert _reason(api, fresh) == ""
    # An expired token on a public method is ignored: the call is anonymous.
    registered = api.players.RegisterPlayer(
        player_service_pb2.RegisterPlayerRequest(display_name="New"), metadata=bearer(old.token)
    )
    assert registered.token
    # The operator token does not expire.
    assert _who(api, bearer(OPERATOR_TOKEN)) == ""


def test_the_sdk_rotates_and_keeps_the_new_token(api: Api) -> None:
    from sapsam_client.client import Client

    client = Client(api.channel)
    registered = client.register("Ann")
    new = client.rotate_token()
    assert new != registered.token and client.token == new
    assert client.get_player(registered.player).display_name == "Ann"
    assert _reason(api, registered.token) == "TOKEN_REVOKED"
    operator = Client(api.channel, OPERATOR_TOKEN)
    assert operator.revoke_player_tokens(registered.player) == 1
    assert _reason(api, new) == "TOKEN_REVOKED"


def test_the_service_role_registers_rotates_revokes_and_expires_tokens(database_url: str) -> None:
    with (
        new_role(database_url, grant_service_role) as (_, service_url),
        serving_api(
            database_url,
            server_database_url=service_url,
            pool_size=2,
            token_ttl=timedelta(days=1),
        ) as api,
    ):
        ann, bo = api.register("Ann"), api.register("Bo")
        new = _rotate(api, ann.token, "rotation-1")
        assert _rotate(api, ann.token, "rotation-1") == new
        assert _who(api, bearer(new)) == ann.name
        assert _revoke(api, OPERATOR_TOKEN, bo.name, "r").revoked_token_count == 1
        assert _reason(api, bo.token) == "TOKEN_REVOKED"
