"""Players: registration with a bearer token, look-up by token hash, and the PlayerService.

A player is a row in ``players`` (migration 0002): id, display name, the SHA-256 hash of its
token, and the request id that created it. The token is returned once, by RegisterPlayer, and
never stored; a retried RegisterPlayer (same request id) finds the player but cannot show the
token again, so it is answered ALREADY_EXISTS (``TOKEN_ALREADY_ISSUED``) naming the player.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import grpc
from google.protobuf.timestamp_pb2 import Timestamp
from psycopg_pool import ConnectionPool

from sapsam.api import auth, resources
from sapsam.api.errors import ApiError
from sapsam.api.generated.v1 import player_pb2, player_service_pb2, player_service_pb2_grpc
from sapsam.api.request_digest import request_digest

MAX_DISPLAY_NAME_LENGTH: Final = 64


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
    """The ``players`` table: register, find by token hash, read profiles (names cached)."""

    def __init__(self, pool: ConnectionPool[Any]) -> None:
        self._pool = pool
        # Display names never change, so they are cached for the table views.
        self._names: dict[str, str] = {}
        self._names_lock = threading.Lock()

    def register(
        self, display_name: str, request_id: str, request_digest: bytes | None = None
    ) -> tuple[PlayerRecord, str]:
        """A new player and its token; a repeated ``request_id`` raises TOKEN_ALREADY_ISSUED, or
        REQUEST_ID_REUSED when its ``request_digest`` (``sapsam.api.request_digest``) differs."""
        token = auth.new_token()
        player_id = str(uuid.uuid4())
        with self._pool.connection() as connection:
            row = connection.execute(
                """
                INSERT INTO players (player_id, display_name, token_hash, request_id,
                    request_digest)
                VALUES (%s, %s, %s, %s, %s)
                ON CONFLICT (request_id) DO NOTHING
                RETURNING created_at
                """,
                [
                    player_id,
                    display_name,
                    auth.hash_token(token),
                    request_id or None,
                    request_digest,
                ],
            ).fetchone()
            if row is None:
                earlier = connection.execute(
                    "SELECT player_id, request_digest FROM players WHERE request_id = %s",
                    [request_id],
                ).fetchone()
                if (
                    earlier
                    and request_digest
                    and earlier[1]
                    and bytes(earlier[1]) != request_digest
                ):
                    raise ApiError(
                        "REQUEST_ID_REUSED",
                        "this request_id already registered a player with a different request;"
                        " a new registration needs a fresh request_id",
                        field="request_id",
                    )
                existing = resources.player_name(str(earlier[0])) if earlier else ""
                raise ApiError(
                    "TOKEN_ALREADY_ISSUED",
                    "this request_id already registered a player; its token is shown only once",
                    metadata={"player": existing},
                )
        return PlayerRecord(player_id, display_name, row[0]), token

    def player_for_token_hash(self, token_hash: bytes) -> str | None:
        """The player id holding a token (by its hash), or None: the auth interceptor's lookup."""
        with self._pool.connection() as connection:
            row = connection.execute(
                "SELECT player_id FROM players WHERE token_hash = %s", [token_hash]
            ).fetchone()
        return str(row[0]) if row else None

    def get(self, player_id: str) -> PlayerRecord | None:
        """A player's profile, or None."""
        with self._pool.connection() as connection:
            row = connection.execute(
                "SELECT display_name, created_at FROM players WHERE player_id = %s",
                [player_id],
            ).fetchone()
        return PlayerRecord(player_id, str(row[0]), row[1]) if row else None

    def display_names(self, player_ids: Iterable[str | None]) -> dict[str, str]:
        """Display names of the given players (unknown ids are left out)."""
        wanted = {player_id for player_id in player_ids if player_id}
        with self._names_lock:
            found = {pid: self._names[pid] for pid in wanted if pid in self._names}
        missing = sorted(wanted - found.keys())
        valid = [pid for pid in missing if _is_uuid(pid)]
        if valid:
            with self._pool.connection() as connection:
                rows = connection.execute(
                    "SELECT player_id::text, display_name FROM players"
                    " WHERE player_id = ANY(%s::uuid[])",
                    [valid],
                ).fetchall()
            fetched = {str(pid): str(name) for pid, name in rows}
            with self._names_lock:
                self._names.update(fetched)
            found.update(fetched)
        return found


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

    def RegisterPlayer(  # noqa: N802 - the generated method name
        self,
        request: player_service_pb2.RegisterPlayerRequest,
        context: grpc.ServicerContext,
    ) -> player_service_pb2.RegisterPlayerResponse:
        """Register a player; the token is in this response only."""
        request_id = resources.check_request_id(request.request_id)
        display_name = check_display_name(request.display_name)
        player, token = self._directory.register(display_name, request_id, request_digest(request))
        return player_service_pb2.RegisterPlayerResponse(player=player.to_message(), token=token)

    def GetPlayer(  # noqa: N802 - the generated method name
        self,
        request: player_service_pb2.GetPlayerRequest,
        context: grpc.ServicerContext,
    ) -> player_service_pb2.GetPlayerResponse:
        """A player's public profile."""
        player_id = resources.parse_player(request.name)
        player = self._directory.get(str(player_id))
        if player is None:
            raise ApiError("PLAYER_NOT_FOUND", f"no player {request.name}", field="name")
        return player_service_pb2.GetPlayerResponse(player=player.to_message())
