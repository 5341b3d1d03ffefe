"""What the ``sapsam audit`` commands share: the one-line error of a command that cannot run,
reading an input file (or stdin) as UTF-8 text, and how cards are written for the terminal. Kept
apart so ``sapsam.cli.verify_file`` and ``sapsam.cli.audit_commands`` both use it without
importing each other."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from sapsam.audit.deal_account import CardWriting


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
