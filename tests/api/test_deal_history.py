"""ListMyDeals on a real server: a player's hand history, only their own, a bounded page at a
time; bad page sizes and tokens are refused with ErrorInfo and write nothing; the operator has no
history (PLAYERS_ONLY)."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Api, Player, error_reason

from sapsam.rules.presets import preset
from sapsam_proto.v1 import table_service_pb2


def _history(api: Api, player: Player, **fields: Any) -> table_service_pb2.ListMyDealsResponse:
    response: table_service_pb2.ListMyDealsResponse = api.call(
        "ListMyDeals", table_service_pb2.ListMyDealsRequest(**fields), player.token
    )
    return response


def _everything(api: Api, player: Player, page_size: int) -> list[table_service_pb2.PlayedDeal]:
    deals: list[table_service_pb2.PlayedDeal] = []
    token = ""
    while True:
        page = _history(api, player, page_size=page_size, page_token=token)
        assert len(page.deals) <= page_size
        deals.extend(page.deals)
        token = page.next_page_token
        if not token:
            return deals


def _seated(api: Api, players: list[Player]) -> tuple[str, list[Player]]:
    """A new 2-seat table with ``players`` seated in order and the dealer drawn."""
    table = api.call(
        "CreateTable",
        table_service_pb2.CreateTableRequest(
            request_id=str(uuid.uuid4()), rule_set_preset="pagat", seat_count=2, series_length=4
        ),
        players[0].token,
    ).table.name
    for player in players:
        player.seat = api.call(
            "JoinTable",
            table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=table),
            player.token,
        ).seat
    api.call(
        "ChooseDealer",
        table_service_pb2.ChooseDealerRequest(request_id=str(uuid.uuid4()), table=table),
        players[0].token,
    )
    return table, players


def _refused(api: Api, player: Player, token: str = OPERATOR_TOKEN, **fields: Any) -> Any:
    before = api.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        api.call("ListMyDeals", table_service_pb2.ListMyDealsRequest(**fields), token)
    assert api.event_count() == before
    return error_reason(raised.value)


def test_a_player_lists_their_own_deals_newest_first_page_by_page(api: Api) -> None:
    first, first_players = api.seated_table(2, "pagat", series_length=4)
    for deal_index in range(2):
        api.play_deal(first, first_players, preset("pagat"), deal_index)
    ann = first_players[0]
    # A second table with Ann at it (a later one), and a third without her.
    second, second_players = _seated(api, [api.register("bob"), ann])
    api.play_deal(second, second_players, preset("pagat"), 0)
    other, other_players = api.seated_table(2, "pagat", series_length=4)
    api.play_deal(other, other_players, preset("pagat"), 0)

    deals = _everything(api, ann, page_size=1)
    assert [deal.deal for deal in deals] == [
        f"{second}/deals/1",
        f"{first}/deals/2",
        f"{first}/deals/1",
    ]
    assert [deal.deal for deal in _everything(api, ann, page_size=100)] == [
        deal.deal for deal in deals
    ]
    for deal in deals:
        result = api.call(
            "GetDealResult", table_service_pb2.GetDealResultRequest(name=deal.deal), ann.token
        ).result
        seat = int(deal.seat.rsplit("/", 1)[1])
        assert result.seats[seat].seat == deal.seat
        assert deal.delta == result.seats[seat].score_delta
        assert deal.series_total == result.seats[seat].series_total
        assert deal.fouled == result.seats[seat].foul
        assert deal.rule_set_name == "pagat" and deal.seat_count == 2
        assert deal.score_time.seconds > 0
    # The running totals of the first table add up deal by deal.
    by_name = {deal.deal: deal for deal in deals}
    one, two = by_name[f"{first}/deals/1"], by_name[f"{first}/deals/2"]
    assert two.series_total == one.series_total + two.delta
    # Nobody else's deals: the other table's players see only theirs.
    assert {deal.deal for deal in _everything(api, other_players[0], 10)} == {f"{other}/deals/1"}
    # A player with no scored deal has an empty history.
    assert list(_history(api, api.register("newcomer")).deals) == []


def test_a_page_token_is_the_callers_own(api: Api) -> None:
    table, players = api.seated_table(2, "pagat", series_length=4)
    for deal_index in range(2):
        api.play_deal(table, players, preset("pagat"), deal_index)
    token = _history(api, players[0], page_size=1).next_page_token
    assert token
    code, reason, _, bad = _refused(api, players[0], players[1].token, page_token=token)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PAGE_TOKEN")
    assert [violation.field for violation in bad.field_violations] == ["page_token"]


@pytest.mark.parametrize(
    "token",
    [
        "garbage",
        "x" * 600,
        base64.urlsafe_b64encode(b"[" * 10_000).decode(),
        base64.urlsafe_b64encode(json.dumps([1, 2]).encode()).decode(),
    ],
    ids=["garbage", "long", "nested", "list"],
)
def test_bad_page_tokens_and_sizes_are_refused(api: Api, token: str) -> None:
    player = api.register("lister")
    code, reason, _, bad = _refused(api, player, player.token, page_token=token)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PAGE_TOKEN")
    assert [violation.field for violation in bad.field_violations] == ["page_token"]
    for size in (101, -1):
        code, reason, _, bad = _refused(api, player, player.token, page_size=size)
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PAGE_SIZE")


def test_crafted_tokens_with_this_players_id_are_refused(api: Api) -> None:
    player = api.register("crafter")
    player_id = player.name.removeprefix("players/")
    good = {"p": player_id, "c": "2026-01-01T00:00:00.000000Z", "t": "0" * 32, "d": 1, "s": 0}
    for change in ({"d": 2**40}, {"s": -1}, {"d": True}, {"c": "a\x00b"}, {"t": 5}, {"c": 7}):
        text = json.dumps({**good, **change})
        token = base64.urlsafe_b64encode(text.encode()).decode()
        code, reason, _, _ = _refused(api, player, player.token, page_token=token)
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PAGE_TOKEN"), change
    # The well-formed key itself is accepted (a page after a table that does not exist: empty).
    token = base64.urlsafe_b64encode(json.dumps(good).encode()).decode()
    assert list(_history(api, player, page_token=token).deals) == []


def test_the_operator_has_no_history(api: Api) -> None:
    code, reason, _, _ = _refused(api, api.register("nobody"))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "PLAYERS_ONLY")
