"""Full series through the generated stubs, on a real server and a real PostgreSQL.

Every deal's scores equal the rules engine's, ``verify_deal`` passes on what the log holds, a
spectator's WatchTable stream carries every event in order, and no response or streamed event
shows a card, nonce or seed before its time.
"""

from __future__ import annotations

import pytest
from api_client import Api, DealSecrets, Observation, Watcher, hidden_information_violations

from sapsam.domain.published import published_deal
from sapsam.fairness.verify import verify_deal
from sapsam.rules.presets import preset
from sapsam_proto.v1 import table_pb2, table_service_pb2

SERIES_LENGTH = 8


@pytest.mark.parametrize(
    ("seat_count", "preset_name"), [(2, "pagat"), (3, "two_four"), (4, "one_six")]
)
def test_a_full_series(api: Api, seat_count: int, preset_name: str) -> None:
    rule_set = preset(preset_name)
    table, players = api.seated_table(seat_count, preset_name, SERIES_LENGTH)
    spectator = api.register("spectator")
    watcher = Watcher(api, table, spectator.token)

    totals = [0] * seat_count
    fouls = 0
    for deal_index in range(SERIES_LENGTH):
        result = api.play_deal(table, players, rule_set, deal_index)
        fouls += sum(seat.foul for seat in result.seats)
        totals = [
            total + seat.score_delta for total, seat in zip(totals, result.seats, strict=True)
        ]
        assert [seat.series_total for seat in result.seats] == totals

    assert fouls > 0  # the driver fouls now and then, so fouled hands are scored too
    final = api.call("GetTable", table_service_pb2.GetTableRequest(name=table), spectator.token)
    assert final.table.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    assert final.table.status == table_pb2.TABLE_STATUS_COMPLETED
    assert [seat.series_total for seat in final.table.seats] == totals

    logged = api.logged_events(table)
    for number in range(1, SERIES_LENGTH + 1):
        report = verify_deal(published_deal(logged, number))
        assert report.ok, report.failed

    watcher.wait()
    streamed = [response.event for response in watcher.messages]
    assert [event.version for event in streamed] == list(range(1, len(logged) + 1))
    assert [event.type for event in streamed] == [event.TYPE for event in logged]
    assert all(event.WhichOneof("payload") for event in streamed)
    completed = streamed[-1].series_completed
    assert [
        standing.total for standing in sorted(completed.standings, key=lambda s: s.seat)
    ] == totals

    assert hidden_information_violations(api.observations, api.secrets) == []
    assert hidden_information_violations(watcher.observations, api.secrets) == []


def test_the_walk_catches_a_leak() -> None:
    # The checker itself: cards in a DealResult of an unrevealed deal, and a nonce anywhere.
    secrets = {1: DealSecrets(seed=b"s" * 32, nonces=[b"n" * 16])}
    leaked = table_pb2.DealResult(
        deal_number=1, seats=[table_pb2.DealSeatResult(dealt_cards=["As"])]
    )
    nonce = table_pb2.DealResult(deal_number=2, seats=[table_pb2.DealSeatResult(nonce=b"n" * 16)])
    observations = [Observation(leaked, "", frozenset()), Observation(nonce, "", frozenset({2}))]
    assert len(hidden_information_violations(observations, secrets)) == 2
    revealed = table_pb2.DealResult(
        deal_number=1, seed_revealed=True, seats=[table_pb2.DealSeatResult(dealt_cards=["As"])]
    )
    assert hidden_information_violations([Observation(revealed, "", frozenset({1}))], secrets) == []
