"""Stopping gracefully: calls in flight finish within a grace period; whatever the stop cuts off,
and whatever arrives meanwhile, is answered UNAVAILABLE (reason ``SERVER_STOPPING``), which a
client retries on another process, never CANCELLED.

:class:`StopGate` is the state: serving, or stopping with a cut-off time. The
:class:`StoppingInterceptor` runs every sapsam call through it (grpc's own health and reflection
services pass untouched, so a load balancer sees NOT_SERVING):

- a call that arrives once stopping began is refused at once;
- a call in flight waits for database connections no longer than the cut-off (nor, for a unary
  call, its own deadline: see ``sapsam.store.event_store.waits_bounded_by``), and an error it
  ends with once stopping began (a database wait cut short, a cancelled statement) is answered
  ``SERVER_STOPPING``;
- a unary call still running at the cut-off (even one still waiting for a pooled connection) is
  cancelled by the server and answered ``SERVER_STOPPING``; an INTERNAL counts as the stop's
  doing only after the cut-off (when running statements are cancelled), a real fault before it
  stays INTERNAL;
- a response stream (WatchTable, WatchTournament) that ends because the server stops ends with
  ``SERVER_STOPPING`` too (``sapsam.api.watch``), so the client resumes from the last version it
  received; one that ended on its own (its last event sent) stays OK.

The server (``ServedServer.stop``) waits for the calls in flight to drain until the cut-off,
cancels the database work of those left, answers the unary calls still in flight
``SERVER_STOPPING``, and only then stops grpc, which would answer a call still running CANCELLED.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

import grpc
from grpc import aio

from sapsam.api import errors
from sapsam.api.interception import (
    CallInterceptor,
    Proceed,
    StatusError,
    ended_with,
)
from sapsam.store.event_store import bound_waits, unbound_waits, waits_bounded_by

SERVER_STOPPING_REASON: Final = "SERVER_STOPPING"
SERVER_STOPPING_MESSAGE: Final = (
    "the server is stopping; retry the call (with the same request_id) on another server process"
)
# grpc's own services: health must keep answering (NOT_SERVING) while the server stops.
_GRPC_SERVICES_PREFIX: Final = "/grpc."
# What a call the stop cut short ends with before this module answers it: no status yet, the
# database wait it could not finish (UNAVAILABLE). A refusal the call earned on its own
# (FAILED_PRECONDITION …) keeps its answer.
_STOPPED_CODES: Final = frozenset({None, grpc.StatusCode.UNAVAILABLE})
# Once the grace period is over, the statements still running are cancelled, and a cancelled
# statement surfaces as INTERNAL: only then is INTERNAL the stop's doing. Before the cut-off, an
# INTERNAL is a real fault and is answered as one.
_CUT_OFF_CODES: Final = frozenset({grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN})


class StopGate:
    """Whether the server still serves, when stopping cuts off calls, and how many are in flight.

    ``clock`` is injectable for tests (monotonic seconds).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._cutoff: float | None = None
        self._in_flight = 0
        self._condition = threading.Condition()
        self._unary_calls: set[asyncio.Task[Any]] = set()  # on the loop only

    @property
    def stopping(self) -> bool:
        """True once stopping began."""
        return self._cutoff is not None

    def begin_stop(self, grace_seconds: float) -> None:
        """Refuse new calls from now on; calls in flight may run ``grace_seconds`` more."""
        with self._condition:
            if self._cutoff is None:
                self._cutoff = self._clock() + max(0.0, grace_seconds)
            self._condition.notify_all()

    def time_to_cutoff(self) -> float:
        """Seconds until calls in flight are cut off (infinite while serving)."""
        cutoff = self._cutoff
        return float("inf") if cutoff is None else cutoff - self._clock()

    @property
    def cut_off(self) -> bool:
        """True once the grace period is over."""
        return self.time_to_cutoff() <= 0

    @property
    def in_flight(self) -> int:
        """Calls being served now."""
        with self._condition:
            return self._in_flight

    def enter(self) -> bool:
        """Count a call in, unless stopping began (then ``False``: refuse it)."""
        with self._condition:
            if self._cutoff is not None:
                return False
            self._in_flight += 1
            return True

    def leave(self) -> None:
        """Count a call out."""
        with self._condition:
            self._in_flight -= 1
            self._condition.notify_all()

    @contextmanager
    def tracking(self, call: asyncio.Task[Any] | None) -> Iterator[None]:
        """Know ``call`` (a unary call's task) while it runs, for :meth:`cut_off_unary_calls`."""
        if call is None:
            yield
            return
        self._unary_calls.add(call)
        try:
            yield
        finally:
            self._unary_calls.discard(call)

    def cut_off_unary_calls(self) -> int:
        """Cancel the tasks of the unary calls still in flight (on the loop, once the cut-off
        passed): one still waiting for a pooled connection would otherwise wait until grpc
        cancels it (CANCELLED); cancelled here, it is answered SERVER_STOPPING. How many there
        were."""
        calls = list(self._unary_calls)
        for call in calls:
            call.cancel()
        return len(calls)

    def wait_for_drain(self, extra_seconds: float = 0.0, poll_seconds: float = 0.05) -> bool:
        """Wait until no call is in flight, or until ``extra_seconds`` after the cut-off; True if
        none is left."""
        with self._condition:
            while self._in_flight > 0:
                remaining = self.time_to_cutoff() + extra_seconds
                if remaining <= 0:
                    return False
                self._condition.wait(min(remaining, poll_seconds))
            return True

    async def drained(self, extra_seconds: float = 0.0, poll_seconds: float = 0.05) -> bool:
        """:meth:`wait_for_drain` for the event loop: polls, never blocks it."""
        while self.in_flight > 0:
            remaining = self.time_to_cutoff() + extra_seconds
            if remaining <= 0:
                return False
            await asyncio.sleep(min(remaining, poll_seconds))
        return True


def server_stopping_status() -> grpc.Status:
    """UNAVAILABLE, reason SERVER_STOPPING."""
    return errors.build_status(SERVER_STOPPING_REASON, SERVER_STOPPING_MESSAGE)


class StoppingInterceptor(CallInterceptor):
    """Refuses calls once stopping began and answers calls the stop cuts off UNAVAILABLE."""

    def __init__(self, gate: StopGate) -> None:
        super().__init__()
        self._gate = gate
        self._time_to_cutoff = gate.time_to_cutoff  # one bound method, not one per stream

    def _time_remaining(self, context: aio.ServicerContext) -> Callable[[], float]:
        def remaining() -> float:
            deadline_left = context.time_remaining()
            if deadline_left is None:  # no deadline
                return self._gate.time_to_cutoff()
            return min(float(deadline_left), self._gate.time_to_cutoff())

        return remaining

    def _stopped(self) -> StatusError:
        # Replaces whatever status an inner interceptor chose: the stop, not the call, failed.
        return StatusError(server_stopping_status())

    @contextmanager
    def _admitted(
        self, context: aio.ServicerContext, time_remaining: Callable[[], float]
    ) -> Iterator[None]:
        """Inside the gate for the call, its waits bounded by ``time_remaining``; refused
        SERVER_STOPPING once stopping, and a failure after the cut-off is SERVER_STOPPING."""
        if not self._gate.enter():
            raise self._stopped()
        try:
            with waits_bounded_by(time_remaining):
                yield
        except Exception as error:
            if self._stop_failed(error, context):
                raise self._stopped() from None
            raise
        finally:
            self._gate.leave()

    def _stop_failed(self, error: Exception, context: aio.ServicerContext) -> bool:
        """Whether a call that ended with ``error`` is answered SERVER_STOPPING: the stop, not
        the call, failed it."""
        code = ended_with(error, context)
        return self._gate.stopping and (
            code in _STOPPED_CODES or (self._gate.cut_off and code in _CUT_OFF_CODES)
        )

    async def around(
        self, method: str, request: Any, context: aio.ServicerContext, proceed: Proceed
    ) -> Any:
        """Run the call unless stopping; a failure after the cut-off is SERVER_STOPPING."""
        if method.startswith(_GRPC_SERVICES_PREFIX):
            return await proceed()
        with (
            self._admitted(context, self._time_remaining(context)),
            self._gate.tracking(asyncio.current_task()),
        ):
            try:
                return await proceed()
            except asyncio.CancelledError:
                if not self._gate.cut_off:  # the client left, or grpc stops: not ours
                    raise
                raise self._stopped() from None  # cut off by the stop (cut_off_unary_calls)

    async def stream_opening(self, method: str, request: Any, context: aio.ServicerContext) -> Any:
        """Refuse the stream if stopping, else count it in; the token that bounds its waits
        (None: grpc's own services, which pass untouched)."""
        if method.startswith(_GRPC_SERVICES_PREFIX):
            return None
        # Only the stop bounds a stream's waits: its deadline says how long to watch, and a watch
        # that reaches it simply ends (DEADLINE_EXCEEDED), the database being fine.
        if not self._gate.enter():
            raise self._stopped()
        return bound_waits(self._time_to_cutoff)

    async def stream_ended(
        self,
        method: str,
        request: Any,
        context: aio.ServicerContext,
        opened: Any,
        error: BaseException | None,
    ) -> None:
        """Count the stream out; a stream the stop ends ends SERVER_STOPPING.

        A stream the stop ends (the feed lets its watchers go) raises SERVER_STOPPING itself
        (``sapsam.api.watch``); one that ended on its own during the stop stays OK."""
        if opened is None:
            return
        try:
            unbound_waits(opened)
            if isinstance(error, Exception) and self._stop_failed(error, context):
                raise self._stopped() from None
        finally:
            self._gate.leave()
