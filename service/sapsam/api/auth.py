"""Authentication: one interceptor turns the bearer token of each call into a caller, then checks
that the caller holds the credential the method needs (``sapsam.api.access``).

A call carries the metadata ``authorization: Bearer <token>``, exactly once and exactly so: the
scheme ``Bearer`` as written, one space, then the token in RFC 6750's token characters. Anything
else (``bearer``, two spaces, a space at either end, no token, two ``authorization`` entries) is
UNAUTHENTICATED, reason BAD_AUTHORIZATION_HEADER, on every method: a client that sends a header
means to authenticate, and guessing what it meant would accept what it did not.

The token is either a player's or the operator token from the server's configuration. A player's
token is stored only as its SHA-256 hash (the lookup injected here receives the hash, never the
token) with its issue time and whether it still works: rotated away by its player or revoked by
the operator is TOKEN_REVOKED, older than the server's ``token_ttl`` is TOKEN_EXPIRED, never
issued is UNKNOWN_TOKEN. The one exception: a token its player just rotated away may still call
RotateToken, so that a retry of that rotation (which the client can only send with the old token,
the answer having been lost) gets the same new token; ``sapsam.api.players`` allows nothing else.

Public methods (RegisterPlayer, health checking, reflection) need no token; a token that does not
work there is ignored, a malformed header is not.

Whether the caller may act on a particular seat is the servicer's question (it knows the table);
this module says who is calling, through :func:`current_caller` (and :func:`caller_or_none`,
which the limits interceptor uses to tell callers apart).
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from grpc import aio

from sapsam.api import errors
from sapsam.api.access import Access, required_access
from sapsam.api.interception import CallInterceptor, Proceed, StatusError
from sapsam.store.player_tokens import ROTATED, PlayerToken

TokenLookup = Callable[[bytes], Awaitable[PlayerToken | None]]
"""Finds a token by its hash (in the database)."""
CachedTokenLookup = Callable[[bytes], PlayerToken | None]
"""Finds a token by its hash in memory only (no I/O)."""
"""Finds the token with a SHA-256 hash (whoever holds it, whether it works), or ``None``."""

AUTHORIZATION_KEY: Final = "authorization"
TOKEN_PREFIX: Final = "sps_"
MAX_TOKEN_LENGTH: Final = 512
"""Longer tokens are refused unread (ours are 47 characters)."""
ROTATE_TOKEN_METHOD: Final = "/sapsam.v1.PlayerService/RotateToken"
"""The one method a rotated-away token may still call (to retry its own rotation)."""

# RFC 6750, section 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_ROTATION_LABEL: Final = b"sapsam token rotation v1\x00"


@dataclass(frozen=True)
class Caller:
    """Who is calling: a player (by id) or the operator."""

    player_id: str | None
    is_operator: bool = False
    retired_token: bool = False
    """The player called with a token it rotated away (allowed on RotateToken only)."""

    @property
    def player_name(self) -> str:
        """The player's resource name, ``players/{player}``; empty for the operator."""
        return f"players/{self.player_id}" if self.player_id is not None else ""

    @property
    def key(self) -> str:
        """A stable, non-secret key for this caller, the same across its token rotations:
        ``operator`` or ``player:{player}`` (what per-caller limits count by)."""
        return "operator" if self.is_operator else f"player:{self.player_id}"


OPERATOR: Final = Caller(player_id=None, is_operator=True)

_current_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar(
    "sapsam_current_caller", default=None
)
# The token as presented, for RotateToken only (the new token is derived from it); kept apart
# from Caller so that logging or comparing a Caller can never show a token.
_presented_token: contextvars.ContextVar[str] = contextvars.ContextVar(
    "sapsam_presented_token", default=""
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


def caller_or_none() -> Caller | None:
    """The authenticated caller of the call being served; ``None`` for an anonymous call (a
    public method called without a working token) or outside a call."""
    return _current_caller.get()


def presented_token() -> str:
    """The bearer token the call being served presented; empty for the operator or nobody."""
    return _presented_token.get()


def new_token() -> str:
    """A fresh bearer token: a prefix that makes it recognisable, then 256 random bits."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def rotated_token(old_token: str, salt: bytes) -> str:
    """The token a rotation issues: HMAC-SHA256 keyed by the old token over a random salt.

    The salt is stored, the old token is not, so a database reader cannot compute it, while a
    retried rotation, which presents the old token again, gets the same new token back. It has
    the form of :func:`new_token` (the prefix, then 256 bits in unpadded URL-safe base64).
    """
    digest = hmac.new(old_token.encode("utf-8"), _ROTATION_LABEL + salt, hashlib.sha256).digest()
    return TOKEN_PREFIX + base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def hash_token(token: str) -> bytes:
    """The SHA-256 hash of a token: what the store keeps and the lookup receives."""
    return hashlib.sha256(token.encode("utf-8")).digest()


def check_token_format(token: str) -> str:
    """``token`` if it can travel in a bearer header; ValueError saying what is wrong otherwise.

    For the configured operator token, which a malformed header could never present.
    """
    if len(token) > MAX_TOKEN_LENGTH or not _TOKEN.fullmatch(token):
        raise ValueError(
            f"a token must be 1 to {MAX_TOKEN_LENGTH} of the characters A-Z a-z 0-9 - . _ ~ + /,"
            " optionally followed by '='"
        )
    return token


def _malformed(problem: str) -> errors.ApiError:
    # The header's value is a credential: the message never quotes it.
    return errors.ApiError(
        "BAD_AUTHORIZATION_HEADER",
        f"send the metadata 'authorization: Bearer <token>' exactly once: {problem}",
    )


def bearer_token(metadata: Any) -> str | None:
    """The token of the call's one ``authorization: Bearer <token>`` entry; None without one.

    Raises BAD_AUTHORIZATION_HEADER for anything but exactly one entry of exactly that form.
    """
    values = [value for key, value in metadata or () if key.lower() == AUTHORIZATION_KEY]
    if not values:
        return None
    if len(values) > 1:
        raise _malformed(f"this call sent {len(values)} authorization entries")
    value = values[0]
    if not isinstance(value, str):
        raise _malformed("the value is not text")
    scheme, space, token = value.partition(" ")
    if scheme != "Bearer":
        raise _malformed("the scheme must be 'Bearer', spelt so, at the start of the value")
    if not token:
        raise _malformed("the token is missing" if not space else "the token is empty")
    if token != token.strip(" ") or " " in token:
        raise _malformed("one space between 'Bearer' and the token, and none around them")
    if len(token) > MAX_TOKEN_LENGTH:
        raise _malformed(f"the token is longer than {MAX_TOKEN_LENGTH} characters")
    if not _TOKEN.fullmatch(token):
        raise _malformed("the token has characters outside A-Z a-z 0-9 - . _ ~ + / (and = last)")
    return token


class TokenCache:
    """A bounded map from token hash to a working token, each entry trusted for ``seconds``.

    Every call needs its token looked up; this keeps a busy caller from costing a query per call.
    An entry is dropped at once where a token is rotated or revoked (``forget``); other server
    processes hold theirs at most ``seconds`` longer, which bounds how long a retired token can
    still work there. Tokens that do not work are not cached: unknown ones are looked up each
    time, so a player registered in another process is found on its first call here.
    """

    def __init__(self, size: int, seconds: float, clock: Callable[[], float] = time.monotonic):
        self._size = size
        self._seconds = seconds
        self._clock = clock
        self._entries: OrderedDict[bytes, tuple[float, PlayerToken]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, token_hash: bytes) -> PlayerToken | None:
        """The cached token, if it was looked up less than ``seconds`` ago."""
        with self._lock:
            entry = self._entries.get(token_hash)
            if entry is None:
                return None
            if self._clock() - entry[0] >= self._seconds:
                del self._entries[token_hash]
                return None
            self._entries.move_to_end(token_hash)
            return entry[1]

    def put(self, token_hash: bytes, token: PlayerToken) -> None:
        """Remember a working token."""
        with self._lock:
            self._entries[token_hash] = (self._clock(), token)
            self._entries.move_to_end(token_hash)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def forget(self, token_hash: bytes | None = None, player_id: str | None = None) -> None:
        """Drop one token, or every token of a player."""
        with self._lock:
            if token_hash is not None:
                self._entries.pop(token_hash, None)
            if player_id is not None:
                for cached_hash in [
                    key for key, (_, token) in self._entries.items() if token.player_id == player_id
                ]:
                    del self._entries[cached_hash]


class UnknownTokens:
    """Hashes of tokens the database did not know, each for ``seconds`` (at most ``size``): a
    client that repeats a made-up token is answered from memory. A token is issued under a
    fresh random value, so no hash the cache holds can become a player's meanwhile."""

    def __init__(self, size: int, seconds: float, clock: Callable[[], float] = time.monotonic):
        self._size = size
        self._seconds = seconds
        self._clock = clock
        self._seen: OrderedDict[bytes, float] = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, token_hash: bytes) -> bool:
        with self._lock:
            seen = self._seen.get(token_hash)
            if seen is None:
                return False
            if self._clock() - seen >= self._seconds:
                del self._seen[token_hash]
                return False
            return True

    def add(self, token_hash: bytes) -> None:
        """Remember a hash the database did not know."""
        with self._lock:
            self._seen[token_hash] = self._clock()
            self._seen.move_to_end(token_hash)
            while len(self._seen) > self._size:
                self._seen.popitem(last=False)


UNKNOWN_TOKENS_KEPT: Final = 10_000
UNKNOWN_TOKEN_SECONDS: Final = 30.0
"""How long an unknown token's hash is answered from memory."""
LOOKUP_LIMITED_REASON: Final = "RATE_LIMITED"


def _utc_now() -> datetime:
    return datetime.now(UTC)


class AuthInterceptor(CallInterceptor):
    """Authenticates every call, checks the method's access, and runs the call as the caller."""

    def __init__(
        self,
        lookup: TokenLookup,
        operator_token: str | None = None,
        token_ttl: timedelta | None = None,
        clock: Callable[[], datetime] = _utc_now,
        cached_lookup: CachedTokenLookup | None = None,
        lookup_limit: Callable[[str], float] | None = None,
    ) -> None:
        super().__init__()
        self._lookup = lookup
        self._cached_lookup = cached_lookup
        # Per peer address: how long to wait before its next database look-up (0.0: go on).
        self._lookup_limit = lookup_limit
        self._unknown = UnknownTokens(UNKNOWN_TOKENS_KEPT, UNKNOWN_TOKEN_SECONDS)
        self._operator_token = check_token_format(operator_token) if operator_token else None
        self._token_ttl = token_ttl
        self._clock = clock

    async def authenticate(
        self, method: str, metadata: Any, peer: str = ""
    ) -> tuple[Caller | None, str]:
        """The caller for a call's metadata (``None``: anonymous, on a public method) and the
        token it presented.

        Raises :class:`errors.ApiError` for a malformed header anywhere, and for a missing or
        not working token on any method but the public ones.
        """
        token = bearer_token(metadata)
        public = required_access(method) is Access.PUBLIC
        if token is None:
            if public:
                return None, ""
            raise errors.ApiError(
                "MISSING_TOKEN", "send the metadata 'authorization: Bearer <token>'"
            )
        if self._operator_token is not None and hmac.compare_digest(
            token.encode("utf-8"), self._operator_token.encode("utf-8")
        ):
            return OPERATOR, ""
        token_hash = hash_token(token)
        # The lookup may query the database (awaited), unless memory knows the token.
        found = self._cached_lookup(token_hash) if self._cached_lookup is not None else None
        if found is None and token_hash not in self._unknown:
            try:
                self._admit_lookup(peer)
            except errors.ApiError:
                if public:  # a token is ignored there anyway: no look-up, no refusal
                    return None, ""
                raise
            found = await self._lookup(token_hash)
            if found is None:
                self._unknown.add(token_hash)
        try:
            return self._player(method, found), token
        except errors.ApiError:
            if public:
                return None, ""
            raise

    def _admit_lookup(self, peer: str) -> None:
        """Refuse a database look-up from a peer address over its limit (``sapsam.api.limits``):
        anonymous traffic with made-up tokens gets no more of the database pool than that.
        """
        delay = self._lookup_limit(peer) if self._lookup_limit is not None else 0.0
        if delay > 0:
            raise errors.ApiError(
                LOOKUP_LIMITED_REASON,
                "too many unknown tokens from this address; retry after the delay given",
                retry_delay=delay,
            )

    def _player(self, method: str, found: PlayerToken | None) -> Caller:
        if found is None:
            raise errors.ApiError("UNKNOWN_TOKEN", "the bearer token is not known here")
        if not found.live:
            if found.revoked_because == ROTATED and method == ROTATE_TOKEN_METHOD:
                return Caller(player_id=found.player_id, retired_token=True)
            raise errors.ApiError(
                "TOKEN_REVOKED",
                "this token was replaced by a rotation"
                if found.revoked_because == ROTATED
                else "the operator revoked this player's tokens",
            )
        if (
            self._token_ttl is not None
            and found.issued_at is not None
            and self._clock() >= found.issued_at + self._token_ttl
        ):
            raise errors.ApiError(
                "TOKEN_EXPIRED",
                "the token is older than this server's token lifetime"
                f" ({self._token_ttl.total_seconds() / 86400:g} days); rotate tokens before"
                " they expire",
            )
        return Caller(player_id=found.player_id)

    @staticmethod
    def authorise(method: str, caller: Caller | None) -> None:
        """Refuse a caller without the credential ``method`` needs (before the request is read)."""
        access = required_access(method)
        if access is Access.OPERATOR and (caller is None or not caller.is_operator):
            raise errors.ApiError("OPERATOR_ONLY", "only the operator may make this call")
        if access is Access.PLAYER and caller is not None and caller.player_id is None:
            raise errors.ApiError("PLAYERS_ONLY", "only a player can do this, not the operator")

    async def _enter(
        self, method: str, context: aio.ServicerContext
    ) -> tuple[contextvars.Token[Caller | None], contextvars.Token[str]]:
        try:
            caller, token = await self.authenticate(
                method, context.invocation_metadata(), context.peer()
            )
            self.authorise(method, caller)
        except Exception as error:
            raise StatusError(errors.status_for_exception(error, method)) from None
        return _current_caller.set(caller), _presented_token.set(token)

    async def around(
        self, method: str, request: Any, context: aio.ServicerContext, proceed: Proceed
    ) -> Any:
        """Authenticate and authorise, then run the call as the caller."""
        caller_reset, token_reset = await self._enter(method, context)
        try:
            return await proceed()
        finally:
            _presented_token.reset(token_reset)
            _current_caller.reset(caller_reset)

    async def stream_opening(self, method: str, request: Any, context: aio.ServicerContext) -> Any:
        """Authenticate and authorise, then let the stream run as the caller; what to reset."""
        return await self._enter(method, context)

    async def stream_ended(
        self,
        method: str,
        request: Any,
        context: aio.ServicerContext,
        opened: Any,
        error: BaseException | None,
    ) -> None:
        """The stream no longer runs as the caller."""
        caller_reset, token_reset = opened
        # A stream may be finished from another context (an abandoned generator closed by
        # the loop); then the variables are not ours to reset.
        with contextlib.suppress(ValueError):
            _presented_token.reset(token_reset)
            _current_caller.reset(caller_reset)
