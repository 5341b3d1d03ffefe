"""Re-seating at an open-face tournament table after its first deal (issue #18): the operator
forfeits a player between two deals of the set and gives the seat to a newcomer
(``ReplaceTournamentSeat``: the table's ``SeatReplaced``, the tournament's ``SeatReassigned``).
The newcomer plays the rest of the set from the next deal, its seat keeping the totals (and any
Fantasyland) it had; the results process credits every deal to whoever held the seat in it, the
round completes with the set, and the table's export and the tournament verify from the log.
The plain operator's ``ReplaceSeat`` is refused at a tournament's table."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from open_face_sample import Nonces, load, play_deal
from test_open_face_tournament import ofc_settings, services  # noqa: F401 - the fixture

from sapsam.app.tables import TableService
from sapsam.app.tournament_control import TournamentControl
from sapsam.app.tournament_results import ResultsProcess
from sapsam.audit import verify_export
from sapsam.audit.tournament_audit import verify_tournament
from sapsam.cli import main
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import DealScored, SeatReplaced
from sapsam.domain.open_face.table_state import OpenFaceTablePhase
from sapsam.domain.tournament import TournamentPhase


async def test_a_seat_re_seated_after_the_first_deal_plays_out_the_set(
    services: tuple[TableService, TournamentControl],  # noqa: F811 - the imported fixture
    database_url: str,
    tmp_path: Path,
) -> None:
    tables, tournaments = services
    created = await tournaments.create(ofc_settings(), "operator", "create-reseat")
    tournament_id = created.tournament_id
    for player in ("ann", "bob"):
        await tournaments.register(tournament_id, player, f"register-{player}")
    await tournaments.start(tournament_id, "operator", "start-reseat")
    [table] = (await tournaments.load(tournament_id)).round_tables(1)
    table_id = table.table_id
    nonces = Nonces()
    await play_deal(tables, table_id, nonces)  # the set's first deal
    first = await load(tables, table_id)
    assert first.phase is OpenFaceTablePhase.BETWEEN_DEALS and first.deal_number == 1
    leaving = table.players[1]
    seat = first.seats.index(leaving)
    totals_before = first.series_totals
    await tournaments.forfeit(tournament_id, leaving, "had to leave", "forfeit")
    # The operator's plain replacement is refused at a tournament's table.
    with pytest.raises(DomainError) as refused:
        await tables.replace_seat(table_id, seat, "zed", "plain-replace")
    assert refused.value.reason is Reason.WRONG_PHASE
    await tournaments.replace_seat(tournament_id, table_id, seat, "zed", "reseat")
    after = await load(tables, table_id)
    assert after.seats[seat] == "zed" and after.series_totals == totals_before
    state = await tournaments.load(tournament_id)
    [reseated] = state.round_tables(1)
    assert reseated.holders[seat] == "zed"
    # The newcomer plays the rest of the set.
    while (await load(tables, table_id)).phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        await play_deal(tables, table_id, nonces)
    events = [tables.decode(recorded) for recorded in await tables.events(table_id)]
    replaced = [e for e in events if isinstance(e, SeatReplaced)]
    assert [(e.seat, e.previous_player_id, e.player_id) for e in replaced] == [
        (seat, leaving, "zed")
    ]
    scored = [e for e in events if isinstance(e, DealScored)]
    assert len(scored) >= 2
    await ResultsProcess(tournaments).process_available()
    state = await tournaments.load(tournament_id)
    assert state.phase is TournamentPhase.COMPLETE
    # Deal 1 is the leaver's, every later deal the newcomer's.
    expected: dict[str, int] = {}
    for event in scored:
        for index, delta in enumerate(event.totals):
            holder = "zed" if index == seat and event.deal_number > 1 else first.seats[index]
            assert holder is not None
            expected[holder] = expected.get(holder, 0) + delta
    assert {player: state.totals.get(player, 0) for player in expected} == expected
    with psycopg.connect(database_url) as connection:
        report = verify_tournament(connection, tournament_id)
    assert report.holds, [check for check in report.checks if check.failed]
    exported = tmp_path / "table.jsonl"
    code = main(
        [
            "audit",
            "export",
            "--table",
            f"tables/{table_id}",
            "-o",
            str(exported),
            "--database-url",
            database_url,
        ]
    )
    assert code == 0
    verified = verify_export(exported.read_text().splitlines())
    assert verified.ok, [c for c in verified.checks if c.status.value == "failed"]
