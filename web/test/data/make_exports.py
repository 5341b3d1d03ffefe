"""Writes the sample exports the page's verifier is tested on (web/test/export.test.ts), made by
sapsam itself without a database: a 3-seat table of two deals, whole and deal 2 alone, each
anchored by a checkpoint signed with a fixed test key, and the verdict `sapsam audit verify` gives
each with and without the key pinned. Regenerate (seeds are random, so the files change):

    python web/test/data/make_exports.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

from sapsam.audit.export_format import Requester, export_text
from sapsam.audit.export_selection import select_table
from sapsam.audit.sample_anchored import anchored_log
from sapsam.audit.sample_series import recorded_stream
from sapsam.log.signed_note import NoteSigner

HERE = Path(__file__).parent
TABLE_ID = uuid.UUID("3f2a1b4c-5d6e-4f70-8192-a3b4c5d6e7f8")


def main() -> None:
    signer = NoteSigner.from_seed("sapsam/web-tests.example", bytes(range(32)))
    other = recorded_stream(2, deals=1)  # a second table, so the log interleaves two streams
    log = anchored_log([recorded_stream(3, deals=2, table_id=TABLE_ID), other], signer)
    table = log.anchored(select_table(log.streams[0], Requester.operator()))
    files = {"table.jsonl": export_text(table), "deal2.jsonl": export_text(log.deal_export(0, 2))}
    (HERE / "server.vkey").write_text(signer.verifier.vkey() + "\n", encoding="utf-8")
    verdicts: dict[str, dict[str, str]] = {}
    for name, text in files.items():
        (HERE / name).write_text(text, encoding="utf-8")
        verdicts[name] = {
            "with_key": _verdict(HERE / name, "--server-key", str(HERE / "server.vkey")),
            "without_key": _verdict(HERE / name),
        }
    (HERE / "verdicts.json").write_text(json.dumps(verdicts, indent=2) + "\n", encoding="utf-8")


def _verdict(path: Path, *args: str) -> str:
    command = [
        sys.executable,
        "-c",
        "from sapsam.cli import main; main()",
        "audit",
        "verify",
        str(path),
        "--json",
        *args,
    ]
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    return str(json.loads(out.stdout)["verdict"])


if __name__ == "__main__":
    main()
