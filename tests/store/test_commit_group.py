"""Group commit (sapsam.store.commit_group): appends in flight share one transaction, each caller
answered with its own rows only after that transaction committed; any trouble, and each member
runs alone on its own connection, with the ordinary conflict and retry handling."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import psycopg
import pytest

from sapsam.log.chain import verify_stream_chain
from sapsam.log.records import AppendResult, ConcurrencyConflict, NewEvent
from sapsam.store import commit_group, write_stamps
from sapsam.store.appends import append
from sapsam.store.commit_group import CommitGroup, RunAlone, enabled_by_environment
from sapsam.store.event_store import EventStore
from sapsam.store.reads import read_all, read_stream, stream_version

Connection = psycopg.AsyncConnection[Any]


def event(number: int) -> list[NewEvent]:
    return [NewEvent("Counted", {"n": number})]


@pytest.fixture
async def connections(database_url: str) -> AsyncIterator[list[Connection]]:
    async with AsyncExitStack() as stack:
        opened = [
            await stack.enter_async_context(
                await psycopg.AsyncConnection.connect(database_url, autocommit=True)
            )
            for _ in range(24)
        ]
        yield opened


@pytest.fixture
async def group(database_url: str) -> AsyncIterator[CommitGroup]:
    commit_group = CommitGroup(database_url)
    yield commit_group
    await commit_group.close()


async def test_concurrent_appends_of_many_streams_share_commits_and_chain(
    connections: list[Connection], group: CommitGroup
) -> None:
    appends_per_stream = 5

    async def writer(connection: Connection, stream: str) -> list[AppendResult]:
        results = []
        for version in range(appends_per_stream):
            results.append(
                await append(
                    connection,
                    stream,
                    version,
                    event(version),
                    f"{stream}/{version}",
                    commit_group=group,
                )
            )
            # Acknowledged means committed: another session (the writer's own connection, not
            # the group's) already sees it.
            assert await stream_version(connection, stream) == version + 1
        return results

    streams = [f"s-{index}" for index in range(len(connections))]
    written = await asyncio.gather(
        *(
            writer(connection, stream)
            for connection, stream in zip(connections, streams, strict=True)
        )
    )
    assert group.statements == len(streams) * appends_per_stream
    assert group.batches < group.statements / 2  # most commits carried several appends
    assert group.failed_batches == 0
    positions = set()
    for stream, results in zip(streams, written, strict=True):
        # Each caller got its own rows: its stream, its versions, its events.
        assert [(r.stream_id, r.first_version, r.replayed) for r in results] == [
            (stream, version, False) for version in range(1, appends_per_stream + 1)
        ]
        assert [r.events[0].data for r in results] == [{"n": n} for n in range(5)]
        positions.update(r.first_position for r in results)
        stored = await read_stream(connections[0], stream)
        assert [e.position for e in stored] == [r.first_position for r in results]
        assert [e.hash for e in stored] == [r.events[0].hash for r in results]
        assert verify_stream_chain(stored).intact
    assert len(positions) == len(streams) * appends_per_stream


@pytest.mark.parametrize("batch_statement", [True, False], ids=["one_statement", "statements"])
async def test_a_conflicting_member_does_not_fail_the_others(
    connections: list[Connection], group: CommitGroup, batch_statement: bool
) -> None:
    group.batch_statement = batch_statement
    await append(connections[0], "taken", 0, event(0), "first")  # not through the group
    others = [
        append(connection, f"free-{index}", 0, event(index), f"r-{index}", commit_group=group)
        for index, connection in enumerate(connections[2:10])
    ]
    # Expected version 0 on a stream at version 1: it needs no head read, so it fails only on
    # the events' key (or, in the batch statement, its guard), inside the batch it joined: the
    # second (the first append is sent at once, alone).
    stale = append(connections[1], "taken", 0, event(1), "late", commit_group=group)
    outcomes = await asyncio.gather(*others, stale, return_exceptions=True)
    conflict = outcomes[-1]
    assert isinstance(conflict, ConcurrencyConflict) and conflict.current_version == 1
    assert all(isinstance(o, AppendResult) and not o.replayed for o in outcomes[:-1])
    if batch_statement:  # its guard left it out of the statement; the others committed
        assert group.failed_batches == 0
        # The batch statement went through libpq's prepared-statement calls on the group's
        # connection (sapsam.store.prepared_statements), prepared there once.
        running = group._running
        assert running is not None and running.connection is not None
        cursor = await running.connection.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'sapsam_statement_%%'"
            " AND statement LIKE '%%jsonb_array_elements%%'"
        )
        assert await cursor.fetchone() == (1,)
    else:  # the batch it was in rolled back; the others ran alone
        assert group.failed_batches >= 1
    assert len(await read_all(connections[0])) == 1 + len(others)


async def test_a_request_sent_twice_at_once_appends_once_and_answers_both_the_same(
    connections: list[Connection], group: CommitGroup
) -> None:
    twice = [
        append(connection, "s", 0, event(7), "same-request", commit_group=group)
        for connection in connections[:2]
    ]
    fillers = [
        append(connection, f"f-{index}", 0, event(index), f"f-{index}", commit_group=group)
        for index, connection in enumerate(connections[2:8])
    ]
    results = await asyncio.gather(*twice, *fillers)
    first, second = results[:2]
    assert sorted([first.replayed, second.replayed]) == [False, True]
    assert (first.first_position, first.events) == (second.first_position, second.events)
    # And a later retry, whatever path it takes, answers the same again.
    again = await append(connections[3], "s", 0, event(7), "same-request", commit_group=group)
    assert again.replayed and again.first_position == first.first_position
    assert len(await read_stream(connections[0], "s")) == 1


async def test_a_batch_whose_commit_fails_acknowledges_no_one(
    connections: list[Connection], group: CommitGroup
) -> None:
    # A deferred check that fails at COMMIT for one stream: every statement of the batch
    # succeeds, and only the COMMIT fails.
    await connections[0].execute(
        """
        CREATE FUNCTION refuse_doomed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.stream_id = 'doomed' THEN RAISE EXCEPTION 'doomed at commit'; END IF;
            RETURN NULL;
        END $$;
        CREATE CONSTRAINT TRIGGER refuse_doomed AFTER INSERT ON events
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_doomed();
        """
    )
    doomed = append(connections[1], "doomed", 0, event(0), "doomed", commit_group=group)
    others = [
        append(connection, f"ok-{index}", 0, event(index), f"ok-{index}", commit_group=group)
        for index, connection in enumerate(connections[2:10])
    ]
    outcomes = await asyncio.gather(doomed, *others, return_exceptions=True)
    assert isinstance(outcomes[0], psycopg.errors.RaiseException)
    # Nobody was answered by the failed batch: the others committed alone, each once.
    assert group.batches == 0 and group.failed_batches >= 1
    assert all(isinstance(o, AppendResult) and not o.replayed for o in outcomes[1:])
    streams = sorted(e.stream_id for e in await read_all(connections[0]))
    assert streams == sorted(f"ok-{index}" for index in range(len(others)))


async def test_a_connection_lost_mid_batch_leaves_every_member_to_run_alone(
    connections: list[Connection], group: CommitGroup
) -> None:
    # A deferred trigger that sleeps at COMMIT for one stream, long enough to end the group's
    # backend while the batch's COMMIT is in flight: its outcome is unknown to the group.
    await connections[0].execute(
        """
        CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.stream_id = 'slow' THEN PERFORM pg_sleep(1); END IF;
            RETURN NULL;
        END $$;
        CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON events
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit();
        """
    )
    await append(connections[0], "warm", 0, event(0), "warm", commit_group=group)
    pid_row = await (
        await connections[0].execute(
            "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
            " AND datname = current_database() AND application_name = ''"
            " AND backend_type = 'client backend' ORDER BY backend_start DESC LIMIT 1"
        )
    ).fetchone()
    assert pid_row is not None

    async def terminate_soon() -> None:
        await asyncio.sleep(0.4)
        await connections[0].execute("SELECT pg_terminate_backend(%s)", [pid_row[0]])

    members = [
        append(connection, f"m-{index}", 0, event(index), f"m-{index}", commit_group=group)
        for index, connection in enumerate(connections[2:8])
    ]
    slow = append(connections[1], "slow", 0, event(0), "slow", commit_group=group)
    outcomes = await asyncio.gather(slow, *members, terminate_soon(), return_exceptions=True)
    # The batch never committed; each member ran alone and appended exactly once.
    assert all(isinstance(o, AppendResult) for o in outcomes[:-1]), outcomes
    assert group.failed_batches >= 1
    assert len(await read_all(connections[0])) == 1 + 1 + len(members)


async def test_close_stops_at_once_and_later_appends_run_alone(
    connections: list[Connection], database_url: str
) -> None:
    group = CommitGroup(database_url)
    pending = [
        asyncio.ensure_future(
            append(connection, f"c-{index}", 0, event(index), f"c-{index}", commit_group=group)
        )
        for index, connection in enumerate(connections[:12])
    ]
    await asyncio.sleep(0)
    began = time.monotonic()
    await group.close()
    assert time.monotonic() - began < 1.0
    results = await asyncio.gather(*pending)
    assert all(not result.replayed for result in results)
    with pytest.raises(RunAlone):
        await group.execute("SELECT 1", {}, "x")
    after = await append(connections[0], "later", 0, event(0), "later", commit_group=group)
    assert after.first_version == 1
    await group.close()  # idempotent
    assert len(await read_all(connections[0])) == 13


async def test_an_idle_group_closes_its_connection_and_reopens_for_the_next_append(
    connections: list[Connection], group: CommitGroup, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One timer ends the idle waits (not one per wait): appends closer together than
    # IDLE_SECONDS keep the connection, a pause that long closes it, the next append reopens it.
    monkeypatch.setattr(commit_group, "IDLE_SECONDS", 0.4)
    connection = connections[0]
    for version in range(4):
        await append(
            connection, "idle", version, event(version), f"i-{version}", commit_group=group
        )
        running = group._running
        assert running is not None and running.connection is not None
        if version == 0:
            first = running.connection
        assert running.connection is first  # kept across waits shorter than IDLE_SECONDS
        await asyncio.sleep(0.25)
    deadline = time.monotonic() + 5.0
    while running.task is not None and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert running.task is None and running.connection is None and running.idle_timer is None
    after = await append(connection, "idle", 4, event(4), "i-4", commit_group=group)
    assert after.first_version == 5 and not after.replayed
    assert running.connection is not None and running.connection is not first
    assert group.batches == 5


async def test_the_switch(database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAPSAM_GROUP_COMMIT", "off")
    assert not enabled_by_environment()
    store = await EventStore.connect(database_url)
    try:
        assert store.commit_group is None
        assert (await store.append("s", 0, event(0), "r")).first_version == 1
    finally:
        await store.close()
    monkeypatch.delenv("SAPSAM_GROUP_COMMIT")
    assert enabled_by_environment()
    store = await EventStore.connect(database_url)
    try:
        assert store.commit_group is not None
        assert (await store.append("s", 1, event(1), "r2")).first_version == 2
        assert store.commit_group.statements == 1
    finally:
        await store.close()


async def test_a_group_that_cannot_connect_leaves_appends_to_their_own_connections(
    connections: list[Connection],
) -> None:
    unreachable = CommitGroup("host=127.0.0.1 port=1 dbname=nothing", {"connect_timeout": 2})
    try:
        first = await append(connections[0], "s", 0, event(0), "r0", commit_group=unreachable)
        assert first.first_version == 1 and unreachable.failed_batches == 1
        # For a while it does not even try: the next appends run alone at once.
        began = time.monotonic()
        for version in range(1, 4):
            await append(
                connections[0],
                "s",
                version,
                event(version),
                f"r{version}",
                commit_group=unreachable,
            )
        assert unreachable.failed_batches == 1 and time.monotonic() - began < 1.0
    finally:
        await unreachable.close()
    assert len(await read_stream(connections[0], "s")) == 4


async def test_a_caller_that_stops_waiting_has_its_write_stamp_bumped_after_the_commit(
    connections: list[Connection], group: CommitGroup
) -> None:
    # The batch is held at COMMIT by a deferred trigger; the caller is cancelled meanwhile. Its
    # append bumps the stamp as it ends (before the commit); the group bumps it again after.
    await connections[0].execute(
        """
        CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_sleep(0.5); RETURN NULL; END $$;
        CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON events
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit();
        """
    )
    stream = f"stamped-{uuid.uuid4()}"
    stamps = write_stamps.stamps()
    before = stamps.current(stream)
    caller = asyncio.ensure_future(
        append(connections[1], stream, 0, event(0), "r", commit_group=group)
    )
    await asyncio.sleep(0.2)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert stamps.current(stream) == before + 1  # the append's own bump, before the commit
    for _ in range(100):
        if group.batches:
            break
        await asyncio.sleep(0.02)
    assert group.batches == 1
    assert stamps.current(stream) == before + 2  # the group's, after it
    assert len(await read_stream(connections[0], stream)) == 1


class _CutAfterCommit:
    """A loopback TCP proxy to PostgreSQL that forwards everything until the server reports a
    COMMIT done, then closes both sides instead of passing that report on: the batch is durable
    and its client cannot know it (the connection lost between commit and answer)."""

    # CommandComplete ('C', length 11, tag "COMMIT"): sent once the commit is durable.
    COMMIT_DONE = b"C\x00\x00\x00\x0bCOMMIT\x00"
    # A batch that is one autocommit statement (sapsam.store.batch_statement) commits at the Sync
    # after it: its CommandComplete ("SELECT <rows>") then ReadyForQuery ('Z', idle) follow.
    STATEMENT_DONE = b"SELECT "
    READY = b"Z\x00\x00\x00\x05I"

    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self.cuts = 0
        self._server: asyncio.Server | None = None

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        host, port = self._target
        if host.startswith("/"):  # a Unix-domain socket folder, as the embedded server uses
            server_in, server_out = await asyncio.open_unix_connection(f"{host}/.s.PGSQL.{port}")
        else:
            server_in, server_out = await asyncio.open_connection(host, port)

        async def to_server() -> None:
            while data := await client_in.read(65536):
                server_out.write(data)
                await server_out.drain()

        async def to_client() -> None:
            tail = b""
            while data := await server_in.read(65536):
                seen = tail + data
                statement_done = seen.find(self.STATEMENT_DONE)
                if self.COMMIT_DONE in seen or (
                    statement_done >= 0 and self.READY in seen[statement_done:]
                ):
                    self.cuts += 1
                    return
                tail = data[-len(self.COMMIT_DONE) :]
                client_out.write(data)
                await client_out.drain()

        forwarding = [asyncio.ensure_future(to_server()), asyncio.ensure_future(to_client())]
        await asyncio.wait(forwarding, return_when=asyncio.FIRST_COMPLETED)
        for task in forwarding:
            task.cancel()
        for writer in (client_out, server_out):
            writer.close()


@pytest.mark.parametrize("batch_statement", [True, False], ids=["one_statement", "statements"])
async def test_a_batch_committed_but_unanswered_is_neither_lost_nor_appended_twice(
    connections: list[Connection], database_url: str, batch_statement: bool
) -> None:
    # The group's connection goes through a proxy that drops it right after PostgreSQL made
    # the batch's COMMIT durable: the group cannot tell whether it committed. Each member then
    # runs alone, finds its own request id already processed, and is answered with the
    # original result (replayed); nothing is appended twice, nothing acknowledged is lost.
    parts = psycopg.conninfo.conninfo_to_dict(database_url)
    proxy = _CutAfterCommit(str(parts.get("host") or "127.0.0.1"), int(parts.get("port") or 5432))
    port = await proxy.start()
    through_proxy = psycopg.conninfo.make_conninfo(
        database_url, host="127.0.0.1", port=port, sslmode="disable"
    )
    group = CommitGroup(through_proxy, batch_statement=batch_statement)
    try:
        members = [
            append(connection, f"cut-{index}", 0, event(index), f"cut-{index}", commit_group=group)
            for index, connection in enumerate(connections[:8])
        ]
        outcomes = await asyncio.gather(*members)
    finally:
        await group.close()
        await proxy.stop()
    assert proxy.cuts >= 1 and group.failed_batches >= 1
    replayed = [outcome for outcome in outcomes if outcome.replayed]
    assert replayed  # the cut batch's members: committed by it, answered on their second run
    for index, outcome in enumerate(outcomes):
        stored = await read_stream(connections[0], f"cut-{index}")
        assert [e.version for e in stored] == [1]  # once, whichever run wrote it
        assert (outcome.stream_id, outcome.first_version) == (f"cut-{index}", 1)
        assert outcome.first_position == stored[0].position
        assert outcome.events[0].hash == stored[0].hash
    assert len(await read_all(connections[0])) == len(outcomes)
