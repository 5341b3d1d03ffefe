"""``make torture``: SIGKILL the server and crash its database under bot load, and prove that no
acknowledged call was lost or doubled, nothing was half-written, the audit holds and every table
finishes its series. Prints the figures as JSON (docs/reliability.md records them).

    python -m torture.run [--profile full|short] [--seed N] [--keep] [--output FILE]

It runs its own PostgreSQL cluster in a temporary folder and ``sapsam serve`` as a child process,
first as one process, then with ``--workers 2``. In each phase, in an order drawn from the seeded
random generator: SIGKILLs of the server at random moments, PostgreSQL restarted ``-m fast`` and
``-m immediate``, PostgreSQL stopped for a while, and a kill across a deadline. After each: the
checks of ``torture.checks`` and ``sapsam audit verify --all``. At the end the lanes finish their
series and everything is checked once more. Exit status 0 when every invariant held.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import grpc

from sapsam_proto.v1 import player_service_pb2, player_service_pb2_grpc
from torture import checks
from torture.cluster import PostgresCluster, free_port
from torture.deadline import cross_deadline
from torture.ledger import Ledger, Stats
from torture.load import Lane, LaneConfig, Lateness, TableRecord
from torture.report import count, deadlines_extended, spread, timeouts_seen
from torture.server import ServerProcess, log_findings


@dataclass(frozen=True)
class Profile:
    """How hard one run pushes."""

    lanes: int
    laggard_lanes: int
    series_length: int
    deadline_seconds: int
    """Arranging and reveal deadline of an ordinary lane's tables."""
    laggard_deadline_seconds: int
    kills: tuple[int, int]
    """SIGKILLs in the single-process phase and in the ``--workers 2`` phase."""
    database_restarts: tuple[tuple[int, int], tuple[int, int]]
    """PostgreSQL stopped ``-m fast`` and ``-m immediate`` and started at once, per phase."""
    database_stops: tuple[int, int]
    """PostgreSQL stopped (``-m fast``) for ``stop_seconds``, per phase."""
    stop_seconds: float
    deadline_kills: tuple[tuple[str, ...], tuple[str, ...]]
    """The deadline stage each kill across a deadline straddles, per phase."""
    gap_seconds: tuple[float, float]
    """Load between two disruptions: uniform in this range."""
    drain_seconds: float
    audit_after_kills: bool
    """Run ``sapsam audit verify --all`` after every kill too (else after the others only)."""


PROFILES = {
    # CI: about 5 minutes on two busy cores; the audit after the database disruptions, the kill
    # across a deadline and at the end (the kills' checkpoints run the ledger and log checks).
    "short": Profile(
        lanes=2,
        laggard_lanes=1,
        series_length=4,
        deadline_seconds=30,
        laggard_deadline_seconds=8,
        kills=(4, 3),
        database_restarts=((1, 1), (0, 1)),
        database_stops=(1, 0),
        stop_seconds=20.0,
        deadline_kills=(("revealing",), ()),
        gap_seconds=(1.0, 4.0),
        drain_seconds=180.0,
        audit_after_kills=False,
    ),
    # The run: 24 kills, both database restarts and a 20 s stop in each phase, kills
    # across both deadlines, the audit after every disruption.
    "full": Profile(
        lanes=3,
        laggard_lanes=1,
        series_length=6,
        deadline_seconds=30,
        laggard_deadline_seconds=8,
        kills=(12, 12),
        database_restarts=((1, 1), (1, 1)),
        database_stops=(1, 1),
        stop_seconds=20.0,
        deadline_kills=(("revealing", "arranging"), ("revealing",)),
        gap_seconds=(1.0, 6.0),
        drain_seconds=300.0,
        audit_after_kills=True,
    ),
}


class Torture:
    """One run: the cluster, the server, the lanes, the disruptions and what was seen."""

    def __init__(self, profile: Profile, seed: int, folder: Path) -> None:
        self.profile = profile
        self.seed = seed
        self.random = random.Random(seed)
        self.folder = folder
        self.cluster = PostgresCluster(folder / "postgres")
        self.ledger = Ledger(folder / "ledger.jsonl")
        self.stats = Stats()
        self.stop = threading.Event()
        self.tables: list[TableRecord] = []
        self.late: list[Lateness] = []
        self.lanes: list[Lane] = []
        self.server: ServerProcess | None = None
        self.port = free_port()
        self.disruptions: list[dict[str, Any]] = []
        self.checkpoints: list[dict[str, Any]] = []
        self.deadline_results: list[dict[str, Any]] = []
        self.began = time.monotonic()

    # -- the parts ------------------------------------------------------------------------------

    def start_server(self, workers: int) -> ServerProcess:
        """A fresh ``sapsam serve`` (``workers`` processes), serving."""
        server = ServerProcess(self.cluster.url, self.port, workers, self.folder / "server.log")
        server.start()
        server.wait_serving()
        return server

    def start_lanes(self) -> None:
        """The bot load."""
        profile = self.profile
        for index in range(profile.lanes):
            laggard = index < profile.laggard_lanes
            seconds = profile.laggard_deadline_seconds if laggard else profile.deadline_seconds
            config = LaneConfig(profile.series_length, seconds, seconds, laggard)
            lane = Lane(
                index,
                f"127.0.0.1:{self.port}",
                config,
                self.ledger,
                self.stats,
                self.stop,
                self.tables,
                self.late,
            )
            self.lanes.append(lane)
            lane.start()

    def probe_write(self, timeout: float = 120.0) -> float:
        """Seconds until a call that writes to the database succeeds (a RegisterPlayer)."""
        began = time.monotonic()
        with grpc.insecure_channel(f"127.0.0.1:{self.port}") as channel:
            players = player_service_pb2_grpc.PlayerServiceStub(channel)
            while time.monotonic() - began < timeout:
                request = player_service_pb2.RegisterPlayerRequest(
                    request_id=str(uuid.uuid4()), display_name="probe"
                )
                try:
                    players.RegisterPlayer(request, timeout=2.0)
                    return time.monotonic() - began
                except grpc.RpcError:
                    time.sleep(0.05)
        raise RuntimeError("no write succeeded within the timeout")

    # -- disruptions ----------------------------------------------------------------------------

    def kill(self, mode: str) -> dict[str, Any]:
        """SIGKILL the server now, start it again at once, wait until it serves."""
        assert self.server is not None
        killed_at = time.time()
        killed = self.server.kill(mode)
        self.server.start()
        serving = self.server.wait_serving()
        return {
            "kind": "kill",
            "mode": killed,
            "at": killed_at,
            "down_s": round(time.time() - killed_at, 2),
            "restart_to_serving_s": round(serving, 2),
        }

    def kill_across(self, kill_at: float, restart_after: float) -> dict[str, Any]:
        """SIGKILL at wall time ``kill_at``; start again once ``restart_after`` has passed."""
        assert self.server is not None
        time.sleep(max(0.0, kill_at - time.time()))
        killed_at = time.time()
        mode = self.server.kill("group")
        time.sleep(max(0.0, restart_after - time.time()))
        self.server.start()
        serving = self.server.wait_serving()
        return {
            "kind": "kill",
            "mode": mode,
            "at": killed_at,
            "down_s": round(time.time() - killed_at, 2),
            "restart_to_serving_s": round(serving, 2),
        }

    def database_restart(self, mode: str, down_seconds: float = 0.0) -> dict[str, Any]:
        """Stop PostgreSQL (``mode``), keep it down ``down_seconds``, start it, and time how
        long the server takes to write again once the database is ready."""
        assert self.server is not None
        stopped_at = time.time()
        self.cluster.stop(mode)
        time.sleep(down_seconds)
        self.cluster.start()
        ready_at = time.time()
        recovery = self.probe_write()
        exited = self.server.process is not None and self.server.process.poll() is not None
        return {
            "kind": "database",
            "mode": f"{mode}, down {down_seconds:.0f} s" if down_seconds else mode,
            "at": stopped_at,
            "down_s": round(ready_at - stopped_at, 2),
            "ready_to_write_s": round(recovery, 2),
            "server_exited": exited,
        }

    def disrupt(self, event: str, workers: int) -> dict[str, Any]:
        """One disruption by name."""
        if event == "kill":
            modes = ("group",) if workers == 1 else ("group", "group", "supervisor", "worker")
            return self.kill(self.random.choice(modes))
        if event in ("fast", "immediate"):
            return self.database_restart(event)
        if event == "stop":
            return self.database_restart("fast", self.profile.stop_seconds)
        stage = event.removeprefix("deadline-")
        result = cross_deadline(
            f"127.0.0.1:{self.port}",
            self.cluster.url,
            stage,
            self.ledger,
            self.stats,
            self.kill_across,
        )
        self.deadline_results.append({**result, "workers": workers})
        return {
            **result["disruption"],
            "kind": f"kill across the {stage} deadline",
            "fair": result["fair"],
        }

    def checkpoint(self, label: str, final: bool = False, audit: bool = True) -> dict[str, Any]:
        """Every invariant, now (the audit too, unless ``audit`` is false)."""
        ledger = checks.check_ledger(self.cluster.url, self.ledger.snapshot())
        log = checks.check_log(self.cluster.url)
        audited = checks.run_audit(self.cluster.url) if audit or final else None
        problems = sum(
            ledger.get(kind, 0) + log.get(kind, 0)
            for kind in ("lost", "doubled", "half-written", "mismatched", "unsigned")
        )
        audit_holds = (
            audited is None
            or audited["exit"] == 0
            or (
                # Mid-load a deal may be in play (exit 3).
                not final and audited["exit"] == 3
            )
        )
        raced = audited is not None and not final and checks.audit_raced_the_load(audited)
        result: dict[str, Any] = {
            "label": label,
            "at_s": round(time.monotonic() - self.began, 1),
            "acknowledged": ledger["acknowledged"],
            "problems": problems,
            "audit_exit": None if audited is None else audited["exit"],
            "audit_s": None if audited is None else audited["seconds"],
            "audit_raced_the_load": raced,
            "holds": problems == 0 and (audit_holds or raced),
        }
        if not result["holds"] or final or raced:
            result["ledger"], result["log"], result["audit"] = ledger, log, audited
        self.checkpoints.append(result)
        print(json.dumps({"checkpoint": result}, default=str), flush=True)
        return result

    def phase(self, workers: int, index: int) -> None:
        """One phase's disruptions in a seeded random order, a checkpoint after each."""
        profile = self.profile
        events = ["kill"] * profile.kills[index]
        fast, immediate = profile.database_restarts[index]
        events += ["fast"] * fast + ["immediate"] * immediate
        events += ["stop"] * profile.database_stops[index]
        events += [f"deadline-{stage}" for stage in profile.deadline_kills[index]]
        self.random.shuffle(events)
        for number, event in enumerate(events, 1):
            time.sleep(self.random.uniform(*profile.gap_seconds))
            window = self.stats.window()
            began = time.monotonic()
            disruption = self.disrupt(event, workers)
            disruption.update(
                phase=f"workers={workers}",
                seconds=round(time.monotonic() - began, 2),
                failed_attempts=window.close(),
            )
            self.disruptions.append(disruption)
            print(json.dumps({"disruption": disruption}, default=str), flush=True)
            audit = event != "kill" or profile.audit_after_kills
            self.checkpoint(f"workers={workers} #{number} {event}", audit=audit)

    # -- the whole run --------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Set up, both phases, drain, final checks; the figures."""
        self.cluster.create()
        self.server = self.start_server(1)
        self.start_lanes()
        time.sleep(3.0)
        self.phase(workers=1, index=0)
        # The switch to --workers 2 is a graceful stop (SIGTERM) under load.
        stopped = self.server.terminate()
        self.disruptions.append({"kind": "graceful stop", "exit": stopped, "at": time.time()})
        self.server = self.start_server(2)
        self.phase(workers=2, index=1)
        self.stop.set()
        drain_began = time.monotonic()
        for lane in self.lanes:
            lane.join(max(0.0, self.profile.drain_seconds - (time.monotonic() - drain_began)))
        drain = time.monotonic() - drain_began
        final = self.checkpoint("final", final=True)
        graceful_exit = self.server.terminate()
        return self.figures(final, drain, graceful_exit)

    def figures(self, final: dict[str, Any], drain: float, exit_code: int | None) -> dict[str, Any]:
        """What the run measured, and whether everything held."""
        kills = [
            item
            for item in self.disruptions
            if item.get("mode") in ("group", "supervisor", "worker")
        ]
        database = [item for item in self.disruptions if item["kind"] == "database"]
        timeouts = timeouts_seen(self.cluster.url, self.late, self.disruptions)
        assert self.server is not None
        server_log = log_findings(self.server.log_path)
        unfinished = [lane.name for lane in self.lanes if lane.is_alive()]
        log = final["log"]
        ledger = final["ledger"]
        held = (
            all(point["holds"] for point in self.checkpoints)
            and not log["unfinished_tables"]
            and not unfinished
            and all(
                result["fair"] and result["series_complete"] for result in self.deadline_results
            )
            and not timeouts["unexpected"]
            and not any(lane.failure for lane in self.lanes)
        )
        return {
            "held": held,
            "seed": self.seed,
            "profile": asdict(self.profile),
            "seconds": round(time.monotonic() - self.began, 1),
            "drain_seconds": round(drain, 1),
            "server_kills": len(kills),
            "server_kills_by_mode": count(item["mode"] for item in kills),
            "restart_to_serving_s": spread([item["restart_to_serving_s"] for item in kills]),
            "database_restarts": count(item["mode"] for item in database),
            "database_down_s": [item["down_s"] for item in database],
            "database_ready_to_write_s": [item["ready_to_write_s"] for item in database],
            "server_exited_during_database_outage": sum(
                1 for item in database if item["server_exited"]
            ),
            "kills_across_deadlines": self.deadline_results,
            "acknowledged_calls": ledger["acknowledged"],
            "acknowledged_by_method": count(entry["method"] for entry in self.ledger.snapshot()),
            "lost": ledger.get("lost", 0),
            "doubled": ledger.get("doubled", 0) + log.get("doubled", 0),
            "half_written": ledger.get("half-written", 0) + log.get("half-written", 0),
            "mismatched": ledger.get("mismatched", 0),
            "checkpoints": len(self.checkpoints),
            "checkpoints_failed": [point for point in self.checkpoints if not point["holds"]],
            "audits": sum(1 for point in self.checkpoints if point["audit_exit"] is not None),
            "audits_that_raced_the_load": sum(
                1 for point in self.checkpoints if point["audit_raced_the_load"]
            ),
            "audit_seconds": spread(
                [point["audit_s"] for point in self.checkpoints if point["audit_s"] is not None]
            ),
            "final_audit_exit": final["audit_exit"],
            "tables": log["tables"],
            "tables_complete": log["tables_complete"],
            "unfinished_tables": log["unfinished_tables"],
            "lanes_still_running": unfinished,
            "lane_failures": [lane.failure for lane in self.lanes if lane.failure],
            "deals_scored": log["deals_scored"],
            "events": log["events"],
            "timeouts": timeouts,
            "deadlines_extended": deadlines_extended(self.cluster.url),
            "counters": dict(sorted(self.stats.counts.items())),
            "slowest_failed_attempt_s": {
                key: round(value, 2) for key, value in sorted(self.stats.maxima.items())
            },
            "notes": self.stats.notes[:40],
            "server_log": server_log,
            "server_exit_on_sigterm": exit_code,
            "disruptions": self.disruptions,
        }


def main(argv: list[str] | None = None) -> int:
    """Run a profile and print its figures as JSON; exit 0 when everything held."""
    parser = argparse.ArgumentParser(prog="python -m torture.run", description=__doc__)
    parser.add_argument("--profile", choices=sorted(PROFILES), default="full")
    parser.add_argument("--seed", type=int, help="random seed (default: drawn and printed)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (database too)")
    parser.add_argument("--output", type=Path, help="also write the figures to this file")
    arguments = parser.parse_args(argv)
    seed = arguments.seed if arguments.seed is not None else random.SystemRandom().randrange(2**31)
    folder = Path(tempfile.mkdtemp(prefix="sapsam-torture-"))
    folder.chmod(0o755)
    print(
        json.dumps({"torture": arguments.profile, "seed": seed, "folder": str(folder)}), flush=True
    )
    torture = Torture(PROFILES[arguments.profile], seed, folder)
    figures: dict[str, Any] = {"held": False, "seed": seed}
    try:
        figures = torture.run()
    finally:
        torture.stop.set()
        if torture.server is not None:
            torture.server.stop_group()
        torture.ledger.close()
        text = json.dumps(figures, indent=2, default=str)
        print(text, flush=True)
        if arguments.output is not None:
            arguments.output.write_text(text + "\n")
        if arguments.keep or not figures.get("held"):
            print(json.dumps({"kept": str(folder)}), flush=True)
            if not arguments.keep:  # the ledger and the server's log stay for a post-mortem
                if torture.cluster.running():
                    torture.cluster.stop("fast")
                shutil.rmtree(torture.cluster.pgdata, ignore_errors=True)
        else:
            torture.cluster.destroy()
            shutil.rmtree(folder, ignore_errors=True)
    return 0 if figures.get("held") else 1


if __name__ == "__main__":
    raise SystemExit(main())
