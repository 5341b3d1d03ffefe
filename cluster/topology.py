"""The whole topology of ``make cluster``, on this machine, in one folder it removes at the end.

- PostgreSQL: a primary and a streaming standby (``cluster.postgres``), with synchronous
  replication: a commit is acknowledged once the standby has it, so promoting the standby loses
  no acknowledged call (the price: while the standby is down, writes wait; docs/operations.md,
  "Promoting the standby").
- Three ``sapsam serve`` replicas, one process each, every one with the same signing key and
  operator token, its metrics and ``/ready`` on a port of its own. Their database URL names both
  servers with ``target_session_attrs=read-write`` (libpq connects to the one that takes writes:
  after a promotion, the promoted one, with no restart and no configuration change); their
  ``--read-database-url`` names both with ``target_session_attrs=prefer-standby``.
- HAProxy in front (``cluster.haproxy``): clients connect to one address, browsers (Connect,
  each replica's ``SAPSAM_HTTP``) to another.

Every process this module starts is its own: the replicas and HAProxy are children in sessions
of their own (killed by process group, never by name) that the kernel stops should this process
die (``PR_SET_PDEATHSIG``); PostgreSQL is stopped with ``pg_ctl``. ``Cluster`` is a context
manager: leaving it stops everything and deletes the folder (unless ``keep``).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import psycopg

from cluster.haproxy import Backend, haproxy_config
from cluster.postgres import DATABASE, ReplicatedPostgres, free_port

REPLICAS = 3
OPERATOR_TOKEN_BYTES = 32
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM it when the process that started it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _multi_host_url(ports: list[int], attributes: str) -> str:
    hosts = ",".join(f"127.0.0.1:{port}" for port in ports)
    return f"postgresql://postgres@{hosts}/{DATABASE}?target_session_attrs={attributes}"


@dataclass
class Replica:
    """One ``sapsam serve``."""

    name: str
    grpc_port: int
    metrics_port: int
    folder: Path
    http_port: int = 0
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def address(self) -> str:
        """Its gRPC address (bypassing HAProxy)."""
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def log(self) -> Path:
        """Its log (JSON lines)."""
        return self.folder / "serve.log"

    def ready(self) -> bool:
        """Whether its /ready says SERVING."""
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.metrics_port}/ready", timeout=2
            ) as answer:
                return bool(answer.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def alive(self) -> bool:
        """Whether its process runs."""
        return self.process is not None and self.process.poll() is None


@dataclass
class Cluster:
    """The topology; ``start`` makes and starts it, ``close`` stops and removes it."""

    folder: Path
    replicas: int = REPLICAS
    keep: bool = False
    serve_arguments: tuple[str, ...] = ()
    postgres: ReplicatedPostgres = field(init=False)
    nodes: list[Replica] = field(init=False)
    listen_port: int = field(init=False)
    http_listen_port: int = field(init=False)
    haproxy: subprocess.Popen[bytes] | None = None
    operator_token: str = ""

    def __post_init__(self) -> None:
        self.postgres = ReplicatedPostgres.planned(self.folder / "postgres")
        self.listen_port = free_port()
        self.http_listen_port = free_port()
        self.nodes = [
            Replica(
                f"sapsam{index}",
                free_port(),
                free_port(),
                self.folder / f"sapsam{index}",
                http_port=free_port(),
            )
            for index in range(1, self.replicas + 1)
        ]

    # -- addresses ------------------------------------------------------------------------------

    @property
    def address(self) -> str:
        """Where clients connect: HAProxy."""
        return f"127.0.0.1:{self.listen_port}"

    @property
    def http_address(self) -> str:
        """Where browsers connect (Connect and gRPC-web): HAProxy's HTTP/1.1 frontend."""
        return f"127.0.0.1:{self.http_listen_port}"

    @property
    def database_url(self) -> str:
        """What the replicas write to: whichever of the two servers takes writes."""
        ports = [self.postgres.primary.port, self.postgres.standby.port]
        return _multi_host_url(ports, "read-write")

    @property
    def read_database_url(self) -> str:
        """What the replicas read lagging reads from: the standby while there is one."""
        ports = [self.postgres.standby.port, self.postgres.primary.port]
        return _multi_host_url(ports, "prefer-standby")

    @property
    def haproxy_config_path(self) -> Path:
        """HAProxy's configuration file."""
        return self.folder / "haproxy.cfg"

    @property
    def key_file(self) -> Path:
        """The signing key every replica shares."""
        return self.folder / "keys" / "keys" / "server.key"

    # -- start and stop -------------------------------------------------------------------------

    def __enter__(self) -> Cluster:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> dict[str, float]:
        """PostgreSQL, the migrations, the replicas, HAProxy; the seconds each part took."""
        if shutil.which("haproxy") is None:
            raise RuntimeError("no haproxy: apt-get install -y haproxy")
        took: dict[str, float] = {}
        began = time.monotonic()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.folder.chmod(0o755)  # as root, PostgreSQL runs as the postgres user
        self.postgres.create()
        self._synchronous_replication()
        took["postgres"] = time.monotonic() - began
        began = time.monotonic()
        self._sapsam("migrate", "--database-url", self.database_url)
        self._sapsam("keys", "create", "--data-dir", str(self.folder / "keys"))
        self.operator_token = os.urandom(OPERATOR_TOKEN_BYTES).hex()
        token_file = self.folder / "operator-token"
        token_file.write_text(self.operator_token + "\n", encoding="utf-8")
        token_file.chmod(0o600)
        took["migrate"] = time.monotonic() - began
        began = time.monotonic()
        for node in self.nodes:
            self.start_replica(node)
        for node in self.nodes:
            self.wait_ready(node)
        took["replicas"] = time.monotonic() - began
        began = time.monotonic()
        self._start_haproxy()
        took["haproxy"] = time.monotonic() - began
        return took

    def _synchronous_replication(self) -> None:
        """A commit waits for the standby to have it (``synchronous_standby_names``)."""
        with psycopg.connect(self.postgres.primary.url("postgres"), autocommit=True) as connection:
            connection.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
            connection.execute("SELECT pg_reload_conf()")
            deadline = time.monotonic() + 30
            while True:
                row = connection.execute(
                    "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'"
                ).fetchone()
                if row and row[0]:
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError("the standby did not become synchronous")
                time.sleep(0.05)

    def _sapsam(self, *arguments: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "sapsam.cli", *arguments],
            check=True,
            capture_output=True,
            env=self._environment(),
        )

    def _environment(self) -> dict[str, str]:
        # Nothing of the caller's own sapsam settings: the cluster says what it means.
        return {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("SAPSAM_") and key != "DATABASE_URL"
        }

    def start_replica(self, node: Replica) -> None:
        """Start one ``sapsam serve`` (not waiting for it)."""
        node.folder.mkdir(parents=True, exist_ok=True)
        environment = {
            **self._environment(),
            "DATABASE_URL": self.database_url,
            "SAPSAM_READ_DATABASE_URL": self.read_database_url,
            "SAPSAM_LISTEN": node.address,
            "SAPSAM_METRICS_LISTEN": f"127.0.0.1:{node.metrics_port}",
            "SAPSAM_HTTP": f"127.0.0.1:{node.http_port}",
            "SAPSAM_DATA_DIR": str(node.folder / "data"),
            "SAPSAM_SERVER_KEY_FILE": str(self.key_file),
            "SAPSAM_OPERATOR_TOKEN_FILE": str(self.folder / "operator-token"),
            "SAPSAM_SERVER_NAME": "sapsam-cluster",
            "SAPSAM_LOG_FORMAT": "json",
            "SAPSAM_GRACE_SECONDS": "2",
            # Long enough for HAProxy's checks (two failures 0.5 s apart) to take it out.
            "SAPSAM_DRAIN_SECONDS": "2",
        }
        with node.log.open("ab") as log:
            log.write(f"## cluster: start #{node.starts + 1} {time.time():.3f}\n".encode())
            node.process = subprocess.Popen(
                [sys.executable, "-m", "sapsam.cli", "serve", *self.serve_arguments],
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        node.starts += 1

    def wait_ready(self, node: Replica, timeout: float = 120.0) -> float:
        """Until its /ready says SERVING; the seconds waited."""
        began = time.monotonic()
        while not node.ready():
            if not node.alive():
                tail = node.log.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{node.name} exited while starting:\n{tail}")
            if time.monotonic() - began > timeout:
                raise RuntimeError(f"{node.name} was not ready within {timeout:.0f} s")
            time.sleep(0.1)
        return time.monotonic() - began

    def _start_haproxy(self) -> None:
        backends = [
            Backend(node.name, node.grpc_port, node.metrics_port, node.http_port)
            for node in self.nodes
        ]
        text = haproxy_config(
            self.listen_port,
            backends,
            str(self.folder / "haproxy.sock"),
            http_listen_port=self.http_listen_port,
        )
        self.haproxy_config_path.write_text(text, encoding="utf-8")
        with (self.folder / "haproxy.log").open("ab") as log:
            # -db: stay in the foreground, a child of this process.
            self.haproxy = subprocess.Popen(
                ["haproxy", "-db", "-f", str(self.haproxy_config_path)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        deadline = time.monotonic() + 30
        while self.servers_up() < len(self.nodes):
            if self.haproxy.poll() is not None:
                raise RuntimeError(
                    "haproxy exited: " + (self.folder / "haproxy.log").read_text()[-2000:]
                )
            if time.monotonic() > deadline:
                raise RuntimeError("haproxy did not find every replica up within 30 s")
            time.sleep(0.1)

    def haproxy_command(self, command: str) -> str:
        """A command on HAProxy's admin socket (``show servers state``, ...)."""
        import socket

        with socket.socket(socket.AF_UNIX) as connection:
            connection.settimeout(5)
            connection.connect(str(self.folder / "haproxy.sock"))
            connection.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := connection.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def server_stats(self) -> dict[str, dict[str, str]]:
        """HAProxy's counters of each replica (``show stat``: ``status``, ``stot`` calls sent,
        ``wretr`` retries, ``wredis`` calls sent to another replica, ``eresp`` ...)."""
        lines = self.haproxy_command("show stat").splitlines()
        header = lines[0].removeprefix("# ").split(",")
        stats: dict[str, dict[str, str]] = {}
        for line in lines[1:]:
            row = dict(zip(header, line.split(","), strict=False))
            if row.get("pxname") == "sapsam" and row.get("svname") not in (None, "BACKEND"):
                stats[row["svname"]] = row
        return stats

    def server_states(self) -> dict[str, str]:
        """HAProxy's view of each replica: ``UP``, ``DOWN`` ..."""
        return {name: row["status"] for name, row in self.server_stats().items()}

    def scrape(self, node: Replica) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        """A replica's metrics, by name and sorted labels."""
        from prometheus_client.parser import text_string_to_metric_families

        address = f"http://127.0.0.1:{node.metrics_port}/metrics"
        with urllib.request.urlopen(address, timeout=10) as answer:
            text = answer.read().decode()
        return {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        }

    def servers_up(self) -> int:
        """How many replicas HAProxy sends calls to."""
        try:
            return sum(1 for state in self.server_states().values() if state == "UP")
        except OSError:
            return 0

    def kill_replica(self, node: Replica) -> None:
        """SIGKILL one replica (its whole process group), waiting until it is gone."""
        assert node.process is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(node.process.pid, signal.SIGKILL)
        node.process.wait(30)

    def stop_replica(self, node: Replica, timeout: float = 60.0) -> int | None:
        """SIGTERM (a graceful stop); its exit code, None if it had to be killed."""
        if node.process is None or node.process.poll() is not None:
            return None if node.process is None else node.process.returncode
        node.process.send_signal(signal.SIGTERM)
        try:
            return node.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill_replica(node)
            return None

    def fail_over(self) -> float:
        """The primary dies (``pg_ctl stop -m immediate``) and the standby is promoted
        (``pg_ctl promote``); the seconds until the promoted server takes writes."""
        began = time.monotonic()
        self.postgres.primary.stop("immediate")
        self.postgres.standby.promote()
        with psycopg.connect(self.postgres.standby.url("postgres"), autocommit=True) as connection:
            # Its only standby is gone: commits must not wait for one.
            connection.execute("ALTER SYSTEM SET synchronous_standby_names = ''")
            connection.execute("SELECT pg_reload_conf()")
        return time.monotonic() - began

    def describe(self) -> dict[str, Any]:
        """What a person needs to use it."""
        return {
            "address": self.address,
            "http_address": self.http_address,
            "replicas": {
                node.name: {
                    "grpc": node.address,
                    "http": f"127.0.0.1:{node.http_port}",
                    "metrics": f"http://127.0.0.1:{node.metrics_port}/metrics",
                    "ready": f"http://127.0.0.1:{node.metrics_port}/ready",
                    "log": str(node.log),
                }
                for node in self.nodes
            },
            "primary": self.postgres.primary.url(),
            "standby": self.postgres.standby.url(),
            "database_url": self.database_url,
            "read_database_url": self.read_database_url,
            "operator_token_file": str(self.folder / "operator-token"),
            "haproxy_config": str(self.haproxy_config_path),
            "folder": str(self.folder),
        }

    def close(self) -> None:
        """Stop everything this cluster started and delete its folder (unless ``keep``)."""
        if self.haproxy is not None and self.haproxy.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.haproxy.pid, signal.SIGTERM)
            try:
                self.haproxy.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.haproxy.pid, signal.SIGKILL)
                self.haproxy.wait()
        for node in self.nodes:
            if node.alive():
                self.stop_replica(node, timeout=20)
        for server in (self.postgres.standby, self.postgres.primary):
            with contextlib.suppress(RuntimeError):
                if server.running():
                    server.stop("immediate")
        if not self.keep:
            shutil.rmtree(self.folder, ignore_errors=True)


def new_folder() -> Path:
    """A fresh folder for a cluster, under the system's temporary folder."""
    return Path(tempfile.mkdtemp(prefix="sapsam-cluster-"))


def print_json(value: Any) -> None:
    """One JSON document on stdout."""
    print(json.dumps(value, indent=2, default=str), flush=True)
