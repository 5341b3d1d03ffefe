"""The players' rows (``players``, migration 0002), their tokens (``player_tokens``) and their
public keys (``player_keys``, migration 0010), for the API's player directory: each method one
store operation on a pooled connection.

The statements are in ``store/sql/players.sql``, ``player_tokens`` and ``player_keys``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from psycopg_pool import AsyncConnectionPool

from sapsam.store import player_tokens
from sapsam.store.player_tokens import PlayerToken, Rotation
from sapsam.store.queries import query


@dataclass(frozen=True)
class Registration:
    """The player a request id registered, and the digest of that request (if it gave one)."""

    player_id: str
    request_digest: bytes | None


@dataclass(frozen=True)
class PlayerRecords:
    """Players and their tokens in the database, through a pool."""

    pool: AsyncConnectionPool[Any]

    async def register(
        self,
        player_id: str,
        display_name: str,
        request_id: str | None,
        request_digest: bytes | None,
        token_hash: bytes,
    ) -> datetime | None:
        """Register a player with its first token; its creation time, or None (and nothing
        written) when ``request_id`` already registered a player."""
        async with self.pool.connection() as connection:
            row = await (
                await connection.execute(
                    query("players.register"),
                    {
                        "player": player_id,
                        "name": display_name,
                        "request": request_id,
                        "digest": request_digest,
                    },
                )
            ).fetchone()
            if row is None:
                return None
            await player_tokens.insert_token(connection, player_id, token_hash)
        created_at: datetime = row[0]
        return created_at

    async def registered_by(self, request_id: str) -> Registration | None:
        """Who ``request_id`` registered, if anyone."""
        async with self.pool.connection() as connection:
            row = await (
                await connection.execute(query("players.registered_by"), {"request": request_id})
            ).fetchone()
        if row is None:
            return None
        return Registration(str(row[0]), None if row[1] is None else bytes(row[1]))

    async def profile(self, player_id: str) -> tuple[str, datetime] | None:
        """A player's display name and registration time, or None."""
        async with self.pool.connection() as connection:
            row = await (
                await connection.execute(query("players.profile"), {"player": player_id})
            ).fetchone()
        return None if row is None else (str(row[0]), row[1])

    async def display_names(self, player_ids: Sequence[str]) -> dict[str, str]:
        """The display names of these players (ids that are UUIDs; unknown ones left out)."""
        async with self.pool.connection() as connection:
            rows = await (
                await connection.execute(
                    query("players.display_names"), {"players": list(player_ids)}
                )
            ).fetchall()
        return {str(player_id): str(name) for player_id, name in rows}

    async def find_token(self, token_hash: bytes) -> PlayerToken | None:
        """The token with this hash, working or not."""
        async with self.pool.connection() as connection:
            return await player_tokens.find_token(connection, token_hash)

    async def retired_since(
        self, since: datetime | None, overlap: timedelta
    ) -> tuple[datetime, list[bytes]]:
        """The database's clock now, and the tokens retired (rotated or revoked) after
        ``since - overlap`` (``since`` None: now)."""
        async with self.pool.connection() as connection:
            return await player_tokens.retired_since(connection, since, overlap)

    async def find_rotation(
        self, player_id: str, request_id: str, retry_window: timedelta
    ) -> Rotation | None:
        """The rotation the player made with ``request_id``, if any."""
        async with self.pool.connection() as connection:
            return await player_tokens.find_rotation(
                connection, player_id, request_id, retry_window
            )

    async def rotate_token(
        self, player_id: str, old_hash: bytes, new_hash: bytes, salt: bytes, request_id: str
    ) -> bool:
        """Retire ``old_hash`` and issue ``new_hash``; False if ``old_hash`` no longer works."""
        async with self.pool.connection() as connection:
            return await player_tokens.rotate_token(
                connection, player_id, old_hash, new_hash, salt, request_id
            )

    async def revoke_tokens(self, player_id: str, request_id: str) -> int:
        """Revoke every working token of a player; how many (the first count on a repeat)."""
        async with self.pool.connection() as connection:
            return await player_tokens.revoke_player_tokens(connection, player_id, request_id)

    async def register_key(
        self, player_id: str, public_key: bytes, proof: bytes, request_id: str, limit: int
    ) -> datetime | None:
        """Record a player's new public key (unless it has ``limit`` keys); when it was
        recorded, or None (nothing written) when the key is already on record or the player is at
        its limit."""
        async with self.pool.connection() as connection:
            row = await (
                await connection.execute(
                    query("player_keys.register"),
                    {
                        "key": public_key,
                        "player": player_id,
                        "proof": proof,
                        "request": request_id,
                        "limit": limit,
                    },
                )
            ).fetchone()
        if row is None:
            return None
        created_at: datetime = row[0]
        return created_at

    async def key_owner(self, public_key: bytes) -> tuple[str, datetime] | None:
        """The player a key belongs to and when it was registered, or None."""
        async with self.pool.connection() as connection:
            row = await (
                await connection.execute(query("player_keys.owner"), {"key": public_key})
            ).fetchone()
        return None if row is None else (str(row[0]), row[1])

    async def keys_of(self, player_id: str) -> tuple[bytes, ...]:
        """A player's public keys, oldest first."""
        async with self.pool.connection() as connection:
            rows = await (
                await connection.execute(query("player_keys.keys_of"), {"player": player_id})
            ).fetchall()
        return tuple(bytes(row[0]) for row in rows)

    async def key_registered_by(self, player_id: str, request_id: str) -> bytes | None:
        """The key ``player_id`` registered with ``request_id``, if any."""
        async with self.pool.connection() as connection:
            row = await (
                await connection.execute(
                    query("player_keys.by_request"), {"player": player_id, "request": request_id}
                )
            ).fetchone()
        return None if row is None else bytes(row[0])
