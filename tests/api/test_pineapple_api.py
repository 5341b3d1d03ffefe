"""Pineapple over a real gRPC server (issue #19): a 3-seat deal played through PlaceCards with
its discard commitments and RevealDiscards, verified from the log's export; no discarded card
reaches another seat (WatchTable, GetTable, GetMyHand) before DiscardsRevealed; PlaceCards'
discard commitment and RevealDiscards checked, each bad input refused with a clear reason and
nothing written."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Player, Watcher, bearer, error_reason
from google.protobuf.message import Message
from open_face_game import (
    by_seat,
    my_hand,
    open_face_table,
    rows_message,
    rows_of,
    start_and_cut,
    street_to_place,
    table_of,
)
from scenarios import Seated, World

from sapsam.cli import main
from sapsam.fairness.discard_commitments import discard_commitment
from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.open_face.board import legal_placements, street_moves
from sapsam_proto.v1 import (
    open_face_pb2,
    operator_service_pb2,
    operator_service_pb2_grpc,
    table_pb2,
    table_service_pb2,
)

Kept = dict[int, list[tuple[int, tuple[Card, ...], bytes]]]
"""Per seat, what its client keeps to open later: (street, discarded cards, nonce)."""


def _cards_in(message: Message) -> set[str]:
    found: set[str] = set()
    for descriptor, value in message.ListFields():
        for item in value if descriptor.is_repeated else [value]:
            if isinstance(item, Message):
                found |= _cards_in(item)
            elif isinstance(item, str) and len(item) == 2 and item[1] in "cdhs":
                found.add(item)
    return found


def _street_cards(watcher: Watcher, street: int) -> tuple[Card, ...]:
    """The seat's cards of ``street`` as its own WatchTable stream sent them (my_cards)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for message in list(watcher.messages):
            dealt = message.event.street_dealt
            if message.event.HasField("street_dealt") and dealt.street == street:
                return parse_cards(list(dealt.my_cards))
        time.sleep(0.01)
    raise AssertionError(f"street {street} never reached {watcher.observer}")


def _place(
    world: World,
    seated: Seated,
    player: Player,
    street: int,
    watcher: Watcher,
    kept: Kept,
    seen: list[tuple[int, Message]],
) -> None:
    hand = my_hand(world, player)
    seen.append((player.position, hand))
    board = rows_of(hand.open_face.seats[player.position].rows)
    dealt = _street_cards(watcher, street)
    placement, thrown = street_moves(board, dealt, 1 if street else 0)[0]
    request = table_service_pb2.PlaceCardsRequest(
        request_id=str(uuid.uuid4()),
        seat=player.seat,
        street=street,
        placement=rows_message(*placement.rows),
    )
    if thrown:
        nonce = os.urandom(16)
        request.discard_commitment = discard_commitment(
            seated.table_id,
            hand.open_face.deal_number,
            player.position,
            player.name.removeprefix("players/"),
            street,
            thrown,
            nonce,
        )
        kept.setdefault(player.position, []).append((street, thrown, nonce))
    world.table_call("PlaceCards", request, player.token)


def _reveal(player: Player, kept: Kept) -> table_service_pb2.RevealDiscardsRequest:
    return table_service_pb2.RevealDiscardsRequest(
        request_id=str(uuid.uuid4()),
        seat=player.seat,
        discards=[
            table_service_pb2.DiscardOpening(cards=[str(card) for card in cards], nonce=nonce)
            for _, cards, nonce in kept.get(player.position, [])
        ],
    )


def _verified_export(world: World, table: str, tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "table.jsonl"
    export = ["audit", "export", "--table", table, "-o", str(path)]
    assert main([*export, "--database-url", world.database_url]) == 0
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["audit", "verify", str(path), "--json"])
    report: dict[str, Any] = json.loads(out.getvalue())
    return report


def test_a_pineapple_deal_over_grpc_hides_each_discard_and_verifies(
    world: World, tmp_path: Path
) -> None:
    seated = open_face_table(world, 3, "pineapple")
    assert table_of(world, seated).open_face_rule_set.street_discards == 1
    watchers = [
        Watcher(world.api, seated.table, player.token, observer=player.seat)
        for player in seated.players
    ]
    spectator = Watcher(world.api, seated.table, OPERATOR_TOKEN)
    start_and_cut(world, seated)
    kept: Kept = {}
    seen: list[tuple[int, Message]] = []  # (seat, message) each seat's caller was answered
    public: list[Message] = []
    while True:
        table = table_of(world, seated)
        public.append(table)
        deal = table.open_face
        if deal.phase != open_face_pb2.OPEN_FACE_DEAL_PHASE_PLACING:
            break
        player = by_seat(seated, deal.turn_seat)
        _place(world, seated, player, deal.street, watchers[player.position], kept, seen)
    assert deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_DISCARDS, deal
    assert deal.HasField("deadline_time") or not table.open_face_rule_set.HasField("move_seconds")
    assert [seat.discards_made for seat in deal.seats] == [4, 4, 4]
    assert not any(seat.discards for seat in deal.seats)
    for player in seated.players:
        hand = my_hand(world, player)
        seen.append((player.position, hand))
        # GetMyHand shows the seat its own discards (4: one a street after the first).
        mine = {str(card) for _, cards, _ in kept.get(player.position, []) for card in cards}
        assert len(hand.my_discards) == 4 and mine <= set(hand.my_discards), hand
    # A reveal that does not match its commitment is refused and writes nothing.
    first = seated.players[0]
    if kept.get(first.position):
        wrong = _reveal(first, kept)
        wrong.discards[0].nonce = bytes(16)
        before = world.event_count()
        with pytest.raises(grpc.RpcError) as raised:
            world.table_call("RevealDiscards", wrong, first.token)
        assert error_reason(raised.value)[1] == "COMMITMENT_MISMATCH"
        assert world.event_count() == before
    for player in seated.players:
        if kept.get(player.position):
            world.table_call("RevealDiscards", _reveal(player, kept), player.token)
    final = table_of(world, seated)
    assert final.phase != table_pb2.TABLE_PHASE_PLAYING
    # The export of the log verifies offline, the discards' check among the rest.
    report = _verified_export(world, seated.table, tmp_path)
    assert report["ok"] is True, report
    # Hidden information: no seat's discard in anything another seat (or a spectator) was
    # sent before its DiscardsRevealed.
    discards = {
        seat: {str(card) for _, cards, _ in rows for card in cards} for seat, rows in kept.items()
    }
    logged = len(world.api.logged_events(seated.table))
    for watcher in [*watchers, spectator]:
        watcher.wait_for(lambda w=watcher: len(w.messages) >= logged)
    for watcher in [*watchers, spectator]:
        own = int(watcher.observer.rsplit("/", 1)[1]) if watcher.observer else None
        dealt = False  # the dealer's lot, before the deal, is drawn from another deck
        for message in watcher.messages:
            if message.event.HasField("discards_revealed"):
                break
            dealt = dealt or message.event.HasField("street_dealt")
            if not dealt:
                continue
            shown = _cards_in(message)
            for seat, cards in discards.items():
                if seat != own:
                    assert not shown & cards, (watcher.observer, seat, message)
        revealed = [m for m in watcher.messages if m.event.HasField("discards_revealed")]
        assert len(revealed) == len(kept)
        committed = [m for m in watcher.messages if m.event.HasField("discard_committed")]
        assert len(committed) == sum(len(rows) for rows in kept.values())
        assert all(len(m.event.discard_committed.commitment) == 32 for m in committed)
    for seat, message in seen:
        shown = _cards_in(message)
        for other, cards in discards.items():
            if other != seat:
                assert not shown & cards, (seat, other)
    for message in public:
        assert not _cards_in(message) & set().union(*discards.values())


def _refused(world: World, method: str, request: object, token: str) -> tuple[object, str, str]:
    before = world.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        world.table_call(method, request, token)
    code, reason, _, bad_request = error_reason(raised.value)
    assert world.event_count() == before, f"{method} wrote on a refusal"
    field = bad_request.field_violations[0].field if bad_request else ""
    return code, reason, field


def test_discard_fields_are_checked_and_a_refusal_writes_nothing(world: World) -> None:
    seated = open_face_table(world, 2, "ofc_classic")
    start_and_cut(world, seated)
    on_turn = by_seat(seated, table_of(world, seated).open_face.turn_seat)
    board, cards = street_to_place(my_hand(world, on_turn), on_turn)
    good = rows_message(*legal_placements(board, cards)[0].rows)
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    precondition = grpc.StatusCode.FAILED_PRECONDITION

    def place(commitment: bytes) -> table_service_pb2.PlaceCardsRequest:
        return table_service_pb2.PlaceCardsRequest(
            request_id=str(uuid.uuid4()),
            seat=on_turn.seat,
            street=0,
            placement=good,
            discard_commitment=commitment,
        )

    # A commitment of the wrong size, before anything else; one on a street that discards
    # nothing (every classic street).
    for size in (1, 31, 33, 100_000):
        assert _refused(world, "PlaceCards", place(bytes(size)), on_turn.token) == (
            invalid,
            "BAD_COMMITMENT",
            "discard_commitment",
        )
    assert _refused(world, "PlaceCards", place(bytes(32)), on_turn.token) == (
        invalid,
        "INVALID_ARGUMENT",
        "discard_commitment",
    )

    def reveal(*openings: table_service_pb2.DiscardOpening) -> object:
        return table_service_pb2.RevealDiscardsRequest(
            request_id=str(uuid.uuid4()), seat=on_turn.seat, discards=list(openings)
        )

    opening = table_service_pb2.DiscardOpening(cards=["2c"], nonce=bytes(16))
    cases = [
        (reveal(*[opening] * 13), (invalid, "INVALID_ARGUMENT", "discards")),
        (
            reveal(table_service_pb2.DiscardOpening(cards=["Zz"], nonce=bytes(16))),
            (invalid, "BAD_CARDS", "discards.cards"),
        ),
        (
            reveal(table_service_pb2.DiscardOpening(cards=["2c", "3c", "4c", "5c"])),
            (invalid, "BAD_CARDS", "discards.cards"),
        ),
        # Well formed, but this seat committed no discard (a classic deal discards nothing).
        (reveal(opening), (precondition, "NO_COMMITMENT", "")),
        (reveal(), (precondition, "NO_COMMITMENT", "")),
    ]
    for request, expected in cases:
        assert _refused(world, "RevealDiscards", request, on_turn.token) == expected, request
    # The right placement with no commitment still goes through.
    world.table_call("PlaceCards", place(b""), on_turn.token)


def test_discards_not_opened_in_time_are_opened_by_the_sweeper(world: World) -> None:
    seated = open_face_table(world, 2, "pineapple", move_seconds=2)
    watchers = [
        Watcher(world.api, seated.table, player.token, observer=player.seat)
        for player in seated.players
    ]
    start_and_cut(world, seated)
    kept: Kept = {}
    seen: list[tuple[int, Message]] = []
    while (deal := table_of(world, seated).open_face).phase == (
        open_face_pb2.OPEN_FACE_DEAL_PHASE_PLACING
    ):
        player = by_seat(seated, deal.turn_seat)
        try:
            _place(world, seated, player, deal.street, watchers[player.position], kept, seen)
        except grpc.RpcError as error:  # the sweeper placed for a slow seat first
            assert error_reason(error)[1] in ("NOT_YOUR_TURN", "WRONG_PHASE"), error
    assert deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_DISCARDS and deal.HasField(
        "deadline_time"
    )
    # Nobody opens: past the deadline the sweeper opens each seat's discards from the seed.
    deadline = time.monotonic() + 20
    while table_of(world, seated).phase == table_pb2.TABLE_PHASE_PLAYING:
        assert time.monotonic() < deadline, "the sweeper did not open the discards"
        time.sleep(0.1)
    # The stream delivers the openings on its own thread, apart from the GetTable that showed
    # the deal over: waited for, not read at once.
    watchers[0].wait_for(
        lambda: (
            sum(m.event.HasField("discards_revealed") for m in watchers[0].messages) >= len(kept)
        )
    )
    for watcher in watchers:
        watcher.cancel()
    opened = [m for m in watchers[0].messages if m.event.HasField("discards_revealed")]
    assert len(opened) == len(kept) and opened
    for message in opened:
        revealed = message.event.discards_revealed
        seat = int(revealed.seat.rsplit("/", 1)[1])
        assert [list(d.cards) for d in revealed.discards] == [
            [str(card) for card in cards] for _, cards, _ in kept[seat]
        ]
        assert all(d.nonce == b"" for d in revealed.discards)


def test_the_operator_forces_a_seats_discards_open(world: World) -> None:
    """ForceSeatTimeout once every hand is complete (no deadline passed): the seat that has not
    opened its discards has them opened from the seed (every nonce empty), recorded as the
    operator's; the deal then ends. A seat that opened its own is not timed out."""
    seated = open_face_table(world, 2, "pineapple")
    watchers = [
        Watcher(world.api, seated.table, player.token, observer=player.seat)
        for player in seated.players
    ]
    start_and_cut(world, seated)
    kept: Kept = {}
    seen: list[tuple[int, Message]] = []
    while (deal := table_of(world, seated).open_face).phase == (
        open_face_pb2.OPEN_FACE_DEAL_PHASE_PLACING
    ):
        player = by_seat(seated, deal.turn_seat)
        _place(world, seated, player, deal.street, watchers[player.position], kept, seen)
    for watcher in watchers:
        watcher.cancel()
    assert deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_DISCARDS
    first, second = seated.players
    world.table_call("RevealDiscards", _reveal(first, kept), first.token)
    operators = operator_service_pb2_grpc.OperatorServiceStub(world.api.channel)

    def force(player: Player) -> Any:
        request = operator_service_pb2.ForceSeatTimeoutRequest(
            request_id=str(uuid.uuid4()), table=seated.table, seat=player.position
        )
        return operators.ForceSeatTimeout(request, metadata=bearer(OPERATOR_TOKEN))

    before = world.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        force(first)
    assert error_reason(raised.value)[1] == "NOTHING_TIMED_OUT"  # as for any seat not awaited
    assert world.event_count() == before
    forced = force(second)
    assert forced.table.phase != table_pb2.TABLE_PHASE_PLAYING
    opened = [
        event
        for event in world.api.logged_events(seated.table)
        if type(event).__name__ == "DiscardsRevealed"
    ]
    assert [(event.seat, event.timed_out_by) for event in opened] == [
        (first.position, None),
        (second.position, "operator"),
    ]
    assert opened[1].cards == tuple(
        " ".join(str(card) for card in cards) for _, cards, _ in kept[second.position]
    )
    assert all(nonce == "" for nonce in opened[1].nonces)
