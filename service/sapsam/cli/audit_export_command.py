"""``sapsam audit export --table T [--deal N] [-o FILE] [--player ID]``: write the export (JSON
lines, docs/audit.md) of one deal or, without ``--deal``, of the whole table, with its proof when
the server has signed a checkpoint covering it. The command runs with the operator's rights
unless ``--player`` (an id or ``players/ID``) names whose rights to apply. Imported only when the
command runs (``sapsam.cli.audit_commands`` registers it)."""

from __future__ import annotations

import argparse
import sys
from typing import Final

from sapsam.audit.export_format import AuditExport, ExportAccessError, Requester, write_lines
from sapsam.cli.audit_input import CommandError, connection, table_id

PLAYER_PREFIX: Final = "players/"


def player_id(text: str) -> str:
    """A player's id from ``--player``: the id or its resource name ``players/{id}``."""
    found = text.strip().removeprefix(PLAYER_PREFIX)
    if not found or "/" in found:
        raise CommandError(f"--player {text!r} is not a player id (give ID or players/ID)")
    return found


def export_body(arguments: argparse.Namespace) -> int:
    """Write the export of one deal (``--deal``) or of the whole table."""
    from sapsam.audit import database
    from sapsam.audit.export_proofs import anchor_export

    table = table_id(arguments.table)
    requester = (
        Requester.operator()
        if arguments.player is None
        else Requester.player(player_id(arguments.player))
    )
    with connection(arguments) as opened:
        try:
            if arguments.deal is None:
                export = database.export_table(opened, table, requester)
            else:
                export = database.export_deal(opened, table, arguments.deal, requester)
        except ExportAccessError as error:
            if error.reason != "NOT_SEATED":
                raise
            # The export's own words are the player's ("you do not hold a seat"); the command's
            # reader is the operator acting with a player's rights.
            raise CommandError(
                f"player {requester.player_id} holds no seat at table {table}: only its"
                " players may export its deals"
            ) from None
        proven = anchor_export(
            opened, export, max(0.0, arguments.anchor_wait), arguments.known_tree_size
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
