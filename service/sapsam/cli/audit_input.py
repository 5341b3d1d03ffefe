"""What the ``sapsam audit`` commands share: their exit statuses, the one-line error of a command
that cannot run, reading an input file (or stdin) as UTF-8 text, how cards are written for the
terminal, and the table and database options of the commands that read the database. Kept apart
so the command modules (``audit_commands``, ``audit_export_command``, ``audit_verify_command``,
``verify_file``) use it without importing each other."""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, TextIO

if TYPE_CHECKING:  # offline verification and replay never load the database driver
    import psycopg

    from sapsam.audit.deal_account import CardWriting

FAILED: Final = 1
CANNOT_RUN: Final = 2
INCOMPLETE: Final = 3
NOT_ANCHORED: Final = 4
TABLE_PREFIX: Final = "tables/"


class CommandError(Exception):
    """The command cannot run; the message is shown as one line."""


@contextmanager
def read_input(name: str) -> Iterator[TextIO]:
    """``name`` opened as UTF-8 text (``-``: stdin); ``CommandError`` when it cannot be read."""
    if name == "-":
        yield sys.stdin
        return
    try:
        with open(name, encoding="utf-8") as handle:  # not pathlib: a start-up cost for nothing
            yield handle
    except OSError as error:
        raise CommandError(f"cannot read {name}: {error.strerror}") from None


def card_writing(plain: bool) -> CardWriting:
    """Cards as ``sapsam-play`` writes them on this terminal: suit symbols and colour where stdout
    shows them (``sapsam.rules.hand_text.terminal_style``), letters with ``plain`` (``--plain``)."""
    from sapsam.audit.deal_account import CardWriting
    from sapsam.rules.hand_text import terminal_style

    if plain:
        return CardWriting()
    symbols, colour = terminal_style(sys.stdout, os.environ)
    return CardWriting(symbols=symbols, colour=colour)


def table_id(text: str) -> uuid.UUID:
    """The table of ``--table`` (``tables/<uuid>`` or the uuid)."""
    try:
        return uuid.UUID(text.removeprefix(TABLE_PREFIX))
    except ValueError:
        raise CommandError(f"--table {text!r} is not a table id") from None


@contextmanager
def connection(arguments: argparse.Namespace) -> Iterator[psycopg.Connection[Any]]:
    """The database of ``--database-url``, else ``DATABASE_URL``, else the embedded one in
    ``--data-dir``."""
    # Imported here so offline verification and replay never load the database code.
    from sapsam.log.records import DatabaseOpenError
    from sapsam.store.embedded import database_connection, database_url

    # An audit reads: it never migrates a database it is pointed at (one behind would be a finding,
    # not something to change); only the embedded default is prepared as usual.
    external = database_url(arguments.database_url) is not None
    try:
        with database_connection(
            arguments.database_url, arguments.data_dir, migrate=not external
        ) as opened:
            yield opened
    except DatabaseOpenError as error:  # docs/audit.md, "Who may audit", for a missing privilege
        raise CommandError(str(error)) from None
