"""A Fantasyland over gRPC (issue #18): a seat earns it (the first deal's seed is one under which
it can set queens or better in front, and it places toward those rows), then sets its 13 cards
face down with CommitFantasyland while the other seat places, and opens them with
RevealFantasyland at the end. Meanwhile the other seat's placements are shown to it alone
(CardsPlaced.hidden in everyone else's copy, rows_hidden in their GetMyHand) and to everyone with
the FantasylandCommitted that ends the wait (shown_rows); nothing else leaks, and the whole set
verifies from the log's export. A player with a key signs its Fantasyland commit and reveal
(docs/fairness.md §19).

The server deals from seeds as always; only the first deal's seed is chosen, through the table
service's seed source (``TableRunner.deal_seeds``), so that the deal is one that can earn a
Fantasyland. It is committed, revealed and verified like any other."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest
from api_client import OPERATOR_TOKEN, Watcher
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from open_face_game import (
    Played,
    by_seat,
    deal_truths,
    hand_violations,
    open_face_table,
    place,
    play_move,
    play_set,
    rows_message,
    street_to_place,
    table_of,
    table_violations,
    watch_violations,
)
from scenarios import Seated, World
from serving import TEST_SERVER_KEYS, serving
from test_open_face_api import _verified_export
from test_open_face_signatures_api import _player_id, _public, _refused, _register

from sapsam import fairness
from sapsam.api.server import RunningServer
from sapsam.audit import Requester, verify_export, write_lines
from sapsam.audit import database as audit_database
from sapsam.cli.bootstrap import build_services
from sapsam.domain.events import DealScored
from sapsam.domain.open_face.events import (
    FantasylandCommitted,
    FantasylandRevealed,
    FantasylandRevealsOpened,
    FantasylandTimedOut,
)
from sapsam.fairness import player_keys
from sapsam.fairness.fantasyland_deals import CardRows, earning_seed
from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.open_face.board import Placement, Row
from sapsam.rules.open_face.fantasyland_setting import biggest_row_first
from sapsam.rules.open_face.parameters import CLASSIC_STREETS
from sapsam_proto.v1 import open_face_pb2, table_pb2, table_service_pb2

CUT = 10
MOVE_SECONDS = 4
"""A placement's time in the timeout test: the normal seat's whole hand is placed well within
it, the Fantasyland hand is then waited for that long."""


@pytest.fixture(scope="module")
def seeded_server(module_database_url: str) -> Iterator[tuple[RunningServer, Any]]:
    """The full service, its table service at hand to choose a deal's seed."""
    services = build_services(
        module_database_url, pool_size=8, server_keys=TEST_SERVER_KEYS, checkpoint_seconds=0.2
    )
    tables = services.table_service._tables  # type: ignore[attr-defined]
    with serving(module_database_url, services=services) as running:
        yield running, tables


@pytest.fixture
def fl_world(seeded_server: tuple[RunningServer, Any], module_database_url: str) -> Iterator[World]:
    running, _ = seeded_server
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        yield World(channel, module_database_url)


def _earning_seed(table_id: uuid.UUID, dealer: int, seat: int) -> tuple[bytes, CardRows]:
    """A first-deal seed under which ``seat`` can set a Fantasyland-earning hand, and its rows."""
    return earning_seed(
        table_id, dealer, seat, streets=CLASSIC_STREETS, cut=CUT, label="fantasyland"
    )


def _cut(world: World, seated: Seated) -> None:
    world.started(seated)
    cutter = world.cutter(seated)
    world.table_call(
        "CutDeck",
        table_service_pb2.CutDeckRequest(
            request_id=str(uuid.uuid4()), seat=cutter.seat, position=CUT
        ),
        cutter.token,
    )


def _place_toward(
    world: World, seated: Seated, rows: tuple[tuple[Card, ...], ...], seat: int, played: Played
) -> None:
    """Play the deal: ``seat`` places each card into its row of ``rows``, the other the first
    legal placement."""
    while True:
        table = table_of(world, seated)
        if table.phase != table_pb2.TABLE_PHASE_PLAYING:
            return
        player = by_seat(seated, table.open_face.turn_seat)
        if player.position != seat:
            play_move(world, seated, played)
            continue
        _, cards = street_to_place(played.hand(world, player), player)
        placement = Placement.of_rows(
            cards, [next(Row(index) for index in range(3) if card in rows[index]) for card in cards]
        )
        world.table_call(
            "PlaceCards",
            table_service_pb2.PlaceCardsRequest(
                request_id=str(uuid.uuid4()),
                seat=player.seat,
                street=table.open_face.street,
                placement=rows_message(*placement.rows),
            ),
            player.token,
        )


def _play_an_earning_deal(
    world: World, tables: Any, seated: Seated, played: Played
) -> tuple[int, int]:
    """Deal 1 dealt from a seed under which the seat after the dealer can set a hand that earns
    Fantasyland, and played so that it does (the other seat places its first legal placements):
    the dealer and that seat."""
    dealer = int(table_of(world, seated).dealer_seat.rsplit("/", 1)[1])
    earner = (dealer + 1) % 2
    seed, rows = _earning_seed(seated.table_id, dealer, earner)
    tables.deal_seeds = lambda: seed
    try:
        _cut(world, seated)
    finally:
        tables.deal_seeds = fairness.new_seed
    _place_toward(world, seated, rows, earner, played)
    return dealer, earner


def test_a_fantasyland_is_set_face_down_while_the_other_seat_places_hidden(
    fl_world: World, seeded_server: tuple[RunningServer, Any], tmp_path: Path
) -> None:
    world = fl_world
    _, tables = seeded_server
    seated = open_face_table(world, 2, "ofc_classic")
    watchers = {
        player.position: Watcher(world.api, seated.table, player.token, observer=player.seat)
        for player in seated.players
    }
    spectator = Watcher(world.api, seated.table, OPERATOR_TOKEN)
    played = Played()
    dealer, earner = _play_an_earning_deal(world, tables, seated, played)

    # Deal 2: the earner plays Fantasyland; the button stayed.
    _cut(world, seated)
    table = table_of(world, seated)
    assert int(table.dealer_seat.rsplit("/", 1)[1]) == dealer
    deal = table.open_face
    assert deal.seats[earner].fantasyland and not deal.seats[earner].committed
    fantasy = by_seat(seated, deal.seats[earner].seat)
    normal = by_seat(seated, deal.seats[1 - earner].seat)
    assert len(played.hand(world, fantasy).cards) == 13
    # The normal seat places first, while the Fantasyland hand is being set: hidden from all
    # but itself.
    assert deal.turn_seat == normal.seat
    table_version = table.version
    _, cards = street_to_place(played.hand(world, normal), normal)
    world.table_call(
        "PlaceCards",
        table_service_pb2.PlaceCardsRequest(
            request_id=str(uuid.uuid4()),
            seat=normal.seat,
            street=0,
            placement=rows_message(cards[:1], cards[1:3], cards[3:]),
        ),
        normal.token,
    )
    assert table_of(world, seated).open_face.seats[1 - earner].rows_hidden
    assert played.hand(world, fantasy).open_face.seats[1 - earner].rows_hidden
    own_view = played.hand(world, normal).open_face.seats[1 - earner]
    assert not own_view.rows_hidden and len(own_view.rows.back) == 2
    for watcher in [*watchers.values(), spectator]:
        watcher.wait_for(lambda w=watcher: any(m.event.version > table_version for m in w.messages))
    placed = {
        position: next(
            m.event.cards_placed
            for m in watcher.messages
            if m.event.version > table_version and m.event.HasField("cards_placed")
        )
        for position, watcher in [*watchers.items(), (None, spectator)]
    }
    assert placed[1 - earner].placed.back and not placed[1 - earner].hidden
    for position in (earner, None):
        assert placed[position].hidden and not placed[position].placed.back  # type: ignore[index]
    # The Fantasyland hand is set: the wait is over, its rows shown to all with the commitment.
    play_move(world, seated, played)
    committed_version = table_of(world, seated).version
    spectator.wait_for(
        lambda: any(m.event.version >= committed_version for m in spectator.messages)
    )
    committed = next(
        m.event.fantasyland_committed
        for m in spectator.messages
        if m.event.HasField("fantasyland_committed")
    )
    assert [entry.seat for entry in committed.shown_rows] == [normal.seat]
    assert len(committed.shown_rows[0].rows.back) == 2
    assert not table_of(world, seated).open_face.seats[1 - earner].rows_hidden
    # The rest of the deal and of the set.
    while play_move(world, seated, played):
        pass
    play_set(world, seated, played)
    for watcher in [*watchers.values(), spectator]:
        watcher.wait(30)
    events = world.api.logged_events(seated.table)
    assert any(isinstance(event, FantasylandCommitted) for event in events)
    assert any(isinstance(event, FantasylandRevealed) for event in events)
    revealed = next(
        m.event.fantasyland_revealed
        for m in spectator.messages
        if m.event.HasField("fantasyland_revealed")
    )
    assert len(revealed.rows.front) == 3 and len(revealed.nonce) == 16
    truths = deal_truths(events)
    for position, watcher in watchers.items():
        assert watch_violations(watcher.messages, position, truths) == []
    assert watch_violations(spectator.messages, None, truths) == []
    assert hand_violations(played.hands, truths) == []
    assert table_violations(played.tables, truths) == []
    assert played.tables
    report = _verified_export(world, seated.table, tmp_path)
    scored = [event for event in events if isinstance(event, DealScored)]
    assert report["ok"] is True, report
    assert report["deals_verified"] == len(scored) >= 3


def test_a_fantasyland_not_set_in_time_is_set_by_the_server(
    fl_world: World, seeded_server: tuple[RunningServer, Any], tmp_path: Path
) -> None:
    world = fl_world
    _, tables = seeded_server
    seated = open_face_table(world, 2, "ofc_classic", move_seconds=MOVE_SECONDS)
    spectator = Watcher(world.api, seated.table, OPERATOR_TOKEN)
    played = Played()
    _, earner = _play_an_earning_deal(world, tables, seated, played)
    _cut(world, seated)
    deal = table_of(world, seated).open_face
    assert deal.seats[earner].fantasyland
    # The normal seat plays its whole hand; the Fantasyland seat never sets its own.
    normal = by_seat(seated, deal.seats[1 - earner].seat)
    while (turn := table_of(world, seated).open_face).turn_seat == normal.seat:
        place(world, normal, turn.street, played)
    table = table_of(world, seated)
    assert table.phase == table_pb2.TABLE_PHASE_PLAYING and not table.open_face.turn_seat
    # Past the first street's deadline the sweeper sets it, opens it with the seed, and scores.
    deadline = time.monotonic() + MOVE_SECONDS + 20
    while table_of(world, seated).deal_number == 2 and table_of(world, seated).phase == (
        table_pb2.TABLE_PHASE_PLAYING
    ):
        assert time.monotonic() < deadline, "the sweeper did not set the Fantasyland hand"
        time.sleep(0.2)
    events = world.api.logged_events(seated.table)
    timed_out = [event for event in events if isinstance(event, FantasylandTimedOut)]
    assert [event.seat for event in timed_out] == [earner]
    revealed = [event for event in events if isinstance(event, FantasylandRevealed)]
    assert len(revealed) == 1 and revealed[0].nonce == ""
    spectator.wait_for(
        lambda: any(m.event.HasField("fantasyland_timed_out") for m in spectator.messages)
    )
    spectator.cancel()
    truths = deal_truths(events)
    assert watch_violations(spectator.messages, None, truths) == []
    report = _verified_export(world, seated.table, tmp_path)
    assert report["ok"] is True, report


def test_a_committed_fantasyland_never_opened_is_timed_out_dead(
    fl_world: World, seeded_server: tuple[RunningServer, Any], tmp_path: Path
) -> None:
    # The hand is set (committed) in time, but its player never opens it: it cannot hold the
    # table. The reveals are due move_seconds after the last hand is placed; past that the
    # sweeper times the hand out, dead (it cannot be opened without its nonce), and scores.
    world = fl_world
    _, tables = seeded_server
    seated = open_face_table(world, 2, "ofc_classic", move_seconds=MOVE_SECONDS)
    spectator = Watcher(world.api, seated.table, OPERATOR_TOKEN)
    played = Played()
    _, earner = _play_an_earning_deal(world, tables, seated, played)
    _cut(world, seated)
    assert table_of(world, seated).open_face.seats[earner].fantasyland
    # play_move commits the Fantasyland hand first, then places the normal seat's streets.
    while table_of(world, seated).open_face.phase != open_face_pb2.OPEN_FACE_DEAL_PHASE_FANTASYLAND:
        assert play_move(world, seated, played)
    events = world.api.logged_events(seated.table)
    [opened] = [event for event in events if isinstance(event, FantasylandRevealsOpened)]
    assert opened.seats == (earner,) and opened.deadline_ms is not None
    assert table_of(world, seated).deadline_time.ToMilliseconds() == opened.deadline_ms
    deadline = time.monotonic() + MOVE_SECONDS + 20
    while table_of(world, seated).deal_number == 2 and table_of(world, seated).phase == (
        table_pb2.TABLE_PHASE_PLAYING
    ):
        assert time.monotonic() < deadline, "the sweeper did not time the hand out"
        time.sleep(0.2)
    events = world.api.logged_events(seated.table)
    assert [e.seat for e in events if isinstance(e, FantasylandTimedOut)] == [earner]
    [revealed] = [event for event in events if isinstance(event, FantasylandRevealed)]
    assert revealed.nonce == "" and revealed.dead
    scored = [event for event in events if isinstance(event, DealScored)][-1]
    assert scored.deal_number == 2 and scored.fouls[earner]
    spectator.wait_for(
        lambda: any(m.event.HasField("fantasyland_reveals_opened") for m in spectator.messages)
    )
    spectator.cancel()
    assert watch_violations(spectator.messages, None, deal_truths(events)) == []
    report = _verified_export(world, seated.table, tmp_path)
    assert report["ok"] is True, report


def test_a_signed_fantasyland_is_committed_and_opened_and_the_deal_verifies(
    fl_world: World, seeded_server: tuple[RunningServer, Any]
) -> None:
    """docs/fairness.md §19: once the earner has a key, CommitFantasyland and RevealFantasyland
    must be signed (SIGNATURE_REQUIRED; BAD_SIGNATURE for a closed-game commit's signature of the
    same commitment, whose tag differs; nothing written), are recorded with the signature, and
    the Fantasyland deal's export verifies it."""
    world = fl_world
    _, tables = seeded_server
    seated = open_face_table(world, 2, "ofc_classic")
    played = Played()
    _, earner = _play_an_earning_deal(world, tables, seated, played)
    _cut(world, seated)
    deal = table_of(world, seated).open_face
    number = deal.deal_number
    fantasy = by_seat(seated, deal.seats[earner].seat)
    key = Ed25519PrivateKey.generate()
    _register(world, fantasy, key)
    arrangement, _ = biggest_row_first(parse_cards(list(played.hand(world, fantasy).cards)))
    nonce = os.urandom(16)
    player_id = _player_id(fantasy)
    commitment = fairness.arrangement_commitment(
        seated.table_id, number, earner, arrangement, nonce, scheme=2, player_id=player_id
    )

    def signed(message: bytes) -> table_service_pb2.PlayerSignature:
        return table_service_pb2.PlayerSignature(
            public_key=_public(key), signature=key.sign(message)
        )

    def commit(signature: table_service_pb2.PlayerSignature | None = None) -> None:
        request = table_service_pb2.CommitFantasylandRequest(
            request_id=str(uuid.uuid4()),
            seat=fantasy.seat,
            commitment=commitment,
            signature=signature,
        )
        world.table_call("CommitFantasyland", request, fantasy.token)

    code, reason, _ = _refused(world, commit)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SIGNATURE_REQUIRED")
    closed = player_keys.commit_message(seated.table_id, number, earner, player_id, 2, commitment)
    code, reason, fields = _refused(world, lambda: commit(signed(closed)))
    assert (code, reason, fields) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_SIGNATURE",
        ["signature.signature"],
    )
    commit(
        signed(
            player_keys.commit_message(
                seated.table_id,
                number,
                earner,
                player_id,
                2,
                commitment,
                tag=player_keys.TAG_FANTASYLAND_COMMIT_SIGNATURE,
            )
        )
    )
    while table_of(world, seated).open_face.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_PLACING:
        play_move(world, seated, played)  # the normal seat, which has no key

    def reveal(signature: table_service_pb2.PlayerSignature | None = None) -> None:
        request = table_service_pb2.RevealFantasylandRequest(
            request_id=str(uuid.uuid4()),
            seat=fantasy.seat,
            arrangement=table_pb2.Arrangement(
                front=[str(card) for card in arrangement.front],
                middle=[str(card) for card in arrangement.middle],
                back=[str(card) for card in arrangement.back],
            ),
            nonce=nonce,
            signature=signature,
        )
        world.table_call("RevealFantasyland", request, fantasy.token)

    code, reason, _ = _refused(world, reveal)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SIGNATURE_REQUIRED")
    reveal(
        signed(
            player_keys.reveal_message(
                seated.table_id,
                number,
                earner,
                player_id,
                arrangement,
                nonce,
                tag=player_keys.TAG_FANTASYLAND_REVEAL_SIGNATURE,
            )
        )
    )
    events = world.api.logged_events(seated.table)
    signed_moves = [
        event
        for event in events
        if isinstance(event, FantasylandCommitted | FantasylandRevealed)
        and event.deal_number == number
    ]
    assert [type(event) for event in signed_moves] == [FantasylandCommitted, FantasylandRevealed]
    assert all(event.player_key == _public(key).hex() for event in signed_moves)
    assert all(event.signature and event.signing_scheme == 2 for event in signed_moves)
    with psycopg.connect(world.database_url, autocommit=True) as connection:
        export = audit_database.export_deal(
            connection, seated.table_id, number, Requester.operator()
        )
    report = verify_export(list(write_lines(export)))
    assert report.ok, report.failed_names()
    passed = {check.name for check in report.checks if not check.failed}
    assert f"player_signature[{earner}]" in passed
