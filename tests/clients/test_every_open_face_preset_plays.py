"""Every open-face preset playable end to end (issues #18, #19), as
tests/clients/test_every_preset_plays.py does for the closed game's: a 2-seat set of each
(``every_open_face_preset``: ofc_classic, ofc_turbo, ofc_russian, ofc_mercier_deeb, ofc_finnish,
pineapple, pineapple_2_7) played over a real gRPC server by ``sapsam-bot``'s seats (the SDK's
open-face bot: placements signed, Pineapple's discards committed and opened signed), the
standings zero-sum and every deal verified from the log."""

from __future__ import annotations

import pytest
from open_face_sets import operator_token, play_bot_set, verified

from sapsam.rules.open_face.presets import every_open_face_preset
from sapsam_client import connect
from sapsam_proto.v1 import table_pb2


@pytest.mark.parametrize("preset", list(every_open_face_preset()))
def test_every_open_face_preset_plays_a_set_over_grpc_and_verifies(
    preset: str,
    address: str,
    database_url: str,
    operator_metadata: tuple[tuple[str, str], ...],
) -> None:
    operator = connect(address, token=operator_token(operator_metadata))
    table = operator.create_open_face_table(2, preset=preset)
    assert table.open_face_rule_set.name == preset
    outcomes = play_bot_set(address, table.name, 2, 120)
    assert operator.get_table(table.name).phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    assert sum(standing.total for standing in outcomes[0].standings) == 0
    recorded, report = verified(database_url, table.name)
    assert report.ok, [check for check in report.checks if check.status.value == "failed"]
    assert report.deals_verified >= 2
    opened = [event.data for event in recorded if event.type == "DiscardsRevealed"]
    if table.open_face_rule_set.street_discards:
        assert opened and all(data["signature"] for data in opened)
    else:
        assert opened == []
