"""A request id is an idempotency key over gRPC: the same id with the same request is answered with
the original response byte for byte; the same id with a different request is REQUEST_ID_REUSED
(INVALID_ARGUMENT on ``request_id``) and writes nothing, on every mutating RPC."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import psycopg
import pytest
from api_client import OPERATOR_TOKEN, Api, Player, bearer, error_reason
from google.protobuf.message import Message
from scenarios import cup_request
from serving import serving

from sapsam import fairness
from sapsam.api.request_digest import request_digest
from sapsam.api.server import RunningServer
from sapsam.fairness.natural_commitments import declaration_commitment
from sapsam.rules.cards import parse_cards
from sapsam.rules.solver import solve
from sapsam_proto.v1 import (
    open_face_pb2,
    player_service_pb2,
    rule_set_pb2,
    table_pb2,
    table_service_pb2,
    tournament_service_pb2,
    tournament_service_pb2_grpc,
)


def rid() -> str:
    return str(uuid.uuid4())


def rows(database_url: str, table: str) -> int:
    with psycopg.connect(database_url) as connection:
        row = connection.execute(f"SELECT count(*) FROM {table}").fetchone()
    assert row is not None
    return int(row[0])


def written(database_url: str) -> tuple[int, int, int]:
    return (
        rows(database_url, "events"),
        rows(database_url, "processed_requests"),
        rows(database_url, "players"),
    )


Call = Callable[[str, Message, str], Any]


class Checker:
    """Sends a request, then the same id with another payload (refused, nothing written), then
    the original again (the first response, byte for byte)."""

    def __init__(self, database_url: str, call: Call) -> None:
        self.database_url = database_url
        self.call = call
        self.methods: list[str] = []

    def check(self, method: str, original: Message, altered: Message, token: str) -> Any:
        assert request_digest(original) != request_digest(altered)
        first = self.call(method, original, token)
        before = written(self.database_url)
        with pytest.raises(grpc.RpcError) as refused:
            self.call(method, altered, token)
        code, reason, _, bad_request = error_reason(refused.value)
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED"), method
        assert [v.field for v in bad_request.field_violations] == ["request_id"], method
        assert written(self.database_url) == before, method
        again = self.call(method, original, token)
        assert again.SerializeToString() == first.SerializeToString(), method
        assert written(self.database_url) == before, method
        self.methods.append(method)
        return first


def altered(request: Message, **changes: object) -> Message:
    copy = type(request)()
    copy.CopyFrom(request)
    for name, value in changes.items():
        setattr(copy, name, value)
    return copy


def test_every_table_rpc_refuses_a_request_id_reused_with_another_payload(api: Api) -> None:
    checker = Checker(api.database_url, api.call)
    creator, ann, bob = (api.register(name) for name in ("creator", "ann", "bob"))
    create = table_service_pb2.CreateTableRequest(
        request_id=rid(),
        seat_count=2,
        series_length=1,
        # With surrender, so that AnnounceSurrender is checked too (docs/rules.md §2.8).
        rule_set_overrides=rule_set_pb2.RuleSet(surrender=rule_set_pb2.SURRENDER_RULE_PAY_PLAYERS),
    )
    table = checker.check("CreateTable", create, altered(create, seat_count=3), creator.token).table
    seats: dict[str, Player] = {}
    for number, player in enumerate((ann, bob)):
        join = table_service_pb2.JoinTableRequest(request_id=rid(), table=table.name, seat=number)
        other_seat = altered(join, seat=1 - number)
        player.seat = checker.check("JoinTable", join, other_seat, player.token).seat
        seats[player.seat] = player
    choose = table_service_pb2.ChooseDealerRequest(request_id=rid(), table=table.name)
    checker.check("ChooseDealer", choose, altered(choose, expected_version=3), bob.token)
    start = table_service_pb2.StartDealRequest(request_id=rid(), table=table.name)
    started = checker.check("StartDeal", start, altered(start, expected_version=4), ann.token)
    for seat, player in seats.items():
        entropy = table_service_pb2.ContributeEntropyRequest(
            request_id=rid(), seat=seat, entropy=os.urandom(8)
        )
        other = altered(entropy, entropy=os.urandom(8))
        checker.check("ContributeEntropy", entropy, other, player.token)
    view = api.call("GetTable", table_service_pb2.GetTableRequest(name=table.name), ann.token)
    cutter = view.table.cutter_seat
    cut = table_service_pb2.CutDeckRequest(request_id=rid(), seat=cutter, position=33)
    checker.check("CutDeck", cut, altered(cut, position=34), seats[cutter].token)
    table_id = uuid.UUID(table.name.removeprefix("tables/"))
    deal_number = int(started.deal.rsplit("/", 1)[1])
    reveals = []
    for seat, player in seats.items():
        hand = api.call("GetMyHand", table_service_pb2.GetMyHandRequest(seat=seat), player.token)
        arrangement = solve(parse_cards(list(hand.cards)))
        nonce = os.urandom(16)
        commitment = fairness.arrangement_commitment(
            table_id, deal_number, player.position, arrangement, nonce
        )
        commit = table_service_pb2.CommitArrangementRequest(
            request_id=rid(), seat=seat, commitment=commitment
        )
        other = altered(commit, commitment=os.urandom(32))
        checker.check("CommitArrangement", commit, other, player.token)
        confirm = table_service_pb2.ConfirmArrangementRequest(request_id=rid(), seat=seat)
        stale = altered(confirm, expected_version=1)
        checker.check("ConfirmArrangement", confirm, stale, player.token)
        rows_shown = table_pb2.Arrangement(
            front=[str(c) for c in arrangement.front],
            middle=[str(c) for c in arrangement.middle],
            back=[str(c) for c in arrangement.back],
        )
        reveals.append((player, rows_shown, nonce))
    turn = api.call("GetTable", table_service_pb2.GetTableRequest(name=table.name), ann.token)
    while turn.table.phase == table_pb2.TABLE_PHASE_ANNOUNCING:
        seat = turn.table.announcing_seat
        announce = table_service_pb2.AnnounceSurrenderRequest(
            request_id=rid(), seat=seat, choice=table_pb2.SURRENDER_CHOICE_PLAY
        )
        other = altered(announce, choice=table_pb2.SURRENDER_CHOICE_SURRENDER)
        checker.check("AnnounceSurrender", announce, other, seats[seat].token)
        turn = api.call("GetTable", table_service_pb2.GetTableRequest(name=table.name), ann.token)
    for player, rows_shown, nonce in reveals:
        reveal = table_service_pb2.RevealArrangementRequest(
            request_id=rid(), seat=player.seat, arrangement=rows_shown, nonce=nonce
        )
        # The case: a client that rebuilds its reveal with a new nonce on retry.
        rebuilt = altered(reveal, nonce=os.urandom(16))
        checker.check("RevealArrangement", reveal, rebuilt, player.token)
    final = api.call("GetTable", table_service_pb2.GetTableRequest(name=table.name), ann.token)
    assert final.table.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    _declare_at_a_table_with_naturals(api, checker)
    _place_at_an_open_face_table(api, checker)
    mutating = {
        method.name
        for method in table_service_pb2.DESCRIPTOR.services_by_name["TableService"].methods
        if "request_id" in method.input_type.fields_by_name
    }
    # A Fantasyland hand and a Pineapple discard come with a deal's cards (random here): their
    # calls take the same request-id path through the runner as PlaceCards, checked above.
    assert mutating - {"CommitFantasyland", "RevealFantasyland", "RevealDiscards"} == set(
        checker.methods
    )


def _place_at_an_open_face_table(api: Api, checker: Checker) -> None:
    """PlaceCards, at an open-face table (issue #18)."""
    table, players = _open_face_table(api)
    view = api.call("GetTable", table_service_pb2.GetTableRequest(name=table), OPERATOR_TOKEN)
    cutter = next(player for player in players if player.seat == view.table.cutter_seat)
    cut = table_service_pb2.CutDeckRequest(request_id=rid(), seat=cutter.seat, position=9)
    api.call("CutDeck", cut, cutter.token)
    view = api.call("GetTable", table_service_pb2.GetTableRequest(name=table), OPERATOR_TOKEN)
    player = next(p for p in players if p.seat == view.table.open_face.turn_seat)
    hand = api.call("GetMyHand", table_service_pb2.GetMyHandRequest(seat=player.seat), player.token)
    cards = list(hand.cards)
    place = table_service_pb2.PlaceCardsRequest(
        request_id=rid(),
        seat=player.seat,
        street=0,
        placement=open_face_pb2.OpenFaceRows(front=cards[:1], middle=cards[1:3], back=cards[3:]),
    )
    other = altered(place)
    other.placement.CopyFrom(  # type: ignore[attr-defined]
        open_face_pb2.OpenFaceRows(front=cards[:2], middle=cards[2:3], back=cards[3:])
    )
    checker.check("PlaceCards", place, other, player.token)


def _open_face_table(api: Api) -> tuple[str, list[Player]]:
    creator = api.register("creator")
    create = table_service_pb2.CreateTableRequest(
        request_id=rid(), rule_set_preset="ofc_classic", seat_count=2
    )
    table = api.call("CreateTable", create, creator.token).table.name
    players = []
    for index in range(2):
        player = api.register(f"open face {index}")
        join = table_service_pb2.JoinTableRequest(request_id=rid(), table=table)
        player.seat = api.call("JoinTable", join, player.token).seat
        players.append(player)
    choose = table_service_pb2.ChooseDealerRequest(request_id=rid(), table=table)
    api.call("ChooseDealer", choose, players[0].token)
    start = table_service_pb2.StartDealRequest(request_id=rid(), table=table)
    api.call("StartDeal", start, players[0].token)
    return table, players


def _declare_at_a_table_with_naturals(api: Api, checker: Checker) -> None:
    """DeclareNatural, which only a table with naturals takes (004's four_player_bonus)."""
    natural_table, players = api.seated_table(4, "four_player_bonus")
    start = table_service_pb2.StartDealRequest(request_id=rid(), table=natural_table)
    started = api.call("StartDeal", start, players[0].token)
    view = api.call(
        "GetTable", table_service_pb2.GetTableRequest(name=natural_table), OPERATOR_TOKEN
    )
    cutter = next(player for player in players if player.seat == view.table.cutter_seat)
    cut = table_service_pb2.CutDeckRequest(request_id=rid(), seat=cutter.seat, position=9)
    api.call("CutDeck", cut, cutter.token)
    player = players[0]
    commitment = declaration_commitment(
        uuid.UUID(natural_table.removeprefix("tables/")),
        int(started.deal.rsplit("/", 1)[1]),
        player.position,
        player.name.removeprefix("players/"),
        "none",
        os.urandom(16),
    )
    declare = table_service_pb2.DeclareNaturalRequest(
        request_id=rid(), seat=player.seat, commitment=commitment
    )
    checker.check(
        "DeclareNatural", declare, altered(declare, commitment=os.urandom(32)), player.token
    )


def test_register_player_refuses_its_request_id_reused_with_another_display_name(
    api: Api,
) -> None:
    request = player_service_pb2.RegisterPlayerRequest(request_id=rid(), display_name="ann")
    api.call("RegisterPlayer", request, "")
    before = written(api.database_url)
    with pytest.raises(grpc.RpcError) as refused:
        api.call("RegisterPlayer", altered(request, display_name="bob"), "")
    code, reason, _, bad_request = error_reason(refused.value)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
    assert [v.field for v in bad_request.field_violations] == ["request_id"]
    # The same request again is still the documented retry answer: the token is shown once.
    with pytest.raises(grpc.RpcError) as retried:
        api.call("RegisterPlayer", request, "")
    assert error_reason(retried.value)[1] == "TOKEN_ALREADY_ISSUED"
    assert written(api.database_url) == before


def test_every_tournament_rpc_refuses_a_request_id_reused_with_another_payload(api: Api) -> None:
    stub = tournament_service_pb2_grpc.TournamentServiceStub(api.channel)

    def call(method: str, request: Message, token: str) -> Any:
        return getattr(stub, method)(request, metadata=bearer(token))

    checker = Checker(api.database_url, call)
    create = cup_request("Digest cup")
    tournament = checker.check(
        "CreateTournament", create, altered(create, display_name="Other cup"), OPERATOR_TOKEN
    ).tournament
    ann, bob = api.register("ann"), api.register("bob")
    for player in (ann, bob):
        register = tournament_service_pb2.RegisterTournamentPlayerRequest(
            request_id=rid(), tournament=tournament.name
        )
        named = altered(register, player=player.name)
        checker.check("RegisterTournamentPlayer", register, named, player.token)
    carl = api.register("carl")
    register = tournament_service_pb2.RegisterTournamentPlayerRequest(
        request_id=rid(), tournament=tournament.name
    )
    call("RegisterTournamentPlayer", register, carl.token)
    unregister = tournament_service_pb2.UnregisterTournamentPlayerRequest(
        request_id=rid(), tournament=tournament.name
    )
    named = altered(unregister, player=carl.name)
    checker.check("UnregisterTournamentPlayer", unregister, named, carl.token)
    start = tournament_service_pb2.StartTournamentRequest(
        request_id=rid(), tournament=tournament.name
    )
    # StartTournament has no other field: the same id for another tournament.
    second = call("CreateTournament", altered(create, request_id=rid()), OPERATOR_TOKEN)
    other = altered(start, tournament=second.tournament.name)
    checker.check("StartTournament", start, other, OPERATOR_TOKEN)
    pause = tournament_service_pb2.PauseTournamentRequest(
        request_id=rid(), tournament=tournament.name, reason="a break"
    )
    checker.check("PauseTournament", pause, altered(pause, reason="a longer break"), OPERATOR_TOKEN)
    # ResumeTournament has no other field: the same id for another tournament.
    resume = tournament_service_pb2.ResumeTournamentRequest(
        request_id=rid(), tournament=tournament.name
    )
    other = altered(resume, tournament=second.tournament.name)
    checker.check("ResumeTournament", resume, other, OPERATOR_TOKEN)
    forfeit = tournament_service_pb2.ForfeitTournamentPlayerRequest(
        request_id=rid(), tournament=tournament.name, reason="a train to catch"
    )
    checker.check("ForfeitTournamentPlayer", forfeit, altered(forfeit, reason="ill"), ann.token)
    cancel = tournament_service_pb2.CancelTournamentRequest(
        request_id=rid(), tournament=tournament.name, reason="closing time"
    )
    checker.check("CancelTournament", cancel, altered(cancel, reason="a fire"), OPERATOR_TOKEN)
    mutating = {
        method.name
        for method in tournament_service_pb2.DESCRIPTOR.services_by_name[
            "TournamentService"
        ].methods
        if "request_id" in method.input_type.fields_by_name
    }
    # ReplaceTournamentSeat needs a table between two deals: checked in
    # tests/tournament/test_tournament_control_api.py (the re-seat mid-round).
    assert mutating == {*checker.methods, "ReplaceTournamentSeat"}


@pytest.fixture
def second_server(database_url: str) -> Iterator[RunningServer]:
    """Another server process's view: a fresh TableService that remembers no table, so a retry is
    looked up before deciding (the path a retry takes after a restart or on another replica)."""
    with serving(database_url, pool_size=4) as running:
        yield running


def test_a_retry_on_another_server_is_compared_by_its_digest_too(
    api: Api, second_server: RunningServer, database_url: str
) -> None:
    table, players = api.seated_table(2, "pagat", series_length=1)
    start = table_service_pb2.StartDealRequest(request_id=rid(), table=table)
    first = api.call("StartDeal", start, players[0].token)
    before = written(database_url)
    with grpc.insecure_channel(f"127.0.0.1:{second_server.port}") as channel:
        other = Api(channel, database_url)
        with pytest.raises(grpc.RpcError) as refused:
            other.call("StartDeal", altered(start, expected_version=5), players[0].token)
        assert error_reason(refused.value)[:2] == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "REQUEST_ID_REUSED",
        )
        again = other.call("StartDeal", start, players[0].token)
    assert again.SerializeToString() == first.SerializeToString()
    assert written(database_url) == before
