"""The ``sapsam`` command: one entry point, one subcommand per tool.

Each subcommand lives in a module of ``sapsam.commands`` that exposes
``register(subparsers) -> None``; registering sets ``handler`` on its parser, a function taking the
parsed arguments and returning the process exit code. Add a module to ``COMMAND_MODULES`` to add a
subcommand.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import cast

COMMAND_MODULES: tuple[str, ...] = (
    "sapsam.commands.rules_commands",
    "sapsam.commands.store_commands",
    "sapsam.commands.serve_command",
    "sapsam.commands.audit_commands",
    "sapsam.commands.demo_command",
    "sapsam.commands.tournament_commands",
    "sapsam.commands.tables_commands",
    "sapsam.commands.player_commands",
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
    return handler(arguments)


if __name__ == "__main__":
    sys.exit(main())
