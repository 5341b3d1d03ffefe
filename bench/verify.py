"""Offline verification: ``sapsam audit verify FILE`` start-up to verdict, and deals per CPU second.

Prints one JSON object. No database and no network: the exports are made in memory by the pure
domain (``sapsam.audit.sample_series``), as an auditor at home holds them.

- ``process``: whole-process wall time of ``sapsam audit verify FILE`` on one deal export (start-up
  included), median and p90 over ``--runs`` runs, plus each run's CPU (user + system, from the
  kernel's count of the reaped child). Two ways to start it: ``python -m sapsam.cli`` and the
  ``sapsam`` script installed beside the interpreter (a console-scripts wrapper), when there is
  one. The baseline ``python -c pass`` runs in the same rounds, alternating, so a burst of other
  work on a shared machine lands on every command alike; ``over_baseline_ms`` is the difference of
  medians. Compiled bytecode is written to a private folder (``PYTHONPYCACHEPREFIX``) and one
  warm-up run precedes the timed ones, as for an installed package with its ``.pyc`` files.
- ``throughput``: deals verified per second of this process's CPU time (``time.process_time``:
  one core's cost, free of what other processes took) over ``--deals`` one-deal exports held in
  memory as JSON lines, for 2, 3 and 4 seats, best of three passes; and the same for whole-table
  exports (eight deals each). Each file is verified once first, and each must pass.
- ``verifies``: what a verification includes. Every export carries its proof (docs/audit.md
  §2.5): the tables are interleaved into one log whose tree is signed by a test key, and each
  verification checks the checkpoint's Ed25519 signature against the pinned key and every event's
  inclusion proof, as ``sapsam audit verify FILE --server-key KEY`` does (the process runs pass
  the key). Each file carries its own copy of the note. A process checks each distinct note's
  signatures once (``sapsam.audit.anchoring``: deals exported within the same few seconds carry
  the same checkpoint), and this script's files all carry the same one, so in ``throughput``'s
  ``deal_exports_per_cpu_s`` the signature is checked once per pass;
  ``deal_exports_per_cpu_s_signature_each`` empties that cache before every file, so each file
  pays for its signature too. A process also keeps the inclusion walks of one tree (a proof that
  reaches a node an earlier proof reached, with the same hashes left, takes that proof's root:
  ``sapsam.audit.inclusion_walk``), the lots redrawn, the rule sets read and the opening lines
  a table's deal exports share (read, decoded and chained once), each a memo of a pure
  function; ``..._nothing_shared`` forgets all of it before every file
  (``sapsam.audit.verifier.forget_shared_work``), so each file is verified as in a process of
  its own: the figure for exports that share nothing.

Usage: ``python bench/verify.py [--runs 20] [--deals 400]``.
Targets (issue #15): a one-deal ``audit verify`` process <= 150 ms wall; >= 2,000 deals/s/core.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _procs import percentile

from sapsam.audit import (
    AuditReport,
    Requester,
    select_deal,
    select_table,
    verify_export,
    write_lines,
)
from sapsam.audit.anchoring import Trust, forget_opened_notes
from sapsam.audit.report import Verdict
from sapsam.audit.sample_anchored import anchored_log
from sapsam.audit.sample_series import recorded_stream
from sapsam.audit.verifier import forget_shared_work
from sapsam.log.signed_note import NoteSigner

TARGET_PROCESS_MS = 150
TARGET_DEALS_PER_CPU_S = 2_000
SERIES_LENGTH = 8

SIGNER = NoteSigner.from_seed("sapsam/bench", bytes(32))
TRUST = Trust(server_keys=(SIGNER.verifier,))


def _verify_anchored(lines: Sequence[str]) -> AuditReport:
    report = verify_export(lines, trust=TRUST)
    assert report.verdict is Verdict.ANCHORED, report.failed_names()
    return report


# The verification measured: the content checks, the signature and every inclusion proof.
_VERIFY: Callable[[Sequence[str]], AuditReport] = _verify_anchored
VERIFIES = [
    "format",
    "hash chain",
    "decode",
    "sequence",
    "fairness",
    "scores",
    "series totals",
    "checkpoint signature (Ed25519)",
    "inclusion proofs (RFC 9162)",
]


def _export_lines(seat_count: int, tables: int) -> tuple[list[list[str]], list[list[str]]]:
    """One-deal exports and whole-table exports of ``tables`` finished series, each carrying its
    proof in one log of every table interleaved (with ``tables`` 50, about 12,000 leaves: proofs
    of 14 hashes)."""
    operator = Requester.operator()
    streams = [recorded_stream(seat_count, deals=SERIES_LENGTH) for _ in range(tables)]
    log = anchored_log(streams, SIGNER)
    deals = [
        list(write_lines(log.anchored(select_deal(stream, number, operator))))
        for stream in log.streams
        for number in range(1, SERIES_LENGTH + 1)
    ]
    whole = [
        list(write_lines(log.anchored(select_table(stream, operator)))) for stream in log.streams
    ]
    return deals, whole


def _deals_per_cpu_s(
    files: list[list[str]], repeats: int = 3, forget: Callable[[], None] | None = None
) -> tuple[int, int]:
    """Deals verified per CPU second over ``files`` (best of ``repeats`` passes), and the deals;
    with ``forget``, it is called before each file (what the files would otherwise share is
    verified anew for each)."""
    deals = 0
    for lines in files:
        report = _VERIFY(lines)
        assert report.ok, report.failed_names()
        deals += report.deals_verified
    best = 0.0
    for _ in range(repeats):
        started = time.process_time()
        if forget is not None:
            for lines in files:
                forget()
                _VERIFY(lines)
        else:
            for lines in files:
                _VERIFY(lines)
        best = max(best, deals / (time.process_time() - started))
    return round(best), deals


def measure_throughput(deal_count: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for seat_count in (2, 3, 4):
        deals, whole = _export_lines(seat_count, max(1, deal_count // SERIES_LENGTH))
        deal_rate, verified = _deals_per_cpu_s(deals)
        each_rate, _ = _deals_per_cpu_s(deals, forget=forget_opened_notes)
        alone_rate, _ = _deals_per_cpu_s(deals, forget=forget_shared_work)
        table_rate, _ = _deals_per_cpu_s(whole)
        table_alone_rate, _ = _deals_per_cpu_s(whole, forget=forget_shared_work)
        results[f"{seat_count}_seats"] = {
            "deal_exports_per_cpu_s": deal_rate,
            "deal_exports_per_cpu_s_signature_each": each_rate,
            "deal_exports_per_cpu_s_nothing_shared": alone_rate,
            "table_exports_per_cpu_s": table_rate,
            "table_exports_per_cpu_s_nothing_shared": table_alone_rate,
            "deals": verified,
            "events_per_deal_export": round(sum(len(f) - 1 for f in deals) / len(deals), 1),
        }
    return results


def _run_once(command: list[str], environment: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``command`` (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, env=environment, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def measure_process(runs: int, folder: Path) -> dict[str, Any]:
    deal_file = folder / "deal.jsonl"
    deals, _ = _export_lines(4, 1)
    deal_file.write_text("".join(line + "\n" for line in deals[0]), encoding="utf-8")
    verify = ["audit", "verify", str(deal_file), "--server-key", SIGNER.verifier.vkey()]
    environment = dict(os.environ, PYTHONPYCACHEPREFIX=str(folder / "pycache"))
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    commands = {
        "baseline_python_c_pass": [sys.executable, "-c", "pass"],
        "python_m_sapsam": [sys.executable, "-m", "sapsam.cli", *verify],
    }
    script = Path(sys.executable).with_name("sapsam")
    if script.exists():
        commands["sapsam_script"] = [str(script), *verify]
    for command in commands.values():  # warm-up: bytecode written, files in the page cache
        _run_once(command, environment)
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):  # alternating: one run of each command per round
        for name, command in commands.items():
            wall, cpu = _run_once(command, environment)
            walls[name].append(wall * 1000)
            cpus[name].append(cpu * 1000)
    results: dict[str, Any] = {"runs": runs, "load_average_1m": round(os.getloadavg()[0], 2)}
    baseline = statistics.median(walls["baseline_python_c_pass"])
    for name in commands:
        median = statistics.median(walls[name])
        results[name] = {
            "wall_median_ms": round(median, 1),
            "wall_p90_ms": percentile(walls[name], 0.9),
            "wall_min_ms": round(min(walls[name]), 1),
            "cpu_median_ms": round(statistics.median(cpus[name]), 1),
        }
        if name != "baseline_python_c_pass":
            results[name]["over_baseline_ms"] = round(median - baseline, 1)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs of each command")
    parser.add_argument("--deals", type=int, default=400, help="one-deal exports per seat count")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sapsam-bench-verify-") as folder:
        process = measure_process(arguments.runs, Path(folder))
    throughput = measure_throughput(arguments.deals)
    worst_rate = min(entry["deal_exports_per_cpu_s"] for entry in throughput.values())
    worst_each = min(
        entry["deal_exports_per_cpu_s_signature_each"] for entry in throughput.values()
    )
    worst_alone = min(
        entry["deal_exports_per_cpu_s_nothing_shared"] for entry in throughput.values()
    )
    worst_table_alone = min(
        entry["table_exports_per_cpu_s_nothing_shared"] for entry in throughput.values()
    )
    print(
        json.dumps(
            {
                "process": process,
                "throughput": throughput,
                "verifies": VERIFIES,
                "targets": {
                    "process_wall_median_ms": TARGET_PROCESS_MS,
                    "deals_per_cpu_s": TARGET_DEALS_PER_CPU_S,
                    "process_met": process["python_m_sapsam"]["wall_median_ms"]
                    <= TARGET_PROCESS_MS,
                    "throughput_met": worst_rate >= TARGET_DEALS_PER_CPU_S,
                    "throughput_met_signature_each": worst_each >= TARGET_DEALS_PER_CPU_S,
                    "throughput_met_nothing_shared": worst_alone >= TARGET_DEALS_PER_CPU_S,
                    "table_throughput_met_nothing_shared": worst_table_alone
                    >= TARGET_DEALS_PER_CPU_S,
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
