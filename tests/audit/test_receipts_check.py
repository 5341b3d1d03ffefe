"""``sapsam.audit.receipts``: an export against kept receipts, offline and pure — an honest export
holds every receipted event; a re-chained rewrite, a missing tail, a bad signature or an unknown
key are each a failure naming the receipt; receipts of other streams and of other deals are
left out; and ``sapsam audit verify FILE --receipts DIR`` loads no network or database code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sapsam.audit import Requester, select_deal, select_table, write_lines
from sapsam.audit.export_reading import read_export
from sapsam.audit.receipts import KeptReceipt, check_receipts, parse_kept_receipts
from sapsam.audit.report import Status
from sapsam.audit.sample_series import recorded_stream
from sapsam.log.chain import canonical_event_bytes, chain_hash
from sapsam.log.receipt import receipt_of, sign_receipt
from sapsam.log.records import RecordedEvent
from sapsam.log.signed_note import NoteSigner

SERVER = NoteSigner.from_seed("sapsam/audit-test", bytes(range(32)))
EVENTS = recorded_stream(2, deals=2)


def _kept(events: list[RecordedEvent], size: int = 3) -> list[KeptReceipt]:
    """Receipts of the events in runs of ``size``, as if each run were one call."""
    runs = [events[start : start + size] for start in range(0, len(events), size)]
    return [
        KeptReceipt(f"kept:{index}", sign_receipt(receipt_of(SERVER.name, run), SERVER))
        for index, run in enumerate(runs, start=1)
    ]


def _table_export(events: list[RecordedEvent]):  # type: ignore[no-untyped-def]
    table_id = events[0].stream_id.removeprefix("table-")
    lines = list(write_lines(select_table(events, Requester.operator(), table_id)))
    return read_export(lines)


def _rechained(
    events: list[RecordedEvent], index: int, data: dict[str, object]
) -> list[RecordedEvent]:
    """``events`` with one event's data replaced and every hash from it on recomputed."""
    out = list(events[:index])
    previous = events[index - 1].hash
    for number, event in enumerate(events[index:], start=index):
        body = data if number == index else event.data
        digest = chain_hash(
            previous,
            canonical_event_bytes(
                event.stream_id,
                event.version,
                event.type,
                event.schema_version,
                body,
                event.metadata,
            ),
        )
        out.append(
            RecordedEvent(
                event.position,
                event.stream_id,
                event.version,
                event.type,
                event.schema_version,
                body,
                event.metadata,
                digest,
            )
        )
        previous = digest
    return out


def test_an_honest_table_export_holds_every_receipt() -> None:
    result = check_receipts(_table_export(EVENTS), _kept(EVENTS), [SERVER.verifier])
    assert result.problems == ()
    assert (result.checked, result.events) == ((len(EVENTS) + 2) // 3, len(EVENTS))
    assert [check.status for check in result.checks()] == [Status.PASSED]


def test_a_rechained_rewrite_fails_naming_the_receipt() -> None:
    index = next(i for i, e in enumerate(EVENTS) if e.type == "ArrangementRevealed")
    forged = _rechained(EVENTS, index, {**EVENTS[index].data, "nonce": "00" * 32})
    result = check_receipts(_table_export(forged), _kept(EVENTS), [SERVER.verifier])
    first = f"version {EVENTS[index].version} was ArrangementRevealed"
    assert result.problems and first in result.problems[0]
    assert result.problems[0].startswith(f"receipt kept:{index // 3 + 1} (request 'sample'")
    # Every later receipted event changed too (its chained hash).
    assert len(result.problems) == len(EVENTS) - index
    assert all(check.status is Status.FAILED for check in result.checks())


def test_a_deleted_tail_is_missing_and_a_deal_export_covers_only_its_deal() -> None:
    last_deal = max(i for i, e in enumerate(EVENTS) if e.type == "DealStarted")
    result = check_receipts(_table_export(EVENTS[:last_deal]), _kept(EVENTS), [SERVER.verifier])
    assert result.problems
    assert all("is missing from the export" in problem for problem in result.problems)
    deal_one = read_export(list(write_lines(select_deal(EVENTS, 1, Requester.operator()))))
    covered = check_receipts(deal_one, _kept(EVENTS, size=1), [SERVER.verifier])
    assert covered.problems == ()
    assert covered.checked == len(deal_one.events)
    assert covered.not_covered == len(EVENTS) - len(deal_one.events)


def test_bad_signatures_unknown_keys_and_other_streams() -> None:
    kept = _kept(EVENTS)
    other = NoteSigner.from_seed(SERVER.name, bytes(32))
    assert check_receipts(_table_export(EVENTS), kept, [other.verifier]).problems  # unknown key
    forged = [KeptReceipt("bad:1", kept[0].note.replace("versions 1 3", "versions 1 3 "))]
    digest = EVENTS[3].hash.hex()
    changed = digest[:-1] + ("0" if digest[-1] != "0" else "1")
    forged.append(KeptReceipt("bad:2", kept[1].note.replace(digest, changed)))
    problems = check_receipts(_table_export(EVENTS), forged, [SERVER.verifier]).problems
    assert [problem.split(" ")[1].rstrip(":") for problem in problems] == ["bad:1", "bad:2"]
    assert "not a signed receipt" in problems[0]
    assert "the signature does not verify" in problems[1]
    elsewhere = _kept(recorded_stream(2, deals=1))
    result = check_receipts(_table_export(EVENTS), elsewhere, [SERVER.verifier])
    assert (result.other_streams, result.checked, result.problems) == (len(elsewhere), 0, ())
    assert result.checks()[0].status is Status.NOT_COVERED


def test_kept_files_are_read_as_the_sdk_writes_them() -> None:
    note = _kept(EVENTS)[0].note
    lines = json.dumps({"stream": "x", "signed_note": note}) + "\n\nnot json\n{}\n"
    kept, problems = parse_kept_receipts(lines, "seat.jsonl")
    assert [item.source for item in kept] == ["seat.jsonl:1"]
    assert problems == ["seat.jsonl:3: not a JSON line", "seat.jsonl:4: no signed_note"]
    assert parse_kept_receipts(note, "one.note") == ([KeptReceipt("one.note", note)], [])


PROBE = """
import json, sys
from sapsam.cli import main
code = main(sys.argv[1:])
heavy = sorted({n.split(".")[0] for n in sys.modules} & {"grpc", "psycopg", "sapsam_proto",
    "alembic", "sqlalchemy", "google"})
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def test_audit_verify_with_receipts_loads_no_network_or_database_code(tmp_path: Path) -> None:
    export = tmp_path / "table.jsonl"
    table_id = EVENTS[0].stream_id.removeprefix("table-")
    text = "".join(
        line + "\n" for line in write_lines(select_table(EVENTS, Requester.operator(), table_id))
    )
    export.write_text(text, encoding="utf-8")
    folder = tmp_path / "receipts"
    folder.mkdir()
    (folder / "table.jsonl").write_text(
        "".join(json.dumps({"signed_note": item.note}) + "\n" for item in _kept(EVENTS)),
        encoding="utf-8",
    )
    argv = ["audit", "verify", str(export), "--receipts", str(folder)]
    argv += ["--server-key", SERVER.verifier.vkey()]
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report = json.loads(completed.stderr.strip().splitlines()[-1])
    # Every receipt holds; the export carries no checkpoint, so the verdict is INTERNALLY
    # CONSISTENT ONLY (exit 4; docs/audit.md §4.5).
    assert report == {"code": 4, "heavy": []}, completed.stdout
    assert "receipts" in completed.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "sapsam.cli", *argv[:-2]],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert missing.returncode == 2 and "--server-key" in missing.stderr
