"""sapsam-bot's seats at an open-face table (issue #18): ``play_seat`` plays each with the SDK's
open-face solver bot (the first seat draws the dealer and starts each deal), the set ends with
standings that sum to zero, and the log verifies, every move the bots made signed by their
players' keys."""

from __future__ import annotations

from open_face_sets import operator_token, play_bot_set, verified

from sapsam_client import connect
from sapsam_proto.v1 import table_pb2


def test_sapsam_bot_plays_an_open_face_set(
    address: str, database_url: str, operator_metadata: tuple[tuple[str, str], ...]
) -> None:
    # The operator's token from the fixture: `from conftest import` finds tests/api's conftest
    # when the suite runs tests/api and tests/clients in one process (make test).
    operator = connect(address, token=operator_token(operator_metadata))
    table = operator.create_open_face_table(2, preset="ofc_turbo")
    assert table.open_face_rule_set.street_cards == [5, 4, 4]
    outcomes = play_bot_set(address, table.name, 2, 60)
    final = operator.get_table(table.name)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    assert sum(standing.total for standing in outcomes[0].standings) == 0
    recorded, report = verified(database_url, table.name)
    assert report.ok and report.deals_verified >= 2
    # Each bot's player registered a key and signed every move of its own (docs/fairness.md
    # §19); the service's placements are unsigned; the verifier checks every signature.
    moves = [
        event.data
        for event in recorded
        if event.type in ("CardsPlaced", "FantasylandCommitted", "FantasylandRevealed")
    ]
    own = [data for data in moves if data.get("automatic") is None and data.get("nonce") != ""]
    assert own and all(data["player_key"] and data["signature"] for data in own)
    assert all(data["signature"] is None for data in moves if data not in own)
    signatures = {check.name for check in report.checks if check.name.startswith("player_sig")}
    assert signatures == {"player_signature[0]", "player_signature[1]"}
