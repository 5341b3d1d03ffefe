"""Players' bearer tokens, by their SHA-256 hashes: issued, looked up, rotated, revoked.

One row of ``player_tokens`` (migration 0004) per token a player was ever given. The table holds
hashes only: nothing here can act as a player. Deriving tokens and deciding who may use one is
``sapsam.api.auth``'s business; this module only reads and writes the rows, in the caller's
transaction where several statements must agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

import psycopg

from sapsam.log.records import RequestIdReused
from sapsam.store.queries import query

Connection = psycopg.AsyncConnection[Any]

ROTATED: Final = "ROTATED"
"""``revoked_because`` of a token its player replaced by rotation."""
REVOKED: Final = "REVOKED"
"""``revoked_because`` of a token the operator revoked."""


@dataclass(frozen=True)
class PlayerToken:
    """What the store knows of one token: whose it is, since when, and whether it still works."""

    player_id: str
    issued_at: datetime | None = None
    """When the token was issued; ``None`` for a token that never expires (tests' fixed tokens)."""
    revoked_because: str | None = None
    """``None`` while the token works; else :data:`ROTATED` or :data:`REVOKED`."""

    @property
    def live(self) -> bool:
        """Whether the token still works (expiry aside: that is the server's setting)."""
        return self.revoked_because is None


@dataclass(frozen=True)
class Rotation:
    """A rotation a player made: the token it replaced, the token it issued, and how."""

    old_hash: bytes
    new_hash: bytes
    salt: bytes
    replayable: bool
    """Whether a retry sent with the old token may still get the new one: the new token still
    works (it was not rotated or revoked since) and the rotation is inside the retry window."""


async def player_exists(connection: Connection, player_id: str) -> bool:
    """Whether a player with this id (a UUID) registered."""
    row = await (
        await connection.execute(query("player_tokens.player_exists"), {"player": player_id})
    ).fetchone()
    return row is not None


async def insert_token(connection: Connection, player_id: str, token_hash: bytes) -> None:
    """Record a newly registered player's first token, issued now (the transaction's time)."""
    await connection.execute(
        query("player_tokens.insert"), {"token": token_hash, "player": player_id}
    )


async def find_token(connection: Connection, token_hash: bytes) -> PlayerToken | None:
    """The token with this hash, live or not; ``None`` if no player was ever given it."""
    row = await (
        await connection.execute(query("player_tokens.find"), {"token": token_hash})
    ).fetchone()
    if row is None:
        return None
    return PlayerToken(str(row[0]), row[1], None if row[2] is None else str(row[2]))


async def retired_since(
    connection: Connection, since: datetime | None, overlap: timedelta
) -> tuple[datetime, list[bytes]]:
    """The database's clock now, and the hashes of the tokens rotated away or revoked after
    ``since - overlap`` by that clock (``since`` None: now). The overlap catches a retirement
    stamped with its transaction's start but committed after the previous answer's clock."""
    cursor = await connection.execute(
        query("player_tokens.retired_since"), {"since": since, "overlap": overlap}
    )
    row = await cursor.fetchone()
    assert row is not None  # one row, always
    return row[0], [bytes(token_hash) for token_hash in row[1]]


async def find_rotation(
    connection: Connection, player_id: str, request_id: str, retry_window: timedelta
) -> Rotation | None:
    """The rotation the player made with ``request_id``, if any; the window is measured by the
    database's clock, the one that stamped ``issued_at``."""
    row = await (
        await connection.execute(
            query("player_tokens.find_rotation"),
            {"window": retry_window, "player": player_id, "request": request_id},
        )
    ).fetchone()
    if row is None:
        return None
    return Rotation(bytes(row[0]), bytes(row[1]), bytes(row[2]), bool(row[3]))


async def rotate_token(
    connection: Connection,
    player_id: str,
    old_hash: bytes,
    new_hash: bytes,
    salt: bytes,
    request_id: str,
) -> bool:
    """Retire the live token ``old_hash`` and issue ``new_hash`` in its place, in one transaction.

    False (and nothing written) when ``old_hash`` is no longer the player's live token: another
    rotation or a revocation got there first. The UPDATE's row lock makes a concurrent rotation of
    the same token wait for this one and then find it retired.
    """
    async with connection.transaction():
        retired = await connection.execute(
            query("player_tokens.retire"),
            {"because": ROTATED, "token": old_hash, "player": player_id},
        )
        if retired.rowcount != 1:
            return False
        await connection.execute(
            query("player_tokens.insert_rotated"),
            {
                "token": new_hash,
                "player": player_id,
                "old": old_hash,
                "salt": salt,
                "request": request_id,
            },
        )
    return True


async def revoke_player_tokens(connection: Connection, player_id: str, request_id: str) -> int:
    """Revoke every live token of the player; how many were revoked.

    A repeat of a revocation (same non-empty ``request_id``) revokes nothing more and answers the
    first revocation's count; the same ``request_id`` naming another player raises
    ``RequestIdReused`` (an idempotency key names one request, never two).
    """
    async with connection.transaction():
        if request_id:
            rows = await (
                await connection.execute(query("player_tokens.revoked_by"), {"request": request_id})
            ).fetchall()
            if any(str(other) != player_id for other, _ in rows):
                raise RequestIdReused(request_id, "to revoke another player's tokens")
            if rows:
                return int(rows[0][1])
        revoked = await connection.execute(
            query("player_tokens.revoke_all"),
            {"because": REVOKED, "request": request_id or None, "player": player_id},
        )
    return revoked.rowcount
