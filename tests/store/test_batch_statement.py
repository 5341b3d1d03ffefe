"""The commit group's one statement for many appends (sapsam.store.batch_statement), against real
PostgreSQL: what each member is told, and that its read models, secrets and request ids are those
its own statement would have written."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg
import pytest

from sapsam.audit.sample_series import series_events
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.log.chain import verify_stream_chain
from sapsam.log.records import AppendResult, ConcurrencyConflict, NewEvent, RequestIdReused
from sapsam.store.append_statement import secret_companions
from sapsam.store.appends import append
from sapsam.store.batch_statement import BatchMember, batch_statement, member_rows
from sapsam.store.commit_group import CommitGroup, RunAlone
from sapsam.store.processed_requests import find_processed_request
from sapsam.store.projections import rebuild_projections
from sapsam.store.reads import read_all, read_stream
from sapsam.store.table_projections import projectors, table_rows_as_json

Connection = psycopg.AsyncConnection[Any]
Row = tuple[Any, ...]


@pytest.fixture
def reader(database_url: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(database_url, autocommit=True) as connection:
        rebuild_projections(connection, projectors())  # the game's read models exist
        yield connection


@pytest.fixture
async def writers(
    database_url: str, reader: psycopg.Connection[Any]
) -> AsyncIterator[list[Connection]]:
    opened = [
        await psycopg.AsyncConnection.connect(database_url, autocommit=True) for _ in range(8)
    ]
    yield opened
    for connection in opened:
        await connection.close()


class OneBatch:
    """A stand-in commit group that gathers ``size`` appends and sends them as ONE batch
    statement on ``connection`` (what the real group does with the members of a batch), so a
    test knows exactly which appends shared it. Later appends (a member's second attempt, after
    its guard failed) run alone, as the group would send them in a later batch."""

    def __init__(self, connection: Connection, size: int) -> None:
        self.connection = connection
        self.size = size
        self.members: list[BatchMember] = []
        self.answers: list[asyncio.Future[list[Row]]] = []
        self.rows: list[list[Row]] = []

    async def execute(
        self,
        statement: str,
        parameters: dict[str, Any],
        stream_id: str,
        batched: BatchMember | None = None,
    ) -> list[Row]:
        if len(self.members) == self.size:
            raise RunAlone
        assert batched is not None  # every append here can be a member
        answer: asyncio.Future[list[Row]] = asyncio.get_running_loop().create_future()
        self.members.append(batched)
        self.answers.append(answer)
        if len(self.members) == self.size:
            text, values = batch_statement(self.members)
            rows = await (await self.connection.execute(text, values)).fetchall()
            self.rows = member_rows(rows, self.size)
            for waiting, member_rows_ in zip(self.answers, self.rows, strict=True):
                waiting.set_result(member_rows_)
        return await answer


def one(number: int) -> list[NewEvent]:
    return [NewEvent("Counted", {"n": number})]


async def test_a_member_whose_version_was_taken_is_told_so_and_the_others_commit(
    writers: list[Connection],
) -> None:
    await append(writers[0], "taken", 0, one(0), "first")
    batch = OneBatch(writers[7], 4)
    outcomes = await asyncio.gather(
        # Expected version 0 on a stream at 1: the guard (the next version is taken) leaves it
        # out; the others' events commit in the same statement.
        append(writers[1], "taken", 0, one(1), "late", commit_group=batch),  # type: ignore[arg-type]
        *(
            append(writers[2 + i], f"free-{i}", 0, one(i), f"r-{i}", commit_group=batch)  # type: ignore[arg-type]
            for i in range(3)
        ),
        return_exceptions=True,
    )
    conflict = outcomes[0]
    assert isinstance(conflict, ConcurrencyConflict) and conflict.current_version == 1
    assert batch.rows[0] == []  # no rows for it; its append re-read the head
    assert [len(rows) for rows in batch.rows[1:]] == [1, 1, 1]
    for index, outcome in enumerate(outcomes[1:]):
        assert isinstance(outcome, AppendResult) and not outcome.replayed
        stored = await read_stream(writers[0], f"free-{index}")
        assert [(e.position, e.hash) for e in stored] == [
            (outcome.first_position, outcome.events[0].hash)
        ]
    assert [e.stream_id for e in await read_all(writers[0])] == [
        "taken",
        "free-0",
        "free-1",
        "free-2",
    ]  # positions follow the batch's order
    assert await find_processed_request(writers[0], "late") is None


async def test_a_replayed_request_is_answered_with_its_first_result_beside_new_appends(
    writers: list[Connection],
) -> None:
    first = await append(writers[0], "s", 0, one(0), "again", response={"k": 1})
    batch = OneBatch(writers[7], 3)
    outcomes = await asyncio.gather(
        # The same request, decided again on the stream as it is now (version 1): its request
        # id is processed, so the guard leaves it out and it is answered as a retry.
        append(writers[1], "s", 1, one(0), "again", response={"k": 1}, commit_group=batch),  # type: ignore[arg-type]
        # Its request id used for another stream: refused, nothing written.
        append(writers[2], "other", 0, one(0), "again", commit_group=batch),  # type: ignore[arg-type]
        append(writers[3], "new", 0, one(5), "fresh", commit_group=batch),  # type: ignore[arg-type]
        return_exceptions=True,
    )
    replay, reused, fresh = outcomes
    assert isinstance(replay, AppendResult) and replay.replayed
    assert (replay.first_position, replay.last_version, replay.response) == (
        first.first_position,
        1,
        {"k": 1},
    )
    assert isinstance(reused, RequestIdReused)
    assert isinstance(fresh, AppendResult) and not fresh.replayed
    assert batch.rows[0] == batch.rows[1] == [] and len(batch.rows[2]) == 1
    assert [e.stream_id for e in await read_all(writers[0])] == ["s", "new"]


async def test_each_members_request_id_row_is_its_own(writers: list[Connection]) -> None:
    batch = OneBatch(writers[7], 3)
    digest = bytes(range(32))
    results = await asyncio.gather(
        *(
            append(
                writers[i],
                f"p-{i}",
                0,
                [NewEvent("Counted", {"n": i}), NewEvent("Counted", {"n": i + 1})],
                f"p-{i}",
                "actor",
                response={"member": i},
                request_digest=digest if i == 1 else None,
                commit_group=batch,  # type: ignore[arg-type]
            )
            for i in range(3)
        )
    )
    for i, result in enumerate(results):
        processed = await find_processed_request(writers[0], f"p-{i}")
        assert processed is not None
        assert processed.result == AppendResult(
            stream_id=f"p-{i}",
            request_id=f"p-{i}",
            first_version=1,
            last_version=2,
            first_position=result.first_position,
            last_position=result.last_position,
            response={"member": i},
            replayed=True,
            events=(),
        )
        assert processed.request_digest == (digest if i == 1 else None)
        stored = await read_stream(writers[0], f"p-{i}")
        assert [e.metadata["request_id"] for e in stored] == [f"p-{i}"] * 2
        assert [e.metadata["actor"] for e in stored] == ["actor"] * 2
        assert verify_stream_chain(stored).intact
        assert stored == list(result.events)  # what the append answered is what was stored


def command_batches(table_id: uuid.UUID, seats: int) -> list[list[NewEvent]]:
    """A table's series as the table service appends it: a command's follow-ups join it."""
    batches: list[list[NewEvent]] = []
    for event in series_events(table_id, seats, 2):
        name, schema_version, data = DEFAULT_CODEC.encode(event)
        new = NewEvent(name, data, schema_version)
        if name in {"RevealsOpened", "DealScored", "SeriesCompleted"} and batches:
            batches[-1].append(new)
        else:
            batches.append([new])
    return batches


async def test_tables_played_together_keep_the_read_models_and_secrets_a_rebuild_gives(
    database_url: str, reader: psycopg.Connection[Any], writers: list[Connection]
) -> None:
    group = CommitGroup(database_url, batch_statement=True)
    seeds: dict[tuple[str, int], bytes] = {}

    async def play(connection: Connection, seats: int) -> str:
        table_id = uuid.uuid4()
        stream = f"table-{table_id}"
        version = 0
        for number, batch in enumerate(command_batches(table_id, seats)):
            keep: list[tuple[int, bytes]] = []
            forget: list[int] = []
            if batch[0].type == "DealStarted":
                seed = os.urandom(32)
                seeds[(stream, number)] = seed
                keep = [(number, seed)]
            elif batch[0].type == "SeedRevealed":
                forget = [max(n for s, n in seeds if s == stream)]
            await append(
                connection,
                stream,
                version,
                batch,
                f"{stream}/{version}",
                "t",
                projectors=projectors(),
                companions=secret_companions(stream, keep, forget),
                commit_group=group,
            )
            version += len(batch)
        return stream

    try:
        streams = await asyncio.gather(
            *(play(connection, 2 + index % 3) for index, connection in enumerate(writers))
        )
    finally:
        await group.close()
    assert group.failed_batches == 0
    assert group.batches < group.statements  # appends shared statements
    live = table_rows_as_json(reader)
    assert reader.execute(
        "SELECT count(*), min(deals_scored), max(deals_scored) FROM table_state"
    ).fetchone() == (len(writers), 2, 2)
    rebuild_projections(reader, projectors())
    assert table_rows_as_json(reader) == live  # every row as the per-event path writes it
    assert reader.execute("SELECT count(*) FROM deal_secrets").fetchone() == (0,)  # all forgotten
    for stream in streams:
        stored = await read_stream(writers[0], stream)
        assert verify_stream_chain(stored).intact


async def test_a_seed_is_kept_with_its_append_and_only_then(
    database_url: str, reader: psycopg.Connection[Any], writers: list[Connection]
) -> None:
    batch = OneBatch(writers[7], 2)
    stream, taken = "table-" + str(uuid.uuid4()), "table-" + str(uuid.uuid4())
    await append(writers[0], taken, 0, one(0), "taken")
    await asyncio.gather(
        append(
            writers[1],
            stream,
            0,
            one(1),
            "kept",
            companions=secret_companions(stream, [(7, b"seed")], []),
            commit_group=batch,  # type: ignore[arg-type]
        ),
        append(
            writers[2],
            taken,
            0,
            one(2),
            "refused",
            companions=secret_companions(taken, [(7, b"other")], []),
            commit_group=batch,  # type: ignore[arg-type]
        ),
        return_exceptions=True,
    )
    assert reader.execute(
        "SELECT stream_id, deal_number, seed FROM deal_secrets ORDER BY 1"
    ).fetchall() == [(stream, 7, b"seed")]


async def test_two_appends_of_one_stream_go_in_separate_batches(
    database_url: str, writers: list[Connection]
) -> None:
    # Both expect version 0: in one statement both guards would pass and the statement would fail
    # on the key, sending every member down the slow path; in two batches the first commits with
    # "other" and the second alone is told the version is taken.
    group = CommitGroup(database_url, batch_statement=True)
    try:
        outcomes = await asyncio.gather(
            append(writers[0], "other", 0, one(0), "o", commit_group=group),
            append(writers[1], "same", 0, one(1), "a", commit_group=group),
            append(writers[2], "same", 0, one(2), "b", commit_group=group),
            return_exceptions=True,
        )
    finally:
        await group.close()
    assert group.batches >= 1  # the batch of "other" and the first "same" committed
    assert isinstance(outcomes[0], AppendResult) and isinstance(outcomes[1], AppendResult)
    assert isinstance(outcomes[2], ConcurrencyConflict) and outcomes[2].current_version == 1
    assert [e.data for e in await read_stream(writers[0], "same")] == [{"n": 1}]
