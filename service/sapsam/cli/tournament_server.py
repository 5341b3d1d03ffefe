"""What the ``sapsam tournament`` actions that talk to a running server over gRPC (``watch``,
``bot``) share: the server's options, the tournament's resource name, the operator's token, and
a refusal said in one line."""

from __future__ import annotations

import argparse
import os
from typing import Any, Final

from sapsam.cli.tournament_common import CommandError

DEFAULT_SERVER: Final = "127.0.0.1:50051"
INTERRUPTED: Final = 130
"""The exit status after Ctrl-C."""


def server_options(parser: argparse.ArgumentParser, operator: bool = True) -> None:
    """``--server`` and, for the operator's actions, ``--operator-token``."""
    parser.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        help=f"the server's host:port (default: {DEFAULT_SERVER})",
    )
    if operator:
        parser.add_argument(
            "--operator-token",
            help="the operator's bearer token (default: SAPSAM_OPERATOR_TOKEN)",
        )


def tournament_resource(text: str) -> str:
    """``tournaments/{id}`` for an id or a resource name."""
    return text if text.startswith("tournaments/") else f"tournaments/{text}"


def operator_metadata(arguments: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    """The operator's call metadata, from ``--operator-token`` or ``SAPSAM_OPERATOR_TOKEN``."""
    token = arguments.operator_token or os.environ.get("SAPSAM_OPERATOR_TOKEN")
    if not token:
        raise CommandError(
            "the operator token is needed: --operator-token or SAPSAM_OPERATOR_TOKEN"
        )
    return (("authorization", f"Bearer {token}"),)


def refusal(error: Any, server: str) -> CommandError:
    """A gRPC error of the server at ``server``, in one line."""
    import grpc

    code = error.code()
    if code == grpc.StatusCode.UNAVAILABLE:
        return CommandError(f"cannot reach the server at {server}")
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return CommandError(f"the server refused the operator token: {error.details()}")
    return CommandError(f"{code.name}: {error.details()}")
