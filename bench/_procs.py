"""CPU time, memory and process trees read from /proc, and latency percentiles.

Shared by the benchmark scripts (run as ``python bench/<name>.py``, so this folder is on the path).
CPU is user plus system time; a process that exited between two readings counts only up to the
last reading that saw it, which is why :func:`cpu_by_pid` can also add reaped children's time.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterable
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ")".
    return text.rsplit(")", 1)[1].split()


def cpu_by_pid(pids: Iterable[int], *, reaped_children: bool = False) -> dict[int, float]:
    """Each live process's user + system CPU seconds (with ``reaped_children``, plus the time of
    its children that exited and were waited for: a postmaster's finished backends)."""
    seconds: dict[int, float] = {}
    for pid in pids:
        fields = _stat_fields(pid)
        if fields is None:
            continue
        ticks = int(fields[11]) + int(fields[12])
        if reaped_children:
            ticks += int(fields[13]) + int(fields[14])
        seconds[pid] = ticks / _TICKS
    return seconds


def cpu_delta(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU spent between two :func:`cpu_by_pid` readings; a process born in between counts from
    0, one that vanished in between counts what the first reading saw it spend before (nothing
    after: the caller reports how many vanished)."""
    return sum(after[pid] - before.get(pid, 0.0) for pid in after)


def parents() -> dict[int, int]:
    """Every live process's parent pid."""
    found: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields is not None:
                found[int(entry.name)] = int(fields[1])
    return found


def process_tree(root: int) -> list[int]:
    """``root`` and all its live descendants."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents().items():
        children.setdefault(parent, []).append(pid)
    tree, pending = [], [root]
    while pending:
        pid = pending.pop()
        tree.append(pid)
        pending.extend(children.get(pid, ()))
    return tree


def rss_mb(pids: Iterable[int]) -> float:
    """Resident memory of these processes together, in MB (vanished ones count 0)."""
    total_kb = 0
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/status").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith("VmRSS:"):
                total_kb += int(line.split()[1])
    return round(total_kb / 1024, 1)


def percentile(values: list[float], fraction: float) -> float | None:
    """The nearest-rank percentile of ``values`` (None when there are none), rounded to 0.01."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))], 2)


def latency_summary(milliseconds: list[float]) -> dict[str, float | int | None]:
    """Count, p50, p99 and max of some latencies in ms."""
    return {
        "count": len(milliseconds),
        "p50_ms": percentile(milliseconds, 0.50),
        "p99_ms": percentile(milliseconds, 0.99),
        "max_ms": round(max(milliseconds), 2) if milliseconds else None,
    }


def per_unit(total_seconds: float, units: int) -> float | None:
    """CPU seconds per unit as whole microseconds (None when there were no units)."""
    return round(total_seconds / units * 1e6, 1) if units else None


def stop_cleanly_on_sigterm() -> None:
    """Make SIGTERM (``timeout``, a supervisor) raise SystemExit, so that the ``with`` blocks
    stop the server, the load processes and the private PostgreSQL instead of orphaning them."""
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))


def progress(message: str) -> None:
    """One line on stderr: where a long run is (the JSON goes to stdout at the end)."""
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)
