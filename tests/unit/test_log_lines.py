"""The log lines ``sapsam serve`` writes: one JSON object per line, each starting with its time in
ISO-8601 UTC with milliseconds; a call's line built without a JSON encoder is still valid JSON,
whatever the client put in the method path."""

from __future__ import annotations

import json
import logging
import re

from sapsam.api.call_log import (
    LOGGER_NAME,
    JsonLineFormatter,
    TextLineFormatter,
    call_line,
    call_subject,
    utc_timestamp,
)
from sapsam_proto.v1 import table_service_pb2

ISO_UTC_MILLISECONDS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _record(name: str, message: str, created: float) -> logging.LogRecord:
    record = logging.LogRecord(name, logging.INFO, __file__, 1, message, (), None)
    record.created = created
    return record


def test_the_timestamp_is_iso_8601_utc_with_milliseconds() -> None:
    assert utc_timestamp(0.0) == "1970-01-01T00:00:00.000Z"
    assert utc_timestamp(1_700_000_000.1234) == "2023-11-14T22:13:20.123Z"
    assert utc_timestamp(1_700_000_000.9999) == "2023-11-14T22:13:20.999Z"  # truncated, not rounded
    assert utc_timestamp(1_700_000_001.0) == "2023-11-14T22:13:21.000Z"  # the next second


def test_a_call_line_gets_the_time_first_and_the_pid_last() -> None:
    message = call_line("/sapsam.v1.TableService/CutDeck", "5b0e8c7e", 2, "OK", 1.23456)
    formatted = JsonLineFormatter().format(_record(LOGGER_NAME, message, 1_700_000_000.5))
    line = json.loads(formatted)
    assert list(line) == [
        "time",
        "level",
        "logger",
        "message",
        "method",
        "table",
        "seat",
        "status",
        "duration_ms",
        "pid",
    ]
    assert line["time"] == "2023-11-14T22:13:20.500Z"
    assert (line["level"], line["logger"]) == ("INFO", LOGGER_NAME)
    assert (line["method"], line["table"], line["seat"], line["status"]) == (
        "/sapsam.v1.TableService/CutDeck",
        "5b0e8c7e",
        2,
        "OK",
    )
    assert line["duration_ms"] == 1.235 and isinstance(line["pid"], int)
    assert "\n" not in formatted


def test_a_call_line_without_a_table_and_with_a_hostile_method_is_valid_json() -> None:
    method = '/x"y\n{"injected":1}\\'
    line = json.loads(call_line(method, None, None, "UNIMPLEMENTED", 0.0))
    assert line == {
        "method": method,
        "table": None,
        "seat": None,
        "status": "UNIMPLEMENTED",
        "duration_ms": 0.0,
    }


def test_any_other_record_is_wrapped_with_its_time_level_and_logger() -> None:
    formatted = JsonLineFormatter().format(_record("sapsam.cli", 'said "hi"\n', 86_400.25))
    line = json.loads(formatted)
    assert ISO_UTC_MILLISECONDS.match(line["time"])
    assert line == {
        "time": "1970-01-02T00:00:00.250Z",
        "level": "INFO",
        "logger": "sapsam.cli",
        "message": 'said "hi"\n',
        "pid": line["pid"],
    }
    assert "\n" not in formatted


def test_a_call_line_in_text_is_one_line_even_for_a_hostile_method() -> None:
    record = _record(LOGGER_NAME, "{}", 1_700_000_000.5)
    record.call = ('/x"y\n{"injected":1}', "5b0e8c7e", 2, "UNIMPLEMENTED", 0.04)
    text = TextLineFormatter().format(record)
    assert "\n" not in text
    assert text.startswith("2023-11-14T22:13:20.500Z INFO  [")
    assert text.endswith("UNIMPLEMENTED 0.0 ms table=5b0e8c7e seat=2")


def test_an_exception_goes_with_its_record_in_either_format() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record = logging.LogRecord(
            "sapsam.x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info()
        )
    assert "ValueError: boom" in json.loads(JsonLineFormatter().format(record))["exception"]
    assert "ValueError: boom" in TextLineFormatter().format(record)


TABLE_ID = "5b0e8c7e-1111-4222-8333-444455556666"


def test_a_calls_subject_is_read_from_its_resource_names_alone() -> None:
    seat = table_service_pb2.RevealArrangementRequest(seat=f"tables/{TABLE_ID}/seats/3")
    deal = table_service_pb2.GetDealResultRequest(name=f"tables/{TABLE_ID}/deals/12")
    table = table_service_pb2.GetTableRequest(name=f"tables/{TABLE_ID}")
    for _twice in range(2):  # the second time from the names remembered
        assert call_subject(seat) == (TABLE_ID, 3)
        assert call_subject(deal) == (TABLE_ID, None)
        assert call_subject(table) == (TABLE_ID, None)
    assert call_subject(b"echo bytes") == (None, None)


def test_a_name_no_table_could_have_names_no_table_however_long() -> None:
    longest = "tables/" + "a" * 64 + "/seats/1234"
    assert call_subject(table_service_pb2.GetMyHandRequest(seat=longest)) == ("a" * 64, 1234)
    # The pattern's "$" lets one final newline through, as it always did.
    newline = table_service_pb2.GetMyHandRequest(seat=longest + "\n")
    assert call_subject(newline) == ("a" * 64, 1234)
    for name in ("tables/" + "a" * 65, longest + "5", longest + "\n\n", "x" * 100_000, "players/x"):
        request = table_service_pb2.GetMyHandRequest(seat=name)
        assert call_subject(request) == (None, None)
