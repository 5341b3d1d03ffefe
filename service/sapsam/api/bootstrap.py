"""The composition root: the one place that wires the store and the servicers into a server.

``serve_database`` is what each server process runs (``sapsam serve`` calls it once, or once per
worker process): it opens the store on an already migrated database, builds the servicers on it,
and serves until SIGTERM.
"""

from __future__ import annotations

from sapsam.api.call_log import configure_logging
from sapsam.api.generated.v1 import player_service_pb2_grpc, table_service_pb2_grpc
from sapsam.api.server import ServerConfig, Services, serve_until_signalled


def _no_players(token_hash: bytes) -> str | None:
    return None


def build_services(database_url: str) -> Services:
    """The servicers and token lookup for one server process, on the given database."""
    # The servicers over the domain and the store come with the second phase of the API work;
    # until then the generated bases answer UNIMPLEMENTED behind the real auth and error layers.
    return Services(
        table_service=table_service_pb2_grpc.TableServiceServicer(),  # type: ignore[abstract]
        player_service=player_service_pb2_grpc.PlayerServiceServicer(),  # type: ignore[abstract]
        token_lookup=_no_players,
    )


def serve_database(config: ServerConfig, database_url: str) -> int:
    """Serve the API on ``database_url`` until SIGTERM or SIGINT; the process's exit code."""
    configure_logging()
    return serve_until_signalled(config, build_services(database_url))
