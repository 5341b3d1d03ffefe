"""Text that parses as JSON but has no canonical form is a failed check, never a crash."""

from __future__ import annotations

from sapsam.audit import Requester, select_deal, verify_export, write_lines
from sapsam.audit.sample_series import recorded_stream


def test_a_lone_surrogate_in_an_event_fails_the_chain_check() -> None:
    lines = list(write_lines(select_deal(recorded_stream(2), 1, Requester.operator())))
    event_line = next(index for index, line in enumerate(lines) if '"data":{' in line)
    lines[event_line] = lines[event_line].replace('"data":{', '"data":{"x":"\\ud800",', 1)
    report = verify_export(lines)
    assert not report.ok
    failed = [check for check in report.checks if check.status.name == "FAILED"]
    assert failed and failed[0].name == "chain"
    assert "surrogate" in failed[0].detail
