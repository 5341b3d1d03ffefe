"""The ``sapsam`` command: one entry point, one subcommand per tool.

Each subcommand lives in a module of ``sapsam.cli`` that exposes
``register(subparsers) -> None``; registering sets ``handler`` on its parser, a function taking the
parsed arguments and returning the process exit code. Add the module's subcommands to
``SUBCOMMANDS`` to add them.

Only the module of the subcommand being run is imported: ``sapsam hand`` needs the rules, not
gRPC, alembic or the database driver, and importing every module would cost every command their
start-up time. The other subcommands appear as placeholders that carry their one-line summary,
so ``sapsam --help`` still lists them all (tests/packaging/test_cli_imports.py checks that the
summaries here match the modules' own).

A reader that goes away before the output ends (``sapsam audit verify --json FILE | head -1``)
ends the command quietly with exit status 141 (128 + SIGPIPE, what a shell reports for a command
that signal ends), never with a traceback.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from sapsam import __version__
from sapsam.cli.wording import HelpFormatter

BROKEN_PIPE: Final = 141
"""The exit status when the output's reader went away: 128 + SIGPIPE, as a shell reports it."""


@dataclass(frozen=True)
class Subcommand:
    """A top-level subcommand: its name, the module that registers it, and its summary."""

    name: str
    module: str
    summary: str


_RULES: Final = "sapsam.cli.rules_commands"
_STORE: Final = "sapsam.cli.store_commands"

# In the order ``sapsam --help`` lists them; a module's subcommands stay together.
SUBCOMMANDS: Final = (
    Subcommand("hand", _RULES, "print the value of a 3- or 5-card row in words"),
    Subcommand("arrange", _RULES, "the solver's best arrangement of 13 cards"),
    Subcommand("score", _RULES, "score a deal given as JSON"),
    Subcommand("rules", _RULES, "list the preset rule sets"),
    Subcommand("migrate", _STORE, "apply the database migrations"),
    Subcommand("projections", _STORE, "maintain the read models"),
    Subcommand("requests", _STORE, "maintain the processed request ids"),
    Subcommand("serve", "sapsam.cli.serve_command", "run the game service"),
    Subcommand("audit", "sapsam.cli.audit_commands", "export, verify and replay deals"),
    Subcommand(
        "keys", "sapsam.cli.keys_command", "show, create and rotate the server's signing key"
    ),
    Subcommand(
        "demo",
        "sapsam.cli.demo_command",
        "bots play a series over gRPC; then every deal is verified",
    ),
    Subcommand("tournament", "sapsam.cli.tournament_commands", "run tournaments (operator)"),
    Subcommand("tables", "sapsam.cli.tables_commands", "inspect the tables in play"),
    Subcommand("players", "sapsam.cli.player_commands", "manage players"),
)

COMMAND_MODULES: Final = tuple(dict.fromkeys(command.module for command in SUBCOMMANDS))
"""Every module that registers subcommands, each once, in ``SUBCOMMANDS`` order."""


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing shutil (and the compression
    modules it imports: a start-up cost of every command, ``audit verify`` included)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr,unused-ignore]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Parser(argparse.ArgumentParser):
    """An argument parser whose help formatter is told the terminal's width (argparse's own asks
    ``shutil``, imported for that alone, each time an argument is added), and shows descriptions
    in plain words, paragraphs and examples kept (``sapsam.cli.wording.HelpFormatter``; it also
    stands in for ``RawDescriptionHelpFormatter``, whose layout it keeps)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("formatter_class") in (None, argparse.RawDescriptionHelpFormatter):
            kwargs["formatter_class"] = HelpFormatter
        super().__init__(*args, **kwargs)

    def _get_formatter(self) -> argparse.HelpFormatter:
        formatter = cast(Callable[..., argparse.HelpFormatter], self.formatter_class)
        return formatter(prog=self.prog, width=_terminal_columns() - 2)


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    """The argument parser, with the subcommands of ``modules`` registered in full and the
    others as placeholders (summary only). By default every module is imported."""
    parser = _Parser(prog="sapsam", description="Chinese poker game service and tools.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    registered: set[str] = set()
    for command in SUBCOMMANDS:
        if command.module in modules:
            if command.module not in registered:
                importlib.import_module(command.module).register(subparsers)
                registered.add(command.module)
        else:
            subparsers.add_parser(command.name, help=command.summary)
    return parser


def command_module(argv: Sequence[str]) -> str | None:
    """The module of the subcommand ``argv`` names, or None when it names none (``--help``).

    The top-level options take no value, so the subcommand is the first word that is not one.
    """
    word = next((argument for argument in argv if not argument.startswith("-")), None)
    return next((command.module for command in SUBCOMMANDS if command.name == word), None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand and return its exit code."""
    arguments_given = sys.argv[1:] if argv is None else list(argv)
    # Our processes fork only to exec (pg_ctl, bots, spawned workers), so gRPC's fork handlers
    # have nothing to protect; left on, they print "skipping fork() handlers" to the terminal
    # when a child starts while a call is in flight. Read when gRPC loads, so set before.
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
    module = command_module(arguments_given)
    as_program = argv is None
    if as_program:
        # Imports make many long-lived objects and no garbage: the cyclic collector would walk
        # them over and over while they load and at each collection after. So, as a program (not
        # called with arguments, as tests do), collect nothing while the subcommand's modules
        # load, then set what they made aside for good (gc.freeze): ~7 % of ``audit verify``.
        gc.disable()
    try:
        parser = build_parser(() if module is None else (module,))
    finally:
        if as_program:
            gc.freeze()
            gc.enable()
    arguments = parser.parse_args(arguments_given)
    handler = cast(Callable[[argparse.Namespace], int], arguments.handler)
    try:
        code = handler(arguments)
        sys.stdout.flush()  # here, not at exit, where a closed pipe could no longer be handled
    except BrokenPipeError:
        _discard_stdout()
        return BROKEN_PIPE
    return code


def _discard_stdout() -> None:
    """Point standard output at /dev/null: what is still buffered would fail again (and print
    "Exception ignored ... BrokenPipeError") when Python flushes the stream at exit."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return  # not a real file (captured in tests): nothing flushes it at exit
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, descriptor)
    os.close(null)
