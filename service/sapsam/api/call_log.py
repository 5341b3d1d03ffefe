"""One structured JSON log line per call: method, table, seat, status, duration (and the pid).

The line is built from an allow-list, never from the request or the metadata as a whole: the only
request fields read are the resource names ``name``, ``table`` and ``seat`` (reduced to a table id
and a seat number), so a token, a card, a nonce or a seed cannot reach the log.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Iterator
from typing import Any, Final

import grpc
from google.protobuf.message import Message

from sapsam.api.interception import CallInterceptor, Proceed, ProceedStream

LOGGER_NAME: Final = "sapsam.api.calls"

_logger = logging.getLogger(LOGGER_NAME)
_TABLE_NAME = re.compile(r"^tables/([A-Za-z0-9-]{1,64})(?:/(seats|deals)/(\d{1,4}))?$")
_NAME_FIELDS: Final = ("name", "table", "seat")


def call_subject(request: Any) -> tuple[str | None, int | None]:
    """The table id and seat number a request is about, from its resource names only."""
    if not isinstance(request, Message):
        return None, None
    fields = request.DESCRIPTOR.fields_by_name
    table: str | None = None
    seat: int | None = None
    for field_name in _NAME_FIELDS:
        field = fields.get(field_name)
        if field is None:
            continue
        value = getattr(request, field_name)
        if isinstance(value, str):
            match = _TABLE_NAME.match(value)
            if match is None:
                continue
            table = match.group(1)
            if match.group(2) == "seats":
                seat = int(match.group(3))
        elif isinstance(value, int) and field_name == "seat" and request.HasField("seat"):
            seat = value  # JoinTable's requested seat number
    return table, seat


def _status_name(context: grpc.ServicerContext, failed: bool) -> str:
    code = context.code()
    if code is None:
        return "UNKNOWN" if failed else "OK"
    return str(code.name)


class CallLogInterceptor(CallInterceptor):
    """Logs one JSON line per call when it ends, whatever the outcome."""

    def _log(
        self, method: str, request: Any, context: grpc.ServicerContext, started: float, status: str
    ) -> None:
        table, seat = call_subject(request)
        line = {
            "method": method,
            "table": table,
            "seat": seat,
            "status": status,
            "duration_ms": round((time.perf_counter() - started) * 1000, 3),
            "pid": os.getpid(),  # which worker process served the call
        }
        _logger.info(json.dumps(line, separators=(",", ":")))

    def around(
        self, method: str, request: Any, context: grpc.ServicerContext, proceed: Proceed
    ) -> Any:
        """Run the call and log its outcome."""
        started = time.perf_counter()
        failed = True
        try:
            response = proceed()
            failed = False
            return response
        finally:
            self._log(method, request, context, started, _status_name(context, failed))

    def around_stream(
        self, method: str, request: Any, context: grpc.ServicerContext, proceed: ProceedStream
    ) -> Iterator[Any]:
        """Stream the call's responses and log the outcome when the stream ends."""
        started = time.perf_counter()
        status: str | None = None
        try:
            yield from proceed()
            status = _status_name(context, failed=False)
        except GeneratorExit:
            status = "CANCELLED"  # the client went away or the server is stopping
            raise
        except BaseException:
            status = _status_name(context, failed=True)
            raise
        finally:
            self._log(method, request, context, started, status or "UNKNOWN")


class JsonLineFormatter(logging.Formatter):
    """Every log record as one JSON line: call lines as they are, others wrapped.

    A call line is already a JSON object; any other record becomes
    ``{"level": ..., "logger": ..., "message": ..., "pid": ...}``, so the server's output is
    uniformly JSON and, with ``--workers``, each line says which process wrote it.
    """

    def format(self, record: logging.LogRecord) -> str:
        """The record as a single JSON line."""
        message = record.getMessage()
        if record.name == LOGGER_NAME:
            return message
        line = {
            "level": record.levelname,
            "logger": record.name,
            "message": message,
            "pid": record.process,
        }
        return json.dumps(line, separators=(",", ":"), ensure_ascii=False)


def configure_logging(level: int = logging.INFO) -> None:
    """Send every log record to stderr as one JSON line (the ``sapsam serve`` set-up)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonLineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # The embedded PostgreSQL wrapper narrates every pg_ctl call at INFO; keep its warnings only.
    logging.getLogger("pgserver").setLevel(max(level, logging.WARNING))
