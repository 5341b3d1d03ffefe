"""Listing tables page by page and by status, and the server's deadline sweeper at work."""

from __future__ import annotations

import uuid

from api_client import Api, Watcher

from sapsam_proto.v1 import rule_set_pb2, table_pb2, table_service_pb2


def list_all(api: Api, token: str, status: int, page_size: int) -> list[list[str]]:
    pages: list[list[str]] = []
    token_for_page = ""
    while True:
        page = api.call(
            "ListTables",
            table_service_pb2.ListTablesRequest(
                page_size=page_size, page_token=token_for_page, status=status
            ),
            token,
        )
        pages.append([table.name for table in page.tables])
        token_for_page = page.next_page_token
        if not token_for_page:
            return pages


def test_tables_are_listed_newest_first_in_pages_and_by_status(api: Api) -> None:
    creator = api.register("creator")
    created = [
        api.call(
            "CreateTable", table_service_pb2.CreateTableRequest(seat_count=2), creator.token
        ).table.name
        for _ in range(5)
    ]
    playing_table, _ = api.seated_table(2, "pagat")
    everything = [playing_table, *reversed(created)]

    pages = list_all(api, creator.token, table_pb2.TABLE_STATUS_UNSPECIFIED, page_size=2)
    assert [len(page) for page in pages] == [2, 2, 2]
    assert [name for page in pages for name in page] == everything
    open_tables = list_all(api, creator.token, table_pb2.TABLE_STATUS_OPEN, page_size=50)
    assert open_tables == [list(reversed(created))]
    playing = list_all(api, creator.token, table_pb2.TABLE_STATUS_PLAYING, page_size=50)
    assert playing == [[playing_table]]
    assert list_all(api, creator.token, table_pb2.TABLE_STATUS_COMPLETED, page_size=50) == [[]]


def test_a_listed_table_is_the_table_get_table_shows(api: Api) -> None:
    # The list reads its page (creator, creation time) from the read model table_state and each
    # table's state from the service: the same message GetTable builds from the log.
    creator = api.register("lister")
    api.call("CreateTable", table_service_pb2.CreateTableRequest(seat_count=3), creator.token)
    playing_table, _ = api.seated_table(2, "pagat")
    listed = api.call(
        "ListTables", table_service_pb2.ListTablesRequest(page_size=2), creator.token
    ).tables
    assert [table.name for table in listed][:1] == [playing_table]
    for table in listed:
        shown = api.call(
            "GetTable", table_service_pb2.GetTableRequest(name=table.name), creator.token
        ).table
        assert table == shown
        assert table.create_time.seconds > 0


def test_a_missed_arranging_deadline_times_seats_out_and_scores_the_deal(api: Api) -> None:
    creator = api.register("creator")
    table = api.call(
        "CreateTable",
        table_service_pb2.CreateTableRequest(
            request_id=str(uuid.uuid4()),
            seat_count=2,
            series_length=1,
            rule_set=rule_set_pb2.RuleSet(name="quick", arrange_seconds=1),
        ),
        creator.token,
    ).table
    assert table.rule_set.arrange_seconds == 1 and table.rule_set.name == "quick"
    players = []
    for name in ("ann", "bob"):
        player = api.register(name)
        player.seat = api.call(
            "JoinTable", table_service_pb2.JoinTableRequest(table=table.name), player.token
        ).seat
        players.append(player)
    api.call(
        "ChooseDealer", table_service_pb2.ChooseDealerRequest(table=table.name), players[0].token
    )
    watcher = Watcher(api, table.name, creator.token)
    started = api.call(
        "StartDeal", table_service_pb2.StartDealRequest(table=table.name), players[0].token
    )
    view = api.call("GetTable", table_service_pb2.GetTableRequest(name=table.name), creator.token)
    cutter = next(p for p in players if p.seat == view.table.cutter_seat)
    api.call(
        "CutDeck", table_service_pb2.CutDeckRequest(seat=cutter.seat, position=5), cutter.token
    )
    arranging = api.call(
        "GetTable", table_service_pb2.GetTableRequest(name=table.name), creator.token
    ).table
    assert arranging.phase == table_pb2.TABLE_PHASE_ARRANGING
    assert arranging.HasField("deadline_time")
    # Nobody commits: the sweeper records the timeouts, reveals the seed and scores the deal.
    watcher.wait(timeout=60)
    types = [response.event.type for response in watcher.messages]
    assert types.count("SeatTimedOut") == 2
    assert types[-3:] == ["SeedRevealed", "DealScored", "SeriesCompleted"]
    result = api.call(
        "GetDealResult", table_service_pb2.GetDealResultRequest(name=started.deal), creator.token
    ).result
    assert [seat.foul for seat in result.seats] == [True, True]
    assert [seat.timed_out_stage for seat in result.seats] == [
        table_pb2.TIMEOUT_STAGE_ARRANGING
    ] * 2
    assert [seat.score_delta for seat in result.seats] == [0, 0]  # two fouls score nothing


def test_every_preset_table_has_deadlines_and_choosing_none_warns(api: Api) -> None:
    creator = api.register("deadline chooser")
    for preset in ("pagat", "two_four", "one_six", "scoop_bonus"):
        created = api.call(
            "CreateTable",
            table_service_pb2.CreateTableRequest(seat_count=2, rule_set_preset=preset),
            creator.token,
        )
        assert created.table.rule_set.arrange_seconds == 90
        assert created.table.rule_set.reveal_seconds == 30
        assert list(created.warnings) == []
    # A rule set message leaving the deadlines unset takes the base game's.
    custom = api.call(
        "CreateTable",
        table_service_pb2.CreateTableRequest(
            seat_count=2, rule_set=rule_set_pb2.RuleSet(name="mine", row_unit=5)
        ),
        creator.token,
    )
    assert custom.table.rule_set.arrange_seconds == 90 and not custom.warnings
    # 0 chooses no deadline, explicitly: the table is created and the response says so loudly.
    unlimited = api.call(
        "CreateTable",
        table_service_pb2.CreateTableRequest(
            seat_count=2,
            rule_set=rule_set_pb2.RuleSet(name="slow", arrange_seconds=0, reveal_seconds=0),
        ),
        creator.token,
    )
    assert not unlimited.table.rule_set.HasField("arrange_seconds")
    assert not unlimited.table.rule_set.HasField("reveal_seconds")
    assert len(unlimited.warnings) == 2
    assert "no arranging deadline" in unlimited.warnings[0]
    assert "no reveal deadline" in unlimited.warnings[1]
