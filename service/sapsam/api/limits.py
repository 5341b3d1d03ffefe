"""Limits per caller, so that no one caller takes more than its share of a server process.

Limits, each configurable (``sapsam serve --help``, docs/api.md "Limits"), each 0 to turn
it off:

- registrations per peer address per minute (``RegisterPlayer``), a token bucket per address that
  holds a minute's worth and refills evenly;
- calls per player per second, a token bucket per player with a burst;
- ``GetSuggestion`` calls per player per minute (each runs the solver: up to about 0.3 s
  of CPU), a token bucket per player with a burst of ``SUGGESTION_BURST``;
- open response streams per player (``WatchTable``, ``WatchTournament``);
- unary calls per player running at once (each may hold one of the pool's connections);
- database look-ups of tokens the process does not know, per peer address
  (:func:`token_lookup_limit`, applied by ``sapsam.api.auth`` before the look-up), so that a flood
  of made-up tokens cannot hold the database pool; an IPv6 peer counts by its /64.

A call over a limit is refused before it runs: RESOURCE_EXHAUSTED with ErrorInfo (reason
``TOO_MANY_REGISTRATIONS``, ``RATE_LIMITED`` or ``TOO_MANY_STREAMS``) and ``google.rpc.RetryInfo``
saying when to try again. The operator and grpc's own services (health, reflection) are not
limited. The limits hold per server process: with ``--workers N`` a caller spread over several
connections may get up to N times as much.

The buckets are plain objects that are told the time (:class:`TokenBucket`) or given a clock
(:class:`KeyedBuckets`), so they are tested without waiting and serve a sync or an asyncio
interceptor alike; :class:`LimitsInterceptor` is the grpc side.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from grpc import aio

from sapsam.api import errors
from sapsam.api.auth import caller_or_none
from sapsam.api.interception import CallInterceptor, Proceed, StatusError

REGISTER_PLAYER_METHOD: Final = "/sapsam.v1.PlayerService/RegisterPlayer"
SUGGEST_METHOD: Final = "/sapsam.v1.TableService/GetSuggestion"
SUGGESTION_BURST: Final = 5
"""``GetSuggestion`` calls a player may make at once before ``suggestions_per_minute``
applies (a person asking for a hint now and then never waits)."""
RATE_LIMITED_REASON: Final = "RATE_LIMITED"
TOO_MANY_REGISTRATIONS_REASON: Final = "TOO_MANY_REGISTRATIONS"
TOO_MANY_STREAMS_REASON: Final = "TOO_MANY_STREAMS"
IN_FLIGHT_RETRY_SECONDS: Final = 0.1
"""The retry hint for a call over the calls-in-flight limit: one of the player's calls ends soon."""
STREAM_RETRY_SECONDS: Final = 1.0
"""The retry hint for a refused stream: a slot frees when one of the caller's streams ends."""
MAX_TRACKED_KEYS: Final = 100_000
"""Buckets kept per limit; the least recently used is forgotten beyond that (memory stays flat)."""

_GRPC_SERVICES_PREFIX: Final = "/grpc."


@dataclass(frozen=True)
class CallerLimits:
    """The limits per caller; 0 turns one off. The defaults are far above what a game client
    needs (a few calls a second, one or two streams) and well below what wedges a process."""

    registrations_per_minute: int = 120
    """``RegisterPlayer`` calls per peer address (IP, without the port) per minute."""
    calls_per_second: float = 50.0
    """Calls per player, sustained."""
    call_burst: int = 100
    """Calls per player at once, before the sustained rate applies."""
    streams_per_caller: int = 32
    """Open response streams per player."""
    calls_in_flight_per_caller: int = 8
    """Unary calls per player running at once (each may hold a pooled connection: the pool is
    shared by every caller of the process). Half the default pool (16): at 16, one
    player's calls stuck on the database held every connection, and other players were told
    the database was unavailable (tests/api/test_pool_share.py)."""
    token_lookups_per_second: float = 20.0
    """Database look-ups of tokens this process does not know, per peer address, sustained (a
    flood of made-up tokens would otherwise hold the pool for everyone)."""
    token_lookup_burst: int = 100
    """Such look-ups per peer address at once."""
    suggestions_per_minute: int = 20
    """``GetSuggestion`` calls per player per minute, sustained (after a burst of
    ``SUGGESTION_BURST``): each runs the solver, up to about 0.3 s of CPU, so a player can take
    at most about a tenth of a core this way."""


UNLIMITED: Final = CallerLimits(0, 0.0, 0, 0, 0, 0.0, 0, 0)


def token_lookup_limit(
    limits: CallerLimits, clock: Callable[[], float] = time.monotonic
) -> Callable[[str], float] | None:
    """Takes a look-up from a peer's bucket (``sapsam.api.auth``): 0.0, or the seconds to wait;
    ``None`` when the limit is off."""
    if limits.token_lookups_per_second <= 0:
        return None
    buckets = KeyedBuckets(
        limits.token_lookups_per_second, max(1, limits.token_lookup_burst), clock
    )
    return lambda peer: buckets.take(peer_address(peer))


class TokenBucket:
    """``burst`` tokens that refill at ``rate`` per second; each admitted call takes one.

    Pure: every method is told the time (monotonic seconds), so tests need no clock.
    """

    def __init__(self, rate: float, burst: float, now: float) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a token bucket needs a positive rate and a burst of at least 1")
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.updated = now

    def _refill(self, now: float) -> None:
        if now > self.updated:
            self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
            self.updated = now

    def take(self, now: float) -> float:
        """Take a token: 0.0 if one was there, else the seconds until one will be (none taken)."""
        self._refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate


class KeyedBuckets:
    """One :class:`TokenBucket` per key (a player, an address), thread-safe, bounded in memory."""

    def __init__(
        self,
        rate: float,
        burst: float,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = MAX_TRACKED_KEYS,
    ) -> None:
        self._rate = rate
        self._burst = burst
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """Take a token from ``key``'s bucket: 0.0, or the seconds to wait before retrying."""
        with self._lock:
            now = self._clock()
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = TokenBucket(self._rate, self._burst, now)
                while len(self._buckets) > self._max_keys:
                    self._buckets.popitem(last=False)
            else:
                self._buckets.move_to_end(key)
            return bucket.take(now)


class StreamCounter:
    """Open streams per key, at most ``limit`` each."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()

    def open(self, key: str) -> bool:
        """Count a stream in; ``False`` (not counted) if ``key`` has its limit open already."""
        with self._lock:
            count = self._open.get(key, 0)
            if count >= self._limit:
                return False
            self._open[key] = count + 1
            return True

    def close(self, key: str) -> None:
        """Count a stream out."""
        with self._lock:
            count = self._open.get(key, 0) - 1
            if count > 0:
                self._open[key] = count
            else:
                self._open.pop(key, None)

    def count(self, key: str) -> int:
        """Streams ``key`` has open."""
        with self._lock:
            return self._open.get(key, 0)


def peer_address(peer: str) -> str:
    """The address part of a grpc peer string, the key of its buckets: ``ipv4:1.2.3.4:5`` ->
    ``ipv4:1.2.3.4``; an IPv6 address by its /64 (one host usually has the whole /64 and can
    rotate addresses in it at will), ``ipv6:[2001:db8::1]:5`` -> ``ipv6:[2001:db8::]/64``; a Unix
    socket peer stays whole."""
    if peer.startswith("ipv4:"):
        return peer.rsplit(":", 1)[0]
    if peer.startswith("ipv6:"):
        host = peer.rsplit(":", 1)[0][len("ipv6:") :].strip("[]").split("%", 1)[0]
        try:
            network = ipaddress.IPv6Network(f"{host}/64", strict=False)
        except ValueError:
            return peer.rsplit(":", 1)[0]
        return f"ipv6:[{network.network_address}]/64"
    return peer


def _limited_player() -> str | None:
    """The player whose limits apply to this call: ``None`` for the operator or nobody."""
    caller = caller_or_none()
    return None if caller is None or caller.is_operator else caller.player_id


def _refuse(reason: str, message: str, retry_delay: float) -> errors.ApiError:
    return errors.ApiError(reason, message, retry_delay=retry_delay)


class LimitsInterceptor(CallInterceptor):
    """Refuses calls over a :class:`CallerLimits` limit; runs after authentication."""

    def __init__(self, limits: CallerLimits, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._registrations = (
            KeyedBuckets(
                limits.registrations_per_minute / 60.0, limits.registrations_per_minute, clock
            )
            if limits.registrations_per_minute > 0
            else None
        )
        self._calls = (
            KeyedBuckets(limits.calls_per_second, max(1, limits.call_burst), clock)
            if limits.calls_per_second > 0
            else None
        )
        self._suggestions = (
            KeyedBuckets(
                limits.suggestions_per_minute / 60.0,
                min(SUGGESTION_BURST, limits.suggestions_per_minute),
                clock,
            )
            if limits.suggestions_per_minute > 0
            else None
        )
        self._streams = StreamCounter(limits.streams_per_caller)
        self._stream_limit = limits.streams_per_caller
        self._in_flight = StreamCounter(limits.calls_in_flight_per_caller)
        self._in_flight_limit = limits.calls_in_flight_per_caller

    def admit(self, method: str, peer: str, player: str | None) -> None:
        """Raise :class:`errors.ApiError` (RESOURCE_EXHAUSTED) if this call is over a limit."""
        if self._registrations is not None and method == REGISTER_PLAYER_METHOD:
            delay = self._registrations.take(peer_address(peer))
            if delay > 0:
                raise _refuse(
                    TOO_MANY_REGISTRATIONS_REASON,
                    "too many registrations from this address; retry after the delay given",
                    delay,
                )
        if self._calls is not None and player is not None:
            delay = self._calls.take(player)
            if delay > 0:
                raise _refuse(
                    RATE_LIMITED_REASON,
                    "too many calls for this player; retry after the delay given",
                    delay,
                )
        if self._suggestions is not None and player is not None and method == SUGGEST_METHOD:
            delay = self._suggestions.take(player)
            if delay > 0:
                raise _refuse(
                    RATE_LIMITED_REASON,
                    "too many suggestions asked for by this player; retry after the delay given",
                    delay,
                )

    def _check(self, method: str, context: aio.ServicerContext) -> str | None:
        player = _limited_player()
        try:
            self.admit(method, context.peer(), player)
        except errors.ApiError as error:
            raise StatusError(errors.status_for_exception(error, method)) from None
        return player

    async def around(
        self, method: str, request: Any, context: aio.ServicerContext, proceed: Proceed
    ) -> Any:
        """Refuse the call if it is over a limit, else run it."""
        if method.startswith(_GRPC_SERVICES_PREFIX):
            return await proceed()
        player = self._check(method, context)
        if player is None or self._in_flight_limit <= 0:
            return await proceed()
        if not self._in_flight.open(player):
            error = _refuse(
                RATE_LIMITED_REASON,
                f"this player has {self._in_flight_limit} calls running already; retry once one"
                " has its answer",
                IN_FLIGHT_RETRY_SECONDS,
            )
            raise StatusError(errors.status_for_exception(error, method))
        try:
            return await proceed()
        finally:
            self._in_flight.close(player)

    async def stream_opening(self, method: str, request: Any, context: aio.ServicerContext) -> Any:
        """Refuse the stream if it is over a limit (calls or open streams), else count it as
        its player's; the player whose open streams it counts in (None: none)."""
        player = None if method.startswith(_GRPC_SERVICES_PREFIX) else self._check(method, context)
        if player is None or self._stream_limit <= 0:
            return None
        if not self._streams.open(player):
            error = _refuse(
                TOO_MANY_STREAMS_REASON,
                f"this player has {self._stream_limit} streams open already; close one first",
                STREAM_RETRY_SECONDS,
            )
            raise StatusError(errors.status_for_exception(error, method))
        return player

    async def stream_ended(
        self,
        method: str,
        request: Any,
        context: aio.ServicerContext,
        opened: Any,
        error: BaseException | None,
    ) -> None:
        """The stream no longer counts as its player's."""
        if opened is not None:
            self._streams.close(opened)

    def open_streams(self, player: str) -> int:
        """How many streams ``player`` has open here."""
        return self._streams.count(player)
