"""Open face over a real gRPC server (issue #18): whole sets for 2, 3 and 4 seats played through
PlaceCards (and the Fantasyland commit and reveal when one is earned), every deal verified from the
log's export; WatchTable shows every face-up placement to everyone and no other seat's card
before the seed; GetMyHand shows a seat its own cards and rows; bad input is refused with a clear
reason and writes nothing; a seat that lets its time run out is placed for by the sweeper."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Watcher, error_reason
from open_face_game import (
    Played,
    by_seat,
    deal_truths,
    hand_violations,
    my_hand,
    open_face_table,
    play_move,
    play_set,
    rows_message,
    start_and_cut,
    street_to_place,
    table_of,
    table_violations,
    watch_violations,
)
from scenarios import World

from sapsam.cli import main
from sapsam.domain.events import DealScored, SeriesCompleted
from sapsam.domain.open_face.events import CardsPlaced, StreetDealt
from sapsam.rules.cards import parse_cards
from sapsam.rules.open_face.board import legal_placements
from sapsam_proto.v1 import (
    open_face_pb2,
    operator_service_pb2,
    operator_service_pb2_grpc,
    table_pb2,
    table_service_pb2,
)


def _verified_export(world: World, table: str, tmp_path: Path) -> dict[str, object]:
    """``sapsam audit export`` of the table's log, then ``sapsam audit verify`` of it."""
    path = tmp_path / "table.jsonl"
    code = main(
        [
            "audit",
            "export",
            "--table",
            table,
            "-o",
            str(path),
            "--database-url",
            world.database_url,
        ]
    )
    assert code == 0
    report_path = tmp_path / "report.json"
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["audit", "verify", str(path), "--json"])
    report_path.write_text(out.getvalue())
    report: dict[str, object] = json.loads(out.getvalue())
    return report


@pytest.mark.parametrize(
    ("seats", "preset"), [(2, "ofc_classic"), (3, "ofc_turbo"), (4, "ofc_turbo")]
)
def test_a_whole_set_over_grpc_verifies_from_the_log(
    world: World, tmp_path: Path, seats: int, preset: str
) -> None:
    seated = open_face_table(world, seats, preset)
    watchers = [
        Watcher(world.api, seated.table, player.token, observer=player.seat)
        for player in seated.players
    ]
    spectator = Watcher(world.api, seated.table, OPERATOR_TOKEN)
    played = Played()
    deals = play_set(world, seated, played)
    for watcher in [*watchers, spectator]:
        watcher.wait(30)
    events = world.api.logged_events(seated.table)
    scored = [event for event in events if isinstance(event, DealScored)]
    assert len(scored) == deals >= seats
    assert sum(isinstance(event, SeriesCompleted) for event in events) == 1
    final = table_of(world, seated)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    assert sum(seat.series_total for seat in final.seats) == 0
    # The export of the log verifies offline: every deal re-decided from its published seed.
    report = _verified_export(world, seated.table, tmp_path)
    assert report["ok"] is True, report
    assert report["deals_verified"] == deals
    # Every watcher got every event, the score of each deal, and nothing it may not see yet.
    truths = deal_truths(events)
    for watcher in watchers:
        assert [message.event.version for message in watcher.messages] == list(
            range(1, len(events) + 1)
        )
        seat = int(watcher.observer.rsplit("/", 1)[1])
        assert watch_violations(watcher.messages, seat, truths) == []
    assert watch_violations(spectator.messages, None, truths) == []
    assert hand_violations(played.hands, truths) == []
    assert table_violations(played.tables, truths) == []
    assert played.tables
    placed = [m.event.cards_placed for m in spectator.messages if m.event.HasField("cards_placed")]
    logged = [event for event in events if isinstance(event, CardsPlaced)]
    assert len(placed) == len(logged) > 0
    if not any(p.hidden for p in placed):  # no Fantasyland hand was set meanwhile
        for message, event in zip(placed, logged, strict=True):
            assert list(message.placed.back) == list(event.back)
    scores = [
        m.event.deal_scored.open_face for m in spectator.messages if m.event.HasField("deal_scored")
    ]
    assert [list(s.seats) and [seat.score_delta for seat in s.seats] for s in scores] == [
        list(event.totals) for event in scored
    ]
    # GetDealResult: each deal's record, every card and the seed public once scored.
    for event in scored:
        record = world.table_call(
            "GetDealResult",
            table_service_pb2.GetDealResultRequest(
                name=f"{seated.table}/deals/{event.deal_number}"
            ),
            OPERATOR_TOKEN,
        ).result
        assert record.seed_revealed and record.scored and len(record.seed) == 32
        assert [seat.score_delta for seat in record.seats] == list(event.totals)
        assert [seat.foul for seat in record.seats] == list(event.fouls)
        for seat, rows in zip(record.seats, event.arrangements, strict=True):
            assert " ".join(seat.arrangement.back) == (rows or "").split("|")[2]
            assert len(seat.dealt_cards) >= 13
            placed = {*seat.arrangement.front, *seat.arrangement.middle, *seat.arrangement.back}
            assert placed <= set(seat.dealt_cards)
    # Each seat's holder was sent its own cards of each street, nobody else any.
    for watcher in watchers:
        own = [
            m.event.street_dealt.my_cards
            for m in watcher.messages
            if m.event.HasField("street_dealt")
        ]
        assert all(len(cards) in (0, 1, 4, 5, 13, 14, 15, 16) for cards in own)
        assert any(len(cards) == 5 for cards in own)
    assert not any(
        m.event.street_dealt.my_cards
        for m in spectator.messages
        if m.event.HasField("street_dealt")
    )


def test_get_my_hand_shows_the_seat_its_cards_and_every_face_up_row(world: World) -> None:
    seated = open_face_table(world, 3, "ofc_classic")
    first = seated.players[0]
    with pytest.raises(grpc.RpcError) as raised:
        my_hand(world, first)
    assert error_reason(raised.value)[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "WRONG_PHASE")
    start_and_cut(world, seated)
    table = table_of(world, seated)
    assert table.phase == table_pb2.TABLE_PHASE_PLAYING
    assert table.open_face.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_PLACING
    assert table.open_face.street == 0 and table.open_face.turn_seat
    # The public view holds no dealt card.
    assert all(not seat.dealt_cards for seat in table.open_face.seats)
    on_turn = by_seat(seated, table.open_face.turn_seat)
    hand = my_hand(world, on_turn)
    assert len(hand.cards) == 5 and hand.deal == table.current_deal
    for index, seat in enumerate(hand.open_face.seats):
        assert bool(seat.dealt_cards) == (index == on_turn.position)
        assert not seat.rows_hidden
    board, cards = street_to_place(hand, on_turn)
    placement = legal_placements(board, cards)[-1]
    world.table_call(
        "PlaceCards",
        table_service_pb2.PlaceCardsRequest(
            request_id=str(uuid.uuid4()),
            seat=on_turn.seat,
            street=0,
            placement=rows_message(placement.front, placement.middle, placement.back),
        ),
        on_turn.token,
    )
    # Everyone now sees the placement face up, in GetTable and in every seat's GetMyHand.
    table = table_of(world, seated)
    public = table.open_face.seats[on_turn.position].rows
    assert sorted(public.back) == sorted(str(card) for card in placement.back)
    for player in seated.players:
        rows = my_hand(world, player).open_face.seats[on_turn.position].rows
        assert sorted(rows.front) == sorted(str(card) for card in placement.front)


def _refused(world: World, method: str, request: object, token: str) -> tuple[object, str, object]:
    before = world.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        world.table_call(method, request, token)
    code, reason, _, bad_request = error_reason(raised.value)
    assert code != grpc.StatusCode.INTERNAL
    assert world.event_count() == before, f"{method} wrote on a refusal"
    field = bad_request.field_violations[0].field if bad_request else ""
    return code, reason, field


def test_bad_input_is_refused_clearly_and_writes_nothing(world: World) -> None:
    seated = open_face_table(world, 2, "ofc_classic")
    start_and_cut(world, seated)
    table = table_of(world, seated)
    on_turn = by_seat(seated, table.open_face.turn_seat)
    other = next(player for player in seated.players if player is not on_turn)
    board, cards = street_to_place(my_hand(world, on_turn), on_turn)
    good = legal_placements(board, cards)[0]
    good_rows = rows_message(good.front, good.middle, good.back)
    other_card = next(
        card for card in parse_cards(["2c", "3d", "4h", "5s", "6c", "7d"]) if card not in cards
    )

    def place(**fields: object) -> table_service_pb2.PlaceCardsRequest:
        values: dict[str, object] = {
            "request_id": str(uuid.uuid4()),
            "seat": on_turn.seat,
            "street": 0,
            "placement": good_rows,
        }
        values.update(fields)
        return table_service_pb2.PlaceCardsRequest(**values)  # type: ignore[arg-type]

    invalid = grpc.StatusCode.INVALID_ARGUMENT
    precondition = grpc.StatusCode.FAILED_PRECONDITION
    cases = [
        (place(street=13), (invalid, "INVALID_ARGUMENT", "street")),
        (place(street=-1), (invalid, "INVALID_ARGUMENT", "street")),
        (place(street=1), (invalid, "INVALID_ARGUMENT", "street")),
        (
            place(placement=open_face_pb2.OpenFaceRows(front=["Zz"])),
            (invalid, "BAD_CARDS", "placement.front"),
        ),
        (
            place(placement=open_face_pb2.OpenFaceRows(back=["A" * 100_000])),
            (invalid, "BAD_CARDS", "placement.back"),
        ),
        (
            place(placement=open_face_pb2.OpenFaceRows(middle=[str(c) for c in cards] + ["2c"])),
            (invalid, "BAD_CARDS", "placement.middle"),
        ),
        (
            place(placement=rows_message(cards, (), ())),
            (invalid, "BAD_CARDS", "placement.front"),
        ),
        (place(placement=open_face_pb2.OpenFaceRows()), (invalid, "BAD_CARDS", "placement")),
        (
            place(placement=rows_message((), (), [*cards[:4], other_card])),
            (invalid, "BAD_CARDS", "placement"),
        ),
        (place(deal_number=9), (precondition, "WRONG_DEAL", "")),
        (place(expected_version=1), (grpc.StatusCode.ABORTED, "VERSION_MISMATCH", "")),
        (place(seat=other.seat), (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT", "")),
        (place(seat=f"{seated.table}/seats/7"), (invalid, "UNKNOWN_SEAT", "seat")),
        (place(seat="tables/nope/seats/0"), (invalid, "BAD_RESOURCE_NAME", "seat")),
    ]
    for request, expected in cases:
        code, reason, field = _refused(world, "PlaceCards", request, on_turn.token)
        assert (code, reason) == expected[:2], (request, code, reason)
        if expected[2]:
            assert field == expected[2], (request, field)
    # Out of turn, and the Fantasyland calls of a seat that plays a normal hand.
    other_board, other_cards = street_to_place(my_hand(world, other), other)
    other_rows = legal_placements(other_board, other_cards)[0]
    code, reason, _ = _refused(
        world,
        "PlaceCards",
        place(seat=other.seat, placement=rows_message(*other_rows.rows)),
        other.token,
    )
    assert (code, reason) == (precondition, "NOT_YOUR_TURN")
    commit = table_service_pb2.CommitFantasylandRequest(
        request_id=str(uuid.uuid4()), seat=on_turn.seat, commitment=bytes(32)
    )
    assert _refused(world, "CommitFantasyland", commit, on_turn.token)[:2] == (
        precondition,
        "WRONG_PHASE",
    )
    short = table_service_pb2.CommitFantasylandRequest(
        request_id=str(uuid.uuid4()), seat=on_turn.seat, commitment=bytes(5)
    )
    assert _refused(world, "CommitFantasyland", short, on_turn.token)[1] in (
        "WRONG_PHASE",
        "BAD_COMMITMENT",
    )
    reveal = table_service_pb2.RevealFantasylandRequest(
        request_id=str(uuid.uuid4()),
        seat=on_turn.seat,
        arrangement=table_pb2.Arrangement(front=["Xx"]),
        nonce=bytes(16),
    )
    assert _refused(world, "RevealFantasyland", reveal, on_turn.token)[:3] == (
        invalid,
        "BAD_CARDS",
        "arrangement.front",
    )
    # The closed game's moves at an open-face table, and open face's at a closed one.
    closed_commit = table_service_pb2.CommitArrangementRequest(
        request_id=str(uuid.uuid4()), seat=on_turn.seat, commitment=bytes(32)
    )
    assert _refused(world, "CommitArrangement", closed_commit, on_turn.token)[:2] == (
        precondition,
        "WRONG_GAME",
    )
    reveal_closed = table_service_pb2.RevealArrangementRequest(
        request_id=str(uuid.uuid4()),
        seat=on_turn.seat,
        arrangement=table_pb2.Arrangement(front=["2c"]),
        nonce=bytes(16),
    )
    assert _refused(world, "RevealArrangement", reveal_closed, on_turn.token)[1] == "WRONG_GAME"
    confirm = table_service_pb2.ConfirmArrangementRequest(
        request_id=str(uuid.uuid4()), seat=on_turn.seat
    )
    assert _refused(world, "ConfirmArrangement", confirm, on_turn.token)[1] == "WRONG_GAME"
    # A running deal's record holds no card and no seed (only what is public).
    running = world.table_call(
        "GetDealResult",
        table_service_pb2.GetDealResultRequest(name=table.current_deal),
        on_turn.token,
    ).result
    assert not running.seed_revealed and not running.seed and running.cut_position
    assert all(not seat.dealt_cards and not seat.HasField("arrangement") for seat in running.seats)
    # The operator's forced timeout of a seat that owes no move now: refused, nothing written.
    operator = operator_service_pb2_grpc.OperatorServiceStub(world.api.channel)
    before = world.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        operator.ForceSeatTimeout(
            operator_service_pb2.ForceSeatTimeoutRequest(
                request_id=str(uuid.uuid4()), table=seated.table, seat=other.position
            ),
            metadata=world.operator,
        )
    assert error_reason(raised.value)[:2] == (precondition, "NOTHING_TIMED_OUT")
    assert world.event_count() == before
    closed = world.seated(2)
    closed_place = table_service_pb2.PlaceCardsRequest(
        request_id=str(uuid.uuid4()), seat=closed.players[0].seat, street=0, placement=good_rows
    )
    assert _refused(world, "PlaceCards", closed_place, closed.players[0].token)[:2] == (
        precondition,
        "WRONG_GAME",
    )
    # An open-face preset takes no closed overrides; move_seconds is open face's.
    creator = world.player("creator")
    for request, field in [
        (
            table_service_pb2.CreateTableRequest(
                request_id=str(uuid.uuid4()),
                rule_set_preset="ofc_classic",
                seat_count=2,
                series_length=3,
            ),
            "series_length",
        ),
        (
            table_service_pb2.CreateTableRequest(
                request_id=str(uuid.uuid4()),
                rule_set_preset="ofc_classic",
                seat_count=2,
                move_seconds=0,
            ),
            "move_seconds",
        ),
        (
            table_service_pb2.CreateTableRequest(
                request_id=str(uuid.uuid4()),
                rule_set_preset="pagat",
                seat_count=2,
                move_seconds=30,
            ),
            "move_seconds",
        ),
        (
            table_service_pb2.CreateTableRequest(
                request_id=str(uuid.uuid4()), rule_set_preset="ofc_classic", seat_count=5
            ),
            "seat_count",
        ),
    ]:
        code, reason, got_field = _refused(world, "CreateTable", request, creator.token)
        assert code == invalid and got_field == field, (reason, got_field)
    # The good placement still lands, once; its retry answers the same and writes nothing.
    request = place()
    first = world.table_call("PlaceCards", request, on_turn.token)
    count = world.event_count()
    again = world.table_call("PlaceCards", request, on_turn.token)
    assert again == first and world.event_count() == count


def test_a_placement_past_its_time_is_made_by_the_server(world: World) -> None:
    seated = open_face_table(world, 2, "ofc_turbo", move_seconds=1)
    spectator = Watcher(world.api, seated.table, OPERATOR_TOKEN)
    start_and_cut(world, seated)
    table = table_of(world, seated)
    assert table.open_face.HasField("deadline_time") and table.HasField("deadline_time")
    late = by_seat(seated, table.open_face.turn_seat)
    deadline = time.monotonic() + 20
    while table_of(world, seated).open_face.turn_seat == late.seat:
        assert time.monotonic() < deadline, "the sweeper did not place for the late seat"
        time.sleep(0.1)
    spectator.wait_for(
        lambda: any(m.event.HasField("cards_placed") for m in spectator.messages), timeout=10
    )
    placed = next(
        m.event.cards_placed for m in spectator.messages if m.event.HasField("cards_placed")
    )
    assert placed.seat == late.seat and placed.automatic == "timeout"
    assert len(placed.placed.front) + len(placed.placed.middle) + len(placed.placed.back) == 5
    # Its street was placed for it: nothing is left for it to place.
    _board, cards = street_to_place(my_hand(world, late), late)
    assert not cards
    spectator.cancel()
    events = world.api.logged_events(seated.table)
    assert any(isinstance(event, StreetDealt) for event in events)
    automatic = [e for e in events if isinstance(e, CardsPlaced) and e.automatic == "timeout"]
    assert len(automatic) >= 1
    # The other seat plays on.
    assert play_move(world, seated, Played())


def test_the_operator_voids_an_open_face_deal_and_the_next_is_dealt_again(
    world: World, tmp_path: Path
) -> None:
    seated = open_face_table(world, 2, "ofc_turbo")
    start_and_cut(world, seated)
    before = table_of(world, seated)
    assert before.phase == table_pb2.TABLE_PHASE_PLAYING
    operator = operator_service_pb2_grpc.OperatorServiceStub(world.api.channel)
    operator.VoidDeal(
        operator_service_pb2.VoidDealRequest(
            request_id=str(uuid.uuid4()), deal=before.current_deal, reason="a test void"
        ),
        metadata=world.operator,
    )
    after = table_of(world, seated)
    assert after.phase == table_pb2.TABLE_PHASE_BETWEEN_DEALS
    # The set goes on: the voided deal is dealt again by the same dealer, and played out.
    played = Played()
    deals = play_set(world, seated, played)
    assert deals >= 2
    assert table_of(world, seated).dealer_seat
    events = world.api.logged_events(seated.table)
    assert any(type(event).__name__ == "DealVoided" for event in events)
    report = _verified_export(world, seated.table, tmp_path)
    assert report["ok"] is True, report


def test_the_operator_times_the_seat_on_turn_out_at_an_open_face_table(
    world: World, tmp_path: Path
) -> None:
    # ForceSeatTimeout: the seat on turn is placed for now, by the rule set's timeout policy,
    # whether or not a deadline runs (none does here), recorded under the operator; the deal
    # goes on and verifies from the log.
    seated = open_face_table(world, 2, "ofc_classic")
    start_and_cut(world, seated)
    late = by_seat(seated, table_of(world, seated).open_face.turn_seat)
    operator = operator_service_pb2_grpc.OperatorServiceStub(world.api.channel)
    operator.ForceSeatTimeout(
        operator_service_pb2.ForceSeatTimeoutRequest(
            request_id=str(uuid.uuid4()), table=seated.table, seat=late.position
        ),
        metadata=world.operator,
    )
    placed = [e for e in world.api.logged_events(seated.table) if isinstance(e, CardsPlaced)]
    assert [(e.seat, e.automatic) for e in placed] == [(late.position, "timeout")]
    assert table_of(world, seated).open_face.turn_seat != late.seat
    played = Played()
    while play_move(world, seated, played):
        pass
    assert any(isinstance(e, DealScored) for e in world.api.logged_events(seated.table))
    report = _verified_export(world, seated.table, tmp_path)
    assert report["ok"] is True, report
