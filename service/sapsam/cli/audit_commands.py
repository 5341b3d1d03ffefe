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

The commands live beside this module, which registers them: ``audit_export_command``,
``audit_verify_command`` and ``verify_file`` (a file), ``monitor_command``; the replay is here.
The database is ``--database-url``, else ``DATABASE_URL``, else the embedded one in ``--data-dir``.
Exit status: 0 when everything holds (for a file: ANCHORED), 1 when a check fails, 2 when the
command cannot run (bad arguments, unreadable file, no such table or deal, not allowed; one line on
stderr), 3 when nothing failed but a deal is still being played, so its cards could not be checked
yet, 4 for a file whose checks all hold but which nothing anchors (INTERNALLY CONSISTENT ONLY).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from sapsam.audit.export_format import ExportAccessError, ExportFormatError, NothingToExportError
from sapsam.audit.export_limits import ExportLimitError, bounded_lines
from sapsam.audit.export_reading import read_export
from sapsam.cli.audit_input import CANNOT_RUN, CommandError, card_writing, read_input


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
    from sapsam.cli.audit_export_command import export_body

    return _run(export_body, arguments)


def _verify(arguments: argparse.Namespace) -> int:
    """Verify an export offline, one table or deal in the database, or the whole database."""
    from sapsam.cli.audit_verify_command import verify_body

    return _run(verify_body, arguments)


def _replay(arguments: argparse.Namespace) -> int:
    """Print the table as it stood after each event (or at ``--at VERSION``)."""
    return _run(_replay_body, arguments)


def _replay_body(arguments: argparse.Namespace) -> int:
    # Imported here: the replay runs the table's own logic, which a verification never needs.
    from sapsam.audit.replay import PLAIN, frame_at, replay
    from sapsam.audit.replay_rendering import render_replay

    with read_input(arguments.file) as handle:
        export = read_export(bounded_lines(handle))
    # The sentences write cards as the seat lines do; JSON, read by programs, as recorded.
    writing = PLAIN if arguments.json else card_writing(arguments.plain)
    try:
        frames = replay(export, writing=writing)
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
    for text in render_replay(export, frames, writing):
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
