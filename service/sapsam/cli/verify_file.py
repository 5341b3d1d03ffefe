"""``sapsam audit verify FILE``: an export verified offline against what the reader pins.

The pins (docs/audit.md §4.5, §4.6, §4.2): the server's keys and the witnesses' (``--server-key``,
``--witness-key``: vkeys, or files of them), the reader's own checkpoint (``--checkpoint``), the
receipts it kept (``--receipts``), and players' public keys (``--player-key``). Reads only files:
no database, no network (tests/packaging/test_cli_imports.py holds what it may import).
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from sapsam.audit.export_limits import bounded_lines
from sapsam.audit.report import AuditReport
from sapsam.audit.verifier import read_and_verify
from sapsam.cli.audit_input import CommandError, read_input

if TYPE_CHECKING:
    from sapsam.audit.anchoring import Trust
    from sapsam.audit.export_format import AuditExport
    from sapsam.log.signed_note import VerifierKey


def read_lines(name: str) -> list[str]:
    """The lines of the export ``name`` (``-``: stdin), within docs/audit.md's limits."""
    with read_input(name) as handle:
        return list(bounded_lines(handle))


def verify_file(
    arguments: argparse.Namespace, lines: list[str]
) -> tuple[AuditExport | None, AuditReport]:
    """The export read from ``lines`` (those of ``arguments.file``; None when unreadable) and the
    report on it under the reader's pins. The lines are parsed once: the receipts and the pinned
    player keys are checked against the same export the report is on."""
    trust = _trust(arguments)
    export, report = read_and_verify(lines, trust=trust)
    if arguments.receipts is not None:
        report = _with_receipts(report, export, arguments, trust.server_keys)
    if arguments.player_key:
        report = _with_player_keys(report, export, arguments.player_key)
    return export, report


def _trust(arguments: argparse.Namespace) -> Trust:
    from sapsam.audit.anchoring import Trust

    checkpoint = None
    if arguments.checkpoint is not None:
        with read_input(arguments.checkpoint) as handle:
            checkpoint = handle.read(1 << 17)
    return Trust(
        server_keys=_keys(arguments.server_key, "--server-key"),
        witness_keys=_keys(arguments.witness_key, "--witness-key"),
        checkpoint=checkpoint,
    )


def _keys(values: list[str], option: str) -> tuple[VerifierKey, ...]:
    """Keys given as vkeys or as files of vkeys (one a line, ``#`` comments)."""
    from sapsam.log.signed_note import NoteError, VerifierKey

    keys: list[VerifierKey] = []
    for value in values:
        texts = [value]
        if os.path.isfile(value):
            with read_input(value) as handle:
                texts = [line.strip() for line in handle.read(1 << 20).splitlines()]
            texts = [text for text in texts if text and not text.startswith("#")]
            # `sapsam keys show` prints "current <vkey>" / "retired <vkey>": take the key.
            texts = [text.split()[-1] for text in texts]
        for text in texts:
            try:
                keys.append(VerifierKey.parse(text))
            except NoteError as error:
                raise CommandError(f"{option} {value!r}: {error}") from None
    return tuple(keys)


def _with_receipts(
    report: AuditReport,
    export: AuditExport | None,
    arguments: argparse.Namespace,
    keys: tuple[VerifierKey, ...],
) -> AuditReport:
    """``report`` with the ``receipts`` check(s) of the kept receipts in ``--receipts`` (a failed
    one makes the verdict FAILED: ``AuditReport.with_checks``)."""
    import dataclasses

    from sapsam.audit import receipts

    if export is None:
        return report  # the report says so already
    if not keys:
        raise CommandError("--receipts needs the pinned server key: --server-key KEY")
    kept: list[receipts.KeptReceipt] = []
    problems: list[str] = []
    for path in _receipt_files(arguments.receipts):
        with read_input(path) as handle:
            found, unreadable = receipts.parse_kept_receipts(handle.read(), path)
        kept.extend(found)
        problems.extend(unreadable)
    result = receipts.check_receipts(export, kept, keys)
    result = dataclasses.replace(result, problems=(*problems, *result.problems))
    return report.with_checks(result.checks())


def _with_player_keys(
    report: AuditReport, export: AuditExport | None, values: list[str]
) -> AuditReport:
    from sapsam.audit.pinned_player_keys import PinError, with_pinned_keys

    try:
        return with_pinned_keys(report, export, values)
    except PinError as error:
        raise CommandError(f"--player-key: {error}") from None


def _receipt_files(where: str) -> list[str]:
    """The kept-receipt files: ``where`` itself, or every file under the folder ``where``."""
    if not os.path.isdir(where):
        if not os.path.exists(where):
            raise CommandError(f"--receipts {where}: no such file or folder")
        return [where]
    return sorted(
        os.path.join(folder, name)
        for folder, _, names in os.walk(where)
        for name in names
        if not name.startswith(".")
    )
