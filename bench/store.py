"""Event store throughput: appends beside a plain INSERT+COMMIT ceiling, and replay speed.

Prints one JSON object. Runs against ``DATABASE_URL`` (in a scratch database it creates and drops)
or, without it, a private embedded PostgreSQL in a temporary folder. Every figure comes from the
same server in the same run, so read the ratios, not the absolutes.

- ``appends``: events appended per second through ``sapsam.store.appends.append`` (optimistic
  concurrency, idempotency record, hash chain, NOTIFY), one event per commit and one-deal batches
  of 14 events, with 1 and 4 writer threads (each on its own connection and its own streams);
- ``ceiling``: the same shapes as plain ``INSERT ... ; COMMIT`` into a look-alike table with the
  same columns and unique key but no triggers, no lock, no idempotency record, sending the batch
  as one JSON document as ``append`` does (the fastest plain form we know: the strict ceiling);
- ``plain_values``: the same plain insert in its conventional form, a multi-row ``VALUES`` list
  with one parameter per value, for context;
- ``replay``: events read from the log in global order and folded into state, per second.
  ``replay_evolve`` is the fold: decode each event and apply the domain's ``evolve`` per table.

Usage: ``python bench/store.py [--seconds 3] [--rounds 3] [--replay-events 20000]
[--synchronous-commit off]``. With ``off`` neither side waits for the disk: the ratio then shows
the software's own cost, free of disk contention from whatever else the machine runs.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from _scratch import scratch_database
from psycopg import sql
from psycopg.types.json import Jsonb

from sapsam.audit.sample_series import series_events
from sapsam.domain.events import DEFAULT_CODEC, Event
from sapsam.domain.table import INITIAL_STATE, TableState, evolve
from sapsam.log.records import NewEvent, RecordedEvent
from sapsam.rules.ruleset import DEFAULT_RULE_SET
from sapsam.store.appends import append
from sapsam.store.reads import iterate_all

DEAL_BATCH = 14
TARGET_BATCHED_RATIO = 0.70

Connection = psycopg.Connection[Any]

LOOK_ALIKE_TABLE = """
CREATE TABLE plain_events (
    position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    stream_id text NOT NULL,
    version integer NOT NULL,
    type text NOT NULL,
    schema_version integer NOT NULL,
    data jsonb NOT NULL,
    metadata jsonb NOT NULL,
    hash bytea NOT NULL,
    UNIQUE (stream_id, version)
)
"""
# The plain loop's insert: the batch as one JSON document, parsed once by the server (the
# cheapest multi-row form we found; the store's append uses the same form).
PLAIN_INSERT = """
INSERT INTO plain_events (stream_id, version, type, schema_version, data, metadata, hash)
SELECT %s::text, (e->>'v')::int, e->>'t', 1, e->'d', %s::jsonb, decode(e->>'h', 'hex')
FROM jsonb_array_elements(%s::jsonb) WITH ORDINALITY AS batch(e, n)
ORDER BY n
"""


def sample_event(sequence: int) -> NewEvent:
    """An event about the size of the game's: a seat, a hash, a few fields."""
    return NewEvent(
        "ArrangementCommitted",
        {"deal": 1, "seat": sequence % 4, "commitment": f"{sequence:064x}", "round": sequence},
    )


# --- the fold used by the replay figure --------------------------------------------------------


def replay_initial_state() -> dict[str, TableState]:
    """The state the replay starts from: no tables yet."""
    return {}


def replay_evolve(state: dict[str, TableState], event: RecordedEvent) -> dict[str, TableState]:
    """Fold one recorded event into its table's state: decode, then the domain's ``evolve``."""
    decoded = DEFAULT_CODEC.decode(event.type, event.schema_version, event.data)
    state[event.stream_id] = evolve(state.get(event.stream_id, INITIAL_STATE), decoded)
    return state


# --- measuring ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rate:
    """Rows (events) written per second, and commits per second."""

    rows_per_second: float
    commits_per_second: float


def run_writers(
    url: str, writers: int, seconds: float, body: Callable[[Connection, int, int], int]
) -> Rate:
    """Run ``body(connection, writer, iteration) -> rows`` in ``writers`` threads for a while."""
    rows = [0] * writers
    commits = [0] * writers
    errors: list[BaseException] = []
    start = threading.Barrier(writers + 1)
    stop = threading.Event()

    def work(writer: int) -> None:
        try:
            with psycopg.connect(url, autocommit=True) as connection:
                start.wait()
                iteration = 0
                while not stop.is_set():
                    rows[writer] += body(connection, writer, iteration)
                    commits[writer] += 1
                    iteration += 1
        except BaseException as error:
            errors.append(error)
            raise

    threads = [threading.Thread(target=work, args=(index,)) for index in range(writers)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    if errors:
        raise errors[0]
    return Rate(sum(rows) / elapsed, sum(commits) / elapsed)


def plain_insert_body(batch: int, run_tag: str) -> Callable[[Connection, int, int], int]:
    def body(connection: Connection, writer: int, iteration: int) -> int:
        events = [sample_event(iteration * batch + i) for i in range(batch)]
        rows = [
            {"v": iteration * batch + i + 1, "t": event.type, "d": event.data, "h": "00" * 32}
            for i, event in enumerate(events)
        ]
        connection.execute(
            PLAIN_INSERT,
            [
                f"{run_tag}-{writer}",
                json.dumps({"request_id": f"{run_tag}-{writer}-{iteration}"}),
                json.dumps(rows),
            ],
        )
        return batch

    return body


def values_insert_body(batch: int, run_tag: str) -> Callable[[Connection, int, int], int]:
    """The conventional plain form: a multi-row VALUES list, every value its own parameter."""

    def body(connection: Connection, writer: int, iteration: int) -> int:
        events = [sample_event(iteration * batch + i) for i in range(batch)]
        statement = sql.SQL(
            "INSERT INTO plain_events (stream_id, version, type, schema_version, data, metadata,"
            " hash) VALUES {}"
        ).format(sql.SQL(", ").join([sql.SQL("(%s, %s, %s, 1, %s, %s, %s)")] * batch))
        metadata = Jsonb({"request_id": f"{run_tag}-{writer}-{iteration}"})
        parameters: list[Any] = []
        for i, event in enumerate(events):
            parameters += [
                f"{run_tag}-{writer}",
                iteration * batch + i + 1,
                event.type,
                Jsonb(event.data),
                metadata,
                bytes(32),
            ]
        connection.execute(statement, parameters)
        return batch

    return body


def append_body(batch: int, run_tag: str) -> Callable[[Connection, int, int], int]:
    def body(connection: Connection, writer: int, iteration: int) -> int:
        events = [sample_event(iteration * batch + i) for i in range(batch)]
        append(
            connection,
            f"{run_tag}-{writer}",
            iteration * batch,
            events,
            f"{run_tag}-{writer}-{iteration}",
            actor=f"seat-{writer}",
        )
        return batch

    return body


def alternate(
    url: str,
    writers: int,
    seconds: float,
    rounds: int,
    bodies: tuple[Callable[[int], Callable[[Connection, int, int], int]], ...],
) -> list[Rate]:
    """Run each body in turn for ``rounds`` rounds (sharing the run time), averaging each.

    Interleaving keeps a burst of load from elsewhere on the machine from landing on one side of
    the comparison only.
    """
    totals = [[0.0, 0.0] for _ in bodies]
    for round_number in range(rounds):
        for index, make_body in enumerate(bodies):
            rate = run_writers(url, writers, seconds / rounds, make_body(round_number))
            totals[index][0] += rate.rows_per_second / rounds
            totals[index][1] += rate.commits_per_second / rounds
    return [Rate(rows, commits) for rows, commits in totals]


def measure_appends(url: str, seconds: float, rounds: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for label, batch in (("one_event_per_commit", 1), ("deal_batch_of_14", DEAL_BATCH)):
        results[label] = {}
        for writers in (1, 4):
            tag = f"{label}-{writers}-{uuid.uuid4().hex[:6]}"
            ceiling, conventional, appended = alternate(
                url,
                writers,
                seconds,
                rounds,
                (
                    lambda r: plain_insert_body(batch, f"{tag}-{r}"),  # noqa: B023
                    lambda r: values_insert_body(batch, f"{tag}-v{r}"),  # noqa: B023
                    lambda r: append_body(batch, f"{tag}-{r}"),  # noqa: B023
                ),
            )
            results[label][f"writers_{writers}"] = {
                "append_events_per_s": round(appended.rows_per_second),
                "append_commits_per_s": round(appended.commits_per_second),
                "ceiling_rows_per_s": round(ceiling.rows_per_second),
                "ceiling_commits_per_s": round(ceiling.commits_per_second),
                "ratio": round(appended.rows_per_second / ceiling.rows_per_second, 3),
                "plain_values_rows_per_s": round(conventional.rows_per_second),
                "ratio_to_plain_values": round(
                    appended.rows_per_second / conventional.rows_per_second, 3
                ),
            }
    return results


def _encoded(event: Event) -> tuple[str, dict[str, Any], int]:
    type_name, schema_version, data = DEFAULT_CODEC.encode(event)
    return type_name, data, schema_version


def measure_replay(url: str, events: int) -> dict[str, Any]:
    with psycopg.connect(url, autocommit=True) as connection:
        # Real game streams: 4-seat tables playing whole series, decided by the pure domain.
        tables = max(1, events // 180)
        for number in range(tables):
            table_id = uuid.UUID(int=number + 1)
            decided = series_events(table_id, 4, DEFAULT_RULE_SET.series_length)
            for offset in range(0, len(decided), DEAL_BATCH):
                batch = decided[offset : offset + DEAL_BATCH]
                append(
                    connection,
                    f"table-{table_id}",
                    offset,
                    [NewEvent(*_encoded(event)) for event in batch],
                    f"replay-{table_id}-{offset}",
                )
        # One untimed pass first, so the timed pass reads from a warm cache.
        events_in_log = sum(1 for _ in iterate_all(connection))
        began = time.perf_counter()
        recorded = list(iterate_all(connection))
        read_seconds = time.perf_counter() - began
    # The game's events only: the append figures' sample events share the log.
    game = [event for event in recorded if event.stream_id.startswith("table-")]
    began = time.perf_counter()
    state = replay_initial_state()
    for event in game:
        state = replay_evolve(state, event)
    fold_seconds = time.perf_counter() - began
    assert len(recorded) == events_in_log and len(state) == tables
    read_rate = len(recorded) / read_seconds
    fold_rate = len(game) / fold_seconds
    return {
        "events_read": len(recorded),
        "game_events_folded": len(game),
        "read_events_per_s": round(read_rate),
        "fold_events_per_s": round(fold_rate),
        # Reading and folding one event after the other, from the two measured rates.
        "read_and_fold_events_per_s": round(1 / (1 / read_rate + 1 / fold_rate)),
        "fold": "decode + sapsam.domain.table.evolve per table stream",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="time for each side of each comparison"
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternations per comparison")
    parser.add_argument(
        "--synchronous-commit",
        choices=("on", "off"),
        default="on",
        help="off: commits do not wait for the disk (both sides), to see the software's own cost",
    )
    parser.add_argument("--replay-events", type=int, default=20_000, help="events to replay")
    arguments = parser.parse_args()
    with scratch_database("sapsam-bench-store") as (url, server):
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute(LOOK_ALIKE_TABLE)
        writer_url = psycopg.conninfo.make_conninfo(
            url, options=f"-c synchronous_commit={arguments.synchronous_commit}"
        )
        appends = measure_appends(writer_url, arguments.seconds, arguments.rounds)
        replay = measure_replay(url, arguments.replay_events)
    batched = [entry["ratio"] for entry in appends["deal_batch_of_14"].values()]
    print(
        json.dumps(
            {
                "benchmark": "store",
                "server": server,
                "seconds_per_side": arguments.seconds,
                "rounds": arguments.rounds,
                "synchronous_commit": arguments.synchronous_commit,
                "appends": appends,
                "replay": replay,
                "target": {
                    "batched_append_ratio_min": TARGET_BATCHED_RATIO,
                    "batched_append_ratios": batched,
                    "met": all(ratio >= TARGET_BATCHED_RATIO for ratio in batched),
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
