"""Scripted four-seat tables for the asyncio load generators (``grpc.aio``: thousands of streams
in one process, no thread each).

A :class:`Table` registers its four players, each with a signing key (RegisterPlayerKey, as the
SDK does on a player's first move), creates the table, seats them, opens one WatchTable stream
per seat and plays at human pace: every action waits a think time first. Each seat acts on the
events of its own stream; every stream's events are timed from their record time to their
arrival. Arrangements are random legal rows (no foul, about 0.1 ms: the solver costs 3 ms) made
when the hand arrives, during the seat's think time, so never on a call's path; their requests
are what the SDK sends by default: commitment scheme 2, commit and reveal signed by the player's
key, the commit confirming in the same call. With ``batch_events`` the streams ask for the events
of one write in one message (WatchTableRequest.batch_events).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import grpc
from _game import SEATS, PreparedSeat, bearer, create_table_request, prepare_seat, request_id

from sapsam_client.player_key import PlayerKey
from sapsam_proto.v1 import (
    player_service_pb2,
    player_service_pb2_grpc,
    table_service_pb2,
    table_service_pb2_grpc,
)


@dataclass
class Tally:
    """What a generator saw: latencies of calls that finished inside the window, event delivery
    lags, failures, deals scored."""

    window: tuple[float, float] = (0.0, 0.0)
    latencies_ms: dict[str, list[float]] = field(default_factory=dict)
    delivery_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    deals_scored: int = 0
    messages: int = 0
    """Stream messages received (with batch_events, one may carry several events)."""

    def inside(self) -> bool:
        """Whether now is inside the measured window."""
        return self.window[0] <= time.monotonic() <= self.window[1]

    def reset(self, window: tuple[float, float]) -> None:
        """Start tallying a new window."""
        self.window = window
        self.latencies_ms, self.delivery_ms = {}, []
        self.errors, self.deals_scored, self.messages = Counter(), 0, 0


class Connection:
    """One channel and its stubs (several tables share one, as players behind one NAT would)."""

    def __init__(self, target: str) -> None:
        self.channel = grpc.aio.insecure_channel(
            target, options=(("grpc.use_local_subchannel_pool", 1),)
        )
        self.tables = table_service_pb2_grpc.TableServiceStub(self.channel)
        self.players = player_service_pb2_grpc.PlayerServiceStub(self.channel)


class Table:
    """One scripted table; ``play`` runs it until ``stop``.

    Each seat acts on the events of its own stream: it contributes entropy when a deal starts,
    arranges when the cards are dealt (its hand is in its stream's CardsDealt, ``my_cards``),
    commits and confirms in one call, reveals when reveals open; seat 0 also draws the dealer,
    hands the cut to the seat that cuts, checks each scored deal's result and starts the next
    deal. Per message a stream does only that: the payload's kind, the delivery
    lag while a window is open, and the seat's next move.

    It makes no call whose answer its stream already gave, as a client of the public API would
    not: the cutter is the seat on the dealer's right (docs/fairness.md §4), from DealStarted's
    ``dealer_seat``, not from a GetTable; the scored deal's result (scored, deltas summing to
    zero, every seat's nonce the one it revealed, no foul) is checked on DealScored's ``result``,
    which is the deal's record as GetDealResult returns it; the hand comes with CardsDealt, not
    from a GetMyHand (asked only should a stream bring none), and CommitArrangement confirms too.
    So a deal is 14 unary calls: StartDeal, 4 ContributeEntropy, CutDeck, 4 CommitArrangement
    (with confirm) and 4 RevealArrangement.
    """

    def __init__(
        self,
        connection: Connection,
        tally: Tally,
        think: float,
        setup_gate: asyncio.Semaphore,
        batch_events: bool = False,
    ) -> None:
        self.connection = connection
        self.batch_events = batch_events  # WatchTable's opt-in: the events of a write together
        self.tally = tally
        self.think = think
        self.setup_gate = setup_gate
        self.name = ""
        self.tokens: list[str] = []
        self.player_ids: list[str] = []  # each seat's player id (commitment scheme 2 binds it)
        self.keys: list[PlayerKey] = []  # each seat's player's signing key, registered
        self.metadata: list[grpc.aio.Metadata] = []  # per seat, built once (not per call)
        self.seats: list[str] = []
        self.deal = ""
        self.dealer = ""  # the current deal's dealer seat (from DealStarted)
        self.entropy = 0
        self.stopped = False
        self.tasks: set[asyncio.Task[None]] = set()
        self.random = random.Random()
        self.prepared: dict[int, PreparedSeat] = {}

    async def call(self, method: str, request: Any, seat: int = 0) -> Any:
        """One unary call as the seat's player, timed when it finishes inside the window."""
        players = method in ("RegisterPlayer", "RegisterPlayerKey")
        stub = self.connection.players if players else self.connection.tables
        started = time.monotonic()
        try:
            response = await getattr(stub, method)(
                request, metadata=self.metadata[seat] if self.metadata else None, timeout=30
            )
        except grpc.aio.AioRpcError as error:
            self.tally.errors[f"{method} {error.code().name}: {error.details()}"[:160]] += 1
            raise
        finished = time.monotonic()
        window = self.tally.window
        if window[0] <= finished <= window[1]:
            self.tally.latencies_ms.setdefault(method, []).append((finished - started) * 1e3)
        return response

    async def set_up(self) -> None:
        """Register four players and their signing keys, create the table and seat them (at
        most a few tables at once, so that growing the room does not swamp the tables already
        playing)."""
        async with self.setup_gate:
            for index in range(SEATS):
                registration = player_service_pb2.RegisterPlayerRequest(
                    request_id=request_id(), display_name=f"capacity {index}"
                )
                registered = await self.call("RegisterPlayer", registration)
                self.tokens.append(registered.token)
                self.player_ids.append(registered.player.name.removeprefix("players/"))
            self.metadata = [grpc.aio.Metadata(*bearer(token)) for token in self.tokens]
            for index in range(SEATS):
                key = PlayerKey.generate()
                register_key = player_service_pb2.RegisterPlayerKeyRequest(
                    request_id=request_id(),
                    public_key=key.public_key,
                    proof=key.proof(self.player_ids[index]),
                )
                await self.call("RegisterPlayerKey", register_key, index)
                self.keys.append(key)
            self.name = (await self.call("CreateTable", create_table_request())).table.name
            for index in range(SEATS):
                join = table_service_pb2.JoinTableRequest(request_id=request_id(), table=self.name)
                self.seats.append((await self.call("JoinTable", join, index)).seat)

    async def play(self, streams_open: asyncio.Event | None = None) -> None:
        """Set up, open a stream per seat, draw the dealer after a while, then play on."""
        try:
            await self.set_up()
            watchers = [asyncio.create_task(self.watch(seat)) for seat in range(SEATS)]
            if streams_open is not None:
                streams_open.set()
            # New tables start at random moments over four think times, not all at once.
            start = self.random.uniform(0.0, 4 * self.think)
            self.later(start, "ChooseDealer", 0, self.choose_dealer_request())
            await asyncio.gather(*watchers)
        except grpc.aio.AioRpcError:
            pass  # tallied where it failed
        except Exception as error:  # reported, not hidden: the run is then not a clean one
            self.tally.errors[f"{type(error).__name__}: {error}"[:160]] += 1

    def choose_dealer_request(self) -> table_service_pb2.ChooseDealerRequest:
        """Drawing the first dealer."""
        return table_service_pb2.ChooseDealerRequest(request_id=request_id(), table=self.name)

    def pause(self) -> float:
        """A think time: the configured one, give or take a fifth (so tables drift apart)."""
        return self.think * self.random.uniform(0.8, 1.2)

    def later(self, delay: float, method: str, seat: int, request: Any) -> None:
        """Send ``request`` after ``delay`` seconds, without holding up the stream (a timer,
        not a sleeping task: the task starts when the call does)."""

        def act() -> None:
            if not self.stopped:
                self.spawn(self.call(method, request, seat))

        asyncio.get_running_loop().call_later(delay, act)

    def spawn(self, work: Any) -> None:
        """Run ``work`` as a task of this table; its failure is tallied, not raised."""

        async def guarded() -> None:
            with contextlib.suppress(grpc.aio.AioRpcError):  # tallied by ``call``
                await work

        task = asyncio.create_task(guarded())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def watch(self, seat: int) -> None:
        """Seat ``seat``'s stream: every event's delivery lag, and the seat's own moves."""
        request = table_service_pb2.WatchTableRequest(
            table=self.name, after_version=0, batch_events=self.batch_events
        )
        stream = self.connection.tables.WatchTable(request, metadata=self.metadata[seat])
        tally = self.tally
        try:
            async for response in stream:
                events = response.events if self.batch_events else (response.event,)
                window = tally.window
                now = time.monotonic()
                inside = window[0] <= now <= window[1]
                if inside:
                    tally.messages += 1
                for event in events:
                    if inside:
                        stamp = event.record_time
                        lag = time.time() - stamp.seconds - stamp.nanos * 1e-9
                        tally.delivery_ms.append(lag * 1e3)
                    self.on_event(seat, event)
        except grpc.aio.AioRpcError as error:
            if not self.stopped:
                tally.errors[f"WatchTable {error.code().name}: {error.details()}"[:160]] += 1
            raise
        if not self.stopped:
            tally.errors["WatchTable ended"] += 1

    def on_event(self, seat: int, event: Any) -> None:
        """What seat ``seat`` does next, after a think time."""
        kind = event.WhichOneof("payload")
        if kind == "deal_started":
            if seat == 0:
                self.deal, self.entropy = event.deal_started.deal, 0
                self.dealer = event.deal_started.dealer_seat
            entropy = table_service_pb2.ContributeEntropyRequest(
                request_id=request_id(), seat=self.seats[seat], entropy=self.random.randbytes(16)
            )
            self.later(self.pause(), "ContributeEntropy", seat, entropy)
        elif kind == "cards_dealt":
            dealt = event.cards_dealt
            self.spawn(self.arrange(seat, dealt.deal, tuple(dealt.my_cards)))
        elif kind == "reveals_opened":
            self.spawn(self.reveal(seat))
        elif seat != 0:
            return
        elif kind == "entropy_contributed":
            self.entropy += 1
            if self.entropy == SEATS:
                self.cut()
        elif kind == "dealer_chosen":
            self.start_deal_later()
        elif kind == "deal_scored":
            if self.tally.inside():
                self.tally.deals_scored += 1
            self.check_result(event.deal_scored.result, self.deal)
            self.start_deal_later()

    def start_deal_later(self) -> None:
        """The next deal, started by the seat that deals it (any seat may)."""
        start = table_service_pb2.StartDealRequest(request_id=request_id(), table=self.name)
        self.later(self.pause(), "StartDeal", 0, start)

    def cut(self) -> None:
        """The seat on the dealer's right cuts, after a think."""
        table, _, dealer = self.dealer.rpartition("/")
        # right(dealer): the previous seat clockwise, by seat number
        cutter = self.seats.index(f"{table}/{(int(dealer) - 1) % SEATS}")
        request = table_service_pb2.CutDeckRequest(
            request_id=request_id(), seat=self.seats[cutter], position=self.random.randint(1, 51)
        )
        self.later(self.pause(), "CutDeck", cutter, request)

    async def arrange(self, seat: int, deal: str, cards: tuple[str, ...]) -> None:
        """Arrange the hand the stream brought while thinking, then commit and confirm in one
        call. A stream without the hand (the server could not include it) reads it instead."""
        deadline = time.monotonic() + self.pause()
        if not cards:
            request = table_service_pb2.GetMyHandRequest(seat=self.seats[seat])
            cards = tuple((await self.call("GetMyHand", request, seat)).cards)
        number = int(deal.rsplit("/", 1)[1])
        self.prepared[seat] = prepare_seat(
            self.name,
            number,
            self.seats[seat],
            cards,
            solve=False,
            generator=self.random,
            player_id=self.player_ids[seat],
            key=self.keys[seat],
            confirm=True,
        )
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))
        if self.stopped:
            return
        await self.call("CommitArrangement", self.prepared[seat].commit, seat)

    async def reveal(self, seat: int) -> None:
        """Reveal the prepared arrangement after a think."""
        await asyncio.sleep(self.pause())
        if not self.stopped:
            await self.call("RevealArrangement", self.prepared[seat].reveal, seat)

    def check_result(self, result: Any, deal: str) -> None:
        """Check a scored deal's result (from DealScored) against what the seats revealed."""
        revealed = [self.prepared[seat].reveal.nonce for seat in range(SEATS)]
        if (
            not result.scored
            or sum(seat.score_delta for seat in result.seats) != 0
            or [seat.nonce for seat in result.seats] != revealed
            or any(seat.foul for seat in result.seats)
        ):
            self.tally.errors[f"DealScored: {deal} is not the deal the seats played"] += 1

    def stop(self) -> None:
        """Act no more; the caller cancels the play task (which ends the streams)."""
        self.stopped = True
        for task in list(self.tasks):
            task.cancel()
