"""Players: registration with a bearer token, look-up by token hash, and the PlayerService.

A player is a row in ``players`` (migration 0002): id, display name and the request id that
created it; its tokens are rows of ``player_tokens`` (migration 0004), by SHA-256 hash only. This
module holds no SQL: it reads and writes both through ``sapsam.store.players.PlayerRecords``.

A player may register Ed25519 public keys (RegisterPlayerKey, rows of ``player_keys``, migration
0010) with which it signs its commitments and reveals (docs/fairness.md §19); the keys are cached
per process once seen, as a key is never removed.

The token is returned once, by RegisterPlayer, and never stored; a retried RegisterPlayer (same
request id) finds the player but cannot show the token again, so it is answered ALREADY_EXISTS
(``TOKEN_ALREADY_ISSUED``) naming the player.

A player rotates its token (RotateToken): the new token is derived from the old one and a stored
random salt (``auth.rotated_token``), so a retry of the rotation, which a client whose answer was
lost can only send with the old token, gets the same new token within
:data:`ROTATION_RETRY_WINDOW`. The operator revokes a player's tokens (RevokePlayerTokens).
"""

from __future__ import annotations

import secrets
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from sapsam.api import auth, resources
from sapsam.api.api_error import ApiError
from sapsam.api.request_digest import request_digest
from sapsam.fairness import player_keys
from sapsam.log.records import RequestIdReused
from sapsam.store.player_tokens import PlayerToken, Rotation
from sapsam.store.players import PlayerRecords
from sapsam_proto.v1 import player_pb2, player_service_pb2, player_service_pb2_grpc

MAX_DISPLAY_NAME_LENGTH: Final = 64
ROTATION_RETRY_WINDOW: Final = timedelta(minutes=10)
"""How long after a rotation its retry is still answered when sent with the old token."""
TOKEN_CACHE_SECONDS: Final = 60.0
"""How long a server process trusts a token it looked up (``auth.TokenCache``), at most: a token
retired meanwhile is dropped sooner, by :meth:`PlayerDirectory.forget_retired`."""
RETIRED_CHECK_SECONDS: Final = 1.0
"""How often each server process asks which tokens were rotated or revoked (``forget_retired``):
how long another process may still accept a token after its rotation or revocation."""
RETIRED_OVERLAP: Final = timedelta(seconds=10)
"""Each check asks from this long before the previous one's clock: a retirement is stamped with
its transaction's start, which may come before a check that ran while it committed."""
TOKEN_CACHE_SIZE: Final = 10_000
KEYLESS_CACHE_SECONDS: Final = 10.0
"""How long a server process trusts that a player has no key (so its unsigned moves are taken
without a statement each): a key registered through another process is required here at most this
long after. The process that registered it requires it at once."""


@dataclass(frozen=True)
class PlayerRecord:
    """A registered player as the database holds it (the token hash aside)."""

    player_id: str
    display_name: str
    created_at: datetime

    def to_message(self) -> player_pb2.Player:
        """The public ``Player`` resource."""
        created = Timestamp()
        created.FromDatetime(self.created_at)
        return player_pb2.Player(
            name=resources.player_name(self.player_id),
            display_name=self.display_name,
            create_time=created,
        )


def check_display_name(display_name: str) -> str:
    """The display name, trimmed, if it is 1 to 64 printable characters."""
    trimmed = display_name.strip()
    if not 1 <= len(trimmed) <= MAX_DISPLAY_NAME_LENGTH or not trimmed.isprintable():
        raise ApiError(
            "BAD_DISPLAY_NAME",
            f"display_name must be 1 to {MAX_DISPLAY_NAME_LENGTH} printable characters",
            field="display_name",
        )
    return trimmed


class PlayerDirectory:
    """Players and their tokens: register, find a token, rotate and revoke tokens, read profiles
    (names and working tokens cached)."""

    def __init__(self, records: PlayerRecords) -> None:
        self._records = records
        self._tokens = auth.TokenCache(TOKEN_CACHE_SIZE, TOKEN_CACHE_SECONDS)
        self._retired_checked_at: datetime | None = None  # the database's clock
        # Display names never change, so they are cached for the table views (most recent kept).
        self._names: OrderedDict[str, str] = OrderedDict()
        # Players' public keys, once seen: a key is never removed, so a cached one stays true.
        self._keys: OrderedDict[str, tuple[bytes, ...]] = OrderedDict()
        # Players found without a key, by when (time.monotonic()): see keys_of.
        self._keyless: OrderedDict[str, float] = OrderedDict()

    async def register(
        self, display_name: str, request_id: str, request_digest: bytes | None = None
    ) -> tuple[PlayerRecord, str]:
        """A new player and its token; a repeated ``request_id`` raises TOKEN_ALREADY_ISSUED, or
        REQUEST_ID_REUSED when its ``request_digest`` (``sapsam.api.request_digest``) differs."""
        token = auth.new_token()
        player_id = str(uuid.uuid4())
        created_at = await self._records.register(
            player_id, display_name, request_id or None, request_digest, auth.hash_token(token)
        )
        if created_at is None:
            earlier = await self._records.registered_by(request_id)
            if (
                earlier
                and request_digest
                and earlier.request_digest
                and earlier.request_digest != request_digest
            ):
                raise ApiError(
                    "REQUEST_ID_REUSED",
                    "this request_id already registered a player with a different request;"
                    " a new registration needs a fresh request_id",
                    field="request_id",
                )
            existing = resources.player_name(earlier.player_id) if earlier else ""
            raise ApiError(
                "TOKEN_ALREADY_ISSUED",
                "this request_id already registered a player; its token is shown only once",
                metadata={"player": existing},
            )
        return PlayerRecord(player_id, display_name, created_at), token

    async def register_key(
        self, player_id: str, public_key: bytes, proof: bytes, request_id: str
    ) -> tuple[datetime, tuple[bytes, ...]]:
        """Record ``public_key`` for the player after checking ``proof`` (the key's signature of
        the registration message); when it was first recorded and all the player's keys. A key
        the player has already is answered again (idempotent); BAD_PLAYER_KEY or
        PLAYER_KEY_LIMIT write nothing."""
        if len(public_key) != player_keys.PUBLIC_KEY_BYTES:
            raise ApiError(
                "BAD_PLAYER_KEY",
                f"public_key must be {player_keys.PUBLIC_KEY_BYTES} bytes (an Ed25519 public key),"
                f" not {len(public_key)}",
                field="public_key",
            )
        message = player_keys.registration_message(player_id, public_key)
        if not player_keys.signature_holds(public_key, message, proof):
            raise ApiError(
                "BAD_PLAYER_KEY",
                "proof must be the key's 64-byte Ed25519 signature of the registration message"
                " (docs/fairness.md §19), for this player",
                field="proof",
            )
        if request_id:
            earlier = await self._records.key_registered_by(player_id, request_id)
            if earlier is not None and earlier != public_key:
                raise ApiError(
                    "REQUEST_ID_REUSED",
                    "this request_id already registered another key; a new key needs a fresh"
                    " request_id",
                    field="request_id",
                )
        created_at = await self._records.register_key(
            player_id, public_key, proof, request_id, player_keys.MAX_KEYS_PER_PLAYER
        )
        if created_at is None:
            owner = await self._records.key_owner(public_key)
            if owner is None:
                raise ApiError(
                    "PLAYER_KEY_LIMIT",
                    f"a player may register at most {player_keys.MAX_KEYS_PER_PLAYER} keys",
                )
            if owner[0] != player_id:
                raise ApiError(
                    "BAD_PLAYER_KEY",
                    "this key is registered by another player",
                    field="public_key",
                )
            created_at = owner[1]
        keys = await self._records.keys_of(player_id)
        self._remember_keys(player_id, keys)
        return created_at, keys

    async def keys_of(self, player_id: str, wanted: bytes | None = None) -> tuple[bytes, ...]:
        """The player's public keys, for a move signed by ``wanted`` (None: unsigned).

        From memory when that settles the move: a key is never removed, so known keys that hold
        ``wanted``, or any known key for an unsigned move (refused), stay true; a player found
        keyless is trusted to stay so for :data:`KEYLESS_CACHE_SECONDS` (a key registered
        through this process clears it at once). Otherwise read, one indexed statement: an
        unsigned game costs no statement per move."""
        cached = self._keys.get(player_id)
        if cached is not None and (wanted is None or wanted in cached):
            return cached
        if wanted is None:
            checked = self._keyless.get(player_id)
            if checked is not None and time.monotonic() - checked < KEYLESS_CACHE_SECONDS:
                return ()
        keys = await self._records.keys_of(player_id)
        if keys:
            self._remember_keys(player_id, keys)
        else:
            self._keyless[player_id] = time.monotonic()
            self._keyless.move_to_end(player_id)
            while len(self._keyless) > TOKEN_CACHE_SIZE:
                self._keyless.popitem(last=False)
        return keys

    def _remember_keys(self, player_id: str, keys: tuple[bytes, ...]) -> None:
        self._keyless.pop(player_id, None)
        self._keys[player_id] = keys
        self._keys.move_to_end(player_id)
        while len(self._keys) > TOKEN_CACHE_SIZE:
            self._keys.popitem(last=False)

    def cached_token(self, token_hash: bytes) -> PlayerToken | None:
        """The working token with this hash if memory has it (no I/O: safe on the event loop)."""
        return self._tokens.get(token_hash)

    async def token_for_hash(self, token_hash: bytes) -> PlayerToken | None:
        """The token with this hash, working or not, or None: the auth interceptor's lookup."""
        cached = self._tokens.get(token_hash)
        if cached is not None:
            return cached
        found = await self._records.find_token(token_hash)
        if found is not None and found.live:
            self._tokens.put(token_hash, found)
        return found

    async def forget_retired(self) -> int:
        """Drop from the token cache every token rotated or revoked (by any process, or on the
        database) since the previous call, less :data:`RETIRED_OVERLAP`; how many were retired.
        A server process calls it every :data:`RETIRED_CHECK_SECONDS`."""
        checked_at, retired = await self._records.retired_since(
            self._retired_checked_at, RETIRED_OVERLAP
        )
        for token_hash in retired:
            self._tokens.forget(token_hash=token_hash)
        self._retired_checked_at = checked_at
        return len(retired)

    async def rotate_token(self, caller: auth.Caller, token: str, request_id: str) -> str:
        """The caller's new token, its presented ``token`` retired; the same one on a retry.

        ``caller.retired_token`` says the token was already rotated away: then only a retry of
        that very rotation is answered, anything else is TOKEN_REVOKED.
        """
        assert caller.player_id is not None  # the access table lets only players call
        presented = auth.hash_token(token)
        # Twice at most: a rotation that loses the race to a concurrent retry of itself finds
        # that retry's rotation on the second look.
        for _ in range(2):
            earlier = None
            if request_id:
                earlier = await self._records.find_rotation(
                    caller.player_id, request_id, ROTATION_RETRY_WINDOW
                )
            if earlier is not None:
                return _replay(earlier, token, presented, caller)
            if caller.retired_token:
                break
            if not request_id:
                raise ApiError(
                    "MISSING_FIELD",
                    "RotateToken needs a request_id: a lost answer is recovered only by"
                    " retrying with it",
                    field="request_id",
                )
            salt = secrets.token_bytes(32)
            new_token = auth.rotated_token(token, salt)
            rotated = await self._records.rotate_token(
                caller.player_id, presented, auth.hash_token(new_token), salt, request_id
            )
            if rotated:
                self._tokens.forget(token_hash=presented)
                return new_token
            caller = auth.Caller(player_id=caller.player_id, retired_token=True)
        raise ApiError("TOKEN_REVOKED", "this token was replaced or revoked")

    async def revoke_tokens(self, player_id: str, request_id: str) -> int:
        """Revoke every working token of a player; how many (the first count on a repeat)."""
        count = await self._records.revoke_tokens(player_id, request_id)
        self._tokens.forget(player_id=player_id)
        return count

    async def get(self, player_id: str) -> PlayerRecord | None:
        """A player's profile, or None."""
        found = await self._records.profile(player_id)
        return None if found is None else PlayerRecord(player_id, *found)

    async def public_keys(self, player_id: str) -> tuple[bytes, ...]:
        """Every public key the player registered, oldest first, read from the database (not
        ``keys_of``'s cache, which may still think a player keyless that another process gave
        a key)."""
        keys = await self._records.keys_of(player_id)
        if keys:
            self._remember_keys(player_id, keys)
        return keys

    async def display_names(self, player_ids: Iterable[str | None]) -> dict[str, str]:
        """Display names of the given players (unknown ids are left out)."""
        wanted = {player_id for player_id in player_ids if player_id}
        found = {pid: self._names[pid] for pid in wanted if pid in self._names}
        for pid in found:
            self._names.move_to_end(pid)
        missing = sorted(wanted - found.keys())
        valid = [pid for pid in missing if _is_uuid(pid)]
        if valid:
            fetched = await self._records.display_names(valid)
            self._names.update(fetched)
            while len(self._names) > TOKEN_CACHE_SIZE:
                self._names.popitem(last=False)
            found.update(fetched)
        return found


def _replay(earlier: Rotation, token: str, presented: bytes, caller: auth.Caller) -> str:
    """The answer to a repeated rotation: the new token it issued, or a refusal."""
    if presented == earlier.new_hash:
        return token  # retried with the new token: the answer had arrived after all
    if presented == earlier.old_hash:
        if not earlier.replayable:
            raise ApiError(
                "TOKEN_REVOKED",
                "this token was replaced by a rotation whose retry window is over, or whose new"
                " token no longer works",
            )
        new_token = auth.rotated_token(token, earlier.salt)
        if auth.hash_token(new_token) == earlier.new_hash:
            return new_token
    if caller.retired_token:
        raise ApiError("TOKEN_REVOKED", "this token was replaced or revoked")
    raise ApiError(
        "REQUEST_ID_REUSED",
        "this request_id already rotated another token; a new rotation needs a fresh request_id",
        field="request_id",
    )


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


class PlayerServicer(player_service_pb2_grpc.PlayerServiceServicer):
    """RegisterPlayer and GetPlayer: parse, call the directory, map back."""

    def __init__(self, directory: PlayerDirectory) -> None:
        self._directory = directory

    async def RegisterPlayer(  # noqa: N802 - the generated method name
        self,
        request: player_service_pb2.RegisterPlayerRequest,
        context: grpc.ServicerContext,
    ) -> player_service_pb2.RegisterPlayerResponse:
        """Register a player; the token is in this response only."""
        request_id = resources.check_request_id(request.request_id)
        display_name = check_display_name(request.display_name)
        player, token = await self._directory.register(
            display_name, request_id, request_digest(request)
        )
        return player_service_pb2.RegisterPlayerResponse(player=player.to_message(), token=token)

    async def GetPlayer(  # noqa: N802 - the generated method name
        self,
        request: player_service_pb2.GetPlayerRequest,
        context: grpc.ServicerContext,
    ) -> player_service_pb2.GetPlayerResponse:
        """A player's public profile and registered public keys."""
        player_id = resources.parse_player(request.name)
        player = await self._directory.get(str(player_id))
        if player is None:
            raise ApiError("PLAYER_NOT_FOUND", f"no player {request.name}", field="name")
        keys = await self._directory.public_keys(str(player_id))
        return player_service_pb2.GetPlayerResponse(
            player=player.to_message(), public_keys=list(keys)
        )

    async def RotateToken(  # noqa: N802 - the generated method name
        self,
        request: player_service_pb2.RotateTokenRequest,
        context: grpc.ServicerContext,
    ) -> player_service_pb2.RotateTokenResponse:
        """Replace the calling player's token; the same new token on a retry."""
        caller = auth.current_caller()
        try:
            request_id = resources.check_request_id(request.request_id)
        except ApiError:
            if not caller.retired_token:
                raise
            # A retired token may only retry its own rotation, which no malformed id names:
            # it is refused as revoked, not told what is wrong with the request.
            request_id = ""
        token = await self._directory.rotate_token(caller, auth.presented_token(), request_id)
        return player_service_pb2.RotateTokenResponse(token=token)

    async def RegisterPlayerKey(  # noqa: N802 - the generated method name
        self,
        request: player_service_pb2.RegisterPlayerKeyRequest,
        context: grpc.ServicerContext,
    ) -> player_service_pb2.RegisterPlayerKeyResponse:
        """Register a public key of the calling player (the access table admits players only)."""
        caller = auth.current_caller()
        assert caller.player_id is not None  # Access.PLAYER
        request_id = resources.check_request_id(request.request_id)
        created_at, keys = await self._directory.register_key(
            caller.player_id, request.public_key, request.proof, request_id
        )
        created = Timestamp()
        created.FromDatetime(created_at)
        return player_service_pb2.RegisterPlayerKeyResponse(
            player=caller.player_name,
            public_key=request.public_key,
            create_time=created,
            public_keys=list(keys),
        )

    async def RevokePlayerTokens(  # noqa: N802 - the generated method name
        self,
        request: player_service_pb2.RevokePlayerTokensRequest,
        context: grpc.ServicerContext,
    ) -> player_service_pb2.RevokePlayerTokensResponse:
        """Revoke every token of a player (the access table admits only the operator)."""
        request_id = resources.check_request_id(request.request_id)
        player_id = str(resources.parse_player(request.player, "player"))
        if await self._directory.get(player_id) is None:
            raise ApiError("PLAYER_NOT_FOUND", "no such player", field="player")
        try:
            count = await self._directory.revoke_tokens(player_id, request_id)
        except RequestIdReused:
            raise ApiError(
                "REQUEST_ID_REUSED",
                "this request_id already revoked another player's tokens;"
                " a new revocation needs a fresh request_id",
                field="request_id",
            ) from None
        return player_service_pb2.RevokePlayerTokensResponse(
            player=resources.player_name(player_id), revoked_token_count=count
        )
