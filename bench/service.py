"""The game service's CPU per RPC beside an echo RPC on the same server, in alternating rounds.

Prints one JSON object. Starts ``sapsam serve --workers 2 --bench-echo`` on a free loopback port,
on a private PostgreSQL cluster (fsync on, pg_stat_statements loaded; or ``--database-url``), and
drives it from client processes, each running a few sequential callers on their own connections.
Echo rounds and game rounds alternate (``--rounds`` of each), so a burst of other work on the
machine lands on both sides:

- ``echo``: every caller calls ``sapsam.bench.v1.EchoService/Echo`` back to back (same server,
  interceptors and call log as the game, no database): the stack's own cost per call;
- ``game``: every caller owns four-seat tables (``--tables-per-caller`` at first, more added
  between rounds when a round came near to using them all) and plays one deal cycle per table in
  turn (24 RPCs: the four commitments, confirmations and reveals of the deal whose
  hands it holds, the result, then the next deal's start, entropy from each seat, a table read,
  the cut and each seat's hand). Arrangements are solved **between** rounds, outside the measured
  window, so the window holds only RPCs; tables are created and first dealt before round one.
  The moves are the SDK's default ones: scheme 2 commitments, commit and reveal signed by the
  player's key (registered when the caller starts).

Per round and in total: RPCs/s, p50/p99 per RPC type, and CPU per RPC for the server (its process
tree, from /proc), PostgreSQL (the backends serving the benchmark's database, from
pg_stat_activity and /proc; on the private cluster also every cluster process) and the client
processes (from /proc, the measured window only), plus SQL statements and commits per deal
(pg_stat_statements, pg_stat_database). Read the ratios beside ``targets``, not the absolutes.

Usage: ``python bench/service.py [--rounds 3] [--echo-seconds 5] [--game-seconds 10]
[--client-processes 4] [--callers 16] [--workers 2] [--database-url URL]``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import grpc
from _game import DEAL_RPCS, SEATS, PreparedSeat, bearer, create_table_request, prepare_seat
from _postgres import benchmark_database, postgres_spent, read_postgres
from _procs import cpu_by_pid, cpu_delta, latency_summary, per_unit, rss_mb, stop_cleanly_on_sigterm
from _server import ECHO_METHOD, describe, running_server

from sapsam_client.player_key import PlayerKey
from sapsam_proto.v1 import (
    player_service_pb2,
    player_service_pb2_grpc,
    table_service_pb2,
    table_service_pb2_grpc,
)

ECHO_PAYLOAD = os.urandom(96)  # about the size of a game request
TARGETS = {
    "server_cpu_game_over_echo_at_most": 2.0,
    "postgres_cpu_us_per_game_rpc_at_most": 100,
    "statements_per_deal_at_most": 26,
}
CHANNEL_OPTIONS = (("grpc.use_local_subchannel_pool", 1),)  # one connection per caller


@dataclass
class Table:
    """One of a caller's tables: its seats and the deal whose hands it holds."""

    name: str
    seats: list[str]
    deal: str = ""
    cards: list[tuple[str, ...]] = field(default_factory=list)
    prepared: list[PreparedSeat] = field(default_factory=list)


@dataclass
class Tally:
    """What one client process's callers saw inside a measured window."""

    latencies_ms: dict[str, list[float]] = field(default_factory=dict)
    cycles: int = 0
    out_of_tables: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Caller:
    """One sequential caller on its own connection with its own players and tables."""

    def __init__(self, target: str) -> None:
        self.channel = grpc.insecure_channel(target, options=CHANNEL_OPTIONS)
        self.stub = table_service_pb2_grpc.TableServiceStub(self.channel)
        self.echo = self.channel.unary_unary(ECHO_METHOD)
        players = player_service_pb2_grpc.PlayerServiceStub(self.channel)
        registered = [
            players.RegisterPlayer(
                player_service_pb2.RegisterPlayerRequest(
                    request_id=str(uuid.uuid4()), display_name=f"bench {index}"
                ),
                timeout=30,
            )
            for index in range(SEATS)
        ]
        self.tokens = [registration.token for registration in registered]
        self.player_ids = [r.player.name.removeprefix("players/") for r in registered]
        # Each player signs its moves with a registered key, as the SDK does by default.
        self.keys = [PlayerKey.generate() for _ in range(SEATS)]
        for token, player_id, key in zip(self.tokens, self.player_ids, self.keys, strict=True):
            players.RegisterPlayerKey(
                player_service_pb2.RegisterPlayerKeyRequest(
                    request_id=str(uuid.uuid4()),
                    public_key=key.public_key,
                    proof=key.proof(player_id),
                ),
                metadata=bearer(token),
                timeout=30,
            )
        self.tables: list[Table] = []
        self.cycled = 0  # deal cycles this caller played in the last game round
        self.tally = Tally()
        self.window = (0.0, 0.0)

    def call(self, method: str, request: Any, seat: int = 0) -> Any:
        """One call as the seat's player, its latency kept if it finished inside the window."""
        started = time.monotonic()
        stub_method = getattr(self.stub, method)
        response = stub_method(request, metadata=bearer(self.tokens[seat]), timeout=30)
        finished = time.monotonic()
        if self.window[0] <= finished <= self.window[1]:
            with self.tally.lock:
                self.tally.latencies_ms.setdefault(method, []).append((finished - started) * 1e3)
        return response

    def add_table(self) -> None:
        """A new table, seated, its dealer drawn and its first deal dealt (not measured)."""
        name = self.call("CreateTable", create_table_request()).table.name
        seats = [
            self.call(
                "JoinTable",
                table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=name),
                index,
            ).seat
            for index in range(SEATS)
        ]
        request = table_service_pb2.ChooseDealerRequest(request_id=str(uuid.uuid4()), table=name)
        self.call("ChooseDealer", request)
        table = Table(name, seats)
        self.deal(table, 0)
        self.tables.append(table)

    def deal(self, table: Table, cycle: int) -> None:
        """Start the next deal: entropy, a table read, the cut, every hand (11 RPCs)."""
        start = table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table.name)
        table.deal = self.call("StartDeal", start, cycle % SEATS).deal
        for index, seat in enumerate(table.seats):
            entropy = table_service_pb2.ContributeEntropyRequest(
                request_id=str(uuid.uuid4()), seat=seat, entropy=os.urandom(16)
            )
            self.call("ContributeEntropy", entropy, index)
        cutter = self.call("GetTable", table_service_pb2.GetTableRequest(name=table.name))
        cut_by = table.seats.index(cutter.table.cutter_seat)
        cut = table_service_pb2.CutDeckRequest(
            request_id=str(uuid.uuid4()), seat=table.seats[cut_by], position=1 + cycle % 51
        )
        self.call("CutDeck", cut, cut_by)
        table.cards = [
            tuple(self.call("GetMyHand", table_service_pb2.GetMyHandRequest(seat=seat), i).cards)
            for i, seat in enumerate(table.seats)
        ]
        table.prepared = []

    def prepare(self) -> None:
        """Solve every dealt hand not solved yet (between the measured windows), and add tables
        if the last round came near to using them all."""
        while len(self.tables) < self.cycled * 2 + 2:
            self.add_table()
        self.cycled = 0
        for table in self.tables:
            if not table.prepared:
                number = int(table.deal.rsplit("/", 1)[1])
                table.prepared = [
                    prepare_seat(
                        table.name,
                        number,
                        seat,
                        cards,
                        solve=True,
                        player_id=self.player_ids[index],
                        key=self.keys[index],
                    )
                    for index, (seat, cards) in enumerate(
                        zip(table.seats, table.cards, strict=True)
                    )
                ]

    def finish_and_deal(self, table: Table, cycle: int) -> None:
        """The prepared deal's commitments, confirmations, reveals and result, then the next
        deal up to the hands: one deal's 24 RPCs."""
        for index, seat in enumerate(table.prepared):
            self.call("CommitArrangement", seat.commit, index)
        for index, seat_name in enumerate(table.seats):
            confirm = table_service_pb2.ConfirmArrangementRequest(
                request_id=str(uuid.uuid4()), seat=seat_name
            )
            self.call("ConfirmArrangement", confirm, index)
        for index, seat in enumerate(table.prepared):
            self.call("RevealArrangement", seat.reveal, index)
        result = self.call("GetDealResult", table_service_pb2.GetDealResultRequest(name=table.deal))
        if not result.result.scored:
            raise RuntimeError(f"{table.deal} was not scored after the last reveal")
        self.deal(table, cycle)

    def run(self, job: str, begin: float, until: float) -> None:
        """Echo or play deal cycles from ``begin`` until ``until``."""
        time.sleep(max(0.0, begin - time.monotonic()))
        if job == "echo":
            while time.monotonic() < until:
                started = time.monotonic()
                answer = self.echo(ECHO_PAYLOAD, metadata=bearer(self.tokens[0]), timeout=30)
                finished = time.monotonic()
                if answer != ECHO_PAYLOAD:
                    raise RuntimeError("the echo answered other bytes")
                if self.window[0] <= finished <= self.window[1]:
                    with self.tally.lock:
                        self.tally.latencies_ms.setdefault("Echo", []).append(
                            (finished - started) * 1e3
                        )
            return
        for cycle, table in enumerate(list(self.tables)):
            if time.monotonic() >= until:
                return
            if not table.prepared:
                continue
            self.finish_and_deal(table, cycle)
            self.cycled += 1
            if self.window[0] <= time.monotonic() <= self.window[1]:
                with self.tally.lock:
                    self.tally.cycles += 1
        with self.tally.lock:
            self.tally.out_of_tables += 1  # the window outlasted this caller's prepared tables


def _guarded(caller: Caller, work: Any, *arguments: Any) -> None:
    try:
        work(*arguments)
    except grpc.RpcError as error:
        caller.tally.errors[f"{error.code().name}: {error.details()}"[:200]] += 1
    except Exception as error:  # reported, not hidden: the run is then not a clean one
        caller.tally.errors[f"{type(error).__name__}: {error}"[:200]] += 1


def client_process(target: str, callers: int, tables: int, orders: Any, results: Any) -> None:
    """A client process: ``callers`` threads, each a sequential caller, doing what it is told."""
    team = [Caller(target) for _ in range(callers)]
    tally = Tally()
    for caller in team:
        caller.tally = tally
    while True:
        order = orders.get()
        if order[0] == "stop":
            break
        for caller in team:
            caller.window = (0.0, 0.0)
        if order[0] == "setup":
            work = [(c, lambda c=c: [c.add_table() for _ in range(tables)]) for c in team]
        elif order[0] == "prepare":
            work = [(c, c.prepare) for c in team]
        else:
            for caller in team:
                caller.window = (order[2], order[3])
            work = [(c, lambda c=c, o=order: c.run(o[0], o[1], o[3])) for c in team]
        threads = [threading.Thread(target=_guarded, args=(c, w)) for c, w in work]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        results.put(
            {
                "latencies_ms": tally.latencies_ms,
                "cycles": tally.cycles,
                "out_of_tables": tally.out_of_tables,
                "errors": dict(tally.errors),
            }
        )
        tally.latencies_ms, tally.cycles, tally.out_of_tables = {}, 0, 0
        tally.errors.clear()
    for caller in team:
        caller.channel.close()


class Clients:
    """The client processes and how to give them orders."""

    def __init__(self, target: str, processes: int, callers: int, tables: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.results = context.Queue()
        self.orders = [context.Queue() for _ in range(processes)]
        self.processes = [
            context.Process(target=client_process, args=(target, callers, tables, q, self.results))
            for q in self.orders
        ]
        for process in self.processes:
            process.start()

    def pids(self) -> list[int]:
        """The client processes' pids."""
        return [process.pid for process in self.processes if process.pid is not None]

    def order(self, *order: Any) -> None:
        """Send every client process the same order."""
        for queue in self.orders:
            queue.put(order)

    def collect(self, timeout: float) -> list[dict[str, Any]]:
        """Every process's answer to the last order."""
        return [self.results.get(timeout=timeout) for _ in self.processes]

    def stop(self) -> None:
        """Let the processes finish and exit."""
        self.order("stop")
        for process in self.processes:
            process.join(60)


def measured_round(
    clients: Clients, server: Any, database: Any, job: str, seconds: float, lead: float
) -> dict[str, Any]:
    """One measured window of ``job``: latencies, RPCs and every party's CPU inside it."""
    begin = time.monotonic() + 0.5
    measured_from, until = begin + lead, begin + lead + seconds
    clients.order(job, begin, measured_from, until)
    time.sleep(max(0.0, measured_from - time.monotonic()))
    server_before, client_before = cpu_by_pid(server.pids()), cpu_by_pid(clients.pids())
    postgres_before = read_postgres(database)
    time.sleep(max(0.0, until - time.monotonic()))
    server_after, client_after = cpu_by_pid(server.pids()), cpu_by_pid(clients.pids())
    postgres_after = read_postgres(database)
    tallies = clients.collect(timeout=seconds + 120)
    latencies: dict[str, list[float]] = {}
    for tally in tallies:
        for method, values in tally["latencies_ms"].items():
            latencies.setdefault(method, []).extend(values)
    rpcs = sum(len(values) for values in latencies.values())
    postgres = postgres_spent(postgres_before, postgres_after)
    return {
        "job": job,
        "seconds": seconds,
        "rpcs": rpcs,
        "latencies_ms": latencies,
        "cycles": sum(tally["cycles"] for tally in tallies),
        "callers_out_of_tables": sum(tally["out_of_tables"] for tally in tallies),
        "server_cpu_seconds": cpu_delta(server_before, server_after),
        "client_cpu_seconds": cpu_delta(client_before, client_after),
        "postgres": postgres,
        "errors": dict(sum((Counter(tally["errors"]) for tally in tallies), Counter())),
    }


def summarise(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """All rounds of one job together, with each round's CPU per RPC to show the spread."""
    rpcs = sum(r["rpcs"] for r in rounds)
    seconds = sum(r["seconds"] for r in rounds)
    latencies: dict[str, list[float]] = {}
    for r in rounds:
        for method, values in r["latencies_ms"].items():
            latencies.setdefault(method, []).extend(values)
    every = [value for values in latencies.values() for value in values]
    backends = sum(r["postgres"]["backends_cpu_seconds"] for r in rounds)
    cluster = [r["postgres"]["cluster_cpu_seconds"] for r in rounds]
    summary: dict[str, Any] = {
        "rounds": len(rounds),
        "seconds": seconds,
        "rpcs": rpcs,
        "rpcs_per_second": round(rpcs / seconds, 1),
        "latency": latency_summary(every),
        "server_cpu_us_per_rpc": per_unit(sum(r["server_cpu_seconds"] for r in rounds), rpcs),
        "postgres_cpu_us_per_rpc": per_unit(backends, rpcs),
        "postgres_cluster_cpu_us_per_rpc": (
            per_unit(sum(cluster), rpcs) if None not in cluster else None
        ),
        "client_cpu_us_per_rpc": per_unit(sum(r["client_cpu_seconds"] for r in rounds), rpcs),
        "server_cpu_us_per_rpc_by_round": [
            per_unit(r["server_cpu_seconds"], r["rpcs"]) for r in rounds
        ],
        "postgres_backends_vanished": sum(r["postgres"]["backends_vanished"] for r in rounds),
        "errors": dict(sum((Counter(r["errors"]) for r in rounds), Counter())),
    }
    if len(latencies) > 1:
        summary["per_method"] = {m: latency_summary(v) for m, v in sorted(latencies.items())}
    statements = [r["postgres"]["statements"] for r in rounds]
    if rounds[0]["job"] == "game" and rpcs:
        deals = rpcs / DEAL_RPCS
        summary["deal_cycles"] = sum(r["cycles"] for r in rounds)
        summary["deals_per_second"] = round(deals / seconds, 2)
        summary["callers_out_of_tables"] = sum(r["callers_out_of_tables"] for r in rounds)
        # pg_stat_database's xact_commit: read-only transactions count too.
        commits = sum(r["postgres"]["commits"] for r in rounds)
        summary["transactions_per_deal"] = round(commits / deals, 1)
        if None not in statements:
            control = sum(r["postgres"]["transaction_control_statements"] for r in rounds)
            by_text: Counter[str] = Counter()
            ms_by_text: Counter[str] = Counter()
            for r in rounds:
                by_text.update(r["postgres"]["statements_by_text"])
                ms_by_text.update(r["postgres"]["statement_ms_by_text"])
            summary["statements_per_deal"] = round(sum(statements) / deals, 1)
            summary["statements_per_deal_without_begin_commit"] = round(
                (sum(statements) - control) / deals, 1
            )
            summary["statement_us_per_game_rpc"] = round(sum(ms_by_text.values()) / rpcs * 1e3, 1)
            # Per deal: how often each statement ran, and its planning + execution µs in all,
            # by the first 160 characters of its text (the shapes of one statement that differ
            # further on, such as the append's with its read models, are added up).
            calls_by_start: Counter[str] = Counter()
            ms_by_start: Counter[str] = Counter()
            for text, calls in by_text.items():
                start = " ".join(text.split())[:160]
                calls_by_start[start] += calls
                ms_by_start[start] += ms_by_text[text]
            summary["statements_per_deal_by_text"] = {
                start: [round(calls / deals, 2), round(ms_by_start[start] / deals * 1e3, 1)]
                for start, calls in calls_by_start.most_common(25)
            }
    elif None not in statements:
        summary["statements_per_rpc"] = round(sum(statements) / max(rpcs, 1), 3)
    return summary


def main() -> int:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="server processes")
    parser.add_argument("--client-processes", type=int, default=4)
    parser.add_argument("--callers", type=int, default=16, help="sequential callers in all")
    parser.add_argument(
        "--tables-per-caller", type=int, default=24, help="at first; more are added as needed"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each job (at least 3)")
    parser.add_argument("--echo-seconds", type=float, default=5.0)
    parser.add_argument("--game-seconds", type=float, default=10.0)
    parser.add_argument("--lead-seconds", type=float, default=0.5, help="unmeasured start")
    parser.add_argument(
        "--synchronous-commit",
        choices=("on", "off"),
        default="on",
        help="off (for the database): commits do not wait for the disk, to see the software's cost",
    )
    parser.add_argument("--database-url", help="PostgreSQL server (default: a private cluster)")
    parser.add_argument("--server-option", action="append", default=[], help="extra serve flag")
    arguments = parser.parse_args()
    stop_cleanly_on_sigterm()
    processes = arguments.client_processes
    per_process = max(1, arguments.callers // processes)
    began = time.monotonic()
    load_before = os.getloadavg()[0]
    with (
        benchmark_database(
            arguments.database_url,
            "sapsam_bench_service",
            synchronous_commit=arguments.synchronous_commit,
        ) as database,
        running_server(database.url, arguments.workers, extra=arguments.server_option) as server,
    ):
        clients = Clients(server.target, processes, per_process, arguments.tables_per_caller)
        try:
            clients.order("setup")
            setup_errors = [t["errors"] for t in clients.collect(timeout=600) if t["errors"]]
            rss_idle = rss_mb(server.pids())
            rounds: dict[str, list[dict[str, Any]]] = {"echo": [], "game": []}
            for _ in range(arguments.rounds):
                for job, seconds in (
                    ("echo", arguments.echo_seconds),
                    ("game", arguments.game_seconds),
                ):
                    if job == "game":
                        clients.order("prepare")
                        clients.collect(timeout=600)
                    rounds[job].append(
                        measured_round(
                            clients, server, database, job, seconds, arguments.lead_seconds
                        )
                    )
            rss_after = rss_mb(server.pids())
        finally:
            clients.stop()
        echo, game = summarise(rounds["echo"]), summarise(rounds["game"])
        server_line = describe(server)
    ratios = {
        "server_cpu_game_over_echo": _ratio(
            game["server_cpu_us_per_rpc"], echo["server_cpu_us_per_rpc"]
        ),
        "game_rps_over_echo_rps": _ratio(game["rpcs_per_second"], echo["rpcs_per_second"]),
        "game_p99_over_echo_p99": _ratio(game["latency"]["p99_ms"], echo["latency"]["p99_ms"]),
        "client_cpu_game_over_echo": _ratio(
            game["client_cpu_us_per_rpc"], echo["client_cpu_us_per_rpc"]
        ),
    }
    result = {
        "benchmark": "service",
        "server": server_line,
        "database": database.label,
        "synchronous_commit": arguments.synchronous_commit,
        "cpus": os.cpu_count(),
        "load_average_1m": {"before": load_before, "after": os.getloadavg()[0]},
        "callers": processes * per_process,
        "client_processes": processes,
        "setup_errors": setup_errors,
        "server_rss_mb": {"after_setup": rss_idle, "after_rounds": rss_after},
        "echo": echo,
        "game": game,
        "ratios": ratios,
        "targets": TARGETS,
        "meets_targets": {
            "server_cpu_game_over_echo": _at_most(
                ratios["server_cpu_game_over_echo"], TARGETS["server_cpu_game_over_echo_at_most"]
            ),
            "postgres_cpu_us_per_game_rpc": _at_most(
                game["postgres_cpu_us_per_rpc"], TARGETS["postgres_cpu_us_per_game_rpc_at_most"]
            ),
            "statements_per_deal": _at_most(
                game.get("statements_per_deal"), TARGETS["statements_per_deal_at_most"]
            ),
        },
        "wall_seconds": round(time.monotonic() - began, 1),
    }
    print(json.dumps(result, indent=2))
    return 0


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, 3)


def _at_most(value: float | None, limit: float) -> bool | None:
    return None if value is None else value <= limit


if __name__ == "__main__":
    raise SystemExit(main())
