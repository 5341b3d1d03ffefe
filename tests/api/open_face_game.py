"""Open face over gRPC for the API tests (issue #18): a table created from an open-face preset,
its players placing each street by what GetMyHand shows them, Fantasyland hands set and opened,
and a hidden-information walk over every message received, checked against the deal as the log
tells it once its seed is published."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from api_client import OPERATOR_TOKEN, Player
from google.protobuf.message import Message
from scenarios import Seated, World

from sapsam import fairness
from sapsam.domain.events import DealStarted, Event, SeedRevealed
from sapsam.domain.open_face.deal_decide import FANTASYLAND_SCHEME
from sapsam.domain.open_face.events import CardsPlaced
from sapsam.domain.open_face.table_state import OpenFaceTable, dealt_streets
from sapsam.domain.table import fold
from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.open_face.board import Board, legal_placements
from sapsam.rules.open_face.fantasyland_setting import biggest_row_first
from sapsam_proto.v1 import open_face_pb2, table_pb2, table_service_pb2


def open_face_table(
    world: World, seats: int, preset: str = "ofc_turbo", move_seconds: int | None = None
) -> Seated:
    """A table of ``preset`` with every seat taken and the first dealer drawn."""
    creator = world.player("creator")
    request = table_service_pb2.CreateTableRequest(
        request_id=str(uuid.uuid4()), rule_set_preset=preset, seat_count=seats
    )
    if move_seconds is not None:
        request.move_seconds = move_seconds
    table = world.table_call("CreateTable", request, creator.token).table
    assert table.open_face_rule_set.name == preset and not table.HasField("rule_set")
    players = []
    for index in range(seats):
        player = world.player(f"player {index}")
        join = table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=table.name)
        player.seat = world.table_call("JoinTable", join, player.token).seat
        players.append(player)
    world.table_call(
        "ChooseDealer",
        table_service_pb2.ChooseDealerRequest(request_id=str(uuid.uuid4()), table=table.name),
        players[0].token,
    )
    return Seated(table.name, players)


def table_of(world: World, seated: Seated) -> table_pb2.Table:
    request = table_service_pb2.GetTableRequest(name=seated.table)
    table: table_pb2.Table = world.table_call("GetTable", request, OPERATOR_TOKEN).table
    return table


def by_seat(seated: Seated, seat: str) -> Player:
    return next(player for player in seated.players if player.seat == seat)


def start_and_cut(world: World, seated: Seated) -> None:
    world.dealt(seated)


def rows_of(rows: open_face_pb2.OpenFaceRows) -> Board:
    return Board(
        parse_cards(list(rows.front)), parse_cards(list(rows.middle)), parse_cards(list(rows.back))
    )


def rows_message(front: Any, middle: Any, back: Any) -> open_face_pb2.OpenFaceRows:
    return open_face_pb2.OpenFaceRows(
        front=[str(card) for card in front],
        middle=[str(card) for card in middle],
        back=[str(card) for card in back],
    )


def my_hand(world: World, player: Player) -> table_service_pb2.GetMyHandResponse:
    request = table_service_pb2.GetMyHandRequest(seat=player.seat)
    hand: table_service_pb2.GetMyHandResponse = world.table_call("GetMyHand", request, player.token)
    return hand


def street_to_place(
    hand: table_service_pb2.GetMyHandResponse, player: Player
) -> tuple[Board, tuple[Card, ...]]:
    """The seat's rows and the cards of the current street it has still to place."""
    own = hand.open_face.seats[player.position]
    board = rows_of(own.rows)
    cards = tuple(card for card in parse_cards(list(hand.cards)) if card not in board.cards)
    return board, cards


@dataclass
class Played:
    """What the players kept: their Fantasyland nonces, and every GetMyHand they were sent."""

    by_deal_seat: dict[tuple[int, int], bytes] = field(default_factory=dict)
    hands: list[tuple[int, table_service_pb2.GetMyHandResponse]] = field(default_factory=list)
    tables: list[table_pb2.Table] = field(default_factory=list)
    """Every GetTable answer the players read (the public view)."""

    def hand(self, world: World, player: Player) -> table_service_pb2.GetMyHandResponse:
        hand = my_hand(world, player)
        self.hands.append((player.position, hand))
        return hand


def place(world: World, player: Player, street: int, played: Played) -> Any:
    hand = played.hand(world, player)
    board, cards = street_to_place(hand, player)
    placement = legal_placements(board, cards)[0]
    request = table_service_pb2.PlaceCardsRequest(
        request_id=str(uuid.uuid4()),
        seat=player.seat,
        street=street,
        placement=rows_message(placement.front, placement.middle, placement.back),
    )
    return world.table_call("PlaceCards", request, player.token)


def play_move(world: World, seated: Seated, nonces: Played) -> bool:
    """Make the next move a player owes (the first by GetTable's public view); False when the
    deal is over."""
    table = table_of(world, seated)
    nonces.tables.append(table)
    if table.phase != table_pb2.TABLE_PHASE_PLAYING:
        return False
    deal = table.open_face
    for index, seat in enumerate(deal.seats):
        if seat.fantasyland and not seat.committed:
            player = by_seat(seated, seat.seat)
            hand = nonces.hand(world, player)
            arrangement, _ = biggest_row_first(parse_cards(list(hand.cards)))
            nonce = hashlib.sha256(f"{seated.table} {deal.deal_number} {index}".encode()).digest()[
                :16
            ]
            nonces.by_deal_seat[(deal.deal_number, index)] = nonce
            commitment = fairness.arrangement_commitment(
                seated.table_id,
                deal.deal_number,
                index,
                arrangement,
                nonce,
                scheme=FANTASYLAND_SCHEME,
                player_id=player.name.removeprefix("players/"),
            )
            request = table_service_pb2.CommitFantasylandRequest(
                request_id=str(uuid.uuid4()), seat=player.seat, commitment=commitment
            )
            world.table_call("CommitFantasyland", request, player.token)
            return True
    if deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_PLACING:
        place(world, by_seat(seated, deal.turn_seat), deal.street, nonces)
        return True
    if deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_FANTASYLAND:
        for index, seat in enumerate(deal.seats):
            if seat.fantasyland and not seat.revealed:
                player = by_seat(seated, seat.seat)
                hand = nonces.hand(world, player)
                arrangement, _ = biggest_row_first(parse_cards(list(hand.cards)))
                request = table_service_pb2.RevealFantasylandRequest(
                    request_id=str(uuid.uuid4()),
                    seat=player.seat,
                    arrangement=table_pb2.Arrangement(
                        front=[str(card) for card in arrangement.front],
                        middle=[str(card) for card in arrangement.middle],
                        back=[str(card) for card in arrangement.back],
                    ),
                    nonce=nonces.by_deal_seat[(deal.deal_number, index)],
                )
                world.table_call("RevealFantasyland", request, player.token)
                return True
    raise AssertionError(f"no move to make in {deal}")


def play_set(world: World, seated: Seated, nonces: Played) -> int:
    """Play deals until the set is over; the number of deals played."""
    deals = 0
    while table_of(world, seated).phase != table_pb2.TABLE_PHASE_SERIES_COMPLETE:
        start_and_cut(world, seated)
        deals += 1
        while play_move(world, seated, nonces):
            pass
    return deals


# -- the hidden-information walk ----------------------------------------------------------


@dataclass
class DealTruth:
    """One deal as the log tells it once its seed is published."""

    seed: bytes
    owner: dict[Card, int]
    """Each card dealt, to the seat it was dealt to."""
    placed_by: dict[Card, int]
    """Each card placed face up by a normal seat (CardsPlaced), to that seat."""


def deal_truths(events: list[Event]) -> dict[int, DealTruth]:
    """Every scored deal's cards, from the log and its published seeds."""
    truths: dict[int, DealTruth] = {}
    for index, event in enumerate(events):
        if not isinstance(event, SeedRevealed):
            continue
        state = fold(events[:index])
        assert isinstance(state, OpenFaceTable)
        seed = bytes.fromhex(event.seed)
        owner: dict[Card, int] = {}
        for street in dealt_streets(state, seed):
            for seat, cards in enumerate(street):
                owner.update((card, seat) for card in cards)
        placed_by = {
            card: placed.seat
            for placed in events[:index]
            if isinstance(placed, CardsPlaced) and placed.deal_number == event.deal_number
            for card in parse_cards([*placed.front, *placed.middle, *placed.back])
        }
        truths[event.deal_number] = DealTruth(seed, owner, placed_by)
    return truths


def _cards_in(message: Message, path: str = "") -> Iterator[tuple[str, str]]:
    for descriptor, value in message.ListFields():
        here = f"{path}.{descriptor.name}"
        items = value if descriptor.is_repeated else [value]
        for item in items:
            if isinstance(item, Message):
                yield from _cards_in(item, here)
            elif isinstance(item, str) and len(item) == 2 and item[1] in "cdhs":
                yield here, item


def watch_violations(
    messages: list[Any], observer_seat: int | None, truths: dict[int, DealTruth]
) -> list[str]:
    """What a WatchTable stream showed its watcher too early: a seed before its reveal; a card
    of another seat before the seed but in that seat's own face-up placement (or, once opened,
    a Fantasyland hand); a ``my_cards`` not the watcher's own."""
    problems: list[str] = []
    current: int | None = None
    revealed: set[int] = set()
    for response in messages:
        event = response.event
        kind = event.WhichOneof("payload")
        payload = getattr(event, kind) if kind else None
        if kind == "deal_started":
            current = event.deal_started.deal_number
        if kind == "seed_revealed":
            revealed.add(current or 0)
        if current is None or current in revealed or current not in truths:
            continue
        truth = truths[current]
        if truth.seed in event.SerializeToString():
            problems.append(f"v{event.version} {kind} holds the seed before its reveal")
        for path, text in _cards_in(event):
            (card,) = parse_cards([text])
            owner = truth.owner.get(card)
            if owner == observer_seat and observer_seat is not None:
                continue  # its own
            if kind == "cards_placed" and ".placed." in path:
                placed_seat = int(payload.seat.rsplit("/", 1)[1])
                if truth.placed_by.get(card) == placed_seat and not payload.hidden:
                    continue
            if kind in ("fantasyland_revealed", "fantasyland_committed", "lot_cards"):
                continue
            problems.append(f"v{event.version} {path} = {text} shown to seat {observer_seat}")
    return problems


def hand_violations(
    hands: list[tuple[int, table_service_pb2.GetMyHandResponse]], truths: dict[int, DealTruth]
) -> list[str]:
    """What a GetMyHand showed of another seat: dealt cards before the seed, or any card in its
    rows that it did not place face up itself."""
    problems: list[str] = []
    for seat, hand in hands:
        number = hand.open_face.deal_number
        truth = truths.get(number)
        if truth is None:
            continue
        for card in parse_cards(list(hand.cards)):
            if truth.owner.get(card) != seat:
                problems.append(f"deal {number}: seat {seat} was shown {card} as its own")
        for index, other in enumerate(hand.open_face.seats):
            if index == seat:
                continue
            if other.dealt_cards:
                problems.append(f"deal {number}: seat {seat} saw seat {index}'s dealt cards")
            if other.fantasyland and other.revealed:
                continue  # an opened Fantasyland hand is public (table_violations checks it)
            for card in parse_cards([*other.rows.front, *other.rows.middle, *other.rows.back]):
                if truth.placed_by.get(card) != index:
                    problems.append(f"deal {number}: seat {seat} saw {card} in seat {index}'s rows")
    return problems


def started_deals(events: list[Event]) -> int:
    return sum(isinstance(event, DealStarted) for event in events)


def table_violations(tables: list[table_pb2.Table], truths: dict[int, DealTruth]) -> list[str]:
    """What GetTable's public view showed too early: any dealt card, or a card in a seat's rows
    that the seat did not place face up itself (a Fantasyland hand's rows before it is opened)."""
    problems: list[str] = []
    for table in tables:
        deal = table.open_face
        truth = truths.get(deal.deal_number)
        if truth is None or not deal.deal:
            continue
        for index, seat in enumerate(deal.seats):
            if seat.dealt_cards:
                problems.append(f"deal {deal.deal_number}: seat {index}'s dealt cards public")
            rows = parse_cards([*seat.rows.front, *seat.rows.middle, *seat.rows.back])
            if seat.fantasyland and seat.revealed:
                # Opened: its rows are public (FantasylandRevealed); they are its own cards.
                if any(truth.owner.get(card) != index for card in rows):
                    problems.append(f"deal {deal.deal_number}: seat {index}'s rows not its own")
                continue
            for card in rows:
                if truth.placed_by.get(card) != index:
                    problems.append(
                        f"deal {deal.deal_number}: {card} public in seat {index}'s rows"
                    )
            if seat.fantasyland and not seat.revealed and not seat.rows_hidden:
                problems.append(f"deal {deal.deal_number}: a Fantasyland hand not hidden")
    return problems
