"""Sample read models for the store's tests: a per-stream summary and per-type counts.

Also loadable by ``sapsam projections rebuild --module store_sample_projectors`` (with this
folder on PYTHONPATH), to test the command end to end.
"""

from __future__ import annotations

from collections.abc import Sequence

from sapsam.log.records import RecordedEvent
from sapsam.store.projections import Projector, SqlProjector, StatementSink

Connection = StatementSink


def apply_stream_summary(connection: Connection, event: RecordedEvent) -> None:
    value = event.data.get("value", 0)
    connection.execute(
        """
        INSERT INTO stream_summaries (stream_id, events, last_version, last_type, value_total)
        VALUES (%s, 1, %s, %s, %s)
        ON CONFLICT (stream_id) DO UPDATE SET events = stream_summaries.events + 1,
            last_version = excluded.last_version, last_type = excluded.last_type,
            value_total = stream_summaries.value_total + excluded.value_total
        """,
        [event.stream_id, event.version, event.type, value],
    )


def apply_type_count(connection: Connection, event: RecordedEvent) -> None:
    connection.execute(
        "INSERT INTO type_counts (type, count, last_position) VALUES (%s, 1, %s)"
        " ON CONFLICT (type) DO UPDATE SET count = type_counts.count + 1,"
        " last_position = greatest(type_counts.last_position, excluded.last_position)",
        [event.type, event.position],
    )


STREAM_SUMMARY = SqlProjector(
    name="stream_summary",
    tables=("stream_summaries",),
    create_statements=(
        """
        CREATE TABLE stream_summaries (
            stream_id text PRIMARY KEY, events integer NOT NULL, last_version integer NOT NULL,
            last_type text NOT NULL, value_total bigint NOT NULL
        )
        """,
    ),
    apply_event=apply_stream_summary,
)
TYPE_COUNTS = SqlProjector(
    name="type_counts",
    tables=("type_counts",),
    create_statements=(
        "CREATE TABLE type_counts (type text PRIMARY KEY, count integer NOT NULL,"
        " last_position bigint NOT NULL)",
        "CREATE INDEX type_counts_by_count ON type_counts (count)",
    ),
    apply_event=apply_type_count,
)
PROJECTORS: tuple[Projector, ...] = (STREAM_SUMMARY, TYPE_COUNTS)


def projectors() -> Sequence[Projector]:
    """The sample projectors, as ``sapsam.store.projectors.PROJECTOR_MODULES`` expects."""
    return PROJECTORS
