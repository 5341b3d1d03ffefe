"""How long the SDK waits before it sends a request again.

Without a word from the server the pause is capped exponential back-off with full jitter: a
random time between 0 and ``min(max_backoff, backoff * 2 ** attempt)``. Clients that failed at the
same moment (a server stopping, the database restarting) so come back spread out instead of in
step, and the total wait stays short (the "full jitter" of the AWS Architecture Blog's
"Exponential Backoff And Jitter"). When the server says when to come back (a
``google.rpc.RetryInfo``, e.g. ``RATE_LIMITED``), the pause is that delay, stretched by a random
0 to 20 % so that callers told the same delay do not all return at once; a delay longer than
``MAX_RETRY_DELAY_SECONDS`` is not waited for (the caller gets the error).

A server that cannot be reached at all (``UNAVAILABLE``: restarting, its port closed) is tried
again for a while rather than a number of times: for ``DEFAULT_RECONNECT_SECONDS`` after the
first failure of a call (or of a watch since its last event), however many attempts that takes,
each pause at most ``MAX_BACKOFF_SECONDS``. A server restart so costs a client a pause, not its
game. The channel's own reconnection (``RECONNECT_OPTIONS``) is capped at the same pause: grpc's
default lets it grow to two minutes, so a client could sit out a server long back.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Final

DEFAULT_BACKOFF_SECONDS: Final = 0.2
"""The ceiling of the first pause; it doubles with every attempt after."""
MAX_BACKOFF_SECONDS: Final = 5.0
"""The ceiling never grows past this."""
MAX_RETRY_DELAY_SECONDS: Final = 30.0
"""A server asking for a longer pause than this (RetryInfo) is not retried: the error is raised."""
RETRY_INFO_SPREAD: Final = 0.2
"""A RetryInfo delay is waited for plus up to this fraction of it, at random."""
DEFAULT_RECONNECT_SECONDS: Final = 60.0
"""How long the SDK keeps trying a server it cannot reach (``UNAVAILABLE``) before it gives up;
``sapsam-play`` and ``sapsam-bot`` wait longer (``--reconnect-seconds``)."""

RECONNECT_OPTIONS: Final[tuple[tuple[str, int], ...]] = (
    ("grpc.initial_reconnect_backoff_ms", 250),
    ("grpc.min_reconnect_backoff_ms", 250),
    ("grpc.max_reconnect_backoff_ms", int(MAX_BACKOFF_SECONDS * 1000)),
)
"""The channel options that cap grpc's own reconnection back-off at ``MAX_BACKOFF_SECONDS``."""


def keep_trying(
    unreachable: bool,
    attempt: int,
    attempts: int,
    failing_since: float,
    now: float,
    reconnect_seconds: float,
) -> bool:
    """Whether a retryable failure is worth another attempt: attempt ``attempt + 1`` of
    ``attempts``, or, for a server out of reach (``unreachable``), any attempt within
    ``reconnect_seconds`` of the first failure (``failing_since``, on the clock of ``now``)."""
    if attempt + 1 < attempts:
        return True
    return unreachable and now - failing_since < reconnect_seconds


def retry_pause(
    attempt: int,
    retry_delay: float | None = None,
    *,
    backoff: float = DEFAULT_BACKOFF_SECONDS,
    max_backoff: float = MAX_BACKOFF_SECONDS,
    uniform: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait before retry ``attempt + 1`` (``attempt`` 0: the first retry).

    ``retry_delay`` is the server's RetryInfo delay, if it sent one; the caller checks it against
    ``MAX_RETRY_DELAY_SECONDS`` first. ``uniform`` draws from [0, 1) (a parameter for tests).
    A negative delay (a Duration may carry one) counts as none to wait: ``time.sleep`` refuses it.
    """
    if retry_delay is not None:
        return max(0.0, retry_delay) * (1.0 + RETRY_INFO_SPREAD * uniform())
    ceiling = min(max_backoff, backoff * 2.0 ** min(attempt, 62))
    return ceiling * uniform()
