"""The game service under load: deals/s and RPC latency beside an echo ceiling, and memory.

Prints one JSON object. Starts ``sapsam serve --workers 2 --bench-echo`` as a subprocess on a free
loopback port, on a private embedded PostgreSQL in a temporary folder (or on ``DATABASE_URL`` if
set), with fsync on (the default). Client processes (not threads of one process: the client side
must not be the bottleneck) each drive a few sequential callers, each on its own connection so the
kernel spreads them over the server's processes. Then, in order:

- ``echo``: every caller calls ``sapsam.bench.v1.EchoService/Echo`` (same server, thread pool,
  interceptors and call log as the game; see ``sapsam.api.bench_echo``) back to back: the ceiling;
- ``game``: every caller is a table of four scripted players playing deals (start, entropy from
  each seat, a table read, the cut, each hand read, solved, committed and confirmed, the reveals,
  the result), a new table when its series ends: complete deals/s, game RPCs/s, p50/p99;
- ``open_tables``: 1,000 tables created, four players seated, the dealer drawn and a deal started;
  then the server's RSS.

Server RSS is the sum over its worker processes (from /proc). Server and PostgreSQL CPU per RPC
come from /proc too (PostgreSQL only when embedded here). Every figure comes from one run on one
machine: read the ratios (``ratios``, beside ``targets``), not the absolutes.

Usage: ``python bench/service.py [--callers 16] [--client-processes 4] [--game-seconds 40]
[--echo-seconds 15] [--open-tables 1000]``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from sapsam import fairness
from sapsam.api.bench_echo import ECHO_METHOD
from sapsam.rules.cards import parse_cards
from sapsam.rules.ruleset import DEFAULT_RULE_SET
from sapsam.rules.solver import solve
from sapsam_proto.v1 import (
    player_service_pb2,
    player_service_pb2_grpc,
    table_pb2,
    table_service_pb2,
    table_service_pb2_grpc,
)

SEATS = 4
ECHO_PAYLOAD = os.urandom(96)  # about the size of a game request
TARGETS = {
    "game_rps_over_echo_rps_at_least": 0.5,
    "game_p99_over_echo_p99_at_most": 4.0,
    "rss_mb_with_open_tables_below": 300,
}
CHANNEL_OPTIONS = (("grpc.use_local_subchannel_pool", 1),)  # one connection per caller


# -- the server ----------------------------------------------------------------------------------


@dataclass
class Server:
    """The ``sapsam serve`` subprocess, its worker pids and its log file."""

    process: subprocess.Popen[bytes]
    port: int
    worker_pids: list[int]
    log_path: Path
    data_dir: Path | None

    @property
    def target(self) -> str:
        """Where clients connect."""
        return f"127.0.0.1:{self.port}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serving_pids(log_path: Path) -> list[int]:
    pids = []
    for line in log_path.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        message = str(record.get("message", ""))
        if record.get("logger") == "sapsam.api.server" and message.startswith("serving on"):
            pids.append(int(message.rsplit("pid ", 1)[1].rstrip(")")))
    return pids


@contextmanager
def running_server(workers: int, operator_token: str) -> Iterator[Server]:
    """``sapsam serve --workers N --bench-echo`` until the block ends (then SIGTERM)."""
    scratch = Path(tempfile.mkdtemp(prefix="sapsam-bench-service-"))
    embedded = not os.environ.get("DATABASE_URL")
    port = _free_port()
    log_path = scratch / "server.log"
    command = [
        sys.executable,
        "-m",
        "sapsam.cli",
        "serve",
        "--workers",
        str(workers),
        "--listen",
        f"127.0.0.1:{port}",
        "--bench-echo",
        "--operator-token",
        operator_token,
        # The benchmark measures the server flat out: the limits per caller would measure them.
        "--calls-per-second",
        "0",
        "--registrations-per-minute",
        "0",
        "--streams-per-player",
        "0",
    ]
    if embedded:
        command += ["--data-dir", str(scratch / "data")]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        pids: list[int] = []
        while len(pids) < workers:
            if process.poll() is not None:
                raise RuntimeError(f"sapsam serve exited: {log_path.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError("sapsam serve did not start in time")
            time.sleep(0.2)
            pids = _serving_pids(log_path)
        yield Server(process, port, pids, log_path, scratch / "data" if embedded else None)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(scratch, ignore_errors=True)


# -- /proc ------------------------------------------------------------------------------------


def rss_mb(pids: list[int]) -> float:
    """Resident memory of these processes together, in MB."""
    total_kb = 0
    for pid in pids:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total_kb += int(line.split()[1])
    return round(total_kb / 1024, 1)


def cpu_seconds(pids: list[int]) -> float:
    """User plus system CPU time of these processes, in seconds (vanished ones count 0)."""
    ticks = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def postgres_pids(data_dir: Path | None) -> list[int]:
    """The embedded PostgreSQL's processes (its postmaster and the postmaster's children)."""
    if data_dir is None:
        return []
    parents: dict[int, int] = {}
    postmaster = None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command_line = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        if b"postgres" in command_line and str(data_dir).encode() in command_line:
            postmaster = int(entry.name)
    if postmaster is None:
        return []
    return [postmaster, *(pid for pid, parent in parents.items() if parent == postmaster)]


# -- client side -------------------------------------------------------------------------------


@dataclass
class Tally:
    """What one client process saw inside the measured window."""

    latencies_ms: dict[str, list[float]] = field(default_factory=dict)
    deals: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, method: str, milliseconds: float) -> None:
        """One call's latency."""
        with self.lock:
            self.latencies_ms.setdefault(method, []).append(milliseconds)


@dataclass(frozen=True)
class Window:
    """When to start calling, when the measured part begins and ends (monotonic seconds)."""

    start: float
    measured_from: float
    until: float

    def measured(self, finished: float) -> bool:
        """Whether a call that finished then counts."""
        return self.measured_from <= finished <= self.until


class Caller:
    """One sequential caller on its own connection, recording calls inside the window."""

    def __init__(self, target: str, window: Window, tally: Tally) -> None:
        self.channel = grpc.insecure_channel(target, options=CHANNEL_OPTIONS)
        self.tables = table_service_pb2_grpc.TableServiceStub(self.channel)
        self.players = player_service_pb2_grpc.PlayerServiceStub(self.channel)
        self.echo = self.channel.unary_unary(ECHO_METHOD)
        self.window = window
        self.tally = tally

    def timed(self, method: str, call: Callable[..., Any], request: Any, token: str) -> Any:
        """Make one call, recording its latency if it finished inside the window."""
        started = time.monotonic()
        response = call(request, metadata=(("authorization", f"Bearer {token}"),), timeout=30)
        finished = time.monotonic()
        if self.window.measured(finished):
            self.tally.record(method, (finished - started) * 1000)
        return response

    def player_tokens(self, count: int) -> list[str]:
        """Register ``count`` players; their tokens."""
        tokens = []
        for index in range(count):
            request = player_service_pb2.RegisterPlayerRequest(
                request_id=str(uuid.uuid4()), display_name=f"bench player {index}"
            )
            response = self.players.RegisterPlayer(request, timeout=30)
            tokens.append(response.token)
        return tokens

    def seated_table(self, tokens: list[str]) -> tuple[str, list[str]]:
        """A new four-seat table with the players seated and the dealer drawn; name and seats."""
        table = self.timed(
            "CreateTable",
            self.tables.CreateTable,
            table_service_pb2.CreateTableRequest(
                request_id=str(uuid.uuid4()), rule_set_preset="pagat", seat_count=SEATS
            ),
            tokens[0],
        ).table.name
        seats = []
        for token in tokens:
            joined = self.timed(
                "JoinTable",
                self.tables.JoinTable,
                table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=table),
                token,
            )
            seats.append(joined.seat)
        self.timed(
            "ChooseDealer",
            self.tables.ChooseDealer,
            table_service_pb2.ChooseDealerRequest(request_id=str(uuid.uuid4()), table=table),
            tokens[0],
        )
        return table, seats

    def start_deal(self, table: str, token: str) -> str:
        """Start the next deal; its name."""
        return str(
            self.timed(
                "StartDeal",
                self.tables.StartDeal,
                table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table),
                token,
            ).deal
        )

    def play_deal(self, table: str, seats: list[str], tokens: list[str], deal_index: int) -> None:
        """One deal of four scripted players, call by call."""
        t = self.tables
        deal = self.start_deal(table, tokens[deal_index % SEATS])
        deal_number = int(deal.rsplit("/", 1)[1])
        for seat, token in zip(seats, tokens, strict=True):
            self.timed(
                "ContributeEntropy",
                t.ContributeEntropy,
                table_service_pb2.ContributeEntropyRequest(
                    request_id=str(uuid.uuid4()), seat=seat, entropy=os.urandom(16)
                ),
                token,
            )
        view = self.timed(
            "GetTable", t.GetTable, table_service_pb2.GetTableRequest(name=table), tokens[0]
        )
        cutter = seats.index(view.table.cutter_seat)
        self.timed(
            "CutDeck",
            t.CutDeck,
            table_service_pb2.CutDeckRequest(
                request_id=str(uuid.uuid4()), seat=seats[cutter], position=1 + deal_index % 51
            ),
            tokens[cutter],
        )
        table_id = uuid.UUID(table.removeprefix("tables/"))
        reveals = []
        for position, (seat, token) in enumerate(zip(seats, tokens, strict=True)):
            hand = self.timed(
                "GetMyHand", t.GetMyHand, table_service_pb2.GetMyHandRequest(seat=seat), token
            )
            arrangement = solve(parse_cards(list(hand.cards)), DEFAULT_RULE_SET)
            nonce = os.urandom(16)
            commitment = fairness.arrangement_commitment(
                table_id, deal_number, position, arrangement, nonce
            )
            self.timed(
                "CommitArrangement",
                t.CommitArrangement,
                table_service_pb2.CommitArrangementRequest(
                    request_id=str(uuid.uuid4()), seat=seat, commitment=commitment
                ),
                token,
            )
            reveals.append(
                table_service_pb2.RevealArrangementRequest(
                    request_id=str(uuid.uuid4()),
                    seat=seat,
                    arrangement=table_pb2.Arrangement(
                        front=[str(c) for c in arrangement.front],
                        middle=[str(c) for c in arrangement.middle],
                        back=[str(c) for c in arrangement.back],
                    ),
                    nonce=nonce,
                )
            )
        for seat, token in zip(seats, tokens, strict=True):
            self.timed(
                "ConfirmArrangement",
                t.ConfirmArrangement,
                table_service_pb2.ConfirmArrangementRequest(
                    request_id=str(uuid.uuid4()), seat=seat
                ),
                token,
            )
        for reveal, token in zip(reveals, tokens, strict=True):
            self.timed("RevealArrangement", t.RevealArrangement, reveal, token)
        result = self.timed(
            "GetDealResult",
            t.GetDealResult,
            table_service_pb2.GetDealResultRequest(name=deal),
            tokens[0],
        ).result
        if not result.scored:
            raise RuntimeError(f"{deal} was not scored after the last reveal")
        if self.window.measured(time.monotonic()):
            with self.tally.lock:
                self.tally.deals += 1

    def run_game(self) -> None:
        """Play series after series until the window ends."""
        tokens = self.player_tokens(SEATS)
        _sleep_until(self.window.start)
        while time.monotonic() < self.window.until:
            table, seats = self.seated_table(tokens)
            for deal_index in range(DEFAULT_RULE_SET.series_length):
                if time.monotonic() >= self.window.until:
                    return
                self.play_deal(table, seats, tokens, deal_index)

    def run_echo(self) -> None:
        """Echo back to back until the window ends."""
        token = self.player_tokens(1)[0]  # echo goes through authentication like the game
        _sleep_until(self.window.start)
        while time.monotonic() < self.window.until:
            if self.timed("Echo", self.echo, ECHO_PAYLOAD, token) != ECHO_PAYLOAD:
                raise RuntimeError("the echo answered other bytes")

    def open_tables(self, count: int) -> None:
        """Leave ``count`` tables open: players seated, dealer drawn, a deal started."""
        tokens = self.player_tokens(SEATS)
        for _ in range(count):
            table, _seats = self.seated_table(tokens)
            self.start_deal(table, tokens[0])


def _sleep_until(moment: float) -> None:
    time.sleep(max(0.0, moment - time.monotonic()))


def _run_caller(caller: Caller, job: str, tables_each: int) -> None:
    try:
        if job == "game":
            caller.run_game()
        elif job == "echo":
            caller.run_echo()
        else:
            caller.open_tables(tables_each)
    except grpc.RpcError as error:
        with caller.tally.lock:
            caller.tally.errors[f"{error.code().name}: {error.details()}"[:200]] += 1
    except Exception as error:  # reported, not hidden: the run is then not a clean one
        with caller.tally.lock:
            caller.tally.errors[f"{type(error).__name__}: {error}"[:200]] += 1
    finally:
        caller.channel.close()


def client_process(
    target: str, job: str, callers: int, window: Window, tables_each: int, results: Any
) -> None:
    """One client process: ``callers`` threads, each a sequential caller; tally sent back."""
    tally = Tally()
    threads = [
        threading.Thread(target=_run_caller, args=(Caller(target, window, tally), job, tables_each))
        for _ in range(callers)
    ]
    cpu_before = time.process_time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put(
        {
            "latencies_ms": tally.latencies_ms,
            "deals": tally.deals,
            "errors": dict(tally.errors),
            "cpu_seconds": time.process_time() - cpu_before,
        }
    )


# -- phases ------------------------------------------------------------------------------------


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))], 2)


def run_phase(
    server: Server,
    job: str,
    processes: int,
    callers: int,
    seconds: float,
    warmup: float,
    tables_each: int = 0,
) -> dict[str, Any]:
    """Run ``job`` in client processes and summarise what the measured window saw."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    start = time.monotonic() + 4.0  # time for the clients to import and register their players
    window = Window(start, start + warmup, start + warmup + seconds)
    children = [
        context.Process(
            target=client_process,
            args=(server.target, job, callers, window, tables_each, results),
        )
        for _ in range(processes)
    ]
    for child in children:
        child.start()
    database = postgres_pids(server.data_dir)
    _sleep_until(window.measured_from)
    server_cpu, database_cpu = cpu_seconds(server.worker_pids), cpu_seconds(database)
    _sleep_until(window.until)
    server_cpu = cpu_seconds(server.worker_pids) - server_cpu
    database_cpu = cpu_seconds(database) - database_cpu
    rss_under_load = rss_mb(server.worker_pids)
    tallies = [results.get(timeout=seconds + warmup + 120) for _ in children]
    for child in children:
        child.join()
    latencies: dict[str, list[float]] = {}
    for tally in tallies:
        for method, values in tally["latencies_ms"].items():
            latencies.setdefault(method, []).extend(values)
    every = [value for values in latencies.values() for value in values]
    rpcs = len(every)
    summary: dict[str, Any] = {
        "callers": processes * callers,
        "seconds": seconds,
        "rpcs": rpcs,
        "rpcs_per_second": round(rpcs / seconds, 1),
        "p50_ms": _percentile(every, 0.50),
        "p99_ms": _percentile(every, 0.99),
        "server_cpu_us_per_rpc": round(server_cpu / max(rpcs, 1) * 1e6),
        "client_cpu_seconds": round(sum(tally["cpu_seconds"] for tally in tallies), 1),
        "server_rss_mb": rss_under_load,
        "errors": dict(sum((Counter(tally["errors"]) for tally in tallies), Counter())),
    }
    if database:
        summary["postgres_cpu_us_per_rpc"] = round(database_cpu / max(rpcs, 1) * 1e6)
    if job == "game":
        deals = sum(tally["deals"] for tally in tallies)
        summary["deals"] = deals
        summary["deals_per_second"] = round(deals / seconds, 2)
        summary["per_method"] = {
            method: {
                "count": len(values),
                "p50_ms": _percentile(values, 0.50),
                "p99_ms": _percentile(values, 0.99),
            }
            for method, values in sorted(latencies.items())
        }
    return summary


def open_tables(server: Server, processes: int, callers: int, count: int) -> dict[str, Any]:
    """Create ``count`` open tables (seated, dealer drawn, deal started); then the server's RSS."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    each, extra = divmod(count, processes * callers)
    started = time.monotonic()
    window = Window(0.0, 0.0, 0.0)  # nothing timed: only the table count matters here
    children = []
    for index in range(processes):
        # Whole tables per caller; the first process takes the remainder as extra callers' work.
        children.append(
            context.Process(
                target=client_process,
                args=(server.target, "open", callers, window, each, results),
            )
        )
        if index == 0 and extra:
            children.append(
                context.Process(
                    target=client_process, args=(server.target, "open", extra, window, 1, results)
                )
            )
    for child in children:
        child.start()
    tallies = [results.get(timeout=600) for _ in children]
    for child in children:
        child.join()
    elapsed = time.monotonic() - started
    time.sleep(1.0)  # let the servers settle (freed request buffers, finished log writes)
    return {
        "tables": count,
        "seconds": round(elapsed, 1),
        "server_rss_mb": rss_mb(server.worker_pids),
        "errors": dict(sum((Counter(tally["errors"]) for tally in tallies), Counter())),
    }


def calls_per_worker(server: Server) -> dict[str, int]:
    """How many calls each server process logged (the kernel's spread of connections)."""
    counts: Counter[str] = Counter()
    for line in server.log_path.read_text(errors="replace").splitlines():
        if line.startswith('{"method"'):
            counts[str(json.loads(line)["pid"])] += 1
    return dict(counts)


def main() -> int:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="server processes")
    parser.add_argument("--client-processes", type=int, default=4)
    parser.add_argument("--callers", type=int, default=16, help="concurrent callers (tables)")
    parser.add_argument("--game-seconds", type=float, default=40.0)
    parser.add_argument("--echo-seconds", type=float, default=15.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--open-tables", type=int, default=1000)
    arguments = parser.parse_args()
    processes = arguments.client_processes
    per_process = max(1, arguments.callers // processes)
    began = time.monotonic()
    load_before = os.getloadavg()[0]
    with running_server(arguments.workers, "bench-operator-" + uuid.uuid4().hex) as server:
        rss_idle = rss_mb(server.worker_pids)
        echo = run_phase(
            server, "echo", processes, per_process, arguments.echo_seconds, arguments.warmup
        )
        game = run_phase(
            server, "game", processes, per_process, arguments.game_seconds, arguments.warmup
        )
        opened = open_tables(server, processes, per_process, arguments.open_tables)
        spread = calls_per_worker(server)
        result: dict[str, Any] = {
            "benchmark": "service",
            "server": f"sapsam serve --workers {arguments.workers} --bench-echo",
            "database": "DATABASE_URL" if server.data_dir is None else "embedded, fsync on",
            "cpus": os.cpu_count(),
            # Other work on the machine shows here; the run's own load is part of it.
            "load_average_1m": {"before": load_before, "after": os.getloadavg()[0]},
            "server_rss_mb_idle": rss_idle,
            "echo": echo,
            "game": game,
            "open_tables": opened,
            "calls_per_server_process": spread,
            "ratios": {
                "game_rps_over_echo_rps": round(
                    game["rpcs_per_second"] / max(echo["rpcs_per_second"], 1e-9), 3
                ),
                "game_p99_over_echo_p99": round(game["p99_ms"] / max(echo["p99_ms"], 1e-9), 2),
                "game_p50_over_echo_p50": round(game["p50_ms"] / max(echo["p50_ms"], 1e-9), 2),
                "rss_mb_with_open_tables": opened["server_rss_mb"],
            },
            "targets": TARGETS,
        }
        ratios: dict[str, float] = result["ratios"]
        result["meets_targets"] = {
            "game_rps_over_echo_rps": ratios["game_rps_over_echo_rps"]
            >= TARGETS["game_rps_over_echo_rps_at_least"],
            "game_p99_over_echo_p99": ratios["game_p99_over_echo_p99"]
            <= TARGETS["game_p99_over_echo_p99_at_most"],
            "rss_mb_with_open_tables": opened["server_rss_mb"]
            < TARGETS["rss_mb_with_open_tables_below"],
        }
    result["wall_seconds"] = round(time.monotonic() - began, 1)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
