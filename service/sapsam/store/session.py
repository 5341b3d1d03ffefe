"""``PostgresSession``: the application layer's ``StoreSession`` on one pooled connection.

Each method is one of the store's operations on the (asynchronous) connection the session holds (see
``sapsam.app.store_interface``); the SQL itself lives with those operations.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus
from psycopg_pool import AsyncConnectionPool

from sapsam.app.store_interface import NO_SECRET_CHANGES, SecretChanges, TypedPage
from sapsam.log.records import AppendResult, JsonValue, NewEvent, RecordedEvent
from sapsam.store import (
    append_statement,
    appends,
    checkpoints,
    deal_secrets,
    group_appends,
    reads,
    table_failures,
    tournament_queries,
    write_stamps,
)
from sapsam.store.commit_group import CommitGroup
from sapsam.store.deal_history import PlayedDealLine, deal_history_page
from sapsam.store.processed_requests import ProcessedRequest, find_processed_request
from sapsam.store.projections import Projector
from sapsam.store.table_queries import (
    DueTable,
    TableListing,
    WaitingTable,
    table_page,
    tables_past_deadline,
    waiting_past_deadline,
    waiting_tables,
)
from sapsam.store.tournament_queries import (
    running_tournament_ids,
    tables_of_paused_tournaments,
    tournament_control_lock,
    tournament_of_table,
    tournament_pause_lock,
    tournament_phase_of_table,
)

Connection = psycopg.AsyncConnection[Any]


class KnownDatabase:
    """Where the sessions of one store keep what they learnt of its database: its identity,
    from the first connection one of them held (the pool's connections all go to one)."""

    __slots__ = ("database",)

    def __init__(self) -> None:
        self.database: group_appends.Database | None = None


class PostgresSession:
    """Store operations on one (autocommit) connection, with the read models' projectors.

    Given ``pool`` (and no ``connection``), the session takes its pooled connection only when an
    operation first needs one, and ``release`` gives it back: a write whose statement the commit
    group commits (``group_appends.append_by_group``) needs none, as the group has its own.
    ``known`` keeps the database's identity the group path needs, learnt from the first connection
    held."""

    __slots__ = ("_held", "_known", "_lease", "_pool", "commit_group", "projectors")

    def __init__(
        self,
        connection: Connection | None = None,
        projectors: tuple[Projector, ...] = (),
        commit_group: CommitGroup | None = None,
        *,
        pool: AsyncConnectionPool[Any] | None = None,
        known: KnownDatabase | None = None,
    ) -> None:
        if (connection is None) == (pool is None):
            raise ValueError("a session is given a connection or a pool to take one from")
        self._held = connection
        self._pool = pool
        self._known = known
        self._lease: AbstractAsyncContextManager[Connection] | None = None
        self.projectors = projectors
        self.commit_group = commit_group

    @property
    def connection(self) -> Connection:
        """The connection the session holds (raises if it has taken none yet)."""
        if self._held is None:
            raise RuntimeError("the session holds no connection yet")
        return self._held

    async def _connection(self) -> Connection:
        held = self._held
        if held is None:
            if self._pool is None:  # pragma: no cover - the constructor refuses it
                raise RuntimeError("the session has no pool")
            lease = self._pool.connection()
            held = await lease.__aenter__()
            self._lease, self._held = lease, held
            if self._known is not None and self._known.database is None:
                self._known.database = group_appends.Database.of(held)
        return held

    async def release(
        self,
        error_type: type[BaseException] | None = None,
        error: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        """Give the pooled connection back, if one was taken (with the error that ended the
        session's work, if one did: as leaving ``pool.connection()``'s block)."""
        lease, self._lease, self._held = self._lease, None, None
        if lease is not None:
            await lease.__aexit__(error_type, error, traceback)

    # -- the log ---------------------------------------------------------------------------------

    async def read_stream(
        self, stream_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        connection = await self._connection()
        return await reads.read_stream(connection, stream_id, from_version, to_version)

    async def read_stream_tails(
        self, from_versions: Sequence[tuple[str, int]]
    ) -> dict[str, list[RecordedEvent]]:
        return await reads.read_stream_tails(await self._connection(), from_versions)

    async def read_all(self, after_position: int, limit: int) -> list[RecordedEvent]:
        return await reads.read_all(await self._connection(), after_position, limit)

    async def read_all_of_types(
        self, after_position: int, limit: int, types: Sequence[str]
    ) -> TypedPage:
        return await reads.read_all_of_types(await self._connection(), after_position, limit, types)

    async def stream_version(self, stream_id: str) -> int:
        return await reads.stream_version(await self._connection(), stream_id)

    async def find_processed_request(self, request_id: str) -> ProcessedRequest | None:
        return await find_processed_request(await self._connection(), request_id)

    async def append(
        self,
        stream_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        request_id: str,
        actor: str,
        *,
        response: JsonValue = None,
        secrets: SecretChanges = NO_SECRET_CHANGES,
        request_digest: bytes | None = None,
        handed_to: str | None = None,
        wake_type_listeners: bool = True,
    ) -> AppendResult:
        # The secrets join the insert's statement with the read models: one round trip.
        companions = append_statement.secret_companions(stream_id, secrets.keep, secrets.forget)
        database = None if self._known is None else self._known.database
        if self._held is None and self.commit_group is not None and database is not None:
            # No connection held, so no transaction open: the commit group, which has its
            # own connection, takes the statement without this session taking one.
            result = await group_appends.append_by_group(
                database,
                self.commit_group,
                stream_id,
                expected_version,
                events,
                request_id,
                actor,
                response=response,
                projectors=self.projectors,
                companions=companions,
                request_digest=request_digest,
                handed_to=handed_to,
                wake_type_listeners=wake_type_listeners,
            )
            if result is not None:
                return result
        return await appends.append(
            await self._connection(),
            stream_id,
            expected_version,
            events,
            request_id,
            actor,
            response=response,
            projectors=self.projectors,
            companions=companions,
            request_digest=request_digest,
            # Outside a transaction of the session's, committed with the other appends in
            # flight (one flush for all), each answered once that commit succeeded.
            commit_group=self.commit_group,
            handed_to=handed_to,
            wake_type_listeners=wake_type_listeners,
        )

    def transaction(self) -> AbstractAsyncContextManager[object]:
        return self._transaction()

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[object]:
        connection = await self._connection()
        try:
            async with connection.transaction() as transaction:
                yield transaction
        finally:
            # After the commit (or rollback): the appends made inside it bump their streams'
            # write stamps again, now that a reader could see them (sapsam.store.write_stamps).
            # Only once the outermost transaction is over (an inner one is a savepoint).
            if connection.info.transaction_status == TransactionStatus.IDLE:
                write_stamps.transaction_ended(connection)

    async def rollback(self) -> None:
        if self._held is not None:  # none taken: no transaction to roll back
            await self._held.rollback()

    # -- secrets ---------------------------------------------------------------------------------

    async def load_secret(self, stream_id: str, number: int) -> bytes | None:
        return await deal_secrets.load_deal_seed(await self._connection(), stream_id, number)

    # -- read models -----------------------------------------------------------------------------

    async def table_page(
        self, phases: Sequence[str] | None, after: tuple[str, uuid.UUID] | None, limit: int
    ) -> list[TableListing]:
        return await table_page(await self._connection(), phases, after, limit)

    async def deal_history_page(
        self, player_id: str, after: tuple[str, uuid.UUID, int, int] | None, limit: int
    ) -> list[PlayedDealLine]:
        return await deal_history_page(await self._connection(), player_id, after, limit)

    async def tournament_page(
        self, phases: Sequence[str] | None, after: tuple[int, str] | None, limit: int
    ) -> list[tuple[str, int]]:
        return await tournament_queries.tournament_ids_page(
            await self._connection(), None if phases is None else list(phases), after, limit
        )

    async def standings_page(
        self, tournament_id: str, tie_break: str, offset: int, limit: int
    ) -> tuple[list[tournament_queries.StandingRow], int]:
        return await tournament_queries.standings_page(
            await self._connection(), tournament_id, tie_break, offset, limit
        )

    async def leaderboard_page(
        self, rule_set: str | None, period: str | None, offset: int, limit: int
    ) -> tuple[list[tournament_queries.LeaderboardRow], int]:
        return await tournament_queries.leaderboard_page(
            await self._connection(), rule_set, period, offset, limit
        )

    async def leaderboard_around(
        self, rule_set: str | None, period: str | None, player_id: str, radius: int
    ) -> list[tournament_queries.LeaderboardRow]:
        return await tournament_queries.leaderboard_around(
            await self._connection(), rule_set, period, player_id, radius
        )

    async def waiting_tables(self, phases: Sequence[str] | None, limit: int) -> list[WaitingTable]:
        return await waiting_tables(await self._connection(), phases, limit)

    async def waiting_past_deadline(self, now_ms: int, limit: int) -> list[WaitingTable]:
        return await waiting_past_deadline(await self._connection(), now_ms, limit)

    async def tables_past_deadline(self, now_ms: int, limit: int) -> list[DueTable]:
        return await tables_past_deadline(await self._connection(), now_ms, limit)

    async def tournament_of_table(self, table_id: str) -> uuid.UUID | None:
        return await tournament_of_table(await self._connection(), table_id)

    async def running_tournaments(self) -> list[uuid.UUID]:
        return await running_tournament_ids(await self._connection())

    def tournament_control_lock(
        self, tournament_id: uuid.UUID
    ) -> AbstractAsyncContextManager[None]:
        return self._control_lock(tournament_id)

    @contextlib.asynccontextmanager
    async def _control_lock(self, tournament_id: uuid.UUID) -> AsyncIterator[None]:
        async with tournament_control_lock(await self._connection(), tournament_id):
            yield

    async def tournament_phase_of_table(self, table_id: str) -> str | None:
        if not any("tournament_tables" in projector.tables for projector in self.projectors):
            return None  # a store keeping no tournament read models serves no tournament
        return await tournament_phase_of_table(await self._connection(), table_id)

    def tournament_pause_lock(
        self, tournament_id: uuid.UUID, *, shared: bool
    ) -> AbstractAsyncContextManager[None]:
        return self._pause_lock(tournament_id, shared)

    @contextlib.asynccontextmanager
    async def _pause_lock(self, tournament_id: uuid.UUID, shared: bool) -> AsyncIterator[None]:
        async with tournament_pause_lock(await self._connection(), tournament_id, shared=shared):
            yield

    async def tables_of_paused_tournaments(self, table_ids: Sequence[str]) -> set[str]:
        if not any("tournament_tables" in projector.tables for projector in self.projectors):
            return set()  # as above: no tournament here
        return await tables_of_paused_tournaments(await self._connection(), table_ids)

    # -- background processes' own state ---------------------------------------------------------

    async def read_checkpoint(self, name: str) -> int:
        return await checkpoints.read_checkpoint(await self._connection(), name)

    async def save_checkpoint(self, name: str, position: int) -> None:
        await checkpoints.save_checkpoint(await self._connection(), name, position)

    async def record_failure(
        self,
        process: str,
        table_id: uuid.UUID | str,
        error: BaseException,
        now_ms: int,
        pending_positions: Sequence[int] = (),
    ) -> table_failures.TableFailure:
        return await table_failures.record_failure(
            await self._connection(), process, table_id, error, now_ms, pending_positions
        )

    async def clear_failure(self, process: str, table_id: uuid.UUID | str) -> None:
        await table_failures.clear_failure(await self._connection(), process, table_id)

    async def failing_tables(self, process: str) -> list[table_failures.TableFailure]:
        return await table_failures.failing_tables(await self._connection(), process)

    async def add_pending_position(self, process: str, table_id: str, position: int) -> None:
        connection = await self._connection()
        await table_failures.add_pending_position(connection, process, table_id, position)

    async def remove_pending_position(self, process: str, table_id: str, position: int) -> None:
        connection = await self._connection()
        await table_failures.remove_pending_position(connection, process, table_id, position)

    async def pending_count(self, process: str, table_id: str) -> int | None:
        return await table_failures.pending_count(await self._connection(), process, table_id)
