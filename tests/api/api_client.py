"""A test client for the API: generated stubs, registered players, a deal driver, and checks.

Every response the client receives is recorded with who asked and which deals' seeds were
public at that moment, so the hidden-information walk can check them all at the end.
"""

from __future__ import annotations

import os
import random
import re
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import psycopg
from google.protobuf.message import Message
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from sapsam import fairness
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import Event
from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.scoring import DealScore, score_deal
from sapsam.rules.solver import solve
from sapsam.store.offline_reads import read_stream
from sapsam_proto.v1 import (
    player_service_pb2,
    player_service_pb2_grpc,
    rule_set_pb2,
    table_pb2,
    table_service_pb2,
    table_service_pb2_grpc,
)

OPERATOR_TOKEN = "operator-token-for-tests-0123456789"
CARD = re.compile(r"^[2-9TJQKA][cdhs]$")


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    """Call metadata for a token."""
    return (("authorization", f"Bearer {token}"),)


def error_reason(error: grpc.RpcError) -> tuple[grpc.StatusCode, str, Any, Any]:
    """(code, ErrorInfo reason, ErrorInfo, BadRequest or None) of a failed call."""
    status = rpc_status.from_call(error)
    assert status is not None, f"no google.rpc.Status on {error.code()}: {error.details()}"
    info, bad_request = None, None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad_request = error_details_pb2.BadRequest()
            detail.Unpack(bad_request)
    assert info is not None and info.domain == "sapsam.dev"
    return error.code(), info.reason, info, bad_request


@dataclass
class Player:
    """A registered player and, once seated, its seat."""

    display_name: str
    token: str
    name: str
    seat: str = ""

    @property
    def position(self) -> int:
        """The seat number."""
        return int(self.seat.rsplit("/", 1)[1])


@dataclass(frozen=True)
class Observation:
    """One message a client received: who asked, and which deals' seeds were public then."""

    message: Message
    observer: str  # the observer's seat name, or "" for a spectator
    revealed: frozenset[int]


@dataclass
class DealSecrets:
    """What must stay hidden until a deal's seed is revealed."""

    seed: bytes = b""
    nonces: list[bytes] = field(default_factory=list)


class Api:
    """Stubs plus bookkeeping for one test."""

    def __init__(self, channel: grpc.Channel, database_url: str) -> None:
        self.channel = channel
        self.database_url = database_url
        self.tables = table_service_pb2_grpc.TableServiceStub(channel)
        self.players = player_service_pb2_grpc.PlayerServiceStub(channel)
        self.observations: list[Observation] = []
        self.revealed: set[int] = set()
        self.secrets: dict[int, DealSecrets] = {}
        self.lock = threading.Lock()
        # Calls made with these tokens go to another server's stubs (two-process tests).
        self.routes: dict[str, Api] = {}

    # -- calls ----------------------------------------------------------------------------------

    def call(self, method: str, request: Message, token: str, observer: str = "") -> Any:
        """Call a TableService or PlayerService method and record the response."""
        target = self.routes.get(token, self)
        stub: Any = (
            target.players
            if method in ("RegisterPlayer", "GetPlayer", "RegisterPlayerKey")
            else target.tables
        )
        response = getattr(stub, method)(request, metadata=bearer(token) if token else ())
        self.record(response, observer)
        return response

    def record(self, message: Message, observer: str) -> None:
        """Remember a received message for the hidden-information walk."""
        with self.lock:
            self.observations.append(Observation(message, observer, frozenset(self.revealed)))

    def register(self, display_name: str) -> Player:
        """A new player with its token."""
        response = self.call(
            "RegisterPlayer",
            player_service_pb2.RegisterPlayerRequest(
                request_id=str(uuid.uuid4()), display_name=display_name
            ),
            "",
        )
        return Player(display_name, response.token, response.player.name)

    def event_count(self) -> int:
        """Events in the log, over every stream."""
        with psycopg.connect(self.database_url) as connection:
            row = connection.execute("SELECT count(*) FROM events").fetchone()
        assert row is not None
        return int(row[0])

    def logged_events(self, table: str) -> list[Event]:
        """A table's events as the log holds them, decoded."""
        stream = "table-" + table.removeprefix("tables/")
        with psycopg.connect(self.database_url) as connection:
            recorded = read_stream(connection, stream)
        return [DEFAULT_CODEC.decode(r.type, r.schema_version, r.data) for r in recorded]

    # -- a table and its deals ------------------------------------------------------------------

    def seated_table(
        self,
        seat_count: int,
        preset: str,
        series_length: int = 8,
        overrides: rule_set_pb2.RuleSet | None = None,
    ) -> tuple[str, list[Player]]:
        """A new table with every seat taken by a fresh player and the dealer drawn by lot
        (``overrides``: changes to the preset, as CreateTable's ``rule_set_overrides``)."""
        creator = self.register("creator")
        table = self.call(
            "CreateTable",
            table_service_pb2.CreateTableRequest(
                request_id=str(uuid.uuid4()),
                rule_set_preset=preset,
                seat_count=seat_count,
                series_length=series_length,
                rule_set_overrides=overrides,
            ),
            creator.token,
        ).table
        players = []
        for index in range(seat_count):
            player = self.register(f"player {index}")
            joined = self.call(
                "JoinTable",
                table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=table.name),
                player.token,
            )
            player.seat = joined.seat
            players.append(player)
        self.call(
            "ChooseDealer",
            table_service_pb2.ChooseDealerRequest(request_id=str(uuid.uuid4()), table=table.name),
            players[0].token,
        )
        return table.name, players

    def play_deal(
        self, table: str, players: list[Player], rule_set: RuleSet, deal_index: int
    ) -> table_pb2.DealResult:
        """Play one deal through the API and check its score against the rules engine."""
        by_seat = {player.seat: player for player in players}
        started = self.call(
            "StartDeal",
            table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table),
            players[deal_index % len(players)].token,
        )
        deal_number = int(started.deal.rsplit("/", 1)[1])
        secrets = self.secrets.setdefault(deal_number, DealSecrets())
        # Some seats mix in entropy, a different subset each deal.
        for player in players[: deal_index % len(players) + 1]:
            self.call(
                "ContributeEntropy",
                table_service_pb2.ContributeEntropyRequest(
                    request_id=str(uuid.uuid4()), seat=player.seat, entropy=os.urandom(16)
                ),
                player.token,
                player.seat,
            )
        view = self.call(
            "GetTable", table_service_pb2.GetTableRequest(name=table), players[0].token
        )
        cutter = by_seat[view.table.cutter_seat]
        self.call(
            "CutDeck",
            table_service_pb2.CutDeckRequest(
                request_id=str(uuid.uuid4()), seat=cutter.seat, position=1 + (deal_index * 7) % 51
            ),
            cutter.token,
            cutter.seat,
        )
        table_id = uuid.UUID(table.removeprefix("tables/"))
        hands: dict[str, tuple[Card, ...]] = {}
        chosen: dict[str, tuple[Arrangement, bytes]] = {}
        for player in players:
            hand = self.call(
                "GetMyHand",
                table_service_pb2.GetMyHandRequest(seat=player.seat),
                player.token,
                player.seat,
            )
            hands[player.seat] = parse_cards(list(hand.cards))
            arrangement = solve(hands[player.seat], rule_set)
            if (deal_index + player.position) % 5 == 0:
                # Now and then a seat sets its rows in the wrong order: a foul, scored as one.
                arrangement = fouled(arrangement, seed=deal_index)
            nonce = os.urandom(16)
            secrets.nonces.append(nonce)
            chosen[player.seat] = (arrangement, nonce)
            # A first commitment, replaced before confirming: commitments repeat until confirmed.
            for commitment in (
                os.urandom(32),
                fairness.arrangement_commitment(
                    table_id, deal_number, player.position, arrangement, nonce
                ),
            ):
                self.call(
                    "CommitArrangement",
                    table_service_pb2.CommitArrangementRequest(
                        request_id=str(uuid.uuid4()), seat=player.seat, commitment=commitment
                    ),
                    player.token,
                    player.seat,
                )
        for player in players:
            self.call(
                "ConfirmArrangement",
                table_service_pb2.ConfirmArrangementRequest(
                    request_id=str(uuid.uuid4()), seat=player.seat
                ),
                player.token,
                player.seat,
            )
        # Mid-deal reads, so the hidden-information walk sees every response type with secrets
        # in play: a deal result, a table listing and a player profile before the reveals.
        partial = self.call(
            "GetDealResult",
            table_service_pb2.GetDealResultRequest(name=started.deal),
            players[0].token,
            players[0].seat,
        ).result
        assert not partial.seed_revealed and not partial.seed
        self.call("ListTables", table_service_pb2.ListTablesRequest(), players[0].token)
        self.call(
            "GetPlayer",
            player_service_pb2.GetPlayerRequest(name=players[-1].name),
            players[0].token,
            players[0].seat,
        )
        for index, player in enumerate(players):
            arrangement, nonce = chosen[player.seat]
            if index == len(players) - 1:
                # The last reveal publishes the seed: from its response on, the deal is public.
                with self.lock:
                    self.revealed.add(deal_number)
            self.call(
                "RevealArrangement",
                table_service_pb2.RevealArrangementRequest(
                    request_id=str(uuid.uuid4()),
                    seat=player.seat,
                    arrangement=table_pb2.Arrangement(
                        front=[str(c) for c in arrangement.front],
                        middle=[str(c) for c in arrangement.middle],
                        back=[str(c) for c in arrangement.back],
                    ),
                    nonce=nonce,
                ),
                player.token,
                player.seat,
            )
        result = self.call(
            "GetDealResult",
            table_service_pb2.GetDealResultRequest(name=started.deal),
            players[0].token,
            players[0].seat,
        ).result
        secrets.seed = result.seed
        expected = expected_score(rule_set, players, chosen, hands)
        assert [seat.score_delta for seat in result.seats] == list(expected.totals)
        assert [(p.first_seat_delta) for p in result.pairs] == [p.delta for p in expected.pairs]
        for seat_result, player in zip(
            result.seats, sorted(players, key=lambda p: p.position), strict=True
        ):
            assert list(seat_result.dealt_cards) == [str(c) for c in sorted(hands[player.seat])]
            assert seat_result.nonce == chosen[player.seat][1]
        return result


def fouled(arrangement: Arrangement, seed: int) -> Arrangement:
    """The same 13 cards set as a foul, found by seeded shuffles (a random setting fouls ~3 in 4).

    A fixed scramble is not always a foul (the rows can happen to stay in order), which made a
    series without a foul possible; the check here makes each scrambled seat a foul for sure.
    """
    cards = [*arrangement.front, *arrangement.middle, *arrangement.back]
    shuffler = random.Random(seed)
    while True:
        candidate = Arrangement(tuple(cards[:3]), tuple(cards[3:8]), tuple(cards[8:]))
        if check_arrangement(candidate).foul:  # a foul in any row order the rules may ask
            return candidate
        shuffler.shuffle(cards)


def expected_score(
    rule_set: RuleSet,
    players: list[Player],
    chosen: dict[str, tuple[Arrangement, bytes]],
    hands: dict[str, tuple[Card, ...]],
) -> DealScore:
    """The deal's score as the rules engine computes it from the players' own knowledge."""
    ordered = sorted(players, key=lambda player: player.position)
    return score_deal(
        rule_set,
        [check_arrangement(chosen[p.seat][0], hands[p.seat]) for p in ordered],
    )


class Watcher:
    """A WatchTable stream consumed in a background thread."""

    def __init__(
        self,
        api: Api,
        table: str,
        token: str,
        after_version: int = 0,
        observer: str = "",
        batch: bool = False,
    ) -> None:
        self.api = api
        self.observer = observer  # the seat the token holds ("": none), for the walk
        self.messages: list[Any] = []
        """One WatchTableResponse per event (a batch's events each as one)."""
        self.batches: list[list[int]] = []
        """With ``batch``: the versions each message carried."""
        self.revealed: set[int] = set()
        self.observations: list[Observation] = []
        self.error: BaseException | None = None
        self._batch = batch
        request = table_service_pb2.WatchTableRequest(
            table=table, after_version=after_version, batch_events=batch
        )
        self._call = api.tables.WatchTable(request, metadata=bearer(token))
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for message in self._call:
                if self._batch:
                    assert not message.HasField("event") and 1 <= len(message.events) <= 64
                    self.batches.append([event.version for event in message.events])
                    responses = [
                        table_service_pb2.WatchTableResponse(event=event)
                        for event in message.events
                    ]
                else:
                    assert not message.events
                    responses = [message]
                for response in responses:
                    event = response.event
                    if event.WhichOneof("payload") == "seed_revealed":
                        self.revealed.add(int(event.seed_revealed.deal.rsplit("/", 1)[1]))
                    self.messages.append(response)
                    observation = Observation(response, self.observer, frozenset(self.revealed))
                    self.observations.append(observation)
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                self.error = error
        except AssertionError as error:  # a message not of the shape asked for
            self.error = error

    def wait(self, timeout: float = 60) -> None:
        """Wait for the stream to end on its own (the series is complete)."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the watch did not end with the series"
        assert self.error is None, self.error

    def wait_for(self, condition: Callable[[], bool], timeout: float = 30) -> None:
        """Wait until ``condition`` holds over what was received."""
        import time

        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, "the watcher did not receive the events in time"
            time.sleep(0.02)

    def cancel(self) -> None:
        """Stop watching."""
        self._call.cancel()
        self._thread.join(10)


# -- the hidden-information walk --------------------------------------------------------------


def _card_strings(
    message: Message, path: str, revealed: frozenset[int], inside_public_deal: bool
) -> Iterator[tuple[str, str, bool]]:
    """Every card-like string in a message: (path, value, inside a public DealResult)."""
    if isinstance(message, table_pb2.DealResult):
        inside_public_deal = message.deal_number in revealed and message.seed_revealed
    for descriptor, value in message.ListFields():
        here = f"{path}.{descriptor.name}"
        items = value if descriptor.is_repeated else [value]
        for item in items:
            if isinstance(item, Message):
                yield from _card_strings(item, here, revealed, inside_public_deal)
            elif isinstance(item, str) and CARD.match(item):
                yield here, item, inside_public_deal


def hidden_information_violations(
    observations: list[Observation], secrets: dict[int, DealSecrets]
) -> list[str]:
    """Every place an observed message shows what its observer was not yet allowed to see.

    - No message holds a deal's seed or any nonce of it before that deal's seed was revealed
      (checked on the serialised bytes, so no field can hide them).
    - Card strings appear only in the lot draw, in the observer's own GetMyHand and CardsDealt
      (its stream's ``my_cards``; whether they are its own cards test_hand_on_stream checks),
      and inside the DealResult of a deal whose seed was revealed when the message arrived.
    """
    problems = []
    for index, observation in enumerate(observations):
        message = observation.message
        name = type(message).__name__
        raw = message.SerializeToString()
        for number, deal in secrets.items():
            if number in observation.revealed:
                continue
            for secret in [deal.seed, *deal.nonces]:
                if secret and secret in raw:
                    problems.append(f"#{index} {name} holds a secret of deal {number}")
        own_hand = isinstance(message, table_service_pb2.GetMyHandResponse) and bool(
            observation.observer
        )
        for path, value, public in _card_strings(message, name, observation.revealed, False):
            # A seat's holder is sent its own cards with CardsDealt, on its own stream.
            own_cards = bool(observation.observer) and path.endswith(".cards_dealt.my_cards")
            if public or own_hand or own_cards or path.endswith(".lot_cards"):
                continue
            problems.append(
                f"#{index} {path} = {value} seen by {observation.observer or 'spectator'}"
            )
    return problems
