"""The table states the reason and docs tests start from.

``World`` wraps the stubs of every service with the steps that bring a table to a given state:
seated, dealt, revealing, played. conftest's module-scoped ``world`` fixture gives each module
one on its own server and fresh database.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import psycopg
from api_client import OPERATOR_TOKEN, Api, Player, bearer
from google.protobuf.timestamp_pb2 import Timestamp

from sapsam import fairness
from sapsam.audit.sample_play import fouled_out_of_order
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.presets import preset
from sapsam.rules.solver import solve
from sapsam_proto.v1 import (
    audit_service_pb2_grpc,
    rule_set_pb2,
    table_pb2,
    table_service_pb2,
    tournament_service_pb2,
    tournament_service_pb2_grpc,
)

WAIT_SECONDS = 60.0
"""A generous bound for what the server does on its own (a deadline sweep)."""


def cup_request(
    display_name: str, **changes: Any
) -> tournament_service_pb2.CreateTournamentRequest:
    """CreateTournament for a small cup (pagat, two seats, one round of one deal, four entrants,
    entries open until 2100) with a fresh request id; ``changes`` replace any field."""
    values: dict[str, Any] = {
        "request_id": str(uuid.uuid4()),
        "display_name": display_name,
        "rule_set_preset": "pagat",
        "seats_per_table": 2,
        "rounds": 1,
        "deals_per_round": 1,
        "registration_close_time": Timestamp(seconds=4_102_444_800),
        "max_entrants": 4,
        **changes,
    }
    return tournament_service_pb2.CreateTournamentRequest(**values)


@dataclass
class Seated:
    """A table whose every seat is taken and whose first dealer is drawn."""

    table: str
    players: list[Player]

    @property
    def table_id(self) -> uuid.UUID:
        """The table's UUID."""
        return uuid.UUID(self.table.removeprefix("tables/"))


@dataclass
class Chosen:
    """A seat's arrangement and nonce, as committed."""

    arrangement: Arrangement
    nonce: bytes

    def rows(self) -> table_pb2.Arrangement:
        """The arrangement as the API takes it."""
        return table_pb2.Arrangement(
            front=[str(card) for card in self.arrangement.front],
            middle=[str(card) for card in self.arrangement.middle],
            back=[str(card) for card in self.arrangement.back],
        )


class World:
    """Stubs of every service on one channel, and the steps to table states."""

    def __init__(self, channel: grpc.Channel, database_url: str) -> None:
        self.api = Api(channel, database_url)
        self.audit = audit_service_pb2_grpc.AuditServiceStub(channel)
        self.tournaments = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        self.database_url = database_url
        self.operator = bearer(OPERATOR_TOKEN)

    # -- plain calls ----------------------------------------------------------------------------

    def table_call(self, method: str, request: Any, token: str) -> Any:
        """A TableService or PlayerService call with ``token`` (empty: none)."""
        return self.api.call(method, request, token)

    def player(self, name: str = "player") -> Player:
        """A freshly registered player."""
        return self.api.register(name)

    def event_count(self) -> int:
        """Events in the log, every stream."""
        return self.api.event_count()

    def execute(self, statement: str) -> None:
        """Run SQL on the server's database (autocommit), as its owner."""
        with psycopg.connect(self.database_url, autocommit=True) as connection:
            connection.execute(statement.encode())

    # -- tables ---------------------------------------------------------------------------------

    def seated(
        self,
        seat_count: int = 2,
        series_length: int = 1,
        arrange_seconds: int | None = None,
        after_series: int = 0,
    ) -> Seated:
        """A new table, every seat taken by a fresh player, the first dealer drawn by lot."""
        creator = self.player("creator")
        request = table_service_pb2.CreateTableRequest(
            request_id=str(uuid.uuid4()),
            seat_count=seat_count,
            series_length=series_length,
            after_series=after_series,  # type: ignore[arg-type]
        )
        if arrange_seconds is None:
            request.rule_set_preset = "pagat"
        else:
            request.rule_set.CopyFrom(
                rule_set_pb2.RuleSet(name="quick", arrange_seconds=arrange_seconds)
            )
        table = self.table_call("CreateTable", request, creator.token).table.name
        players = []
        for index in range(seat_count):
            player = self.player(f"player {index}")
            player.seat = self.table_call(
                "JoinTable",
                table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=table),
                player.token,
            ).seat
            players.append(player)
        self.table_call(
            "ChooseDealer",
            table_service_pb2.ChooseDealerRequest(request_id=str(uuid.uuid4()), table=table),
            players[0].token,
        )
        return Seated(table, players)

    def started(self, seated: Seated) -> str:
        """Start the next deal at ``seated``; its name."""
        return str(
            self.table_call(
                "StartDeal",
                table_service_pb2.StartDealRequest(
                    request_id=str(uuid.uuid4()), table=seated.table
                ),
                seated.players[0].token,
            ).deal
        )

    def cutter(self, seated: Seated) -> Player:
        """The seat on the dealer's right: the one that cuts."""
        view = self.table_call(
            "GetTable", table_service_pb2.GetTableRequest(name=seated.table), OPERATOR_TOKEN
        ).table
        return next(player for player in seated.players if player.seat == view.cutter_seat)

    def dealt(self, seated: Seated) -> str:
        """Start a deal and cut: every seat holds its cards. The deal's name."""
        deal = self.started(seated)
        cutter = self.cutter(seated)
        self.table_call(
            "CutDeck",
            table_service_pb2.CutDeckRequest(
                request_id=str(uuid.uuid4()), seat=cutter.seat, position=7
            ),
            cutter.token,
        )
        return deal

    def hand(self, player: Player) -> tuple[Card, ...]:
        """The player's 13 cards."""
        cards = self.table_call(
            "GetMyHand", table_service_pb2.GetMyHandRequest(seat=player.seat), player.token
        ).cards
        return parse_cards(list(cards))

    def commit(
        self,
        seated: Seated,
        deal: str,
        player: Player,
        arrangement: Arrangement | None = None,
        deal_number: int | None = None,
    ) -> Chosen:
        """Commit the player's arrangement (the solver's, unless given) with a fresh nonce,
        naming ``deal_number`` in the request if given."""
        chosen = Chosen(arrangement or solve(self.hand(player), preset("pagat")), os.urandom(16))
        commitment = fairness.arrangement_commitment(
            seated.table_id,
            int(deal.rsplit("/", 1)[1]),
            player.position,
            chosen.arrangement,
            chosen.nonce,
        )
        self.table_call(
            "CommitArrangement",
            table_service_pb2.CommitArrangementRequest(
                request_id=str(uuid.uuid4()),
                seat=player.seat,
                commitment=commitment,
                deal_number=deal_number,
            ),
            player.token,
        )
        return chosen

    def confirm(self, player: Player) -> None:
        """Lock the player's last commitment."""
        self.table_call(
            "ConfirmArrangement",
            table_service_pb2.ConfirmArrangementRequest(
                request_id=str(uuid.uuid4()), seat=player.seat
            ),
            player.token,
        )

    def reveal(self, player: Player, chosen: Chosen) -> Any:
        """Reveal the player's committed rows and nonce."""
        return self.table_call(
            "RevealArrangement",
            table_service_pb2.RevealArrangementRequest(
                request_id=str(uuid.uuid4()),
                seat=player.seat,
                arrangement=chosen.rows(),
                nonce=chosen.nonce,
            ),
            player.token,
        )

    def revealing(self, seated: Seated) -> tuple[str, dict[str, Chosen]]:
        """Deal, commit and confirm every seat: the table waits for reveals."""
        deal = self.dealt(seated)
        chosen = {}
        for player in seated.players:
            chosen[player.seat] = self.commit(seated, deal, player)
            self.confirm(player)
        return deal, chosen

    def played(self, seated: Seated) -> str:
        """Play one whole deal; its name."""
        deal, chosen = self.revealing(seated)
        for player in seated.players:
            self.reveal(player, chosen[player.seat])
        return deal

    def phase(self, seated: Seated) -> int:
        """The table's phase now."""
        return int(
            self.table_call(
                "GetTable", table_service_pb2.GetTableRequest(name=seated.table), OPERATOR_TOKEN
            ).table.phase
        )

    def wait_until(self, condition: Callable[[], bool], what: str) -> None:
        """Poll ``condition`` until it holds, within a generous bound."""
        deadline = time.monotonic() + WAIT_SECONDS
        while not condition():
            assert time.monotonic() < deadline, f"the server did not {what} in time"
            time.sleep(0.05)

    def timed_out_while_arranging(self, fouled: bool = False) -> tuple[Seated, str, Chosen]:
        """A two-seat table with a 1 s arranging limit: seat 0's player confirms, the other
        misses the deadline and is timed out by the server's sweeper; the table then waits for
        the first player's reveal. With ``fouled``, that player's rows are out of order."""
        seated = self.seated(arrange_seconds=1)
        deal = self.dealt(seated)
        first = seated.players[0]
        arrangement = fouled_out_of_order(self.hand(first)) if fouled else None
        chosen = self.commit(seated, deal, first, arrangement)
        self.confirm(first)
        self.wait_until(
            lambda: self.phase(seated) == table_pb2.TABLE_PHASE_REVEALING,
            "time the late seat out",
        )
        return seated, deal, chosen
