"""Properties of whole open-face sets played through the domain (issue #18, "Tests"): whatever
the rule set, the seats, the placements and who times out, every deal's totals sum to zero, the
series totals are the deals' running sum, the set ends as the rules say, and the export of the
set verifies. The scores' invariance under relabelling the seats is held for single deals in
tests/unit/open_face/test_ofc_scoring.py."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from open_face_deals import export_lines, open_face_table, random_legal

from sapsam.audit import verify_export
from sapsam.audit.report import Status
from sapsam.domain.events import DealScored, SeriesCompleted
from sapsam.domain.open_face.table_state import OpenFaceTablePhase
from sapsam.rules.scoring import standings


@settings(max_examples=12, deadline=None)
@given(
    preset=st.sampled_from(["ofc_classic", "ofc_turbo", "ofc_russian", "ofc_mercier_deeb"]),
    seats=st.integers(2, 4),
    seed=st.integers(0, 2**32 - 1),
    late=st.one_of(st.none(), st.integers(0, 3)),
)
def test_a_whole_set_is_zero_sum_ends_by_the_rules_and_verifies(
    preset: str, seats: int, seed: int, late: int | None
) -> None:
    table = open_face_table(preset, seats, move_seconds=30)
    rng = random.Random(seed)
    late_seats = {late} if late is not None and late < seats else set()
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        # The late seat times out in the first deal only (a timeout's effects are the rules').
        table.play_deal(choose=random_legal(rng), late=late_seats)
        late_seats = set()
    scored = [event for event in table.events if isinstance(event, DealScored)]
    running = [0] * seats
    for deal in scored:
        assert sum(deal.totals) == 0
        running = [total + own for total, own in zip(running, deal.totals, strict=True)]
        assert list(deal.series_totals) == running
    [completed] = [event for event in table.events if isinstance(event, SeriesCompleted)]
    assert completed.deals_played == len(scored)
    assert [(s.seat, s.total, s.place) for s in completed.standings] == [
        (s.seat, s.total, s.place) for s in standings(tuple(running))
    ]
    # 003 (biggest_row_first): the set ends at the first button move after the timeout; 001's
    # timeout does not end it.
    timed_out = late is not None and late < seats
    assert table.state.ended_early is (timed_out and preset in ("ofc_russian", "ofc_mercier_deeb"))
    report = verify_export(export_lines(table.events))
    assert report.ok, [
        (c.name, c.deal, c.detail) for c in report.checks if c.status is Status.FAILED
    ]
