"""A probe for ``bench/service.py``: where each server process's CPU goes, by what the event loop
ran, measured in the run itself; ``bench/task_cpu_probe/summarise.py`` turns it into CPU per echo
and per game RPC.

Put this folder first on ``PYTHONPATH`` and name an output prefix in ``SAPSAM_TASK_CPU_PROBE``;
every Python process started then imports this module (``site`` does), and a server process
appends a JSON line to ``<prefix>.<pid>`` every half second with its totals so far::

    PYTHONPATH=bench/task_cpu_probe:$PYTHONPATH SAPSAM_TASK_CPU_PROBE=/tmp/probe \\
        python bench/service.py --rounds 3 --echo-seconds 4 --game-seconds 8
    python bench/task_cpu_probe/summarise.py /tmp/probe

What it counts: the thread CPU (``time.thread_time_ns``) of every callback the loop runs
(``asyncio.Handle._run``), charged to a label: a call's own task, once the call log has seen it,
by the call's method and where the callback ended (``svc:`` inside the servicer, ``post:`` after
the call log's ``around`` returned, which also covers a call that never waited: it runs in one
callback), another task by its coroutine (a background loop by its name), anything else by the
callback; the selector's waits (``select``); calls by method; each thread's CPU from
``/proc/self/task``. For the reads that seldom wait (GetMyHand, GetTable, GetDealResult) and for
Echo, the CPU of the servicer alone and of the call log's ``around`` when they ran in one
callback (``same:``). It costs about 3 µs per callback (an echo's server CPU ~15 % more); compare
its figures with each other, not with a run without it. Without ``SAPSAM_TASK_CPU_PROBE`` it does
nothing.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import selectors
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

_OUTPUT = os.environ.get("SAPSAM_TASK_CPU_PROBE")
_SAME_CALLBACK_READS = ("GetMyHand", "GetTable", "GetDealResult")

if _OUTPUT:
    _cpu_ns: collections.Counter[str] = collections.Counter()
    _runs: collections.Counter[str] = collections.Counter()
    _calls: collections.Counter[str] = collections.Counter()
    _task_labels: dict[int, str] = {}
    _callbacks_run = [0]
    _thread_ns = time.thread_time_ns
    _original_run = asyncio.events.Handle._run
    _original_select = selectors.EpollSelector.select

    def _label_of(callback: Any) -> str:
        owner = getattr(callback, "__self__", None)
        if isinstance(owner, asyncio.Task):
            label = _task_labels.get(id(owner))
            if label is not None:
                return label
            coroutine = owner.get_coro()
            name = getattr(coroutine, "__qualname__", None) or type(coroutine).__name__
            if name == "BackgroundLoop._run":
                return f"task:{name}:{owner.get_name()}"
            return f"task:{name}"
        return "callback:" + str(getattr(callback, "__qualname__", None) or type(callback).__name__)

    def _run(self: asyncio.Handle) -> None:
        began = _thread_ns()
        _callbacks_run[0] += 1
        try:
            _original_run(self)  # type: ignore[no-untyped-call]
        finally:
            label = _label_of(self._callback)  # type: ignore[attr-defined]
            _cpu_ns[label] += _thread_ns() - began
            _runs[label] += 1

    def _select(self: selectors.EpollSelector, timeout: float | None = None) -> Any:
        began = _thread_ns()
        try:
            return _original_select(self, timeout)
        finally:
            _cpu_ns["select"] += _thread_ns() - began
            _runs["select"] += 1

    asyncio.events.Handle._run = _run  # type: ignore[method-assign]
    selectors.EpollSelector.select = _select  # type: ignore[method-assign]

    def _timed_if_unbroken(label: str, method: Callable[..., Awaitable[Any]]) -> Any:
        """``method``, its CPU counted under ``label`` when it ran within one callback."""

        async def timed(*arguments: Any, **keywords: Any) -> Any:
            callbacks, began = _callbacks_run[0], _thread_ns()
            answer = await method(*arguments, **keywords)
            if _callbacks_run[0] == callbacks:
                _cpu_ns[label] += _thread_ns() - began
                _runs[label] += 1
            return answer

        return timed

    def _patch_server() -> None:
        import sapsam.api.call_log as call_log
        import sapsam.api.interception as interception
        import sapsam.api.table_servicer as table_servicer

        logged_around = call_log.CallLogInterceptor.around
        innermost_around = interception.ErrorInterceptor.around

        async def labelled_around(
            self: Any, method: str, request: Any, context: Any, proceed: Any
        ) -> Any:
            task = asyncio.current_task()
            name = method.rsplit("/", 1)[-1]
            key = id(task)
            _task_labels[key] = f"call:{name}"
            if task is not None:
                task.add_done_callback(lambda _task, key=key: _task_labels.pop(key, None))
            _calls[name] += 1
            try:
                return await logged_around(self, method, request, context, proceed)
            finally:
                _task_labels[key] = f"post:{name}"

        async def logged(self: Any, method: str, request: Any, context: Any, proceed: Any) -> Any:
            timed = _timed_if_unbroken("same:calllog." + method.rsplit("/", 1)[-1], labelled_around)
            return await timed(self, method, request, context, proceed)

        async def servicer_around(
            self: Any, method: str, request: Any, context: Any, proceed: Any
        ) -> Any:
            key = id(asyncio.current_task())
            name = method.rsplit("/", 1)[-1]
            _task_labels[key] = f"svc:{name}"
            try:
                return await innermost_around(self, method, request, context, proceed)
            finally:
                _task_labels[key] = f"call:{name}"

        call_log.CallLogInterceptor.around = logged  # type: ignore[method-assign]
        interception.ErrorInterceptor.around = servicer_around  # type: ignore[method-assign]
        servicer_class = table_servicer.TableServicer
        for name in _SAME_CALLBACK_READS:
            timed = _timed_if_unbroken(f"same:svc.{name}", getattr(servicer_class, name))
            setattr(servicer_class, name, timed)

    def _threads_cpu_ticks() -> dict[str, int]:
        ticks: dict[str, int] = {}
        for thread_id in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{thread_id}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                with open(f"/proc/self/task/{thread_id}/comm") as comm:
                    name = comm.read().strip()
            except OSError:
                continue
            ticks[f"{name}:{thread_id}"] = int(fields[11]) + int(fields[12])
        return ticks

    def _server_imported() -> bool:
        """Whether the server's modules are imported (and so can be patched before its
        servicers are registered, which binds their methods)."""
        servicers = sys.modules.get("sapsam.api.table_servicer")
        return getattr(servicers, "TableServicer", None) is not None

    def _snapshot() -> dict[str, Any]:
        while True:
            try:  # the loop's thread may add a key meanwhile: copy again
                return {
                    "time": time.time(),
                    "process_cpu_ns": time.process_time_ns(),
                    "calls": dict(_calls),
                    "cpu_ns": dict(_cpu_ns),
                    "runs": dict(_runs),
                    "thread_ticks": _threads_cpu_ticks(),
                }
            except RuntimeError:
                continue

    def _write_totals() -> None:
        while not _server_imported():
            time.sleep(0.01)
        _patch_server()
        with open(f"{_OUTPUT}.{os.getpid()}", "a") as output:
            while True:
                time.sleep(0.5)
                output.write(json.dumps(_snapshot()) + "\n")
                output.flush()

    threading.Thread(target=_write_totals, name="task-cpu-probe", daemon=True).start()
