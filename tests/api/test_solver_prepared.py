"""The solver's per-process tables (~0.3 to 1 s of CPU the first time, more under load) are
built off the event loop before a server serves: built on it, by the first seat timed out under
the solver rule, they stalled every call and stream of the process meanwhile."""

from __future__ import annotations

from serving import serving

from sapsam.rules import solver, solver_tables


def test_a_server_builds_the_solver_tables_before_it_serves(database_url: str) -> None:
    solver._splits.cache_clear()
    solver_tables.win_scores.cache_clear()
    with serving(database_url):
        assert solver._splits.cache_info().currsize == 1
        assert solver_tables.win_scores.cache_info().currsize == 1
