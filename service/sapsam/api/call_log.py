"""One structured JSON log line per call: method, table, seat, status, duration (and the pid);
and each call counted for the metrics (``sapsam.api.call_metrics``).

The line is built from an allow-list, never from the request or the metadata as a whole: the only
request fields read are the resource names ``name``, ``table`` and ``seat`` (reduced to a table id
and a seat number), so a token, a card, a nonce or a seed cannot reach the log.

Every line ``sapsam serve`` writes starts with ``"time"``, the record's moment in ISO-8601 UTC
with milliseconds (``2026-12-02T00:47:59.123Z``), then its ``"level"``, ``"logger"`` and
``"message"`` (a call's: its method and status), the call's fields and the ``"pid"``. With
``--log-format text`` the same records are lines for a person (``TextLineFormatter``).

A call's line is written on every call, so it is made cheaply (``bench/call_log.py`` measures
it): its fields are known-safe text (the method and status quoted once and remembered, a table id
the pattern below allows, integers) put together without a JSON encoder, and the logging record
is made directly, without looking up the caller's source line.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import time
from typing import Any, Final

from google.protobuf.message import Message
from grpc import aio

from sapsam.api.call_metrics import CALLS, STREAMS
from sapsam.api.interception import CallInterceptor, Proceed, ended_with

LOGGER_NAME: Final = "sapsam.api.calls"

_logger = logging.getLogger(LOGGER_NAME)
_TABLE_NAME = re.compile(r"^tables/([A-Za-z0-9-]{1,64})(?:/(seats|deals)/(\d{1,4}))?$")
_NAME_FIELDS: Final = ("name", "table", "seat")


@functools.cache
def _name_fields(descriptor: Any) -> tuple[str, ...]:
    """The resource-name fields a message type has, in ``_NAME_FIELDS`` order (once per type)."""
    return tuple(name for name in _NAME_FIELDS if name in descriptor.fields_by_name)


# The longest name _TABLE_NAME matches: "tables/", 64 id characters, "/seats/", four digits,
# and the one final newline its "$" lets through.
_LONGEST_NAME: Final = 7 + 64 + 7 + 4 + 1


def _name_subject(name: str) -> tuple[str, int | None] | None:
    """The table id and seat number (a seat's name only) of a resource name, None for no table's
    name."""
    # Anything longer is no table's name (and is not kept: a client chooses its length).
    return None if len(name) > _LONGEST_NAME else _short_name_subject(name)


@functools.lru_cache(maxsize=4096)
def _short_name_subject(name: str) -> tuple[str, int | None] | None:
    # Worked out once per name seen lately: a table's calls name the same few.
    match = _TABLE_NAME.match(name)
    if match is None:
        return None
    return match.group(1), int(match.group(3)) if match.group(2) == "seats" else None


def call_subject(request: Any) -> tuple[str | None, int | None]:
    """The table id and seat number a request is about, from its resource names only."""
    if not isinstance(request, Message):
        return None, None
    table: str | None = None
    seat: int | None = None
    for field_name in _name_fields(request.DESCRIPTOR):
        value = getattr(request, field_name)
        if isinstance(value, str):
            named = _name_subject(value)
            if named is None:
                continue
            table, named_seat = named
            if named_seat is not None:
                seat = named_seat
        elif isinstance(value, int) and field_name == "seat":
            # JoinTable's requested seat (optional: set or not), an operator's seat number.
            presence = request.DESCRIPTOR.fields_by_name["seat"].has_presence
            if not presence or request.HasField("seat"):
                seat = value
    return table, seat


# A JSON string per method or status name, made once: json.dumps, because a method path of an
# unknown RPC comes from the client. Bounded: such paths could be many.
_quoted = functools.lru_cache(maxsize=1024)(json.dumps)


def call_line(
    method: str, table: str | None, seat: int | None, status: str, duration_ms: float
) -> str:
    """A call's log message: the JSON object of ``{"method", "table", "seat", "status",
    "duration_ms"}`` (``JsonLineFormatter`` adds the time and the pid)."""
    # table matched _TABLE_NAME (letters, digits, hyphens) and seat is an int: nothing to escape.
    table_text = "null" if table is None else f'"{table}"'
    seat_text = "null" if seat is None else str(seat)
    return (
        f'{{"method":{_quoted(method)},"table":{table_text},"seat":{seat_text},'
        f'"status":{_quoted(status)},"duration_ms":{duration_ms:.3f}}}'
    )


def log_call(method: str, table: str | None, seat: int | None, status: str, started: float) -> None:
    """Count, and log the line of, a call that began at ``started`` (``time.perf_counter()``)
    and ends now (its count and latency: ``sapsam.api.call_metrics``)."""
    seconds = time.perf_counter() - started
    CALLS.record(method, status, seconds)
    if not _logger.isEnabledFor(logging.INFO):
        return
    duration_ms = seconds * 1000
    message = call_line(method, table, seat, status, duration_ms)
    # handle(makeRecord(...)) is what _logger.info does, less finding the caller's source line.
    record = _logger.makeRecord(LOGGER_NAME, logging.INFO, __file__, 0, message, (), None)
    record.call = (method, table, seat, status, duration_ms)  # for the text format
    _logger.handle(record)


DEADLINE_MARGIN_SECONDS = 0.05


def _cancelled_status(context: aio.ServicerContext) -> str:
    """What a cancelled call ended with: grpc cancels a call whose deadline passed too.

    The client's copy of the deadline starts before ours (it travels with the request), so the
    client may cut the call a few milliseconds before our clock reaches it: a call cancelled
    within ``DEADLINE_MARGIN_SECONDS`` of its deadline was cut by the deadline."""
    remaining = context.time_remaining()
    if remaining is not None and remaining <= DEADLINE_MARGIN_SECONDS:
        return "DEADLINE_EXCEEDED"
    return "CANCELLED"


class CallLogInterceptor(CallInterceptor):
    """Logs one JSON line per call when it ends, whatever the outcome."""

    async def around(
        self, method: str, request: Any, context: aio.ServicerContext, proceed: Proceed
    ) -> Any:
        """Run the call and log its outcome."""
        started = time.perf_counter()
        status = "UNKNOWN"
        try:
            response = await proceed()
            status = "OK"
            return response
        except asyncio.CancelledError:
            status = _cancelled_status(context)  # the client went away, or its deadline passed
            raise
        except Exception as error:
            status = ended_with(error, context).name
            raise
        finally:
            table, seat = call_subject(request)
            log_call(method, table, seat, status, started)

    async def stream_opening(self, method: str, request: Any, context: aio.ServicerContext) -> Any:
        """Count the stream while it is open; when it began."""
        started = time.perf_counter()
        STREAMS.opened(method)
        return started

    async def stream_ended(
        self,
        method: str,
        request: Any,
        context: aio.ServicerContext,
        opened: Any,
        error: BaseException | None,
    ) -> None:
        """Log the stream's outcome (``opened``: when it began)."""
        if error is None:
            status = "OK"
        elif isinstance(error, (asyncio.CancelledError, GeneratorExit)):
            # The client went away, its deadline passed, or the server is stopping.
            status = _cancelled_status(context)
        elif isinstance(error, Exception):
            status = ended_with(error, context).name
        else:
            status = "UNKNOWN"
        STREAMS.closed(method)
        table, seat = call_subject(request)
        log_call(method, table, seat, status, opened)


def utc_timestamp(created: float) -> str:
    """``created`` (seconds since the epoch) in ISO-8601 UTC with milliseconds:
    ``2026-12-02T00:47:59.123Z``. The date and time of day are formatted once per second."""
    second = int(created)
    cached_second, prefix = _last_second
    if second != cached_second:
        prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _last_second[:] = [second, prefix]  # a race only formats a second twice
    return f"{prefix}.{int((created - second) * 1000):03d}Z"


_last_second: list[Any] = [None, ""]


class JsonLineFormatter(logging.Formatter):
    """Every log record as one JSON line: ``{"time", "level", "logger", "message", ...,
    "pid"}``, so the server's output is uniformly JSON and, with ``--workers``, each line says
    which process wrote it.

    A call line is already a JSON object (``call_line``): its fields come after the message
    (the method and the status, ``"/sapsam.v1.TableService/CutDeck OK"``). A record with an
    exception adds its traceback as ``"exception"``.
    """

    def format(self, record: logging.LogRecord) -> str:
        """The record as a single JSON line."""
        stamp = utc_timestamp(record.created)
        message = record.getMessage()
        if record.name == LOGGER_NAME and message.startswith("{") and message.endswith("}"):
            call = getattr(record, "call", None)
            said = _quoted(f"{call[0]} {call[3]}") if call else '"call"'
            return (
                f'{{"time":"{stamp}","level":"{record.levelname}","logger":"{LOGGER_NAME}",'
                f'"message":{said},{message[1:-1]},"pid":{record.process}}}'
            )
        line: dict[str, object] = {
            "time": stamp,
            "level": record.levelname,
            "logger": record.name,
            "message": message,
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        line["pid"] = record.process
        return json.dumps(line, separators=(",", ":"), ensure_ascii=False)


class TextLineFormatter(logging.Formatter):
    """Every log record as a line for a person (``sapsam serve --log-format text``)::

        2026-12-02T00:47:59.123Z INFO  [4242] sapsam.api.calls: /sapsam.v1.TableService/CutDeck
        OK 1.2 ms table=5b0e8c7e seat=2

    (one line), or the record's message; a traceback follows its record's line. A method path
    the client sent is shown escaped when it holds a control character, so it cannot forge a
    line."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as text."""
        call = getattr(record, "call", None)
        if call is not None:
            method, table, seat, status, duration_ms = call
            shown = method if method.isprintable() else ascii(method)
            text = f"{shown} {status} {duration_ms:.1f} ms"
            text += f" table={table}" if table is not None else ""
            text += f" seat={seat}" if seat is not None else ""
        else:
            text = record.getMessage()
            if record.exc_info:
                text += "\n" + self.formatException(record.exc_info)
        stamp = utc_timestamp(record.created)
        return f"{stamp} {record.levelname:<5} [{record.process}] {record.name}: {text}"


LOG_FORMATS: Final = ("text", "json")


def configure_logging(level: int = logging.INFO, log_format: str = "json") -> None:
    """Send every log record to stderr, one JSON line each (``log_format`` "json") or as text
    for a person ("text"): the ``sapsam serve`` set-up."""
    handler = logging.StreamHandler()
    handler.setFormatter(TextLineFormatter() if log_format == "text" else JsonLineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # The lines name neither the thread nor the process (the pid is enough): spare every record
    # looking them up.
    logging.logThreads = False
    logging.logMultiprocessing = False
    # The embedded PostgreSQL wrapper narrates every pg_ctl call at INFO; keep its warnings only.
    logging.getLogger("pgserver").setLevel(max(level, logging.WARNING))
