"""``sapsam audit verify``: an export file offline (``sapsam.cli.verify_file``), or the database:
one table or deal (``--table``, ``--deal``), a tournament (``--tournament``), everything
(``--all``). Imported when the command runs (``sapsam.cli.audit_commands`` registers it); a file's
verification loads no database code (tests/packaging/test_cli_imports.py)."""

from __future__ import annotations

import argparse
import json
import os
import uuid
from collections.abc import Sequence
from typing import Final

from sapsam.audit.report import AuditReport, render_text
from sapsam.cli.audit_input import (
    FAILED,
    INCOMPLETE,
    NOT_ANCHORED,
    CommandError,
    card_writing,
    connection,
    table_id,
)

Told = tuple[Sequence[str], Sequence[str]]
"""Lines a human report shows before its checks and after them."""
NOTHING_TOLD: Final[Told] = ((), ())


def verify_body(arguments: argparse.Namespace) -> int:
    """Verify an export offline, one table or deal in the database, or the whole database."""
    chosen = [arguments.file is not None, arguments.table is not None, arguments.all]
    chosen.append(arguments.tournament is not None)  # tournaments (sapsam.audit.tournament_audit)
    if sum(chosen) != 1:
        raise CommandError("give exactly one of FILE, --table T, --tournament T or --all")
    if arguments.deal is not None and arguments.table is None:
        raise CommandError("--deal needs --table")
    if arguments.receipts is not None and arguments.file is None:
        raise CommandError("--receipts needs an export FILE")
    pinning = [arguments.server_key, arguments.witness_key, arguments.checkpoint is not None]
    if any([*pinning, arguments.player_key]) and arguments.file is None:
        raise CommandError("--server-key, --witness-key, --checkpoint, --player-key go with FILE")
    if arguments.checkpoint is not None and not arguments.server_key:
        raise CommandError("--checkpoint needs --server-key: the key that signed it")
    if arguments.file is not None:
        from sapsam.audit.deal_account import told_report
        from sapsam.cli.verify_file import read_lines, verify_file

        # The file is read and parsed once: the checks, the receipts, the pinned keys and the
        # account of its deals all use the one export read.
        export, report = verify_file(arguments, read_lines(arguments.file))
        if arguments.json:
            _print_report(report, True)
        else:  # the players and each deal's account around the checks
            print(told_report(report, export, card_writing(arguments.plain)))
        return exit_status(report)
    report, told_lines = _verify_online(arguments)
    _print_report(report, arguments.json, told_lines)
    return exit_status(report)


def exit_status(report: AuditReport) -> int:
    """1 FAILED; 3 a deal still being played; else 0 (ANCHORED, or a database audit that
    holds) or 4 (INTERNALLY CONSISTENT ONLY)."""
    if not report.ok:
        return FAILED
    if not report.complete:
        return INCOMPLETE
    if report.verdicts and report.anchor is None:
        return NOT_ANCHORED
    return 0


def _verify_online(arguments: argparse.Namespace) -> tuple[AuditReport, Told]:
    """The report on the database (a table, a deal, a tournament, everything), and for a table or
    a deal the lines told around its checks: the players and each deal's account."""
    from sapsam.audit import database
    from sapsam.audit.export_format import Requester
    from sapsam.store.projections import all_projectors

    with connection(arguments) as opened:
        if arguments.tournament is not None:  # tournaments: seating draw, deals, standings
            from sapsam.audit.tournament_audit import verify_tournament

            try:
                tournament_id = uuid.UUID(arguments.tournament.removeprefix("tournaments/"))
            except ValueError:
                raise CommandError(f"--tournament {arguments.tournament!r} is not an id") from None
            return verify_tournament(opened, tournament_id), NOTHING_TOLD
        if arguments.all:
            from sapsam.cli.progress import Progress

            projectors = all_projectors(tuple(arguments.module))
            shown: list[Progress] = []  # made at the first report, which says the total

            def progress(done: int, total: int) -> None:
                if not shown:
                    shown.append(Progress("verifying deals", total, "deal"))
                shown[0].update(done)

            try:
                workers = arguments.workers or min(os.cpu_count() or 1, 4)
                return database.audit_database(
                    opened, progress, projectors, workers=workers
                ), NOTHING_TOLD
            finally:
                for bar in shown:
                    bar.finish()
        table = table_id(arguments.table)
        if arguments.deal is None:
            report = database.verify_table_online(opened, table)
        else:
            report = database.verify_deal_online(opened, table, arguments.deal)
        if arguments.json:
            return report, NOTHING_TOLD
        # For a person, the players and each deal's account, as for a file: from the export the
        # checks ran on, read again with the players' display names.
        from sapsam.audit.deal_account import export_account

        if arguments.deal is None:
            export = database.export_table(opened, table, Requester.operator())
        else:
            export = database.export_deal(opened, table, arguments.deal, Requester.operator())
        return report, export_account(export, report.ok, card_writing(arguments.plain))


def _print_report(report: AuditReport, as_json: bool, told: Told = NOTHING_TOLD) -> None:
    """The report as JSON, or for a person with ``told``'s lines before and after the checks."""
    if as_json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
    else:
        print(render_text(report, *told))
