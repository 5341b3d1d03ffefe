"""verify_deal on arrangements set on a seat's behalf: recorded, checked for legality and
identity, never re-solved (split from test_fairness_verify.py along that seam)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from sapsam.fairness.example_deals import example_published_deal
from sapsam.fairness.published import PublishedDeal
from sapsam.fairness.vectors import DEAL_INPUTS
from sapsam.fairness.verify import verify_deal
from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.presets import preset

SOLVER_DEAL = example_published_deal(DEAL_INPUTS[2], revealed=False, solver=True)
"""Three seats, seat 2's hand set by the solver (test_fairness_verify.py's HONEST deal)."""


def _with_set_arrangement(arrangement: Arrangement | None) -> PublishedDeal:
    deal = SOLVER_DEAL
    assert deal.solver_arrangements is not None
    return dataclasses.replace(
        deal,
        solver_arrangements=(
            *deal.solver_arrangements[:2],
            arrangement,
            *deal.solver_arrangements[3:],
        ),
    )


def _recorded_set() -> Arrangement:
    recorded = SOLVER_DEAL.solver_arrangements
    assert recorded is not None and recorded[2] is not None
    return recorded[2]


def test_the_verifier_never_runs_the_solver_on_a_recorded_arrangement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sapsam.rules.solver

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the solver ran")

    monkeypatch.setattr(sapsam.rules.solver, "solve", refuse)
    assert verify_deal(SOLVER_DEAL).ok


def test_a_deal_of_the_earlier_scheme_runs_the_solver() -> None:
    deal = dataclasses.replace(SOLVER_DEAL, solver_arrangements=None)
    report = verify_deal(deal)
    assert report.ok
    check = report.check("solver_arrangement[2]")
    assert "earlier scheme" in check.detail and report.arrangements[2] == _recorded_set()


@pytest.mark.parametrize(
    ("label", "alter"),
    [
        ("a card not dealt", lambda rows: ((*rows[0][:2], rows[1][0]), rows[1], rows[2])),
        ("a row too short", lambda rows: (rows[0][:2], rows[1], rows[2])),
        ("rows swapped", lambda rows: (rows[0], rows[2], rows[1])),
    ],
)
def test_an_illegal_recorded_arrangement_fails_its_check(
    label: str, alter: Callable[[Any], Any]
) -> None:
    recorded = _recorded_set()
    front, middle, back = alter(recorded.rows)
    report = verify_deal(_with_set_arrangement(Arrangement(front, middle, back)))
    assert report.failed == ("solver_arrangement[2]",), label
    assert report.skipped == ("fouls", "scores")
    assert "not legal" in report.check("solver_arrangement[2]").detail


def test_no_arrangement_recorded_for_a_solver_seat_fails_its_check() -> None:
    report = verify_deal(_with_set_arrangement(None))
    assert report.failed == ("solver_arrangement[2]",)
    assert "no arrangement is recorded" in report.check("solver_arrangement[2]").detail


def test_another_legal_arrangement_is_scored_as_recorded() -> None:
    # Identity: the recorded arrangement is what is scored, whichever legal one it is: here the
    # solver's middle and back exchanged where that stays legal, else the front's cards reordered.
    recorded = _recorded_set()
    hand = [*recorded.front, *recorded.middle, *recorded.back]
    swapped = Arrangement(recorded.front, recorded.back, recorded.middle)
    alternative = (
        swapped
        if not check_arrangement(swapped, hand).foul
        else Arrangement(tuple(reversed(recorded.front)), recorded.middle, recorded.back)
    )
    assert not check_arrangement(alternative, hand).foul
    deal = _with_set_arrangement(alternative)
    report = verify_deal(deal)
    assert report.check("solver_arrangement[2]").passed and report.check("fouls").passed
    assert report.arrangements[2] == alternative
    assert report.failed in ((), ("scores",))  # scored as recorded: the old score may not hold


def test_the_published_form_carries_recorded_arrangements_only_when_recorded() -> None:
    solver = SOLVER_DEAL
    data = solver.to_dict()
    assert data["solver_arrangements"][:2] == [None, None]
    assert set(data["solver_arrangements"][2]) == {"front", "middle", "back"}
    assert PublishedDeal.from_dict(data) == solver
    plain = example_published_deal(DEAL_INPUTS[3], preset("two_four")).to_dict()
    assert "solver_arrangements" not in plain
    assert PublishedDeal.from_dict(plain).solver_arrangements is None
