"""The blocking bridge: how the asyncio server calls the synchronous store. An intermediate step.

The server runs on ``grpc.aio``, one event loop per worker process, but the application and
store layer below it is still synchronous psycopg (the next step makes it async, on psycopg's
``AsyncConnectionPool``, and then this module goes away). Until then every synchronous piece of
work a call needs runs here, on a bounded thread pool of the server's own, so that a slow
database holds a thread of this pool and never the event loop: health checks, other calls and
open streams go on meanwhile.

- :func:`run_blocking` runs one function on the pool and awaits its result;
- :func:`iterate_blocking` drains a synchronous iterator (a sync response stream) one item per
  hop;
- ``sapsam.api.interception`` calls a servicer method that is still a plain ``def`` through
  them, so each call costs one hop; an ``async def`` method runs on the loop.

The pool is sized like the database pool (``ServerConfig.threads``): a thread more than the pool
has connections would only wait for one. The caller's context variables (who is calling, how
long a call may wait for a connection) travel with the function into the thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import weakref
from collections.abc import AsyncGenerator, Callable, Iterable
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Final, ParamSpec, TypeVar

THREAD_NAME_PREFIX: Final = "sapsam-blocking"

_Parameters = ParamSpec("_Parameters")
_Result = TypeVar("_Result")
_Item = TypeVar("_Item")

# One pool per event loop (a test process runs several servers, each on a loop of its own).
_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Executor] = weakref.WeakKeyDictionary()
_EXHAUSTED: Final = object()


def open_pool(loop: asyncio.AbstractEventLoop, threads: int) -> ThreadPoolExecutor:
    """Give ``loop`` a bridge of ``threads`` threads; the server shuts it down when it stops."""
    if threads < 1:
        raise ValueError("the blocking bridge needs at least one thread")
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=THREAD_NAME_PREFIX)
    _pools[loop] = pool
    return pool


async def run_blocking(
    function: Callable[_Parameters, _Result],
    *args: _Parameters.args,
    **kwargs: _Parameters.kwargs,
) -> _Result:
    """``function(*args, **kwargs)`` on the running loop's bridge, with the caller's context.

    On a loop without a bridge (a test driving a feed by itself) the loop's default executor
    serves instead.
    """
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    call = functools.partial(context.run, function, *args, **kwargs)
    return await loop.run_in_executor(_pools.get(loop), call)


def _next_or_exhausted(iterator: Iterable[_Item]) -> object:
    return next(iter(iterator), _EXHAUSTED)


async def iterate_blocking(
    function: Callable[_Parameters, Iterable[_Item]],
    *args: _Parameters.args,
    **kwargs: _Parameters.kwargs,
) -> AsyncGenerator[_Item, None]:
    """The items of the iterable ``function(*args, **kwargs)`` returns, each fetched on the
    bridge (a generator's body runs there, step by step, never on the loop)."""
    iterator = iter(await run_blocking(function, *args, **kwargs))
    try:
        while True:
            item = await run_blocking(_next_or_exhausted, iterator)
            if item is _EXHAUSTED:
                return
            yield item  # type: ignore[misc]  # every other item is an _Item
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:  # a generator left early runs its finally blocks on the bridge
            await run_blocking(close)
