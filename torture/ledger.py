"""The ledger of acknowledged calls, and the SDK client that writes it.

Every mutating call the server acknowledged (answered OK) is one ledger line: its request_id, the
method, the table, the version the answer carried. The checks (``torture.checks``) then hold the
log to it: each line in the log exactly once, at that version. The client retries what docs/api.md
says is safe to retry (UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED but a stale etag, CANCELLED from
grpc: the SDK's ``retryable``) with the very same request, for as long as an outage may last, and
counts every failed attempt.

The clients play as the SDK does by default: commitment scheme 2 (bound to the player id) and every
commit and reveal signed by the player's own Ed25519 key (docs/fairness.md §12.1, §19), each key
registered on its player's first move and kept in the run's folder (``player-keys.json`` beside
the ledger), never in the user's own key file. ``torture.checks`` counts a move that is not.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import grpc

from sapsam_client.client import Client, table_name
from sapsam_client.errors import SapsamError, UnavailableError, from_rpc_error
from sapsam_client.player_key import KEY_FILE_NAME
from sapsam_proto.v1 import table_event_pb2, table_service_pb2

ResponseT = TypeVar("ResponseT")
GIVE_UP_SECONDS = 240.0
"""A call (or a watch) still failing after this long is given up: far past any planned outage."""
HEALTHY_STREAM_SECONDS = 10.0
"""A watch stream open this long before it broke counts as having worked (a quiet table)."""


class Stats:
    """Thread-safe counters and maxima the run reports."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.maxima: dict[str, float] = {}
        self.notes: list[str] = []

    def add(self, key: str, amount: int = 1) -> None:
        """Count ``amount`` more of ``key``."""
        with self.lock:
            self.counts[key] += amount

    def most(self, key: str, value: float) -> None:
        """Keep the largest ``value`` seen for ``key``."""
        with self.lock:
            if value > self.maxima.get(key, float("-inf")):
                self.maxima[key] = value

    def note(self, text: str, limit: int = 200) -> None:
        """Keep a line for the report (the first ``limit`` only)."""
        with self.lock:
            if len(self.notes) < limit:
                self.notes.append(text)

    def window(self) -> WindowCounter:
        """Counts of failures from now on (what one disruption caused)."""
        return WindowCounter(self)


class WindowCounter:
    """The failures counted between its creation and :meth:`close`."""

    def __init__(self, stats: Stats) -> None:
        with stats.lock:
            self.stats = stats
            self.before = Counter(stats.counts)

    def close(self) -> dict[str, int]:
        """What was counted since, for the keys about failed attempts."""
        with self.stats.lock:
            after = Counter(self.stats.counts)
        return {
            key: after[key] - self.before[key]
            for key in after
            if key.startswith("failed ") and after[key] != self.before[key]
        }


class Ledger:
    """Append-only: every acknowledged mutating call, to a JSON-lines file and in memory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.entries: list[dict[str, Any]] = []
        self.file = path.open("a", encoding="utf-8")

    def record(self, entry: dict[str, Any]) -> None:
        """Add one acknowledged call."""
        line = json.dumps(entry, separators=(",", ":"))
        with self.lock:
            self.entries.append(entry)
            self.file.write(line + "\n")
            self.file.flush()

    def snapshot(self) -> list[dict[str, Any]]:
        """The entries so far (every one of them was acknowledged before this returns)."""
        with self.lock:
            return list(self.entries)

    def close(self) -> None:
        """Close the file."""
        self.file.close()


def _subject(request: Any, response: Any) -> str | None:
    """The table a call was about, from the request (or CreateTable's answer)."""
    for field in ("table", "seat", "name"):
        value = getattr(request, field, None)
        if isinstance(value, str) and value.startswith("tables/"):
            return table_name(value)
    created = getattr(getattr(response, "table", None), "name", None)
    return table_name(created) if isinstance(created, str) and created else None


def _version(response: Any) -> int | None:
    fields = response.DESCRIPTOR.fields_by_name
    if "version" in fields:
        return int(response.version)
    if "table" in fields and response.HasField("table"):
        return int(response.table.version)
    return None


class LedgerClient(Client):
    """An SDK client that records every acknowledged mutating call and retries for long."""

    def __init__(
        self, channel: grpc.Channel, ledger: Ledger, stats: Stats, lane: str, timeout: float = 10.0
    ) -> None:
        super().__init__(channel, None, attempts=1000, backoff_seconds=0.05, timeout=timeout)
        # Signed moves, as the SDK's default, with the keys kept in the run's folder.
        self.sign_moves = True
        self.server = "torture"
        self.key_path = ledger.path.with_name(KEY_FILE_NAME)
        self.ledger = ledger
        self.stats = stats
        self.lane = lane
        self.player: str | None = None

    def call(
        self, method: Callable[..., Any], request: Any, response_type: type[ResponseT]
    ) -> ResponseT:
        """Send ``request`` until it is answered, retrying what is safe, always unchanged."""
        kind = type(request).__name__.removesuffix("Request")
        request_id: str = getattr(request, "request_id", None) or ""
        began = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            sent = time.monotonic()
            try:
                response = method(request, metadata=self.metadata(), timeout=self.timeout)
            except grpc.RpcError as rpc_error:
                error = from_rpc_error(rpc_error)
                took = time.monotonic() - sent
                self.stats.add(f"failed {error.code} {error.reason}")
                self.stats.most(f"slowest failed attempt {error.code}", took)
                # A limit says when to come back (google.rpc.RetryInfo, in the SDK's error).
                wait = getattr(error, "retry_delay", None)
                limited = error.code == "RESOURCE_EXHAUSTED" and wait is not None
                retry = (error.retryable or limited) and error.reason != "VERSION_MISMATCH"
                if not retry or time.monotonic() - began > GIVE_UP_SECONDS:
                    raise error from None
                backoff = min(1.0, 0.05 * 2 ** min(attempt, 5)) * random.uniform(0.5, 1.0)
                time.sleep(max(backoff, float(wait or 0.0)))
                continue
            if not isinstance(response, response_type):
                raise TypeError(f"expected {response_type.__name__}, got {type(response)}")
            self.stats.add("calls answered")
            if attempt > 1:
                self.stats.add("calls answered after a retry")
            if request_id:
                if kind == "RegisterPlayer":
                    self.player = str(response.player.name)  # type: ignore[attr-defined]
                self.ledger.record(
                    {
                        "at": round(time.time(), 3),
                        "lane": self.lane,
                        "method": kind,
                        "request_id": request_id,
                        "player": self.player,
                        "table": _subject(request, response),
                        "version": _version(response),
                        "attempts": attempt,
                    }
                )
            return response

    def watch(self, table: str, after_version: int = 0) -> Iterator[table_event_pb2.TableEvent]:
        """The SDK's watch, resumed from the last version for as long as an outage may last."""
        last = after_version
        failing_since: float | None = None
        while True:
            opened = time.monotonic()
            stream = self.tables.WatchTable(
                table_service_pb2.WatchTableRequest(table=table_name(table), after_version=last),
                metadata=self.metadata(),
            )
            try:
                for response in stream:
                    failing_since = None
                    if response.event.version != last + 1:
                        self.stats.add("watch version gaps")
                        self.stats.note(
                            f"watch gap on {table}: {last} then {response.event.version}"
                        )
                    last = response.event.version
                    yield response.event
                    if response.event.WhichOneof("payload") == "series_completed":
                        return
                self.stats.add("watch streams ended by the server")
            except grpc.RpcError as rpc_error:
                error: SapsamError = from_rpc_error(rpc_error)
                self.stats.add(f"watch broke {error.code} {error.reason}")
                if not isinstance(error, UnavailableError) and error.code != "CANCELLED":
                    raise error from None
            finally:
                stream.cancel()
            if failing_since is None or time.monotonic() - opened > HEALTHY_STREAM_SECONDS:
                failing_since = time.monotonic()  # a stream that stayed open this long worked
            elif time.monotonic() - failing_since > GIVE_UP_SECONDS:
                raise UnavailableError("UNAVAILABLE", "UNAVAILABLE", "watch gave up")
            time.sleep(random.uniform(0.1, 0.4))
