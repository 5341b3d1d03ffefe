"""The ``sapsam`` command: one entry point, one subcommand per tool.

Each subcommand lives in a module of ``sapsam.cli`` that exposes
``register(subparsers) -> None``; registering sets ``handler`` on its parser, a function taking the
parsed arguments and returning the process exit code. Add a module to ``COMMAND_MODULES`` to add a
subcommand.

A reader that goes away before the output ends (``sapsam audit verify --json FILE | head -1``)
ends the command quietly with exit status 141 (128 + SIGPIPE, what a shell reports for a command
that signal ends), never with a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from typing import Final, cast

BROKEN_PIPE: Final = 141
"""The exit status when the output's reader went away: 128 + SIGPIPE, as a shell reports it."""

COMMAND_MODULES: tuple[str, ...] = (
    "sapsam.cli.rules_commands",
    "sapsam.cli.store_commands",
    "sapsam.cli.serve_command",
    "sapsam.cli.audit_commands",
    "sapsam.cli.demo_command",
    "sapsam.cli.tournament_commands",
    "sapsam.cli.tables_commands",
    "sapsam.cli.player_commands",
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="sapsam", description="Chinese poker game service and tools."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand and return its exit code."""
    parser = build_parser()
    arguments = parser.parse_args(argv)
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
