"""Every RPC refuses a malformed, an out-of-phase and an unauthorised request with its documented
status and reason (docs/api.md), and a refused call records nothing.

Where an RPC has no phase (reads, registration), the state-dependent refusal it does have is used
instead: an unknown table, deal or player, or a repeated registration.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Api, Player, error_reason
from google.protobuf.message import Message

from sapsam_proto.v1 import player_service_pb2, table_pb2, table_service_pb2

INVALID = grpc.StatusCode.INVALID_ARGUMENT
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
DENIED = grpc.StatusCode.PERMISSION_DENIED
UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED
NOT_FOUND = grpc.StatusCode.NOT_FOUND
MISSING_TABLE = f"tables/{uuid.UUID(int=7)}"


def refused(
    api: Api,
    method: str,
    request: Message,
    token: str,
    code: grpc.StatusCode,
    reason: str,
    field: str | None = None,
) -> None:
    """The call fails with ``code`` and ``reason`` (and a field violation) and writes nothing."""
    before = api.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        api.call(method, request, token)
    actual_code, actual_reason, _, bad_request = error_reason(raised.value)
    assert (actual_code, actual_reason) == (code, reason), raised.value.details()
    if code == INVALID:
        assert bad_request is not None
        if field is not None:
            assert [violation.field for violation in bad_request.field_violations] == [field]
    assert api.event_count() == before


def watch_refused(
    api: Api, request: Message, token: str, code: grpc.StatusCode, reason: str
) -> None:
    """WatchTable's status arrives with the first read of the stream."""
    before = api.event_count()
    call = api.tables.WatchTable(
        request, metadata=(("authorization", f"Bearer {token}"),) if token else ()
    )
    with pytest.raises(grpc.RpcError) as raised:
        next(iter(call))
    assert error_reason(raised.value)[:2] == (code, reason)
    assert api.event_count() == before


@dataclass
class Game:
    """A two-seat table, seated (so its dealer is drawn), and a player with no seat."""

    api: Api
    table: str
    seats: list[Player]
    outsider: Player

    def request_id(self) -> str:
        return str(uuid.uuid4())

    def start_deal(self) -> None:
        self.api.call(
            "StartDeal",
            table_service_pb2.StartDealRequest(request_id=self.request_id(), table=self.table),
            self.seats[0].token,
        )

    def cutter(self) -> Player:
        table = self.api.call(
            "GetTable", table_service_pb2.GetTableRequest(name=self.table), self.seats[0].token
        ).table
        return next(player for player in self.seats if player.seat == table.cutter_seat)

    def other(self, player: Player) -> Player:
        return next(seat for seat in self.seats if seat is not player)

    def deal(self) -> None:
        self.start_deal()
        cutter = self.cutter()
        self.api.call(
            "CutDeck",
            table_service_pb2.CutDeckRequest(
                request_id=self.request_id(), seat=cutter.seat, position=20
            ),
            cutter.token,
        )


@pytest.fixture
def game(api: Api) -> Game:
    table, seats = api.seated_table(2, "pagat")
    return Game(api, table, seats, api.register("outsider"))


def test_create_table(api: Api) -> None:
    player = api.register("ann")
    refused(
        api,
        "CreateTable",
        table_service_pb2.CreateTableRequest(seat_count=7),
        player.token,
        INVALID,
        "BAD_SEAT_COUNT",
        "seat_count",
    )
    refused(
        api,
        "CreateTable",
        table_service_pb2.CreateTableRequest(seat_count=2, rule_set_preset="poker"),
        player.token,
        INVALID,
        "BAD_RULE_SET",
        "rule_set_preset",
    )
    refused(
        api,
        "CreateTable",
        table_service_pb2.CreateTableRequest(seat_count=2, series_length=0),
        player.token,
        INVALID,
        "BAD_SERIES_LENGTH",
        "series_length",
    )
    # CreateTable has no phase; unauthenticated callers are refused.
    refused(
        api,
        "CreateTable",
        table_service_pb2.CreateTableRequest(seat_count=2),
        "",
        UNAUTHENTICATED,
        "MISSING_TOKEN",
    )


def test_get_table(game: Game) -> None:
    api, token = game.api, game.seats[0].token
    refused(
        api,
        "GetTable",
        table_service_pb2.GetTableRequest(name="tables/12"),
        token,
        INVALID,
        "BAD_RESOURCE_NAME",
        "name",
    )
    refused(
        api,
        "GetTable",
        table_service_pb2.GetTableRequest(name=MISSING_TABLE),
        token,
        NOT_FOUND,
        "TABLE_NOT_FOUND",
    )
    refused(
        api,
        "GetTable",
        table_service_pb2.GetTableRequest(name=game.table),
        "sps_nobody",
        UNAUTHENTICATED,
        "UNKNOWN_TOKEN",
    )


def test_list_tables(game: Game) -> None:
    api, token = game.api, game.seats[0].token
    refused(
        api,
        "ListTables",
        table_service_pb2.ListTablesRequest(page_size=1000),
        token,
        INVALID,
        "BAD_PAGE_SIZE",
        "page_size",
    )
    refused(
        api,
        "ListTables",
        table_service_pb2.ListTablesRequest(page_token="garbage"),
        token,
        INVALID,
        "BAD_PAGE_TOKEN",
        "page_token",
    )
    refused(
        api,
        "ListTables",
        table_service_pb2.ListTablesRequest(),
        "",
        UNAUTHENTICATED,
        "MISSING_TOKEN",
    )


def test_join_table(game: Game) -> None:
    api = game.api
    newcomer = api.register("late")
    refused(
        api,
        "JoinTable",
        table_service_pb2.JoinTableRequest(table="tables/"),
        newcomer.token,
        INVALID,
        "BAD_RESOURCE_NAME",
        "table",
    )
    refused(
        api,
        "JoinTable",
        table_service_pb2.JoinTableRequest(table=game.table),
        newcomer.token,
        PRECONDITION,
        "TABLE_FULL",
    )
    refused(
        api,
        "JoinTable",
        table_service_pb2.JoinTableRequest(table=game.table),
        OPERATOR_TOKEN,
        DENIED,
        "PLAYERS_ONLY",
    )


def test_join_table_seat_number(api: Api) -> None:
    creator = api.register("creator")
    table = api.call(
        "CreateTable", table_service_pb2.CreateTableRequest(seat_count=2), creator.token
    ).table
    refused(
        api,
        "JoinTable",
        table_service_pb2.JoinTableRequest(table=table.name, seat=5),
        creator.token,
        INVALID,
        "UNKNOWN_SEAT",
        "seat",
    )
    api.call(
        "JoinTable", table_service_pb2.JoinTableRequest(table=table.name, seat=1), creator.token
    )
    other = api.register("other")
    refused(
        api,
        "JoinTable",
        table_service_pb2.JoinTableRequest(table=table.name, seat=1),
        other.token,
        PRECONDITION,
        "SEAT_TAKEN",
    )
    refused(
        api,
        "JoinTable",
        table_service_pb2.JoinTableRequest(table=table.name),
        creator.token,
        grpc.StatusCode.ALREADY_EXISTS,
        "ALREADY_SEATED",
    )


def test_choose_dealer(game: Game) -> None:
    api = game.api
    refused(
        api,
        "ChooseDealer",
        table_service_pb2.ChooseDealerRequest(),
        game.seats[0].token,
        INVALID,
        "MISSING_FIELD",
        "table",
    )
    refused(
        api,
        "ChooseDealer",
        table_service_pb2.ChooseDealerRequest(table=game.table),
        game.seats[0].token,
        PRECONDITION,
        "WRONG_PHASE",
    )
    refused(
        api,
        "ChooseDealer",
        table_service_pb2.ChooseDealerRequest(table=game.table),
        game.outsider.token,
        DENIED,
        "NOT_SEATED",
    )


def test_start_deal(game: Game) -> None:
    api = game.api
    refused(
        api,
        "StartDeal",
        table_service_pb2.StartDealRequest(table="table/x"),
        game.seats[0].token,
        INVALID,
        "BAD_RESOURCE_NAME",
        "table",
    )
    refused(
        api,
        "StartDeal",
        table_service_pb2.StartDealRequest(table=game.table),
        game.outsider.token,
        DENIED,
        "NOT_SEATED",
    )
    game.start_deal()
    refused(
        api,
        "StartDeal",
        table_service_pb2.StartDealRequest(table=game.table),
        game.seats[0].token,
        PRECONDITION,
        "WRONG_PHASE",
    )


def test_contribute_entropy(game: Game) -> None:
    api, player = game.api, game.seats[0]
    request = table_service_pb2.ContributeEntropyRequest(seat=player.seat, entropy=b"x" * 8)
    refused(api, "ContributeEntropy", request, player.token, PRECONDITION, "WRONG_PHASE")
    game.start_deal()
    refused(
        api,
        "ContributeEntropy",
        table_service_pb2.ContributeEntropyRequest(seat=player.seat, entropy=b""),
        player.token,
        INVALID,
        "BAD_ENTROPY",
        "entropy",
    )
    refused(api, "ContributeEntropy", request, game.other(player).token, DENIED, "NOT_YOUR_SEAT")


def test_cut_deck(game: Game) -> None:
    api = game.api
    game.start_deal()
    cutter = game.cutter()
    other = game.other(cutter)
    refused(
        api,
        "CutDeck",
        table_service_pb2.CutDeckRequest(seat=cutter.seat, position=52),
        cutter.token,
        INVALID,
        "BAD_CUT_POSITION",
        "position",
    )
    refused(
        api,
        "CutDeck",
        table_service_pb2.CutDeckRequest(seat=other.seat, position=9),
        other.token,
        PRECONDITION,
        "NOT_YOUR_TURN",
    )
    refused(
        api,
        "CutDeck",
        table_service_pb2.CutDeckRequest(seat=cutter.seat, position=9),
        other.token,
        DENIED,
        "NOT_YOUR_SEAT",
    )


def test_get_my_hand(game: Game) -> None:
    api, player = game.api, game.seats[0]
    refused(
        api,
        "GetMyHand",
        table_service_pb2.GetMyHandRequest(seat=game.table + "/seats/x"),
        player.token,
        INVALID,
        "BAD_RESOURCE_NAME",
        "seat",
    )
    refused(
        api,
        "GetMyHand",
        table_service_pb2.GetMyHandRequest(seat=player.seat),
        player.token,
        PRECONDITION,
        "WRONG_PHASE",
    )
    game.deal()
    refused(
        api,
        "GetMyHand",
        table_service_pb2.GetMyHandRequest(seat=player.seat),
        game.other(player).token,
        DENIED,
        "NOT_YOUR_SEAT",
    )
    refused(
        api,
        "GetMyHand",
        table_service_pb2.GetMyHandRequest(seat=player.seat),
        game.outsider.token,
        DENIED,
        "NOT_YOUR_SEAT",
    )
    refused(
        api,
        "GetMyHand",
        table_service_pb2.GetMyHandRequest(seat=player.seat),
        OPERATOR_TOKEN,
        DENIED,
        "PLAYERS_ONLY",
    )


def test_commit_arrangement(game: Game) -> None:
    api, player = game.api, game.seats[0]
    good = table_service_pb2.CommitArrangementRequest(seat=player.seat, commitment=b"c" * 32)
    refused(api, "CommitArrangement", good, player.token, PRECONDITION, "WRONG_PHASE")
    game.deal()
    refused(
        api,
        "CommitArrangement",
        table_service_pb2.CommitArrangementRequest(seat=player.seat, commitment=b"short"),
        player.token,
        INVALID,
        "BAD_COMMITMENT",
        "commitment",
    )
    refused(api, "CommitArrangement", good, game.other(player).token, DENIED, "NOT_YOUR_SEAT")


def test_confirm_arrangement(game: Game) -> None:
    api, player = game.api, game.seats[0]
    game.deal()
    refused(
        api,
        "ConfirmArrangement",
        table_service_pb2.ConfirmArrangementRequest(seat=player.seat + "/extra"),
        player.token,
        INVALID,
        "BAD_RESOURCE_NAME",
        "seat",
    )
    refused(
        api,
        "ConfirmArrangement",
        table_service_pb2.ConfirmArrangementRequest(seat=player.seat),
        player.token,
        PRECONDITION,
        "NO_COMMITMENT",
    )
    refused(
        api,
        "ConfirmArrangement",
        table_service_pb2.ConfirmArrangementRequest(seat=player.seat),
        "",
        UNAUTHENTICATED,
        "MISSING_TOKEN",
    )


def test_reveal_arrangement(game: Game) -> None:
    api, player = game.api, game.seats[0]
    game.deal()
    rows = table_pb2.Arrangement(front=["As", "Ks", "Qs"])
    refused(
        api,
        "RevealArrangement",
        table_service_pb2.RevealArrangementRequest(
            seat=player.seat, arrangement=table_pb2.Arrangement(front=["Zz"]), nonce=b"n" * 16
        ),
        player.token,
        INVALID,
        "BAD_CARDS",
        "arrangement.front",
    )
    refused(
        api,
        "RevealArrangement",
        table_service_pb2.RevealArrangementRequest(
            seat=player.seat, arrangement=rows, nonce=b"n" * 16
        ),
        player.token,
        PRECONDITION,
        "WRONG_PHASE",
    )
    refused(
        api,
        "RevealArrangement",
        table_service_pb2.RevealArrangementRequest(
            seat=player.seat, arrangement=rows, nonce=b"n" * 16
        ),
        game.other(player).token,
        DENIED,
        "NOT_YOUR_SEAT",
    )


def test_get_deal_result(game: Game) -> None:
    api, token = game.api, game.seats[0].token
    refused(
        api,
        "GetDealResult",
        table_service_pb2.GetDealResultRequest(name=game.table + "/deals/0"),
        token,
        INVALID,
        "BAD_RESOURCE_NAME",
        "name",
    )
    refused(
        api,
        "GetDealResult",
        table_service_pb2.GetDealResultRequest(name=game.table + "/deals/1"),
        token,
        NOT_FOUND,
        "DEAL_NOT_FOUND",
    )
    refused(
        api,
        "GetDealResult",
        table_service_pb2.GetDealResultRequest(name=game.table + "/deals/1"),
        "",
        UNAUTHENTICATED,
        "MISSING_TOKEN",
    )


def test_watch_table(game: Game) -> None:
    api, token = game.api, game.seats[0].token
    watch_refused(
        api,
        table_service_pb2.WatchTableRequest(table=game.table, after_version=-1),
        token,
        INVALID,
        "INVALID_ARGUMENT",
    )
    watch_refused(
        api,
        table_service_pb2.WatchTableRequest(table=MISSING_TABLE),
        token,
        NOT_FOUND,
        "TABLE_NOT_FOUND",
    )
    watch_refused(
        api,
        table_service_pb2.WatchTableRequest(table=game.table),
        "",
        UNAUTHENTICATED,
        "MISSING_TOKEN",
    )


def test_register_player(api: Api) -> None:
    refused(
        api,
        "RegisterPlayer",
        player_service_pb2.RegisterPlayerRequest(display_name=" "),
        "",
        INVALID,
        "BAD_DISPLAY_NAME",
        "display_name",
    )
    refused(
        api,
        "RegisterPlayer",
        player_service_pb2.RegisterPlayerRequest(request_id="r" * 65, display_name="ann"),
        "",
        INVALID,
        "BAD_REQUEST_ID",
        "request_id",
    )
    request = player_service_pb2.RegisterPlayerRequest(request_id="once", display_name="ann")
    first = api.call("RegisterPlayer", request, "")
    with pytest.raises(grpc.RpcError) as raised:
        api.call("RegisterPlayer", request, "")
    code, reason, info, _ = error_reason(raised.value)
    assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "TOKEN_ALREADY_ISSUED")
    assert info.metadata["player"] == first.player.name
    assert first.token not in raised.value.details()
    # RegisterPlayer is the one public call: no token is needed (and none is checked).


def test_get_player(api: Api) -> None:
    player = api.register("ann")
    refused(
        api,
        "GetPlayer",
        player_service_pb2.GetPlayerRequest(name="players/ann"),
        player.token,
        INVALID,
        "BAD_RESOURCE_NAME",
        "name",
    )
    refused(
        api,
        "GetPlayer",
        player_service_pb2.GetPlayerRequest(name=f"players/{uuid.UUID(int=3)}"),
        player.token,
        NOT_FOUND,
        "PLAYER_NOT_FOUND",
    )
    refused(
        api,
        "GetPlayer",
        player_service_pb2.GetPlayerRequest(name=player.name),
        "",
        UNAUTHENTICATED,
        "MISSING_TOKEN",
    )
    found = api.call(
        "GetPlayer", player_service_pb2.GetPlayerRequest(name=player.name), player.token
    )
    assert found.player.display_name == "ann"


def test_a_stale_etag_is_aborted_with_the_current_version(game: Game) -> None:
    api, player = game.api, game.seats[0]
    table = api.call("GetTable", table_service_pb2.GetTableRequest(name=game.table), player.token)
    version = table.table.version
    before = api.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        api.call(
            "StartDeal",
            table_service_pb2.StartDealRequest(table=game.table, expected_version=version - 1),
            player.token,
        )
    code, reason, info, _ = error_reason(raised.value)
    assert (code, reason) == (grpc.StatusCode.ABORTED, "VERSION_MISMATCH")
    assert info.metadata["current_version"] == str(version)
    assert api.event_count() == before
    started = api.call(
        "StartDeal",
        table_service_pb2.StartDealRequest(table=game.table, expected_version=version),
        player.token,
    )
    assert started.version == version + 1


def test_a_retry_with_its_original_etag_gets_the_original_answer(game: Game) -> None:
    # The etag is checked after retry detection: the table has moved on since the first call, yet
    # the retry is recognised as the same request and answered as before, not ABORTED.
    api, player = game.api, game.seats[0]
    table = api.call("GetTable", table_service_pb2.GetTableRequest(name=game.table), player.token)
    request = table_service_pb2.StartDealRequest(
        request_id="etag-retry", table=game.table, expected_version=table.table.version
    )
    first = api.call("StartDeal", request, player.token)
    count = api.event_count()
    again = api.call("StartDeal", request, player.token)
    assert again.SerializeToString() == first.SerializeToString()
    assert api.event_count() == count
