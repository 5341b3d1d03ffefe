"""CPU per echo RPC and per game RPC by what the server's event loop ran, from the files
``bench/task_cpu_probe/sitecustomize.py`` wrote during a ``bench/service.py`` run.

Prints one JSON object. Each half second of each server process is one interval; an interval in
which only Echo calls ended counts for the echo, one in which only game calls ended (no set-up
call such as CreateTable or JoinTable) for the game, any other is left out. For each phase: calls,
the process's CPU per call, each label's CPU per call and callbacks per call (largest first; the
labels are the probe's), each thread's CPU per call, and for the game each method's CPU per call
of that method, inside the servicer (``svc``) and after it (``post``). ``same`` holds the CPU of
the call log's ``around`` and of a read's servicer alone, per call that ran within one callback.

Usage: ``python bench/task_cpu_probe/summarise.py PREFIX [--top 30]``
"""

from __future__ import annotations

import argparse
import glob
import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

SET_UP_CALLS = frozenset(
    {"CreateTable", "JoinTable", "ChooseDealer", "RegisterPlayer", "RegisterPlayerKey"}
)
TICK_US = 10_000  # /proc's clock ticks (USER_HZ 100)


@dataclass
class Phase:
    """What the intervals of one phase add up to."""

    calls: Counter[str] = field(default_factory=Counter)
    cpu_ns: Counter[str] = field(default_factory=Counter)
    runs: Counter[str] = field(default_factory=Counter)
    thread_ticks: Counter[str] = field(default_factory=Counter)
    process_cpu_ns: int = 0


def _delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {key: value - before.get(key, 0) for key, value in after.items()}


def _parsed(line: str) -> dict[str, Any] | None:
    """A line's totals; None for a line cut short (the process ended as it wrote)."""
    try:
        totals = json.loads(line)
    except ValueError:
        return None
    return totals if isinstance(totals, dict) and "thread_ticks" in totals else None


def phase_of(calls: dict[str, int]) -> str | None:
    """The phase an interval in which ``calls`` ended belongs to, or None."""
    ended = {method for method, count in calls.items() if count}
    if not ended:
        return None
    if ended == {"Echo"}:
        return "echo"
    if "Echo" in ended or ended & SET_UP_CALLS:
        return None
    return "game"


def gather(prefix: str) -> dict[str, Phase]:
    """Every server process's intervals, added up by phase."""
    phases = {"echo": Phase(), "game": Phase()}
    for path in sorted(glob.glob(f"{glob.escape(prefix)}.*")):
        with open(path) as lines:
            totals = [_parsed(line) for line in lines]
        for before, after in itertools.pairwise(total for total in totals if total):
            calls = _delta(after["calls"], before["calls"])
            name = phase_of(calls)
            if name is None:
                continue
            phase = phases[name]
            phase.calls.update({method: count for method, count in calls.items() if count})
            phase.cpu_ns.update(_delta(after["cpu_ns"], before["cpu_ns"]))
            phase.runs.update(_delta(after["runs"], before["runs"]))
            for thread, ticks in after["thread_ticks"].items():
                if thread in before["thread_ticks"]:
                    kind = thread.split(":", 1)[0]
                    phase.thread_ticks[kind] += ticks - before["thread_ticks"][thread]
            phase.process_cpu_ns += after["process_cpu_ns"] - before["process_cpu_ns"]
    return phases


def summary(phase: Phase, top: int) -> dict[str, Any]:
    """One phase's figures per call."""
    calls = sum(phase.calls.values())
    if not calls:
        return {"calls": 0}
    per_call = {
        label: [round(cpu / calls / 1e3, 1), round(phase.runs[label] / calls, 2)]
        for label, cpu in phase.cpu_ns.most_common()
        if not label.startswith("same:")
    }
    result: dict[str, Any] = {
        "calls": calls,
        "process_cpu_us_per_call": round(phase.process_cpu_ns / calls / 1e3, 1),
        "callbacks_per_call": round(
            sum(runs for label, runs in phase.runs.items() if not label.startswith("same:"))
            / calls,
            1,
        ),
        "threads_cpu_us_per_call": {
            kind: round(ticks * TICK_US / calls, 1) for kind, ticks in phase.thread_ticks.items()
        },
        "labels_us_and_callbacks_per_call": dict(list(per_call.items())[:top]),
        "same": {
            label.removeprefix("same:"): [
                round(cpu / phase.runs[label] / 1e3, 1),
                phase.runs[label],
            ]
            for label, cpu in sorted(phase.cpu_ns.items())
            if label.startswith("same:") and phase.runs[label]
        },
        "calls_by_method": dict(phase.calls),
    }
    by_method: dict[str, dict[str, float]] = {}
    for method, count in phase.calls.items():
        parts = {
            part: round(phase.cpu_ns[f"{part}:{method}"] / count / 1e3, 1)
            for part in ("svc", "call", "post")
        }
        by_method[method] = {**parts, "in_all": round(sum(parts.values()), 1)}
    result["call_task_us_per_call_of_method"] = by_method
    return result


def main() -> None:
    """Print the summary's JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("prefix", help="SAPSAM_TASK_CPU_PROBE of the run")
    parser.add_argument("--top", type=int, default=30, help="labels listed per phase")
    arguments = parser.parse_args()
    phases = gather(arguments.prefix)
    print(
        json.dumps(
            {name: summary(phase, arguments.top) for name, phase in phases.items()}, indent=2
        )
    )


if __name__ == "__main__":
    main()
