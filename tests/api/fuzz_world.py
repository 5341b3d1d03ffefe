"""The fuzz test's RPC table, its server, world and bookkeeping (tests/api/test_fuzz_rpcs.py).

- ``RPC_TABLE``: every RPC with who may call it and whether it records a decision; the test
  fails when the descriptors define an RPC missing here;
- ``running_env``: one real server on a fresh database for the module, with a world in it (a
  finished deal and a running one, an open table, tournaments, page tokens, an export) that the
  strategies build nearly-right requests from, a log watch and an event counter.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import pkgutil
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import grpc
import psycopg
from api_client import OPERATOR_TOKEN, Api, bearer
from fuzz_strategies import World
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp
from serving import TEST_SERVER_KEYS

import sapsam_proto.v1 as generated_v1
from sapsam.api.limits import UNLIMITED
from sapsam.api.server import ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam.rules.presets import PRESETS
from sapsam_proto.v1 import (
    audit_service_pb2,
    rule_set_pb2,
    table_pb2,
    table_service_pb2,
    tournament_service_pb2,
    tournament_service_pb2_grpc,
)


class Access(Enum):
    """Who may call an RPC at all, before anything in the request is looked at."""

    PUBLIC = "public"  # no token needed
    ANYONE = "anyone"  # any player or the operator
    PLAYERS = "players"  # a player, never the operator (PLAYERS_ONLY)
    OPERATOR = "operator"  # the operator only (OPERATOR_ONLY)


@dataclass(frozen=True)
class Rpc:
    """One RPC as the fuzz test drives it."""

    service: str
    method: MethodDescriptor
    access: Access
    mutating: bool  # records what it decides under its request_id (replays return the first)

    @property
    def path(self) -> str:
        return f"/{self.service}/{self.method.name}"

    @property
    def streaming(self) -> bool:
        return bool(self.method.server_streaming)

    @property
    def request_class(self) -> type[Message]:
        return message_factory.GetMessageClass(self.method.input_type)

    @property
    def response_class(self) -> type[Message]:
        return message_factory.GetMessageClass(self.method.output_type)


# Every RPC's access class and whether it records a decision. An RPC missing here fails
# test_every_rpc_is_fuzzed: a new RPC cannot be forgotten by the fuzz test.
RPC_TABLE: dict[str, tuple[Access, bool]] = {
    "sapsam.v1.TableService/CreateTable": (Access.ANYONE, True),
    "sapsam.v1.TableService/GetTable": (Access.ANYONE, False),
    "sapsam.v1.TableService/ListTables": (Access.ANYONE, False),
    "sapsam.v1.TableService/JoinTable": (Access.PLAYERS, True),
    "sapsam.v1.TableService/ChooseDealer": (Access.ANYONE, True),
    "sapsam.v1.TableService/StartDeal": (Access.ANYONE, True),
    "sapsam.v1.TableService/ContributeEntropy": (Access.PLAYERS, True),
    "sapsam.v1.TableService/CutDeck": (Access.PLAYERS, True),
    "sapsam.v1.TableService/GetMyHand": (Access.PLAYERS, False),
    "sapsam.v1.TableService/GetSuggestion": (Access.PLAYERS, False),
    "sapsam.v1.TableService/CommitArrangement": (Access.PLAYERS, True),
    "sapsam.v1.TableService/DeclareNatural": (Access.PLAYERS, True),
    "sapsam.v1.TableService/ConfirmArrangement": (Access.PLAYERS, True),
    "sapsam.v1.TableService/RevealArrangement": (Access.PLAYERS, True),
    "sapsam.v1.TableService/AnnounceSurrender": (Access.PLAYERS, True),
    "sapsam.v1.TableService/GetDealResult": (Access.ANYONE, False),
    "sapsam.v1.TableService/WatchTable": (Access.ANYONE, False),
    "sapsam.v1.TableService/ListMyDeals": (Access.PLAYERS, False),
    "sapsam.v1.TableService/ListRuleSets": (Access.PUBLIC, False),
    "sapsam.v1.TableService/PlaceCards": (Access.PLAYERS, True),
    "sapsam.v1.TableService/CommitFantasyland": (Access.PLAYERS, True),
    "sapsam.v1.TableService/RevealFantasyland": (Access.PLAYERS, True),
    "sapsam.v1.TableService/RevealDiscards": (Access.PLAYERS, True),
    "sapsam.v1.PlayerService/RegisterPlayer": (Access.PUBLIC, True),
    "sapsam.v1.PlayerService/GetPlayer": (Access.ANYONE, False),
    "sapsam.v1.PlayerService/RotateToken": (Access.PLAYERS, True),
    "sapsam.v1.PlayerService/RevokePlayerTokens": (Access.OPERATOR, True),
    # Writes a player_keys row (no event); a request id reused for another key is refused.
    "sapsam.v1.PlayerService/RegisterPlayerKey": (Access.PLAYERS, True),
    "sapsam.v1.AuditService/ExportDeal": (Access.ANYONE, False),
    "sapsam.v1.AuditService/VerifyDeal": (Access.ANYONE, False),
    "sapsam.v1.AuditService/ReplayDeal": (Access.ANYONE, False),
    "sapsam.v1.TournamentService/CreateTournament": (Access.OPERATOR, True),
    "sapsam.v1.TournamentService/RegisterTournamentPlayer": (Access.ANYONE, True),
    "sapsam.v1.TournamentService/UnregisterTournamentPlayer": (Access.ANYONE, True),
    "sapsam.v1.TournamentService/StartTournament": (Access.OPERATOR, True),
    "sapsam.v1.TournamentService/GetTournament": (Access.ANYONE, False),
    "sapsam.v1.TournamentService/ListTournaments": (Access.ANYONE, False),
    "sapsam.v1.TournamentService/GetStandings": (Access.ANYONE, False),
    "sapsam.v1.TournamentService/WatchTournament": (Access.ANYONE, False),
    "sapsam.v1.TournamentService/GetLeaderboard": (Access.ANYONE, False),
    "sapsam.v1.TournamentService/PauseTournament": (Access.OPERATOR, True),
    "sapsam.v1.TournamentService/ResumeTournament": (Access.OPERATOR, True),
    "sapsam.v1.TournamentService/CancelTournament": (Access.OPERATOR, True),
    "sapsam.v1.TournamentService/ForfeitTournamentPlayer": (Access.ANYONE, True),
    "sapsam.v1.TournamentService/ReplaceTournamentSeat": (Access.OPERATOR, True),
    "sapsam.v1.TransparencyService/GetServerKey": (Access.PUBLIC, False),
    "sapsam.v1.TransparencyService/GetCheckpoint": (Access.PUBLIC, False),
    "sapsam.v1.TransparencyService/GetInclusionProof": (Access.PUBLIC, False),
    "sapsam.v1.TransparencyService/GetConsistencyProof": (Access.PUBLIC, False),
    "sapsam.v1.TransparencyService/GetLeaves": (Access.PUBLIC, False),
    "sapsam.v1.OperatorService/GetAwaitedTables": (Access.OPERATOR, False),
    "sapsam.v1.OperatorService/GetStuckTables": (Access.OPERATOR, False),
    "sapsam.v1.OperatorService/ForceSeatTimeout": (Access.OPERATOR, True),
    "sapsam.v1.OperatorService/VoidDeal": (Access.OPERATOR, True),
    "sapsam.v1.OperatorService/ReplaceSeat": (Access.OPERATOR, True),
    # Keeps a cosignature only from a witness the operator lists (none here), idempotently.
    "sapsam.v1.TransparencyService/AddCheckpointCosignature": (Access.PUBLIC, False),
}


def described_rpcs() -> list[tuple[str, MethodDescriptor]]:
    """(service full name, method) of every RPC the generated descriptors define, found in every
    ``*_pb2`` module of sapsam_proto.v1 (so a new service is found too)."""
    modules = [
        importlib.import_module(f"{generated_v1.__name__}.{info.name}")
        for info in pkgutil.iter_modules(generated_v1.__path__)
        if info.name.endswith("_pb2")
    ]
    found = []
    for module in modules:
        for service in module.DESCRIPTOR.services_by_name.values():
            found.extend((service.full_name, method) for method in service.methods)
    return found


SPENDS_TOKENS = frozenset({"RotateToken", "RevokePlayerTokens"})
"""RPCs that take the callers' tokens away: fuzzed last, so the other RPCs see working tokens."""


def all_rpcs() -> list[Rpc]:
    """Every described RPC that RPC_TABLE knows (test_every_rpc_is_fuzzed checks it is all)."""
    rpcs = []
    for service, method in described_rpcs():
        known = RPC_TABLE.get(f"{service}/{method.name}")
        if known is not None:
            rpcs.append(Rpc(service, method, *known))
    return sorted(rpcs, key=lambda rpc: rpc.method.name in SPENDS_TOKENS)


DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"
_DOC_ROW = re.compile(r"^\| ([A-Z_]+) \| (`[A-Z_]+`(?:, `[A-Z_]+`)*) \|", re.MULTILINE)


def documented_pairs() -> set[tuple[str, str]]:
    """(status, reason) of every row of docs/api.md's error table."""
    pairs = set()
    for status, reasons in _DOC_ROW.findall(DOCS.read_text(encoding="utf-8")):
        pairs.update((status, reason) for reason in re.findall(r"`([A-Z_]+)`", reasons))
    return pairs


# -- the server, the world and what is watched ----------------------------------------------------


class LogWatch(logging.Handler):
    """Keeps every warning or error the server's loggers (sapsam.*, grpc.*) write."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []
        self._lines_lock = threading.Lock()  # not ``lock``: logging.Handler holds that one

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith(("sapsam", "grpc")):
            with self._lines_lock:
                self.lines.append(f"{record.levelname} {record.name}: {record.getMessage()[:300]}")

    def since(self, mark: int) -> list[str]:
        with self._lines_lock:
            return self.lines[mark:]


@dataclass
class Findings:
    """What broke, by RPC and kind, with the shortest example of each."""

    by_rpc: dict[str, dict[str, str]] = field(default_factory=dict)

    def add(self, rpc: Rpc, kind: str, example: str) -> None:
        kept = self.by_rpc.setdefault(rpc.method.name, {})
        if kind not in kept or len(example) < len(kept[kind]):
            kept[kind] = example

    def report(self, rpc: Rpc) -> str:
        kept = self.by_rpc.get(rpc.method.name, {})
        return "\n".join(f"- {kind}\n    {example}" for kind, example in sorted(kept.items()))


@dataclass
class Env:
    """One server, its database, the world in it, and what the fuzz test has seen."""

    channel: grpc.Channel
    database: psycopg.Connection[Any]
    world: World
    tokens: dict[str, str]  # by caller label
    players: dict[str, str]  # the player name behind each label
    log: LogWatch
    documented: set[tuple[str, str]]
    max_request_bytes: int
    findings: Findings = field(default_factory=Findings)
    # (token, method, request_id) -> (request bytes, response bytes) of a first OK answer.
    answered: dict[tuple[str, str, str], tuple[bytes, bytes]] = field(default_factory=dict)
    outcomes: dict[str, set[str]] = field(default_factory=dict)
    revoked: set[str] = field(default_factory=set)  # labels whose tokens the operator revoked
    slowest: dict[str, tuple[float, str]] = field(default_factory=dict)  # by RPC, for the report

    def event_count(self) -> int:
        row = self.database.execute("SELECT count(*) FROM events").fetchone()
        assert row is not None
        return int(row[0])


def _holder(table: table_pb2.Table, seat: str) -> str:
    """The player name holding ``seat`` at ``table``."""
    return next(entry.player for entry in table.seats if entry.name == seat)


def _build_world(api: Api) -> tuple[World, dict[str, str], dict[str, str]]:
    """A finished deal and a running one at a full table, an open table, two tournaments."""
    # No deadlines: a fuzz run on a loaded machine outlasts the preset's 90 s, and the sweeper's
    # timeouts during a call would read as that call's writes.
    no_deadlines = rule_set_pb2.RuleSet(arrange_seconds=0, reveal_seconds=0)
    table, players = api.seated_table(2, "pagat", overrides=no_deadlines)
    api.play_deal(table, players, PRESETS["pagat"], 0)
    operator = OPERATOR_TOKEN
    started = api.call("StartDeal", table_service_pb2.StartDealRequest(table=table), operator)
    view = api.call("GetTable", table_service_pb2.GetTableRequest(name=table), operator).table
    cutter = next(p for p in players if p.seat == view.cutter_seat)
    api.call(
        "CutDeck", table_service_pb2.CutDeckRequest(seat=cutter.seat, position=9), cutter.token
    )
    hand = api.call(
        "GetMyHand", table_service_pb2.GetMyHandRequest(seat=players[0].seat), players[0].token
    )
    # An open-face table (issue #18) with the same players, its first street dealt: Pineapple
    # (issue #19), so PlaceCards and RevealDiscards meet a table that discards.
    open_face = api.call(
        "CreateTable",
        table_service_pb2.CreateTableRequest(rule_set_preset="pineapple", seat_count=2),
        operator,
    ).table.name
    for player in players:
        api.call("JoinTable", table_service_pb2.JoinTableRequest(table=open_face), player.token)
    api.call("ChooseDealer", table_service_pb2.ChooseDealerRequest(table=open_face), operator)
    open_deal = api.call(
        "StartDeal", table_service_pb2.StartDealRequest(table=open_face), operator
    ).deal
    face_view = api.call(
        "GetTable", table_service_pb2.GetTableRequest(name=open_face), operator
    ).table
    face_cutter = next(p for p in players if p.name == _holder(face_view, face_view.cutter_seat))
    api.call(
        "CutDeck",
        table_service_pb2.CutDeckRequest(seat=face_view.cutter_seat, position=9),
        face_cutter.token,
    )
    face_seats = [f"{open_face}/seats/{seat}" for seat in range(2)]
    outsider = api.register("outsider")
    open_table = api.call(
        "CreateTable", table_service_pb2.CreateTableRequest(seat_count=3), outsider.token
    ).table.name
    api.call("JoinTable", table_service_pb2.JoinTableRequest(table=open_table), outsider.token)
    tournaments = tournament_service_pb2_grpc.TournamentServiceStub(api.channel)
    cups = []
    for index in range(2):
        cups.append(
            tournaments.CreateTournament(
                tournament_service_pb2.CreateTournamentRequest(
                    display_name=f"cup {index}",
                    rule_set_preset="pagat",
                    seats_per_table=2,
                    rounds=1,
                    deals_per_round=1,
                    registration_close_time=Timestamp(seconds=4_102_444_800),
                    max_entrants=8,
                ),
                metadata=bearer(operator),
            ).tournament.name
        )
    for player in players:
        tournaments.RegisterTournamentPlayer(
            tournament_service_pb2.RegisterTournamentPlayerRequest(tournament=cups[0]),
            metadata=bearer(player.token),
        )
    tokens = [
        api.call(
            "ListTables", table_service_pb2.ListTablesRequest(page_size=1), operator
        ).next_page_token,
        tournaments.ListTournaments(
            tournament_service_pb2.ListTournamentsRequest(page_size=1), metadata=bearer(operator)
        ).next_page_token,
        tournaments.GetStandings(
            tournament_service_pb2.GetStandingsRequest(tournament=cups[0], page_size=1),
            metadata=bearer(operator),
        ).next_page_token,
    ]
    deal_one = f"{table}/deals/1"
    export = api.channel.unary_unary(
        "/sapsam.v1.AuditService/ExportDeal",
        request_serializer=audit_service_pb2.ExportDealRequest.SerializeToString,
        response_deserializer=audit_service_pb2.ExportDealResponse.FromString,
    )(audit_service_pb2.ExportDealRequest(name=deal_one), metadata=bearer(operator)).export
    names = [
        table,
        open_table,
        *(player.seat for player in players),
        f"{table}/seats/2",
        f"{open_table}/seats/0",
        deal_one,
        started.deal,
        open_face,
        *face_seats,
        open_deal,
        f"{table}/deals/3",
        *(player.name for player in [*players, outsider]),
        *cups,
    ]
    world = World(
        names=names,
        page_tokens=[token for token in tokens if token],
        export=export,
        cards=list(hand.cards),
        tournament_id=cups[0].removeprefix("tournaments/"),
        player_names=[player.name for player in [*players, outsider]],
    )
    by_label = {
        "alice": players[0].token,
        "bob": players[1].token,
        "outsider": outsider.token,
        "operator": operator,
    }
    names = {"alice": players[0].name, "bob": players[1].name, "outsider": outsider.name}
    return world, by_label, names


@contextlib.contextmanager
def running_env(database_factory: Any) -> Iterator[Env]:
    """A server on a fresh database, the world set up in it, and the watches on it."""
    name, url = database_factory.create(migrated=True)
    # The per-caller limits stay off (tests/api/test_limits.py covers them): a fuzz run makes
    # calls as fast as it can, and refusals for that would hide what the requests reach.
    config = ServerConfig(
        listen="127.0.0.1:0", operator_token=OPERATOR_TOKEN, grace_seconds=2, limits=UNLIMITED
    )
    services = build_services(
        url, pool_size=8, server_keys=TEST_SERVER_KEYS, checkpoint_seconds=0.2
    )
    running = start_server(config, services)
    log = LogWatch()
    logging.getLogger().addHandler(log)
    try:
        with (
            grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel,
            psycopg.connect(url, autocommit=True) as database,
        ):
            world, tokens, players = _build_world(Api(channel, url))
            assert not log.lines, log.lines  # the set-up itself is clean
            yield Env(
                channel,
                database,
                world,
                tokens,
                players,
                log,
                documented_pairs(),
                config.max_receive_message_bytes,
            )
    finally:
        logging.getLogger().removeHandler(log)
        running.stop()
        database_factory.drop(name)
