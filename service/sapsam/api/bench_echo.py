"""A benchmarking aid: an echo RPC served by the same gRPC stack as the game.

``sapsam serve --bench-echo`` adds ``sapsam.bench.v1.EchoService/Echo``, which answers each
request with its own bytes. It is registered as a generic handler with identity (de)serialisers
(no protobuf), on the same server, so it runs on the same event loop and through the same
interceptors (call log, authentication, error mapping) as every game RPC: what it measures is the
ceiling the gRPC stack and the interceptors leave for the game's own work (see bench/service.py).
It needs a bearer token like any non-public method, and it touches no database.
"""

from __future__ import annotations

from typing import Final

import grpc
from grpc import aio

ECHO_SERVICE_NAME: Final = "sapsam.bench.v1.EchoService"
ECHO_METHOD_NAME: Final = "Echo"
ECHO_METHOD: Final = f"/{ECHO_SERVICE_NAME}/{ECHO_METHOD_NAME}"
"""The full method name a client calls (request and response are raw bytes)."""


async def _echo(request: bytes, context: aio.ServicerContext) -> bytes:
    return request


def add_echo_service(server: aio.Server) -> None:
    """Serve the echo RPC on ``server`` (bytes in, the same bytes out)."""
    # No (de)serialisers: grpc hands the handler the request's bytes and sends back its bytes.
    handler = grpc.method_handlers_generic_handler(
        ECHO_SERVICE_NAME, {ECHO_METHOD_NAME: grpc.unary_unary_rpc_method_handler(_echo)}
    )
    server.add_generic_rpc_handlers((handler,))
