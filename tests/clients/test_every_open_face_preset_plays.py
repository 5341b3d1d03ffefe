"""Every open-face preset playable end to end (issues #18, #19), as
tests/clients/test_every_preset_plays.py does for the closed game's: a 2-seat set of each
(``every_open_face_preset``: ofc_classic, ofc_turbo, ofc_russian, ofc_mercier_deeb, ofc_finnish,
pineapple, pineapple_2_7) played over a real gRPC server by ``sapsam-bot``'s seats (the SDK's
open-face bot: placements signed, Pineapple's discards committed and opened signed), the
standings zero-sum and every deal verified from the log."""

from __future__ import annotations

import threading

import psycopg
import pytest

from sapsam.audit import Requester, select_table
from sapsam.audit.verifier import verify_audit_export
from sapsam.rules.open_face.presets import every_open_face_preset
from sapsam.store.offline_reads import read_stream
from sapsam_client import connect
from sapsam_client.bot import play_seat
from sapsam_client.seat_types import SeriesOutcome
from sapsam_proto.v1 import table_pb2


@pytest.mark.parametrize("preset", list(every_open_face_preset()))
def test_every_open_face_preset_plays_a_set_over_grpc_and_verifies(
    preset: str,
    address: str,
    database_url: str,
    operator_metadata: tuple[tuple[str, str], ...],
) -> None:
    token = dict(operator_metadata)["authorization"].removeprefix("Bearer ")
    operator = connect(address, token=token)
    table = operator.create_open_face_table(2, preset=preset)
    assert table.open_face_rule_set.name == preset
    outcomes: list[SeriesOutcome] = []
    errors: list[BaseException] = []

    def run(seat: int) -> None:
        try:
            client = connect(address)
            client.register(f"bot {seat}")
            outcomes.append(play_seat(client, table.name, None, seat, report=False))  # type: ignore[arg-type]
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=run, args=(seat,)) for seat in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == [] and len(outcomes) == 2
    assert operator.get_table(table.name).phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    assert sum(standing.total for standing in outcomes[0].standings) == 0
    with psycopg.connect(database_url) as connection:
        recorded = read_stream(connection, "table-" + table.name.removeprefix("tables/"))
    report = verify_audit_export(
        select_table(recorded, Requester.operator(), table.name.removeprefix("tables/"))
    )
    assert report.ok, [check for check in report.checks if check.status.value == "failed"]
    assert report.deals_verified >= 2
    opened = [event.data for event in recorded if event.type == "DiscardsRevealed"]
    if table.open_face_rule_set.street_discards:
        assert opened and all(data["signature"] for data in opened)
    else:
        assert opened == []
