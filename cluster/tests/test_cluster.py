"""The multi-replica topology of ``make cluster``, under bot load (``make cluster-test``; slow,
so not part of ``make test``): three ``sapsam serve`` behind HAProxy, a PostgreSQL primary and a
synchronous streaming standby (cluster/topology.py).

- bots connected through the balancer finish their series, while one replica is SIGKILLed and
  started again mid-load: every acknowledged call is in the log once (torture/checks.py's
  ledger and log checks), nothing half-written;
- one client connection's calls are spread over every replica, and its lists read the standby;
- three watchers of one table, each connected straight to a different replica, see the very
  same event sequence; its deals' audit (export, verify) through the balancer reads the standby;
- a rolling restart (each replica SIGTERMed and started again) under load loses nothing;
- the primary dies and the standby is promoted (docs/operations.md, "Promoting the standby"):
  the replicas follow it with no restart, play goes on, no acknowledged call is lost, and every
  deal of the run verifies (``sapsam audit verify --all``) from the promoted server.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from cluster.topology import Cluster, new_folder
from sapsam_proto.v1 import (
    audit_service_pb2,
    audit_service_pb2_grpc,
    table_pb2,
    table_service_pb2,
    table_service_pb2_grpc,
)
from torture import checks
from torture.ledger import Ledger, LedgerClient, Stats
from torture.load import SEATS, Lane, LaneConfig, Lateness, TableRecord, TortureSeat, register
from torture.load import sorted_rows as arrange

LANES = 3
SERIES_LENGTH = 2
DEADLINE_SECONDS = 120
"""Generous: the bots play at once; a deadline firing would be a finding, not load."""
LANE_SECONDS = 600.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(new_folder()) as running:
        print(json.dumps(running.describe(), indent=2))
        yield running


@pytest.fixture(scope="module")
def ledger(cluster: Cluster) -> Iterator[Ledger]:
    kept = Ledger(cluster.folder / "ledger.jsonl")
    try:
        yield kept
    finally:
        kept.close()


class Load:
    """Lanes of bots through HAProxy, as the torture run plays them."""

    def __init__(self, cluster: Cluster, ledger: Ledger, lanes: int, first: int = 0) -> None:
        self.stats = Stats()
        self.stop = threading.Event()
        self.tables: list[TableRecord] = []
        self.late: list[Lateness] = []
        config = LaneConfig(SERIES_LENGTH, DEADLINE_SECONDS, DEADLINE_SECONDS)
        self.lanes = [
            Lane(
                first + index,
                cluster.address,
                config,
                ledger,
                self.stats,
                self.stop,
                self.tables,
                self.late,
            )
            for index in range(lanes)
        ]
        for lane in self.lanes:
            lane.start()

    def wait_for_calls(self, ledger: Ledger, count: int, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while len(ledger.snapshot()) < count:
            assert time.monotonic() < deadline, f"fewer than {count} calls in {timeout} s"
            assert all(lane.failure is None for lane in self.lanes), self.failures()
            time.sleep(0.2)

    def finish(self) -> None:
        """Let each lane finish the series it is in."""
        self.stop.set()
        for lane in self.lanes:
            lane.join(LANE_SECONDS)
            assert not lane.is_alive(), f"{lane.name} did not finish"

    def failures(self) -> list[str]:
        return [f"{lane.name}: {lane.failure}" for lane in self.lanes if lane.failure]

    def report(self) -> dict[str, Any]:
        return {
            "counts": dict(self.stats.counts),
            "maxima": self.stats.maxima,
            "notes": self.stats.notes[:10],
        }


def assert_log_holds(url: str, ledger: Ledger) -> dict[str, Any]:
    """Every acknowledged call in the log once, at its version; nothing half-written."""
    held = checks.check_ledger(url, ledger.snapshot())
    log = checks.check_log(url)
    print(json.dumps({"ledger": held, "log": log}, default=str))
    for kind in ("lost", "doubled", "mismatched", "half-written"):
        assert held.get(kind, 0) == 0, (kind, held["examples"])
    for kind in ("doubled", "half-written", "unsigned"):
        assert log.get(kind, 0) == 0, (kind, log["examples"])
    return held


def test_bots_through_the_balancer_finish_while_a_replica_is_killed(
    cluster: Cluster, ledger: Ledger
) -> None:
    load = Load(cluster, ledger, LANES)
    load.wait_for_calls(ledger, 60)
    victim = cluster.nodes[1]
    before = len(ledger.snapshot())
    assert int(cluster.server_stats()[victim.name]["stot"]) > 0  # it had its share of calls
    cluster.kill_replica(victim)
    killed_at = time.monotonic()
    # HAProxy notices within two failed checks; calls meanwhile are retried (by HAProxy on
    # another replica, or by the client) and acknowledged as usual.
    load.wait_for_calls(ledger, before + 60)
    deadline = time.monotonic() + 10
    while cluster.server_states()[victim.name] != "DOWN":  # two failed checks, 0.5 s apart
        assert time.monotonic() < deadline, cluster.server_states()
        time.sleep(0.1)
    cluster.start_replica(victim)
    cluster.wait_ready(victim)
    back = time.monotonic() - killed_at
    load.wait_for_calls(ledger, len(ledger.snapshot()) + 30)
    load.finish()
    counters = ("stot", "wretr", "wredis", "eresp", "econ")
    balancer = {
        name: {key: row[key] for key in counters} for name, row in cluster.server_stats().items()
    }
    print(
        json.dumps(
            {
                "load": load.report(),
                "replica_back_after_s": round(back, 1),
                "haproxy": balancer,
            }
        )
    )
    assert load.failures() == []
    assert load.tables and all(table.completed for table in load.tables), load.tables
    assert all(not table.seat_errors for table in load.tables), load.tables
    held = assert_log_holds(cluster.postgres.primary.url(), ledger)
    assert held["acknowledged"] == len(ledger.snapshot())
    assert cluster.servers_up() == len(cluster.nodes)


LISTED = "/sapsam.v1.TableService/ListTables"


def test_one_connections_calls_are_spread_over_every_replica_and_lists_read_the_standby(
    cluster: Cluster,
) -> None:
    """HAProxy balances each call (an HTTP/2 stream), not each connection; the lists go to the
    standby (--read-database-url), which keeps up."""

    def listed(node_samples: dict[Any, float]) -> float:
        return node_samples.get(
            ("sapsam_rpc_calls_total", (("method", LISTED), ("status", "OK"))), 0
        )

    def standby_reads(node_samples: dict[Any, float]) -> float:
        return node_samples.get(("sapsam_lagging_reads_total", (("database", "standby"),)), 0)

    before = [cluster.scrape(node) for node in cluster.nodes]
    with grpc.insecure_channel(cluster.address) as channel:
        client = LedgerClient(channel, Ledger(cluster.folder / "lists.jsonl"), Stats(), "lists")
        client.register("lister")
        stub = table_service_pb2_grpc.TableServiceStub(channel)
        for _ in range(30):
            stub.ListTables(table_service_pb2.ListTablesRequest(), metadata=client.metadata())
    after = [cluster.scrape(node) for node in cluster.nodes]
    calls = [listed(later) - listed(earlier) for earlier, later in zip(before, after, strict=True)]
    print(json.dumps({"ListTables per replica": calls}))
    assert sum(calls) == 30 and all(count > 0 for count in calls)
    on_standby = sum(
        standby_reads(later) - standby_reads(earlier)
        for earlier, later in zip(before, after, strict=True)
    )
    assert on_standby > 0
    assert all((sample.get(("sapsam_standby_lag_seconds", ()), 99)) < 5 for sample in after)


def _watch(address: str, table: str, token: str, seen: list[bytes], ended: threading.Event) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)
        request = table_service_pb2.WatchTableRequest(table=table, after_version=0)
        for response in stub.WatchTable(request, metadata=(("authorization", f"Bearer {token}"),)):
            seen.append(response.event.SerializeToString(deterministic=True))
            if response.event.WhichOneof("payload") == "series_completed":
                break
    ended.set()


def test_watchers_on_different_replicas_see_the_same_events(
    cluster: Cluster, ledger: Ledger
) -> None:
    stats = Stats()
    with grpc.insecure_channel(cluster.address) as channel:
        clients = [LedgerClient(channel, ledger, stats, "watched") for _ in range(SEATS)]
        for seat, client in enumerate(clients):
            register(client, f"watched s{seat}", stats)
        table = clients[0].create_table(SEATS, series_length=SERIES_LENGTH)
        seats = [
            TortureSeat(client, client.join_table(table.name, position).name, stats=stats)
            for position, client in enumerate(clients)
        ]
        token = clients[0].token
        assert token
        sequences: list[list[bytes]] = [[] for _ in cluster.nodes]
        ended = [threading.Event() for _ in cluster.nodes]
        watchers = [
            threading.Thread(
                target=_watch,
                args=(node.address, table.name, token, sequences[index], ended[index]),
                daemon=True,
            )
            for index, node in enumerate(cluster.nodes)
        ]
        for watcher in watchers:
            watcher.start()
        players = [threading.Thread(target=seat.play_series, args=(arrange,)) for seat in seats]
        for player in players:
            player.start()
        for player in players:
            player.join(LANE_SECONDS)
        final = clients[0].get_table(table.name)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    for watcher, done in zip(watchers, ended, strict=True):
        watcher.join(60)
        assert done.is_set(), "a watcher did not see the series end"
    first, *others = sequences
    assert len(first) == final.version
    assert all(other == first for other in others)

    # The audit of its deals, through the balancer, read from the standby (lagging reads).
    def standby_reads() -> float:
        return sum(
            cluster.scrape(node).get(("sapsam_lagging_reads_total", (("database", "standby"),)), 0)
            for node in cluster.nodes
        )

    before = standby_reads()
    with grpc.insecure_channel(cluster.address) as channel:
        # Reads, kept out of the ledger of calls that write.
        reads = Ledger(cluster.folder / "audit-reads.jsonl")
        auditor = LedgerClient(channel, reads, stats, "audit")
        auditor.token = token
        stub = audit_service_pb2_grpc.AuditServiceStub(channel)
        for deal in range(1, SERIES_LENGTH + 1):
            name = f"{table.name}/deals/{deal}"
            exported = auditor.export_deal(name)
            assert exported.finished and exported.event_count > 0
            verified = stub.VerifyDeal(
                audit_service_pb2.VerifyDealRequest(request_id=str(uuid.uuid4()), name=name),
                metadata=auditor.metadata(),
            )
            assert verified.ok, verified.report_text
        reads.close()
    assert standby_reads() - before >= 2 * SERIES_LENGTH


def test_a_rolling_restart_behind_the_balancer_loses_nothing(
    cluster: Cluster, ledger: Ledger
) -> None:
    """Each replica in turn stopped gracefully (SIGTERM: /ready says 503 at once, HAProxy stops
    sending it calls while it drains, then it stops) and started again, under load."""
    load = Load(cluster, ledger, 2, first=LANES + 2)
    load.wait_for_calls(ledger, len(ledger.snapshot()) + 30)
    exits = []
    for node in cluster.nodes:
        exits.append(cluster.stop_replica(node))
        load.wait_for_calls(ledger, len(ledger.snapshot()) + 10)
        cluster.start_replica(node)
        cluster.wait_ready(node)
    load.finish()
    print(json.dumps({"load": load.report(), "exits": exits}))
    assert exits == [0] * len(cluster.nodes)
    # Drained (--drain-seconds): HAProxy took each out before it refused any call.
    assert not any("SERVER_STOPPING" in key and "failed" in key for key in load.stats.counts)
    assert load.failures() == []
    assert load.tables and all(table.completed for table in load.tables), load.tables
    assert all(not table.seat_errors for table in load.tables), load.tables
    assert_log_holds(cluster.postgres.primary.url(), ledger)
    deadline = time.monotonic() + 10
    while cluster.servers_up() < len(cluster.nodes):
        assert time.monotonic() < deadline, cluster.server_states()
        time.sleep(0.2)


def test_the_replicas_follow_the_promotion_of_the_standby(cluster: Cluster, ledger: Ledger) -> None:
    load = Load(cluster, ledger, 2, first=LANES + 4)
    load.wait_for_calls(ledger, len(ledger.snapshot()) + 40)
    took = cluster.fail_over()
    failed_over_at = time.monotonic()
    load.wait_for_calls(ledger, len(ledger.snapshot()) + 40)
    resumed = time.monotonic() - failed_over_at
    load.finish()
    print(json.dumps({"load": load.report(), "promote_s": took, "writes_again_after_s": resumed}))
    assert load.failures() == []
    assert load.tables and all(table.completed for table in load.tables), load.tables
    assert not cluster.postgres.standby.in_recovery()
    # Synchronous replication: every call acknowledged before the primary died is there.
    assert_log_holds(cluster.postgres.standby.url(), ledger)
    assert all(node.alive() and node.ready() for node in cluster.nodes)
    assert cluster.servers_up() == len(cluster.nodes)
    # Every deal of the whole run verifies from the promoted server's log.
    audited = checks.run_audit(cluster.postgres.standby.url())
    print(json.dumps({"audit": audited}, default=str))
    assert audited["exit"] == 0, audited


def test_the_folder_is_the_clusters_own(cluster: Cluster) -> None:
    assert Path(cluster.folder).is_dir()
    assert cluster.haproxy_config_path.read_text().count(" proto h2 check ") == len(cluster.nodes)
