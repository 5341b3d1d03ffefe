"""Authentication: one interceptor turns the bearer token of each call into a caller.

A call carries ``authorization: Bearer <token>``. The token is either a player's, issued once by
RegisterPlayer and stored only as its SHA-256 hash (so the lookup function injected here receives
the hash, never the token), or the operator token from the server's configuration. Missing or
unknown tokens are refused with UNAUTHENTICATED, except on the few methods anyone may call:
RegisterPlayer, health checking and server reflection.

Whether the caller may act on a particular seat is the servicer's question (it knows the table);
this module only says who is calling, through :func:`current_caller`.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import hmac
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import grpc

from sapsam.api import errors
from sapsam.api.interception import CallInterceptor, Proceed, ProceedStream

TokenLookup = Callable[[bytes], str | None]
"""Finds the player id for a token's SHA-256 hash, or ``None`` for an unknown token."""

AUTHORIZATION_KEY: Final = "authorization"
TOKEN_PREFIX: Final = "sps_"

PUBLIC_METHODS: Final = frozenset({"/sapsam.v1.PlayerService/RegisterPlayer"})
"""Methods callable without a token (besides the public services below)."""

PUBLIC_SERVICE_PREFIXES: Final = (
    "/grpc.health.v1.Health/",
    "/grpc.reflection.v1alpha.ServerReflection/",
    "/grpc.reflection.v1.ServerReflection/",
)

_CACHE_SIZE: Final = 10_000


@dataclass(frozen=True)
class Caller:
    """Who is calling: a player (by id) or the operator."""

    player_id: str | None
    is_operator: bool = False

    @property
    def player_name(self) -> str:
        """The player's resource name, ``players/{player}``; empty for the operator."""
        return f"players/{self.player_id}" if self.player_id is not None else ""


OPERATOR: Final = Caller(player_id=None, is_operator=True)

_current_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar(
    "sapsam_current_caller", default=None
)


def current_caller() -> Caller:
    """The authenticated caller of the call being served.

    Raises :class:`errors.ApiError` (UNAUTHENTICATED) outside an authenticated call, so a public
    method that needs a caller cannot silently act for nobody.
    """
    caller = _current_caller.get()
    if caller is None:
        raise errors.ApiError("MISSING_TOKEN", "this call needs an authorization bearer token")
    return caller


def new_token() -> str:
    """A fresh bearer token: a prefix that makes it recognisable, then 256 random bits."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> bytes:
    """The SHA-256 hash of a token: what the store keeps and the lookup receives."""
    return hashlib.sha256(token.encode("utf-8")).digest()


def _bearer_token(metadata: Any) -> str | None:
    for key, value in metadata or ():
        if key.lower() != AUTHORIZATION_KEY or not isinstance(value, str):
            continue
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
    return None


def is_public(method: str) -> bool:
    """Whether a method may be called without a token."""
    return method in PUBLIC_METHODS or method.startswith(PUBLIC_SERVICE_PREFIXES)


class _PlayerCache:
    """A bounded map from token hash to player id, for known tokens only.

    A player's token never changes owner, so a hit is always right; unknown tokens are not cached,
    so a player registered on another server process is found on its first call here.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[bytes, str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, token_hash: bytes) -> str | None:
        with self._lock:
            player_id = self._entries.get(token_hash)
            if player_id is not None:
                self._entries.move_to_end(token_hash)
            return player_id

    def put(self, token_hash: bytes, player_id: str) -> None:
        with self._lock:
            self._entries[token_hash] = player_id
            self._entries.move_to_end(token_hash)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


class AuthInterceptor(CallInterceptor):
    """Authenticates every call but the public ones and makes the caller available to servicers."""

    def __init__(self, lookup: TokenLookup, operator_token: str | None = None) -> None:
        self._lookup = lookup
        self._operator_token = operator_token or None
        self._cache = _PlayerCache(_CACHE_SIZE)

    def authenticate(self, method: str, metadata: Any) -> Caller | None:
        """The caller for a call's metadata; ``None`` for an anonymous call to a public method.

        Raises :class:`errors.ApiError` for a missing or unknown token on any other method.
        """
        token = _bearer_token(metadata)
        if token is None:
            if is_public(method):
                return None
            raise errors.ApiError(
                "MISSING_TOKEN", "send the metadata 'authorization: Bearer <token>'"
            )
        if self._operator_token is not None and hmac.compare_digest(
            token.encode("utf-8"), self._operator_token.encode("utf-8")
        ):
            return OPERATOR
        token_hash = hash_token(token)
        player_id = self._cache.get(token_hash)
        if player_id is None:
            player_id = self._lookup(token_hash)
            if player_id is not None:
                self._cache.put(token_hash, player_id)
        if player_id is None:
            if is_public(method):
                return None
            raise errors.ApiError("UNKNOWN_TOKEN", "the bearer token is not known here")
        return Caller(player_id=player_id)

    def _enter(
        self, method: str, context: grpc.ServicerContext
    ) -> contextvars.Token[Caller | None]:
        try:
            caller = self.authenticate(method, context.invocation_metadata())
        except Exception as error:
            context.abort_with_status(errors.status_for_exception(error, method))
            raise  # abort_with_status always raises; this only tells readers so
        return _current_caller.set(caller)

    def around(
        self, method: str, request: Any, context: grpc.ServicerContext, proceed: Proceed
    ) -> Any:
        """Authenticate, then run the call as the caller."""
        reset = self._enter(method, context)
        try:
            return proceed()
        finally:
            _current_caller.reset(reset)

    def around_stream(
        self, method: str, request: Any, context: grpc.ServicerContext, proceed: ProceedStream
    ) -> Iterator[Any]:
        """Authenticate, then stream the call's responses as the caller."""
        reset = self._enter(method, context)
        try:
            yield from proceed()
        finally:
            # A stream may be finished from another thread (on cancellation); then the variable
            # belongs to another context and there is nothing of ours to reset.
            with contextlib.suppress(ValueError):
                _current_caller.reset(reset)
