"""Group commit: the single-statement appends in flight at once share one transaction, one flush.

Why: an append that is one autocommit statement (``sapsam.store.appends``) pays for its own
synchronous commit, and the commit's WAL flush costs the backend about 230 us of CPU per commit
on this machine (bench/pg_cpu.py: a one-row insert 88 us with ``synchronous_commit`` off against
317 us on), more than the statement itself. PostgreSQL's ``commit_delay`` lets concurrent commits
share one disk flush but not that CPU. Here the appends that arrive together are sent as
``BEGIN; s1; ...; sN; COMMIT`` in one round trip (psycopg's pipeline mode) on a connection of the
group's own: N appends, one commit.

How: one group per ``EventStore`` (so per process and event loop: the store's pool belongs to one
loop). No artificial delay: an append that finds the group idle is sent at once (alone, as an
autocommit statement, exactly as before); the appends that arrive while a batch is in flight wait
for it and then go together as the next batch, at most ``MAX_BATCH`` statements (the rest wait
for the one after). So under light load nothing changes but the connection, and the busier the
process, the more appends each flush carries. One task of the event loop sends the batches; no
thread. (Sending a lone append on its caller's own connection instead, to save the hand-over to
the task, was tried: the next batch then has to wait for it, and appends/s fell by more than
half at 4 streams and by a fifth at 64, bench/group_commit.py.)

What a batch sends: the members that can be (every append whose companions have a
``BatchedPart``, which is every game append) as ONE statement, ``sapsam.store.batch_statement``,
whose one parameter is all of them as a JSON document; any other member as its own statement
beside it; a batch of one append is sent as that append's own statement (for one, the batch
statement costs PostgreSQL more). ``BEGIN``/``COMMIT`` go around them only when that makes more
than one statement. So a batch of game appends is one statement, one round trip and one commit,
whatever its size: psycopg converts one query and dumps one parameter per batch instead of a
dozen per member, and PostgreSQL pays a statement's fixed cost once (bench/append_cost.py,
docs/performance.md). A batch takes at most one append per stream (a second waits for the next
batch), because every part of one statement sees the same snapshot.
``SAPSAM_BATCH_STATEMENT=off`` (or ``batch_statement=False``) sends one statement per member
instead, as before, for comparison.

Each caller gets its own rows, and only after the batch's COMMIT succeeded: nobody is told
"appended" before it is durable. Inside the batch statement each member has its own guard (the
chain's head as expected, the next version free, the request id not yet processed): a member that
fails it writes nothing and gets no rows, and its append re-reads the head, which answers the
replay or the conflict, while the others commit. If anything else goes wrong with a batch (a
version another transaction took while the batch ran, a request id raced, any other error, the
connection lost, the group closing), no member is answered by the group: each is told to run its
own statement on its own connection (``RunAlone``), which is the ordinary path with all its
handling of conflicts and retries. A batch whose COMMIT's outcome is unknown (the connection broke
after sending it) is handled the same way, and safely: a member whose events did commit finds its
request id in ``processed_requests`` when it runs again (its insert fails on the stream's version
key; the append answers with the original result, ``replayed=True``), one whose events did not
commit appends them now. Falling back costs one commit per member, but only when a batch fails;
savepoints around each member would let the others commit but cost every batch a subtransaction
per member.

A batch holds its members' row locks until its COMMIT. Two processes' batches touching the same
two tables in opposite orders can therefore deadlock where single statements could not; PostgreSQL
ends one of them after ``deadlock_timeout`` (1 s by default), and its members run alone. It takes
two processes writing the same two tables at the same moment (within a process a table's commands
run one at a time), so it is rare.

A caller that stops waiting (cancelled) while its statement is in flight cannot stop it: the batch
commits with it. Its stream's write stamp (``sapsam.store.write_stamps``) is then bumped by the
group after that commit, as the caller's append would have done, so no copy in memory made in
between is taken for current.

Switch: ``SAPSAM_GROUP_COMMIT=off`` (or ``EventStore.unopened(..., group_commit=False)``) sends
every append on its caller's connection, as before (bench/group_commit.py compares the two in
alternating rounds).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import psycopg

from sapsam.store import write_stamps
from sapsam.store.batch_statement import BatchMember
from sapsam.store.batch_statement import batch_statement as batch_statement_for
from sapsam.store.batch_statement import member_rows as split_rows
from sapsam.store.prepared_statements import statement_rows

_logger = logging.getLogger("sapsam.store.commit_group")

MAX_BATCH: Final = 64
"""Most appends in one batch's transaction: a bound on the batch's locks, on its statement's
JSON document and on how long its members wait for the slowest of them. With 64 game appends
(~0.2 ms of backend CPU each) a batch holds its transaction ~15 ms; more arrivals wait for the
next batch."""
IDLE_SECONDS: Final = 5.0
"""A group with nothing to send this long closes its connection (reopened on the next append)."""
CLOSE_SECONDS: Final = 2.0
"""How long closing a group waits for the batch in flight before cutting it off."""
UNREACHABLE_SECONDS: Final = 1.0
"""After the group failed to connect, appends run on their own connections this long."""
GENERIC_PLANS: Final = "-c plan_cache_mode=force_generic_plan"
"""The group's connection plans each statement text once (psycopg prepares it after five uses).
With PostgreSQL's default (``auto``) a prepared statement gets a generic plan only while that
plan's estimated cost beats the custom plans' average; each invalidation (an ANALYZE of a table
it reads, any DDL on one) prices the generic plan again, and the batch statement can then be
planned afresh at most executions until the next one: ~200 us more backend CPU per append, 0.6-0.7
of executions planned (bench/append_cost.py, docs/performance.md "pg-lean"). Its plan does not
depend on its one parameter's value, so nothing is lost by never planning for the value."""
ENVIRONMENT_SWITCH: Final = "SAPSAM_GROUP_COMMIT"
BATCH_STATEMENT_SWITCH: Final = "SAPSAM_BATCH_STATEMENT"

Row = tuple[Any, ...]
Statement = str | Callable[[], str]
"""An append's own statement, or how to write it: a member the batch statement carries never
needs its own text (one write in a busy process; the other forms' work is spared)."""
Batched = BatchMember | Callable[[], BatchMember] | None
"""The same append as a member of the batch statement, or how to make it (only a batch of more
than one uses it)."""


def enabled_by_environment(switch: str = ENVIRONMENT_SWITCH) -> bool:
    """Whether group commit (or, ``switch`` given, its batch statement) is on: unless the
    variable is ``off``, ``0`` or ``no``."""
    return os.environ.get(switch, "on").strip().lower() not in {"off", "0", "no"}


class RunAlone(Exception):  # noqa: N818 - an instruction, not a failure
    """The group did not commit this statement: run it on the caller's own connection."""


@dataclass(eq=False)
class _Member:
    statement: Statement
    parameters: Mapping[str, Any]
    stream_id: str
    answer: asyncio.Future[list[Row]]
    batched: Batched

    def own_statement(self) -> tuple[str, Mapping[str, Any]]:
        """The append's own statement and its parameters (written now if it was not yet)."""
        statement = self.statement
        return (statement if isinstance(statement, str) else statement()), self.parameters

    def member(self) -> BatchMember:
        """The append as a member of the batch statement (made now if it was not yet)."""
        batched = self.batched
        if batched is None:  # pragma: no cover - only members with one are sent together
            raise RuntimeError("this append cannot join the batch statement")
        return batched if isinstance(batched, BatchMember) else batched()


@dataclass(eq=False)
class _Running:
    """The group's state on the event loop it runs on."""

    loop: asyncio.AbstractEventLoop
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    connection: psycopg.AsyncConnection[Any] | None = None
    idle_since: float | None = None
    """When the task began waiting for an append (loop time); None while it is not waiting."""
    idle_timer: asyncio.TimerHandle | None = None
    """The one timer that ends a long idle wait (see ``CommitGroup._idle_check``)."""
    idle_over: bool = False
    """Set by that timer: the wait lasted ``IDLE_SECONDS``."""


class CommitGroup:
    """Appends' single statements committed together (see the module's docstring)."""

    def __init__(
        self,
        conninfo: str,
        connect_options: Mapping[str, Any] | None = None,
        max_batch: int = MAX_BATCH,
        batch_statement: bool | None = None,
    ) -> None:
        if max_batch < 1:
            raise ValueError("a batch holds at least one statement")
        self._conninfo = conninfo
        self._connect_options = dict(connect_options or {})
        # Generic plans always (options given by the caller come after, so theirs win).
        self._connect_options["options"] = " ".join(
            (GENERIC_PLANS, str(self._connect_options.get("options", "")))
        ).strip()
        self.max_batch = max_batch
        self.batch_statement = (
            enabled_by_environment(BATCH_STATEMENT_SWITCH)
            if batch_statement is None
            else batch_statement
        )
        """Whether members that can be are sent as one statement (``batch_statement``); False:
        one statement each, in one pipeline."""
        self._waiting: list[_Member] = []
        self._running: _Running | None = None
        self._closed = False
        self._unreachable_until = 0.0
        self.batches = 0
        """Batches committed so far (tests and benchmarks read it)."""
        self.statements = 0
        """Appends those batches carried (one statement each, or members of one)."""
        self.failed_batches = 0
        """Batches that did not commit (their members ran alone)."""

    async def execute(
        self,
        statement: Statement,
        parameters: Mapping[str, Any],
        stream_id: str,
        batched: Batched = None,
    ) -> list[Row]:
        """The rows of ``statement`` (one autocommit statement appending to ``stream_id``) once
        it has committed with the batch it joined. ``batched``: the same append as a member of
        the batch statement (``sapsam.store.batch_statement``), which then carries it. Either
        may be given as a function that makes it, called only if the batch sends that form.
        Raises ``RunAlone`` when the group did not commit it (run it on your own connection)."""
        if self._closed or time.monotonic() < self._unreachable_until:
            raise RunAlone
        loop = asyncio.get_running_loop()
        running = self._running
        if running is None or running.loop is not loop:
            if (
                running is not None
                and not running.loop.is_closed()
                and (running.task is not None or running.connection is not None)
            ):
                raise RunAlone  # still serving another loop: a connection belongs to one loop
            running = self._running = _Running(loop)
            self._waiting = []  # a closed loop's members: nobody waits for them any more
        member = _Member(statement, parameters, stream_id, loop.create_future(), batched)
        self._waiting.append(member)
        running.arrived.set()
        if running.task is None:
            running.task = loop.create_task(self._run(running), name="sapsam-commit-group")
        return await member.answer

    async def close(self) -> None:
        """Stop at once: nothing new joins; the batch in flight may finish (for at most
        ``CLOSE_SECONDS``, then it is cut off and its members run alone); waiting members run
        alone. Idempotent."""
        self._closed = True
        running = self._running
        if running is None:
            return
        running.arrived.set()
        task = running.task
        if task is not None:
            done, _ = await asyncio.wait((task,), timeout=CLOSE_SECONDS)
            if not done:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._release(self._waiting)
        self._waiting = []
        if running.connection is not None:
            with contextlib.suppress(Exception):
                await running.connection.close()
            running.connection = None

    async def cancel_in_flight(self) -> None:
        """Cancel the batch running on the server, if any (a stopping server's grace is over):
        its members then run alone, on connections the pool can cut off too."""
        running = self._running
        if running is not None and running.connection is not None and running.task is not None:
            with contextlib.suppress(Exception):
                await running.connection.cancel_safe(timeout=1.0)

    async def _run(self, running: _Running) -> None:
        batch: list[_Member] = []
        try:
            while not self._closed:
                if not self._waiting:
                    running.arrived.clear()
                    # No timeout per wait (at human pace every batch waits, and a timer made
                    # and cancelled each time cost ~5 us): one timer, left running across
                    # waits, ends a wait once it has lasted IDLE_SECONDS (_idle_check).
                    running.idle_since = running.loop.time()
                    if running.idle_timer is None:
                        running.idle_timer = running.loop.call_at(
                            running.idle_since + IDLE_SECONDS, self._idle_check, running
                        )
                    try:
                        await running.arrived.wait()
                    finally:
                        running.idle_since = None
                    if running.idle_over:
                        running.idle_over = False
                        if not self._waiting:
                            break
                    continue
                batch = self._next_batch()
                if batch:
                    await self._send(running, batch)
                batch = []
        finally:
            # Cancelled (or failed) mid-batch: its members were not answered; they run alone.
            self._release(batch)
            if running.idle_timer is not None:
                running.idle_timer.cancel()
                running.idle_timer = None
            running.idle_over = False
            running.task = None
            if self._waiting and not self._closed:
                # Arrived as the task was ending (no await since the queue was seen empty).
                running.task = running.loop.create_task(self._run(running))
            elif running.connection is not None:
                connection, running.connection = running.connection, None
                with contextlib.suppress(Exception):
                    await connection.close()

    @staticmethod
    def _idle_check(running: _Running) -> None:
        """The idle timer: end the task's wait if it has waited ``IDLE_SECONDS``; if it is
        waiting since less, look again when that wait will have; if it is busy, stop (its next
        wait starts the timer again)."""
        running.idle_timer = None
        if running.idle_since is None:
            return
        due = running.idle_since + IDLE_SECONDS
        if running.loop.time() >= due:
            running.idle_over = True
            running.arrived.set()
        else:
            running.idle_timer = running.loop.call_at(due, CommitGroup._idle_check, running)

    async def _send(self, running: _Running, batch: list[_Member]) -> None:
        """Commit ``batch`` and answer its members, or tell them all to run alone."""
        try:
            connection = running.connection
            if connection is None or connection.closed:
                try:
                    connection = running.connection = await psycopg.AsyncConnection.connect(
                        self._conninfo, autocommit=True, **self._connect_options
                    )
                except psycopg.Error:
                    # Out of reach: for a while, appends use their own (pooled) connections,
                    # whose waits the pool's policy bounds, instead of each batch trying again.
                    self._unreachable_until = time.monotonic() + UNREACHABLE_SECONDS
                    raise
            rows = await _commit(connection, batch, self.batch_statement)
        except Exception as error:
            if not isinstance(error, psycopg.Error):
                _logger.exception("a commit group's batch failed")
            self.failed_batches += 1
            await self._recover(running)
            self._release(batch)
            return
        self.batches += 1
        self.statements += len(batch)
        for member, member_rows in zip(batch, rows, strict=True):
            if member.answer.done():
                # Its caller stopped waiting, and bumped the stamp before this commit: again now.
                write_stamps.stamps().bump(member.stream_id)
            else:
                member.answer.set_result(member_rows)

    async def _recover(self, running: _Running) -> None:
        """After a failed batch: roll back, or drop a connection that is no longer usable."""
        connection = running.connection
        if connection is None:
            return
        try:
            if connection.broken or connection.closed:
                raise psycopg.OperationalError("connection lost")
            if connection.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                await connection.execute("ROLLBACK")
        except Exception:
            with contextlib.suppress(Exception):
                await connection.close()
            running.connection = None

    def _next_batch(self) -> list[_Member]:
        """The waiting members the next batch takes, in their order: at most ``max_batch``, one
        per stream (a second append of a stream waits for the next batch: within one statement
        it could not chain from the first); those whose callers stopped waiting are dropped."""
        batch: list[_Member] = []
        later: list[_Member] = []
        streams: set[str] = set()
        for member in self._waiting:
            if member.answer.done():
                continue
            if len(batch) < self.max_batch and member.stream_id not in streams:
                batch.append(member)
                streams.add(member.stream_id)
            else:
                later.append(member)
        self._waiting = later
        return batch

    @staticmethod
    def _release(members: list[_Member]) -> None:
        for member in members:
            if not member.answer.done():
                member.answer.set_exception(RunAlone())


async def _commit(
    connection: psycopg.AsyncConnection[Any],
    batch: list[_Member],
    batch_statement: bool,
) -> list[list[Row]]:
    """Each member's rows, all committed, in one round trip: the members that can be as ONE
    statement (``sapsam.store.batch_statement``), the others one statement each; BEGIN and
    COMMIT around them only if there is more than one statement. A batch of one is sent as its
    own statement: the batch statement's execution costs PostgreSQL ~90 us more for one append
    than the append's own statement (bench/append_cost.py --tables 1), and at human pace most
    batches are of one. A batch that is one statement (the batch statement, or an append's own)
    goes through libpq's prepared-statement calls (``sapsam.store.prepared_statements``); the
    rest through psycopg's pipeline."""
    use_batch = batch_statement and len(batch) > 1
    together = [m for m in batch if m.batched is not None] if use_batch else []
    alone = [m for m in batch if m.batched is None] if together else batch
    statements = [m.own_statement() for m in alone]
    if together:
        statements.insert(0, batch_statement_for([m.member() for m in together]))
    if len(statements) == 1:
        results = [await statement_rows(connection, *statements[0])]
    else:
        async with connection.pipeline():
            await connection.execute("BEGIN")
            cursors = [await connection.execute(text, values) for text, values in statements]
            await connection.execute("COMMIT")
        # The pipeline's end sent one Sync and read every result: the COMMIT succeeded.
        results = [await cursor.fetchall() for cursor in cursors]
    rows: dict[int, list[Row]] = {}
    if together:
        for member, member_rows in zip(
            together, split_rows(results.pop(0), len(together)), strict=True
        ):
            rows[id(member)] = member_rows
    for member, member_rows in zip(alone, results, strict=True):
        rows[id(member)] = member_rows
    return [rows[id(member)] for member in batch]
