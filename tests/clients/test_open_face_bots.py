"""sapsam-bot's seats at an open-face table (issue #18): ``play_seat`` plays each with the SDK's
open-face solver bot (the first seat draws the dealer and starts each deal), the set ends with
standings that sum to zero, and the log verifies, every move the bots made signed by their
players' keys."""

from __future__ import annotations

import threading

import psycopg

from sapsam.audit import Requester, select_table
from sapsam.audit.verifier import verify_audit_export
from sapsam.store.offline_reads import read_stream
from sapsam_client import connect
from sapsam_client.bot import play_seat
from sapsam_client.seat_types import SeriesOutcome
from sapsam_proto.v1 import table_pb2


def test_sapsam_bot_plays_an_open_face_set(
    address: str, database_url: str, operator_metadata: tuple[tuple[str, str], ...]
) -> None:
    # The operator's token from the fixture: `from conftest import` finds tests/api's conftest
    # when the suite runs tests/api and tests/clients in one process (make test).
    token = dict(operator_metadata)["authorization"].removeprefix("Bearer ")
    operator = connect(address, token=token)
    table = operator.create_open_face_table(2, preset="ofc_turbo")
    assert table.open_face_rule_set.street_cards == [5, 4, 4]
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
        thread.join(60)
    assert errors == [] and len(outcomes) == 2
    final = operator.get_table(table.name)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    assert sum(standing.total for standing in outcomes[0].standings) == 0
    with psycopg.connect(database_url) as connection:
        recorded = read_stream(connection, "table-" + table.name.removeprefix("tables/"))
    report = verify_audit_export(
        select_table(recorded, Requester.operator(), table.name.removeprefix("tables/"))
    )
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
