"""The whole-database audit's in-memory read models (``sapsam.store.projection_folds``) give the
rows the projectors' SQL gives, for every kind of event: tournaments (with a withdrawal and
credited deals; a forfeit, a re-seat, pauses, a round completing in a pause, a cancellation),
timeouts of both stages, a table running into a second series, a deal mid-reveal.
"""

from __future__ import annotations

import psycopg
from tournament_play import Services, play_round_deal, settings

from sapsam import fairness
from sapsam.app.tables import TableService
from sapsam.app.tournament_control import TournamentControl
from sapsam.app.tournament_results import ResultsProcess
from sapsam.app.tournaments import TournamentService
from sapsam.audit.projection_audit import ProjectionComparison, compare_projections
from sapsam.audit.report import Status
from sapsam.audit.sample_play import play_deal, play_series, seated_table, start_and_deal
from sapsam.rules.ruleset import RuleSet, TimeoutPolicy
from sapsam.rules.solver import solve
from sapsam.store import table_state_projection
from sapsam.store.projection_folds import FOLDED_TABLE_EVENTS, FOLDS
from sapsam.store.projections import all_projectors, rebuild_projections


async def _play_everything(services: Services) -> None:
    tournaments = TournamentService(services.store, services.tables)
    created = await tournaments.create(settings(seats=2, rounds=1, deals=1), "operator", "create")
    tournament_id = created.tournament_id
    for player in ("a", "b", "c", "d", "e"):
        await tournaments.register(tournament_id, player, f"register-{player}")
    await tournaments.unregister(tournament_id, "e", "unregister-e")
    await tournaments.start(tournament_id, "operator", "start")
    await play_round_deal(services.tables, await tournaments.load(tournament_id), 1)
    await ResultsProcess(tournaments).process_available()
    await _play_a_controlled_tournament(services)

    await play_series(
        services.tables, 3, deals=3, rule_set=RuleSet(series_length=2), after_series="new_series"
    )
    now = [1_700_000_000_000]
    rules = RuleSet(
        arrange_seconds=10, reveal_seconds=10, arrange_timeout_policy=TimeoutPolicy.SOLVER
    )
    timed = TableService(services.store, clock=lambda: now[0])
    for reveals in (1, 0):  # one deal scored after both timeouts, one left mid-reveal
        table_id = await seated_table(timed, 3, rules)
        await start_and_deal(timed, table_id, 1)
        for player in ("ann", "bob"):
            seat, hand = await timed.hand_of(table_id, player)
            arrangement, nonce = solve(hand, rules), bytes([seat + 1]) * 16
            commitment = fairness.arrangement_commitment(table_id, 1, seat, arrangement, nonce)
            await timed.commit(table_id, player, commitment, f"commit-{player}-{reveals}")
            await timed.confirm(table_id, player, f"confirm-{player}-{reveals}")
            if player == "ann":
                chosen = (arrangement, nonce)
        now[0] += 11_000
        await timed.time_out(table_id, f"arranging-{reveals}")  # cid: the solver's hand
        await timed.reveal(table_id, "ann", *chosen, f"reveal-{reveals}")
        if reveals:
            now[0] += 11_000
            await timed.time_out(table_id, f"revealing-{reveals}")  # bob fouls; the deal is scored
    await seated_table(services.tables, 2)  # a table between deals, never dealt


async def _play_a_controlled_tournament(services: Services) -> None:
    """A forfeit, a pause, a re-seat, a resume, a round completing in a second pause, a cancel."""
    control = TournamentControl(services.store, services.tables)
    tournament_id = (
        await control.create(settings(seats=2, rounds=2, deals=2), "operator", "create-2")
    ).tournament_id
    for player in ("a2", "b2", "c2", "d2"):
        await control.register(tournament_id, player, f"register-{player}")
    first, second = (await control.start(tournament_id, "operator", "start-2")).state.round_tables(
        1
    )
    await play_deal(services.tables, first.table_id, 1)
    await control.forfeit(tournament_id, first.players[1], "left", "forfeit-2")
    await control.pause(tournament_id, "re-seating", "pause-2")
    await control.replace_seat(tournament_id, first.table_id, 1, "e2", "reseat-2")
    await control.resume(tournament_id, "resume-2")
    await play_deal(services.tables, first.table_id, 2)
    await play_deal(services.tables, second.table_id, 1)
    await play_deal(services.tables, second.table_id, 2)
    await control.pause(tournament_id, "lunch", "pause-3")
    await ResultsProcess(control).process_available()  # the round completes in the pause
    assert (await control.load(tournament_id)).rounds_completed == 1
    await control.cancel(tournament_id, "closing time", "cancel-2")


def test_every_table_event_type_the_sql_handles_has_a_fold() -> None:
    assert set(table_state_projection._ASSIGNMENTS) == FOLDED_TABLE_EVENTS
    assert {p.name for p in all_projectors()} <= set(FOLDS)


async def test_the_folds_give_the_rows_of_the_live_and_the_rebuilt_read_models(
    services: Services,
) -> None:
    await _play_everything(services)
    projectors = all_projectors()
    with psycopg.connect(services.database_url, autocommit=True) as connection:
        # Live rows were written by the appends' own statements ...
        live = compare_projections(connection, projectors)
        assert [c.status for c in live] == [Status.PASSED] * len(projectors), live
        # ... and again after the SQL replays the whole log.
        rebuild_projections(connection, projectors)
        rebuilt = compare_projections(connection, projectors)
        assert [c.status for c in rebuilt] == [Status.PASSED] * len(projectors), rebuilt
        counts = {c.name: c.detail.split(" ")[0] for c in rebuilt}
    assert int(counts["projection table_state"]) == 8
    assert int(counts["projection tournaments"]) > 0
    # Without its fold a projector is replayed through its SQL into a scratch schema: same verdict.
    comparison = ProjectionComparison(projectors, use_folds=False)
    with (
        psycopg.connect(services.database_url, autocommit=True) as connection,
        connection.transaction() as transaction,
    ):
        connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        replayed = comparison.checks(connection)
        raise psycopg.Rollback(transaction)
    assert [c.status for c in replayed] == [Status.PASSED] * len(projectors), replayed
