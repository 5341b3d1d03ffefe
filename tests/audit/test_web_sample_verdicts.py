"""The browser's verifier is held to sapsam's verdicts (issue #21, "Cross-checks"): the page's
Vitest (web/test/crosscheck*.test.ts) compares its own verdict and failed checks on every sample
export and re-chained forgery in web/test/data/ with what ``sapsam audit verify`` said of it when
make_exports.py wrote the files (verdicts.json, tampered.json, open_face*.json, consistency.json,
receipts.json, witnessed.json) and make_tamper_mutations.py its own (tamper_mutations.json). This
test is the other half: ``sapsam audit verify`` today still says exactly what those files record,
so a change to the Python verifier that the page does not follow fails here instead of leaving the
page checked against a stale answer. Offline, in process.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from sapsam.cli import main

DATA = Path(__file__).parents[2] / "web" / "test" / "data"
sys.path.append(str(DATA))
from make_exports import failed_checks  # noqa: E402  (web/test/data is no package)

SERVER_KEY = ("--server-key", str(DATA / "server.vkey"))


def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return loaded


def _verify(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> dict[str, Any]:
    capsys.readouterr()
    main(["audit", "verify", str(path), "--json", *args])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def _failed(report: dict[str, Any]) -> list[str]:
    """The checks as make_exports.py records them: ``name@deal``, failed or skipped."""
    return sorted(failed_checks(report))


def _status(report: dict[str, Any], check: str) -> str:
    return str(next(c["status"] for c in report["checks"] if c["name"] == check))


def _keyed_cases() -> list[tuple[str, str, dict[str, str]]]:
    """(folder, file, {with_key, without_key}) of verdicts.json and open_face_anchored.json."""
    cases = [("", name, v) for name, v in _load("verdicts.json").items()]
    cases += [("open_face", name, v) for name, v in _load("open_face_anchored.json").items()]
    return cases


@pytest.mark.parametrize(("folder", "name", "verdicts"), _keyed_cases())
def test_sample_exports_with_and_without_the_key(
    capsys: pytest.CaptureFixture[str], folder: str, name: str, verdicts: dict[str, str]
) -> None:
    path = DATA / folder / name
    assert _verify(capsys, path, *SERVER_KEY)["verdict"] == verdicts["with_key"]
    assert _verify(capsys, path)["verdict"] == verdicts["without_key"]


@pytest.mark.parametrize(("name", "verdict"), sorted(_load("open_face.json").items()))
def test_open_face_sets(capsys: pytest.CaptureFixture[str], name: str, verdict: str) -> None:
    assert _verify(capsys, DATA / "open_face" / name)["verdict"] == verdict


def _forgeries() -> list[tuple[str, dict[str, Any]]]:
    loaded = ("tampered.json", "open_face_tampered.json", "tamper_mutations.json")
    return [case for name in loaded for case in _load(name).items()]


def test_every_mutation_of_the_tamper_tests_is_cross_checked() -> None:
    """tamper_mutations.json (make_tamper_mutations.py) holds each edit of
    tests/audit/test_audit_tampering.py, so the page meets every mutation sapsam's tests make."""
    sys.path.insert(0, str(Path(__file__).parents[2]))
    from tests.audit.test_audit_tampering import CASES

    edits = sorted(f"mutation_{edit.__name__}" for edit, _, _ in CASES)
    assert sorted(_load("tamper_mutations.json")) == edits


@pytest.mark.parametrize(("name", "case"), _forgeries())
def test_forgeries_fail_the_recorded_checks(
    capsys: pytest.CaptureFixture[str], name: str, case: dict[str, Any]
) -> None:
    report = _verify(capsys, DATA / case["file"])
    assert (report["verdict"], _failed(report)) == (case["verdict"], sorted(case["failed"])), name


@pytest.mark.parametrize(("note", "case"), sorted(_load("consistency.json").items()))
def test_reader_checkpoints(
    capsys: pytest.CaptureFixture[str], note: str, case: dict[str, Any]
) -> None:
    checkpoint = ("--checkpoint", str(DATA / "consistency" / note))
    report = _verify(capsys, DATA / "consistency" / "deal2.jsonl", *SERVER_KEY, *checkpoint)
    got = {
        "verdict": report["verdict"],
        "consistency": _status(report, "consistency"),
        "anchor": report["anchor"],
    }
    assert got == case


@pytest.mark.parametrize(("label", "case"), sorted(_load("receipts.json").items()))
def test_kept_receipts(
    capsys: pytest.CaptureFixture[str], label: str, case: dict[str, str]
) -> None:
    export, kept = label.split(" ")
    report = _verify(capsys, DATA / export, *SERVER_KEY, "--receipts", str(DATA / kept))
    assert {"verdict": report["verdict"], "receipts": _status(report, "receipts")} == case


@pytest.mark.parametrize(("label", "case"), sorted(_load("witnessed.json").items()))
def test_witnessed_anchors(
    capsys: pytest.CaptureFixture[str], label: str, case: dict[str, Any]
) -> None:
    args = [*SERVER_KEY]
    if case["witness"]:
        args += ["--witness-key", str(DATA / "witnessed" / "witness.vkey")]
    if case["reader"]:
        args += ["--checkpoint", str(DATA / "witnessed" / "reader.note")]
    report = _verify(capsys, DATA / case["file"], *args)
    assert {"verdict": report["verdict"], "anchor": report["anchor"]} == {
        "verdict": case["verdict"],
        "anchor": case["anchor"],
    }, label
