"""CORS for the Connect transport (``sapsam serve --http-allowed-origins``, docs/api.md,
"Browsers: Connect"): a page served from another origin than ``--http`` (a Vite dev server, a
static site) may call the services only when its origin is allowed.

An ASGI middleware in front of the Connect application. For an allowed origin it answers the
browser's preflight (``OPTIONS`` with ``Access-Control-Request-Method``) itself, with the methods
and request headers Connect and gRPC-web use (``Authorization`` included: the token is a bearer
header, never a cookie, so no credentials are allowed), and adds ``Access-Control-Allow-Origin``
and the exposed gRPC-web headers to every answer. A request from another origin is served as
before, without those headers (the browser then hides the answer from the page); its preflight is
refused 403. Every answer says ``Vary: Origin``. Without ``--http-allowed-origins`` nothing
changes: same origin only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Final

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

ALLOWED_METHODS: Final = "GET, POST"
ALLOWED_HEADERS: Final = (
    "authorization",
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "connect-accept-encoding",
    "connect-content-encoding",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
)
EXPOSED_HEADERS: Final = "grpc-status, grpc-message, grpc-status-details-bin"
MAX_AGE_SECONDS: Final = 7200


def parse_origins(text: str) -> tuple[str, ...]:
    """``--http-allowed-origins``: origins separated by commas or spaces, each ``*`` or
    ``scheme://host[:port]`` (no path); ``ValueError`` on anything else."""
    origins = tuple(part for part in text.replace(",", " ").split() if part)
    for origin in origins:
        if origin == "*":
            continue
        scheme, separator, rest = origin.partition("://")
        if scheme not in ("http", "https") or not separator or not rest or "/" in rest:
            raise ValueError(
                f"--http-allowed-origins wants origins like https://example.org, not {origin!r}"
            )
    return origins


class CorsMiddleware:
    """Wraps an ASGI application: CORS for ``origins`` (``*``: any origin)."""

    def __init__(self, app: App, origins: Sequence[str]) -> None:
        self._app = app
        self._any = "*" in origins
        self._origins = frozenset(origin.rstrip("/").lower() for origin in origins)

    def allows(self, origin: str) -> bool:
        """Whether a page from ``origin`` may read the answers."""
        return self._any or origin.lower() in self._origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = {
            key.decode("latin-1").lower(): value.decode("latin-1")
            for key, value in scope.get("headers", ())
        }
        origin = headers.get("origin")
        preflight = scope["method"] == "OPTIONS" and "access-control-request-method" in headers
        if origin is not None and preflight:
            await self._preflight(origin, headers, send)
            return
        # Every answer varies with the Origin (a GET's is cacheable): one kept for a request
        # without it, or from another origin, must not be reused for an allowed page's.
        added = (
            self._allow_origin(origin)
            if origin is not None and self.allows(origin)
            else [(b"vary", b"Origin")]
        )

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *added]
            await send(message)

        await self._app(scope, receive, send_with_cors)

    def _allow_origin(self, origin: str) -> list[tuple[bytes, bytes]]:
        return [
            (b"access-control-allow-origin", b"*" if self._any else origin.encode("latin-1")),
            (b"access-control-expose-headers", EXPOSED_HEADERS.encode()),
            (b"vary", b"Origin"),
        ]

    async def _preflight(self, origin: str, headers: dict[str, str], send: Send) -> None:
        method = headers["access-control-request-method"].upper()
        asked = [
            name.strip().lower()
            for name in headers.get("access-control-request-headers", "").split(",")
            if name.strip()
        ]
        if not self.allows(origin) or method not in ("GET", "POST"):
            await _answer(send, 403, [(b"vary", b"Origin")], b"origin or method not allowed\n")
            return
        unknown = [name for name in asked if name not in ALLOWED_HEADERS]
        if unknown:
            body = f"request headers not allowed: {', '.join(unknown)}\n".encode()
            await _answer(send, 403, [(b"vary", b"Origin")], body)
            return
        await _answer(
            send,
            204,
            [
                *self._allow_origin(origin),
                (b"access-control-allow-methods", ALLOWED_METHODS.encode()),
                (b"access-control-allow-headers", ", ".join(ALLOWED_HEADERS).encode()),
                (b"access-control-max-age", str(MAX_AGE_SECONDS).encode()),
            ],
            b"",
        )


async def _answer(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *headers,
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
