"""The graceful stop's state, told the time by the test."""

from __future__ import annotations

import math

from sapsam.api.stopping import StopGate


class FakeClock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def test_a_serving_gate_admits_calls_and_has_no_cutoff() -> None:
    gate = StopGate(FakeClock())
    assert gate.enter()
    assert gate.in_flight == 1
    assert math.isinf(gate.time_to_cutoff())
    assert not gate.stopping and not gate.cut_off
    gate.leave()
    assert gate.in_flight == 0


def test_a_stopping_gate_refuses_new_calls_and_counts_down_to_the_cutoff() -> None:
    clock = FakeClock()
    gate = StopGate(clock)
    assert gate.enter()
    gate.begin_stop(2.0)
    assert gate.stopping
    assert not gate.enter()  # refused, not counted
    assert gate.in_flight == 1
    assert gate.time_to_cutoff() == 2.0
    gate.begin_stop(10.0)  # a second signal does not move the cut-off
    clock.now += 2.0
    assert gate.cut_off


def test_draining_ends_when_the_last_call_leaves_or_at_the_cutoff() -> None:
    clock = FakeClock()
    gate = StopGate(clock)
    gate.begin_stop(1.0)
    assert gate.wait_for_drain()  # nothing in flight
    busy = StopGate(clock)
    busy.enter()
    busy.begin_stop(1.0)
    clock.now += 1.0
    assert not busy.wait_for_drain()  # past the cut-off with a call still in flight
    assert not busy.wait_for_drain(extra_seconds=-0.5)
    busy.leave()
    assert busy.wait_for_drain()
