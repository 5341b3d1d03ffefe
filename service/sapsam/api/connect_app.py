"""The ``sapsam.v1`` services over the Connect protocol (and gRPC-web), for browsers.

Browsers cannot read HTTP/2 trailers, so they cannot speak gRPC; Connect carries the same
messages over plain HTTP POSTs (docs/api.md, "Browsers: Connect"). ``connectrpc``'s ASGI
application does the protocol (Connect unary and server streams, gRPC-web, JSON or binary
protobuf, compression, deadlines); this module gives it the servicers the gRPC server serves,
with no generated code of its own: each method's endpoint is built from the proto's descriptors.

A call passes the very interceptor objects the gRPC server runs (status sender, call log,
stopping, authentication, limits, error mapping; ``sapsam.api.server.call_interceptors``), in
the same order, through their ``around`` and ``guard_stream``, so a caller's limits and open
streams count once across both transports and a refusal carries the same code, reason and
ErrorInfo. :class:`ConnectServicerContext` is the part of ``grpc.aio.ServicerContext`` those
interceptors and the servicers use; the status the sender would send becomes a
``ConnectError`` with the same details (``google.rpc.ErrorInfo``, ``BadRequest``, ...).

The HTTP server is uvicorn, started on the gRPC server's own loop (:func:`serve_http`): one
event loop per process still serves everything.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import math
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, Final, NoReturn

import grpc
from connectrpc.code import Code
from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_codecs
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import ConnectASGIApplication, Endpoint
from google.protobuf import descriptor, descriptor_pb2, message_factory
from google.rpc import status_pb2  # type: ignore[import-untyped]
from protobuf.wkt import Any as AnyDetail

from sapsam.api.cors import CorsMiddleware
from sapsam.api.interception import UNDECODABLE, CallInterceptor

STATUS_DETAILS_KEY: Final = "grpc-status-details-bin"
_CODES: Final = {code.name: code for code in Code}
_logger = logging.getLogger("sapsam.api.connect_app")


class StatusAbortError(Exception):
    """A call ended with a status (raised by the context's ``abort``; becomes a ConnectError)."""

    def __init__(self, status: Any) -> None:
        super().__init__(f"{status.code.name}: {status.details}")
        self.status = status


def connect_error(status: Any) -> ConnectError:
    """The ConnectError for a gRPC status: the same code, message and details."""
    code: grpc.StatusCode = status.code
    # grpc spells CANCELLED, Connect CANCELED; OK never ends a failed call.
    connect_code = _CODES.get(code.name, Code.CANCELED if code.name == "CANCELLED" else None)
    details: list[ErrorDetail] = []
    for key, value in status.trailing_metadata or ():
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            rpc_status = status_pb2.Status.FromString(value)
            details = [
                ErrorDetail(AnyDetail(type_url=detail.type_url, value=detail.value))
                for detail in rpc_status.details
            ]
    return ConnectError(connect_code or Code.UNKNOWN, str(status.details or ""), details)


def _peer(client_address: str | None) -> str:
    """A grpc-style peer string (``ipv4:HOST:PORT``, ``ipv6:[HOST]:PORT``), which the limits key
    their buckets on (``sapsam.api.limits.peer_address``)."""
    if not client_address:
        return "unknown"
    host, _, port = client_address.rpartition(":")
    if ":" in host:
        return f"ipv6:[{host.strip('[]')}]:{port}"
    return f"ipv4:{host}:{port}"


class ConnectServicerContext:
    """What the interceptors and servicers use of ``grpc.aio.ServicerContext``, for a Connect
    call: its metadata (the HTTP headers), its peer, its deadline, and ``abort``."""

    def __init__(self, ctx: RequestContext[Any, Any]) -> None:
        self._ctx = ctx
        timeout_ms = ctx.timeout_ms
        self._deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
        self._peer = _peer(ctx.client_address)

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        """The request's headers, as gRPC metadata (lower-case keys)."""
        return tuple((key.lower(), value) for key, value in self._ctx.request_headers.allitems())

    def peer(self) -> str:
        """The client's address, as grpc writes it."""
        return self._peer

    def time_remaining(self) -> float | None:
        """Seconds to the call's deadline (``connect-timeout-ms``), or None."""
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - time.monotonic())

    def code(self) -> grpc.StatusCode | None:
        """No status is set on the context (only ``abort`` ends a call)."""
        return None

    def details(self) -> str | None:
        """No details are set on the context."""
        return None

    async def abort_with_status(self, status: Any) -> NoReturn:
        """End the call with ``status`` (as ``grpc.aio`` does, by raising)."""
        raise StatusAbortError(status)

    async def abort(
        self, code: grpc.StatusCode, details: str = "", trailing_metadata: Any = ()
    ) -> NoReturn:
        """End the call with ``code`` and ``details``."""
        raise StatusAbortError(_PlainStatus(code, details, tuple(trailing_metadata)))


class _PlainStatus:
    def __init__(self, code: grpc.StatusCode, details: str, trailing: tuple[Any, ...]) -> None:
        self.code = code
        self.details = details
        self.trailing_metadata = trailing


async def _awaited(handler: Callable[..., Any], request: Any, context: Any) -> Any:
    if inspect.iscoroutinefunction(handler):
        return await handler(request, context)
    return handler(request, context)


def _unary(
    method: str, handler: Callable[..., Any], interceptors: Sequence[CallInterceptor]
) -> Callable[[Any, RequestContext[Any, Any]], Awaitable[Any]]:
    async def call(request: Any, ctx: RequestContext[Any, Any]) -> Any:
        context = ConnectServicerContext(ctx)

        def layer(index: int) -> Callable[[], Awaitable[Any]]:
            if index == len(interceptors):
                return lambda: _awaited(handler, request, context)
            inner = layer(index + 1)
            return lambda: interceptors[index].around(method, request, context, inner)

        try:
            return await layer(0)()
        except StatusAbortError as status:
            raise connect_error(status.status) from None

    return call


def _stream(
    method: str, handler: Callable[..., Any], interceptors: Sequence[CallInterceptor]
) -> Callable[[Any, RequestContext[Any, Any]], AsyncIterator[Any]]:
    async def call(request: Any, ctx: RequestContext[Any, Any]) -> AsyncIterator[Any]:
        context = ConnectServicerContext(ctx)
        try:
            async with contextlib.AsyncExitStack() as stack:
                for interceptor in interceptors:  # outermost first, as the gRPC server's
                    await stack.enter_async_context(
                        interceptor.guard_stream(method, request, context)
                    )
                responses: AsyncIterator[Any] = handler(request, context)
                try:
                    async for response in responses:
                        yield response
                finally:
                    aclose = getattr(responses, "aclose", None)
                    if aclose is not None:
                        await aclose()
        except StatusAbortError as status:
            raise connect_error(status.status) from None

    return call


def _idempotency(method: descriptor.MethodDescriptor) -> IdempotencyLevel:
    """The proto's ``idempotency_level``: a read marked ``NO_SIDE_EFFECTS`` may also be called
    with GET (Connect's ``?message=...`` form, cacheable), the rest by POST only."""
    level = method.GetOptions().idempotency_level
    return {
        descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS: IdempotencyLevel.NO_SIDE_EFFECTS,
        descriptor_pb2.MethodOptions.IDEMPOTENT: IdempotencyLevel.IDEMPOTENT,
    }.get(level, IdempotencyLevel.UNKNOWN)


def _endpoints(
    servicers: Mapping[descriptor.ServiceDescriptor, Any],
    interceptors: Sequence[CallInterceptor],
) -> dict[str, Any]:
    """One endpoint per method of each service, keyed by its path (``/sapsam.v1.S/M``)."""
    endpoints: dict[str, Any] = {}
    for service, servicer in servicers.items():
        for method in service.methods:
            if method.client_streaming:
                continue  # sapsam serves no request streams
            path = f"/{service.full_name}/{method.name}"
            info: MethodInfo[Any, Any] = MethodInfo(
                name=method.name,
                service_name=service.full_name,
                input=message_factory.GetMessageClass(method.input_type),
                output=message_factory.GetMessageClass(method.output_type),
                idempotency_level=_idempotency(method),
                stream_type=StreamType.SERVER_STREAM
                if method.server_streaming
                else StreamType.UNARY,
            )
            handler = getattr(servicer, method.name)
            if method.server_streaming:
                endpoints[path] = Endpoint.server_stream(info, _stream(path, handler, interceptors))
            else:
                endpoints[path] = Endpoint.unary(info, _unary(path, handler, interceptors))
    return endpoints


class _TolerantCodec:
    """``codec``, decoding to :data:`~sapsam.api.interception.UNDECODABLE` where it would raise.

    connectrpc decodes a request (a POST's body, a GET's ``message``) before any interceptor
    runs and answers a failure INVALID_ARGUMENT without ErrorInfo, quoting the parser's text;
    with the failure turned into a value, the call passes every interceptor as over gRPC
    (``interception._tolerant``) and is refused inside, with the same reason."""

    def __init__(self, codec: Codec[Any, Any]) -> None:
        self._codec = codec

    def name(self) -> str:
        return self._codec.name()

    def encode(self, message: Any) -> bytes:
        return self._codec.encode(message)

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        try:
            return self._codec.decode(data, message_class)
        except Exception:  # whatever the bytes make the parser raise, the client sent them
            return UNDECODABLE


class SapsamConnectApplication(ConnectASGIApplication[object]):
    """An ASGI application serving ``servicers`` (service descriptor -> servicer) over Connect
    and gRPC-web, each call through ``interceptors`` (outermost first)."""

    def __init__(
        self,
        servicers: Mapping[descriptor.ServiceDescriptor, Any],
        interceptors: Sequence[CallInterceptor],
        read_max_bytes: int,
    ) -> None:
        endpoints = _endpoints(servicers, interceptors)
        super().__init__(
            service=object(),
            endpoints=lambda _service: endpoints,
            read_max_bytes=read_max_bytes,
            codecs=[_TolerantCodec(codec) for codec in google_protobuf_codecs()],
        )

    @property
    def path(self) -> str:
        """Every service is served from the root."""
        return "/"


class HttpServer:
    """A uvicorn server serving an ASGI application on the running loop (:func:`serve_http`)."""

    def __init__(self, server: Any, task: asyncio.Task[None], port: int) -> None:
        self._server = server
        self._task = task
        self.port = port

    async def stop(self) -> None:
        """Stop accepting, let open calls finish within the grace period, close the rest."""
        self._server.should_exit = True
        await self._task


def split_address(listen: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as a host and a port."""
    host, separator, port = listen.rpartition(":")
    if not separator or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http wants HOST:PORT, not {listen!r}")
    return host.removeprefix("[").removesuffix("]"), int(port)


def _bound(listen: str, reuse_port: bool) -> socket.socket:
    host, port = split_address(listen)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as error:
        raise RuntimeError(f"cannot listen on {listen} (HTTP): {error}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        sock.listen(2048)
        sock.setblocking(False)
    except OSError as error:
        sock.close()
        raise RuntimeError(f"cannot listen on {listen} (HTTP): {error}") from None
    return sock


async def serve_http(
    listen: str, app: Any, *, grace_seconds: float, reuse_port: bool = False
) -> HttpServer:
    """Serve ``app`` on ``listen`` on the running loop; ``RuntimeError`` if it cannot bind."""
    import uvicorn  # only a server started with --http needs it

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # The process's signals are the gRPC server's (serve_until_signalled).
            yield

    sock = _bound(listen, reuse_port)
    port: int = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        lifespan="off",
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=max(1, math.ceil(grace_seconds)),
    )
    server = _Server(config)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            sock.close()
            task.result()
            raise RuntimeError(f"cannot serve HTTP on {listen}")
        await asyncio.sleep(0.005)
    _logger.info("serving Connect and gRPC-web on %s (port %d)", listen, port)
    return HttpServer(server, task, port)


async def serve_services(
    config: Any, services: Any, interceptors: Sequence[CallInterceptor]
) -> HttpServer:
    """Serve what ``services`` (``sapsam.api.server.Services``) serves over Connect on
    ``config.http_listen``, through ``interceptors`` (the gRPC server's own objects)."""
    from sapsam_proto.v1 import (
        audit_service_pb2,
        operator_service_pb2,
        player_service_pb2,
        table_service_pb2,
        tournament_service_pb2,
        transparency_service_pb2,
    )

    candidates = (
        (table_service_pb2, "TableService", services.table_service),
        (player_service_pb2, "PlayerService", services.player_service),
        (audit_service_pb2, "AuditService", services.audit_service),
        (tournament_service_pb2, "TournamentService", services.tournament_service),
        (operator_service_pb2, "OperatorService", services.operator_service),
        (transparency_service_pb2, "TransparencyService", services.transparency_service),
    )
    servicers = {
        module.DESCRIPTOR.services_by_name[name]: servicer
        for module, name, servicer in candidates
        if servicer is not None
    }
    app: Any = SapsamConnectApplication(servicers, interceptors, config.max_receive_message_bytes)
    if config.http_allowed_origins:
        app = CorsMiddleware(app, config.http_allowed_origins)
    return await serve_http(
        config.http_listen, app, grace_seconds=config.grace_seconds, reuse_port=config.reuse_port
    )
