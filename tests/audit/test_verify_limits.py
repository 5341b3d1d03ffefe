"""An export beyond the documented limits (docs/audit.md, "Limits") is refused before it is parsed:
``ExportLimitError`` from the library, one line and exit status 2 from ``sapsam audit verify``,
never a traceback; and the CLI ends quietly when its reader goes away."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sapsam.api.audit_servicer import _report_message
from sapsam.audit import ExportLimitError, Requester, select_deal, select_table, write_lines
from sapsam.audit.export_limits import (
    MAX_LINE_CHARS,
    MAX_NESTING_DEPTH,
    MAX_NUMBER_DIGITS,
    bounded_lines,
    check_line,
)
from sapsam.audit.sample_series import recorded_stream
from sapsam.audit.verifier import read_and_verify, verify_export
from sapsam.cli import BROKEN_PIPE


def deal_lines() -> list[str]:
    return list(write_lines(select_deal(recorded_stream(2), 1, Requester.operator())))


def with_data(lines: list[str], value: str) -> list[str]:
    """The export with ``value`` (JSON text) as an extra field of the first event's data."""
    changed = list(lines)
    changed[1] = changed[1].replace('"data":{', '"data":{"x":' + value + ",", 1)
    return changed


HOSTILE = {
    "100k-deep array": "[" * 100_000 + "]" * 100_000,
    "50k-deep object": '{"a":' * 50_000 + "1" + "}" * 50_000,
    "5,000-digit integer": "9" * 5_000,
    "5,000-digit negative integer": "-" + "9" * 5_000,
    "5,000-digit float": "1." + "0" * 5_000,
    "one level too deep": "[" * MAX_NESTING_DEPTH + "]" * MAX_NESTING_DEPTH,
    "one digit too many": "1" * (MAX_NUMBER_DIGITS + 1),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_export_is_refused_before_parsing(name: str) -> None:
    with pytest.raises(ExportLimitError, match="line 2: "):
        verify_export(with_data(deal_lines(), HOSTILE[name]))


def test_a_hostile_header_is_refused_too() -> None:
    lines = deal_lines()
    lines[0] = lines[0].replace('"rule_set":{', '"rule_set":{"x":' + "[" * 100_000 + ",", 1)
    with pytest.raises(ExportLimitError, match=r"line 1: .*nested deeper than 32"):
        verify_export(lines)


def test_what_the_log_holds_is_within_the_limits() -> None:
    """Every line of a whole table's export passes; limits are far above what events need."""
    export = select_table(recorded_stream(4), Requester.operator())
    for number, line in enumerate(write_lines(export), start=1):
        check_line(line, number)
        assert len(line) < MAX_LINE_CHARS // 100


def test_brackets_digits_and_escapes_inside_strings_do_not_count() -> None:
    inside = '"' + "[{" * 1_000 + "\\\\" + "9" * 1_000 + '\\"[[[[' + '"'
    check_line('{"a":' + inside + ',"b":[[[1]]]}', 1)
    assert verify_export(with_data(deal_lines(), inside)).checks[0].status.name == "PASSED"
    # An escaped quote does not end the string; an escaped backslash before the quote does.
    with pytest.raises(ExportLimitError):
        check_line('{"a":"\\\\"' + "[" * 40 + "]" * 40 + "}", 1)


def test_the_limits_are_just_wide_enough() -> None:
    check_line("[" * MAX_NESTING_DEPTH + "]" * MAX_NESTING_DEPTH, 1)
    check_line("[" + "9" * MAX_NUMBER_DIGITS + "]", 1)
    check_line("x" * MAX_LINE_CHARS, 1)
    check_line("x" * MAX_LINE_CHARS + "\r\n", 1)
    with pytest.raises(ExportLimitError, match="longer than"):
        check_line("x" * (MAX_LINE_CHARS + 1), 1)


def test_a_file_of_one_endless_line_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "endless.jsonl"
    path.write_text("x" * (3 * MAX_LINE_CHARS), encoding="utf-8")
    with path.open(encoding="utf-8") as handle:
        lines = bounded_lines(handle)
        with pytest.raises(ExportLimitError, match="line 1: longer than"):
            next(lines)
        assert handle.tell() <= MAX_LINE_CHARS + 2


def run_cli(*argv: str, **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sapsam.cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        **options,  # type: ignore[call-overload]
    )


@pytest.mark.parametrize("name", ["100k-deep array", "50k-deep object", "5,000-digit integer"])
def test_sapsam_audit_verify_reports_one_line_and_exits_2(tmp_path: Path, name: str) -> None:
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(with_data(deal_lines(), HOSTILE[name])) + "\n", encoding="utf-8")
    for extra in ((), ("--json",)):
        done = run_cli("audit", "verify", str(path), *extra)
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
        assert done.stderr.startswith("sapsam audit: line 2: ")
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_a_file_that_is_not_utf8_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "binary.jsonl"
    path.write_bytes(b"\xff\xfe\x00garbage\n")
    done = run_cli("audit", "verify", str(path))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_verify_ends_quietly_when_its_reader_goes_away(tmp_path: Path) -> None:
    """``sapsam audit verify --json FILE | head -1``: the reader closes the pipe early."""
    path = tmp_path / "table.jsonl"
    export = write_lines(select_table(recorded_stream(4), Requester.operator()))
    path.write_text("".join(line + "\n" for line in export), encoding="utf-8")
    for extra in (("--json",), ()):
        process = subprocess.Popen(
            [sys.executable, "-m", "sapsam.cli", "audit", "verify", str(path), *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # the reader is gone before the first line is written
        stderr = process.stderr.read().decode()
        assert process.wait(timeout=120) == BROKEN_PIPE
        assert stderr == "", stderr
    piped = subprocess.run(
        f"{sys.executable} -m sapsam.cli audit verify --json {path} | head -c 10",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in piped.stderr and "Exception ignored" not in piped.stderr


def with_field(lines: list[str], event_type: str, field: str, value: object) -> list[str]:
    """The export with ``value`` as ``data[field]`` of the first ``event_type`` event."""
    changed = list(lines)
    index = next(i for i, line in enumerate(changed) if f'"type":"{event_type}"' in line)
    record = json.loads(changed[index])
    record["data"][field] = value
    changed[index] = json.dumps(record)
    return changed


@pytest.mark.parametrize(
    ("event_type", "field", "value"),
    [
        ("TableCreated", "seat_count", 10**9),
        ("TableCreated", "seat_count", 2**63),
        ("TableCreated", "lot_commitment", [1]),
        ("DealStarted", "deal_number", "x"),
        ("DealStarted", "deal_number", True),
        ("DealStarted", "deal_number", 10**18),
        ("DealStarted", "deal_number", {"a": 1}),
    ],
)
def test_forged_sizes_and_numbers_within_the_limits_fail_checks(
    event_type: str, field: str, value: object
) -> None:
    """Within the limits, a forged seat count of 10^9 is refused before anything is sized by it
    (it took gigabytes), and a deal "number" of another type or size fails the checks with a
    report that has its JSON and protobuf forms (it made VerifyDeal INTERNAL)."""
    export, report = read_and_verify(with_field(deal_lines(), event_type, field, value))
    assert not report.ok
    json.dumps(report.to_dict())
    for check in report.checks:
        assert check.deal is None or 0 < check.deal < 2**31
        assert all(isinstance(text, str) for text in (check.detail, check.expected, check.found))
    _report_message(report, export)  # the VerifyDeal response, its text telling the export
