"""``sapsam audit export | verify | replay``: take a deal home, check it, watch it again.

- ``sapsam audit export --table T [--deal N] [-o FILE] [--player ID]`` writes the export (JSON
  lines, docs/audit.md) of one deal or, without ``--deal``, of the whole table. The command runs
  with the operator's rights unless ``--player`` (an id or ``players/ID``) names whose rights to
  apply.
- ``sapsam audit verify FILE [--server-key KEY] [--witness-key KEY] [--checkpoint FILE]
  [--player-key PLAYER=KEY] [--json]`` verifies an export offline (no database, no network)
  and gives one of three verdicts: ANCHORED (exit 0), INTERNALLY CONSISTENT ONLY (exit 4),
  FAILED (exit 1). With ``--receipts DIR`` it also checks the export against the signed
  receipts kept in DIR (``sapsam.audit.receipts``; docs/transparency.md §9): a receipt it
  contradicts fails it; with ``--player-key``, a signed move by a key not pinned for its player
  (``sapsam.audit.pinned_player_keys``).
- ``sapsam audit verify --table T [--deal N] [--json]`` verifies against the database.
- ``sapsam audit verify --all [--json]`` audits the whole database: every stream's chain, every
  finished deal, every acknowledged request against the log, the deals still in play (pending or
  stuck), every read model rebuilt from the log and compared row by row.
- ``sapsam audit replay FILE [--at VERSION] [--json] [--plain]`` prints the table after each
  event, and each deal's account at its score.

A file's human report (verify and replay, not ``--json``) names the players by the display names
the export carries, beside their ids (labels, never identity), and writes cards as ``sapsam-play``
does (``sapsam.audit.deal_account``; ``--plain``: letters without suit symbols or colour).
- ``sapsam audit monitor --server ADDR --state DIR`` watches a server's transparency log and
  cosigns it as a witness (``sapsam.cli.monitor_command``, imported only when it runs; its exit
  statuses are its own: docs/transparency.md §10).

The database is ``--database-url``, else ``DATABASE_URL``, else the embedded one in ``--data-dir``.
Exit status: 0 when everything holds (for a file: ANCHORED), 1 when a check fails, 2 when the
command cannot run (bad arguments, unreadable file, no such table or deal, not allowed; one line on
stderr), 3 when nothing failed but a deal is still being played, so its cards could not be checked
yet, 4 for a file whose checks all hold but which nothing anchors (INTERNALLY CONSISTENT ONLY).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from sapsam.audit.export_format import (
    AuditExport,
    ExportAccessError,
    ExportFormatError,
    NothingToExportError,
    Requester,
    write_lines,
)
from sapsam.audit.export_limits import ExportLimitError, bounded_lines
from sapsam.audit.export_reading import read_export
from sapsam.audit.report import AuditReport, render_text
from sapsam.cli.audit_input import CommandError, card_writing, read_input

if TYPE_CHECKING:  # offline verification and replay never load the database driver
    import psycopg


FAILED: Final = 1
CANNOT_RUN: Final = 2
INCOMPLETE: Final = 3
NOT_ANCHORED: Final = 4
TABLE_PREFIX: Final = "tables/"
PLAYER_PREFIX: Final = "players/"
Told = tuple[Sequence[str], Sequence[str]]
"""Lines a human report shows before its checks and after them."""
NOTHING_TOLD: Final[Told] = ((), ())


def register(subparsers: Any) -> None:
    """Add the ``audit`` subcommand and its actions."""
    audit = subparsers.add_parser(
        "audit",
        help="export, verify and replay deals",
        description="Export, verify and replay deals (docs/audit.md). Exit status: 0 when "
        "everything holds (a file: ANCHORED), 1 when a check fails (FAILED), 2 when the command "
        "cannot run, 3 when nothing failed but a deal is still being played, 4 for a file that is "
        "INTERNALLY CONSISTENT ONLY (nothing anchors it outside the file).",
    )
    actions = audit.add_subparsers(dest="audit_action", metavar="ACTION", required=True)

    export = actions.add_parser(
        "export",
        help="write a deal's or table's export (JSON lines)",
        description="Write the export of one deal (--deal) or of the whole table: one file that "
        "anyone can verify offline (sapsam audit verify FILE), with the players' display names as "
        "labels and, when the server has signed a checkpoint covering it, its proof. The command "
        "runs with the operator's rights unless --player names whose rights to apply.\n\n"
        "examples:\n\n"
        "    sapsam audit export --table tables/<uuid> --deal 2 -o deal2.jsonl\n"
        "    sapsam audit export --table tables/<uuid> --player players/<id> -o table.jsonl",
    )
    export.add_argument("--table", required=True, help="the table: tables/<uuid> or the uuid")
    export.add_argument("--deal", type=int, help="deal number (default: the whole table)")
    export.add_argument("-o", "--output", help="file to write (default: stdout)")
    export.add_argument(
        "--player",
        help="apply this player's export rights (players/<id> or the id): finished deals of"
        " a table where they hold a seat (default: the operator's rights, everything)",
    )
    export.add_argument(
        "--anchor-wait",
        type=float,
        default=3.0,
        metavar="SECONDS",
        help="wait up to this long for a checkpoint covering every exported event (default 3)",
    )
    export.add_argument(
        "--known-tree-size",
        type=int,
        metavar="SIZE",
        help="add the consistency proof from this tree size (a checkpoint you hold)",
    )
    _database_options(export)
    export.set_defaults(handler=_export)

    verify = actions.add_parser(
        "verify",
        help="verify an export offline, or the database",
        description="Verify an export file offline (no database, no network), one table or deal "
        "in the database (--table, --deal), a tournament, or the whole database (--all).\n\n"
        "For a file it prints the players (ids, and display names as labels), one line per check "
        "with what it confirms in a phrase, an account of each deal (the hands as sapsam-play "
        "shows them, every pair row by row with the points and bonuses, the running totals) and "
        "the verdict, last: ANCHORED (exit 0), INTERNALLY CONSISTENT ONLY (exit 4: nothing "
        "anchors the file; pin --server-key) or FAILED (exit 1). Exit 2: the command cannot run; "
        "3: a deal is still being played.\n\n"
        "examples:\n\n"
        "    sapsam audit verify deal2.jsonl --server-key server.keys\n"
        "    sapsam audit verify --table tables/<uuid> --deal 2\n"
        "    sapsam audit verify --all --json",
    )
    verify.add_argument("file", nargs="?", help="export to verify offline ('-' for stdin)")
    verify.add_argument("--table", help="verify this table in the database (tables/<uuid>)")
    verify.add_argument("--deal", type=int, help="with --table: only this deal (default: all)")
    verify.add_argument("--all", action="store_true", help="audit the whole database")
    verify.add_argument(
        "--tournament", help="verify this tournament: seating, deals, standings (tournaments/<id>)"
    )
    verify.add_argument(
        "--json",
        action="store_true",
        help="print the report as one JSON object (default: text for a person)",
    )
    verify.add_argument(
        "--plain",
        action="store_true",
        help="with FILE or --table: write cards as letters (As Td), without suit symbols or"
        " colour (default: as the terminal shows them)",
    )
    verify.add_argument(
        "--receipts",
        metavar="DIR",
        help="with FILE: check the export against the signed receipts kept in DIR (a file or a"
        " folder of them, as the SDK keeps them)",
    )
    verify.add_argument(
        "--server-key",
        action="append",
        default=[],
        metavar="KEY",
        help="with FILE: the server's public key you pin (a vkey, or a file of vkeys one a line,"
        " as `sapsam keys show` prints them); repeatable (retired keys)",
    )
    verify.add_argument(
        "--witness-key",
        action="append",
        default=[],
        metavar="KEY",
        help="with FILE: a witness's public key whose cosignature you accept; repeatable",
    )
    verify.add_argument(
        "--player-key",
        action="append",
        default=[],
        metavar="PLAYER=KEY",
        help="with FILE: pin a player's public key (64 hex digits, or a file of them one a line,"
        " as GetPlayer lists them); a signed move of that player by another key fails; repeatable",
    )
    verify.add_argument(
        "--checkpoint",
        metavar="CHECKPOINT",
        help="with FILE and --server-key: your own signed checkpoint of the log (a file)",
    )
    verify.add_argument(
        "--workers",
        type=int,
        default=0,
        metavar="N",
        help="with --all: processes verifying streams at once (default: one per CPU, at most 4;"
        " a log under 50,000 events is audited in one)",
    )
    verify.add_argument(
        "--module",
        action="append",
        default=[],
        help="with --all: also compare the projectors of this module; repeatable",
    )
    _database_options(verify)
    verify.set_defaults(handler=_verify)

    replay_parser = actions.add_parser(
        "replay",
        help="print the table after each event",
        description="Print the players (ids, and display names as labels), then the table as it "
        "stood after each event of an export: what happened, each seat's progress, running "
        "total, rows and cards with who could see them, and at each deal's score its account row "
        "by row. --at VERSION prints one moment. Offline: no database, no network.\n\n"
        "examples:\n\n"
        "    sapsam audit replay deal2.jsonl\n"
        "    sapsam audit replay deal2.jsonl --at 24",
    )
    replay_parser.add_argument("file", help="export to replay ('-' for stdin)")
    replay_parser.add_argument(
        "--at",
        type=int,
        metavar="VERSION",
        help="show only the table after this version (default: after every event)",
    )
    replay_parser.add_argument(
        "--json",
        action="store_true",
        help="print each frame as one JSON line (default: text for a person)",
    )
    replay_parser.add_argument(
        "--plain",
        action="store_true",
        help="write cards as letters (As Td), without suit symbols or colour (default: as the"
        " terminal shows them)",
    )
    replay_parser.set_defaults(handler=_replay)
    _add_monitor(actions)


def _database_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database-url", help="PostgreSQL to use (default: DATABASE_URL, else embedded)"
    )
    parser.add_argument(
        "--data-dir", help="embedded server's data folder (default: SAPSAM_DATA_DIR or user data)"
    )


def _table_id(text: str) -> uuid.UUID:
    try:
        return uuid.UUID(text.removeprefix(TABLE_PREFIX))
    except ValueError:
        raise CommandError(f"--table {text!r} is not a table id") from None


def _player_id(text: str) -> str:
    """A player's id from ``--player``: the id or its resource name ``players/{id}``."""
    player_id = text.strip().removeprefix(PLAYER_PREFIX)
    if not player_id or "/" in player_id:
        raise CommandError(f"--player {text!r} is not a player id (give ID or players/ID)")
    return player_id


@contextmanager
def _connection(arguments: argparse.Namespace) -> Iterator[psycopg.Connection[Any]]:
    # Imported here so offline verification and replay never load the database code.
    from sapsam.log.records import DatabaseOpenError
    from sapsam.store.embedded import database_connection, database_url

    # An audit reads: it never migrates a database it is pointed at (one behind would be a finding,
    # not something to change); only the embedded default is prepared as usual.
    external = database_url(arguments.database_url) is not None
    try:
        with database_connection(
            arguments.database_url, arguments.data_dir, migrate=not external
        ) as connection:
            yield connection
    except DatabaseOpenError as error:  # docs/audit.md, "Who may audit", for a missing privilege
        raise CommandError(str(error)) from None


def _run(body: Any, arguments: argparse.Namespace) -> int:
    try:
        result = body(arguments)
        assert isinstance(result, int)
        return result
    except (
        CommandError,
        ExportAccessError,
        NothingToExportError,
        ExportFormatError,
        ExportLimitError,  # an input beyond docs/audit.md's limits: refused unread
        UnicodeDecodeError,  # a file that is not UTF-8 text
    ) as error:
        print(f"sapsam audit: {error}", file=sys.stderr)
        return CANNOT_RUN


def _export(arguments: argparse.Namespace) -> int:
    """Write the export of one deal (``--deal``) or of the whole table."""
    return _run(_export_body, arguments)


def _export_body(arguments: argparse.Namespace) -> int:
    from sapsam.audit import database

    table_id = _table_id(arguments.table)
    requester = (
        Requester.operator()
        if arguments.player is None
        else Requester.player(_player_id(arguments.player))
    )
    from sapsam.audit.export_proofs import anchor_export

    with _connection(arguments) as connection:
        try:
            if arguments.deal is None:
                export = database.export_table(connection, table_id, requester)
            else:
                export = database.export_deal(connection, table_id, arguments.deal, requester)
        except ExportAccessError as error:
            if error.reason != "NOT_SEATED":
                raise
            # The export's own words are the player's ("you do not hold a seat"); the command's
            # reader is the operator acting with a player's rights.
            raise CommandError(
                f"player {requester.player_id} holds no seat at table {table_id}: only its"
                " players may export its deals"
            ) from None
        proven = anchor_export(
            connection, export, max(0.0, arguments.anchor_wait), arguments.known_tree_size
        )
    notice = proven.notice()
    if notice is not None:
        print(f"sapsam audit: {notice}", file=sys.stderr)
    _write_export(proven.export, arguments.output)
    return 0


def _write_export(export: AuditExport, output: str | None) -> None:
    text = "".join(line + "\n" for line in write_lines(export))
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    try:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise CommandError(f"cannot write {output}: {error.strerror}") from None


def _verify(arguments: argparse.Namespace) -> int:
    """Verify an export offline, one table or deal in the database, or the whole database."""
    return _run(_verify_body, arguments)


def _verify_body(arguments: argparse.Namespace) -> int:
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
        from sapsam.cli.verify_file import read_lines, told, verify_file

        lines = read_lines(arguments.file)
        report = verify_file(arguments, lines)
        if not arguments.json:  # the players and each deal's account around the checks
            print(told(report, lines, card_writing(arguments.plain)))
            return exit_status(report)
    else:
        report, told_lines = _verify_online(arguments)
        _print_report(report, arguments.json, told_lines)
        return exit_status(report)
    _print_report(report, arguments.json)
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
    from sapsam.store.projections import all_projectors

    with _connection(arguments) as connection:
        if arguments.tournament is not None:  # tournaments: seating draw, deals, standings
            from sapsam.audit.tournament_audit import verify_tournament

            try:
                tournament_id = uuid.UUID(arguments.tournament.removeprefix("tournaments/"))
            except ValueError:
                raise CommandError(f"--tournament {arguments.tournament!r} is not an id") from None
            return verify_tournament(connection, tournament_id), NOTHING_TOLD
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
                    connection, progress, projectors, workers=workers
                ), NOTHING_TOLD
            finally:
                for bar in shown:
                    bar.finish()
        table_id = _table_id(arguments.table)
        if arguments.deal is None:
            report = database.verify_table_online(connection, table_id)
        else:
            report = database.verify_deal_online(connection, table_id, arguments.deal)
        if arguments.json:
            return report, NOTHING_TOLD
        # For a person, the players and each deal's account, as for a file: from the export the
        # checks ran on, read again with the players' display names.
        from sapsam.audit.deal_account import export_account

        if arguments.deal is None:
            export = database.export_table(connection, table_id, Requester.operator())
        else:
            export = database.export_deal(
                connection, table_id, arguments.deal, Requester.operator()
            )
        return report, export_account(export, report.ok, card_writing(arguments.plain))


def _print_report(report: AuditReport, as_json: bool, told: Told = ((), ())) -> None:
    """The report as JSON, or for a person with ``told``'s lines before and after the checks."""
    if as_json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
    else:
        print(render_text(report, *told))


def _replay(arguments: argparse.Namespace) -> int:
    """Print the table as it stood after each event (or at ``--at VERSION``)."""
    return _run(_replay_body, arguments)


def _replay_body(arguments: argparse.Namespace) -> int:
    # Imported here: the replay runs the table's own logic, which a verification never needs.
    from sapsam.audit.replay import frame_at, render_replay, replay

    with read_input(arguments.file) as handle:
        export = read_export(bounded_lines(handle))
    try:
        frames = replay(export)
    except ValueError as error:
        raise CommandError(f"cannot replay: {error} (run sapsam audit verify on it)") from None
    if arguments.at is not None:
        frame = frame_at(frames, arguments.at)
        if frame is None:
            raise CommandError(f"the export has no event at or before version {arguments.at}")
        frames = [frame]
    if arguments.json:
        for frame in frames:
            print(json.dumps(frame.to_dict(), ensure_ascii=False))
        return 0
    for text in render_replay(export, frames, card_writing(arguments.plain)):
        print(text)
    return 0


def _add_monitor(actions: Any) -> None:
    """``sapsam audit monitor`` (its code: sapsam.cli.monitor_command, imported when it runs)."""
    monitor = actions.add_parser(
        "monitor",
        help="watch a server's transparency log; cosign it as a witness",
        description="Poll the server's signed checkpoints and check each against the pinned key,"
        " every checkpoint seen before and the new leaves (docs/transparency.md §10). Exit status:"
        " 0 all held, 1 a malformed answer, 2 cannot run, 3 a missing or bad signature,"
        " 4 a truncated log, 5 a rewritten log, 6 a fork.",
    )
    monitor.add_argument("--server", required=True, help="the server's address, HOST:PORT")
    monitor.add_argument("--state", required=True, help="folder the monitor keeps what it saw in")
    monitor.add_argument("--once", action="store_true", help="poll once and exit")
    monitor.add_argument(
        "--interval", type=float, default=10.0, help="seconds between polls (default 10)"
    )
    monitor.add_argument(
        "--server-key",
        action="append",
        default=[],
        metavar="VKEY",
        help="pin the log's key (a vkey, or a file of vkeys as `sapsam keys show` prints them);"
        " repeatable; without one the first run trusts the server's key (with a warning)",
    )
    monitor.add_argument(
        "--witness-key", metavar="FILE", help="cosign as a witness with this key (made if missing)"
    )
    monitor.add_argument("--witness-name", help="the witness key's name when it is made")
    monitor.add_argument("--tls-ca", metavar="FILE", help="connect with TLS, trusting these CAs")
    monitor.set_defaults(handler=_monitor)


def _monitor(arguments: argparse.Namespace) -> int:
    from sapsam.cli import monitor_command

    return monitor_command.main(arguments)
