"""Player tokens get a lifecycle: each token its own row, issued, rotated away or revoked.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

Until now a player had one token for life, its hash a column of ``players``. A token now is a row
of ``player_tokens`` (still only the SHA-256 hash, never the token): when it was issued (for the
server's optional expiry), whether it still works, and why not. A player rotates its token: the
old row is marked ``ROTATED`` and the new one records which token it replaced (``rotated_from``),
the rotation's request id and a random salt. The new token is derived from the old one and that
salt (``sapsam.api.auth``), so a retried rotation, which still carries the old token, gets the same
new token back without the database ever holding a usable token. The operator revokes a player's
tokens: the live row is marked ``REVOKED`` with the revocation's request id, so a retried
revocation is recognised.

A revoked or rotated row is kept, not deleted, so the server can say TOKEN_REVOKED instead of
UNKNOWN_TOKEN. At most one token per player works at a time (a partial unique index), so two
concurrent rotations of one token cannot both succeed. The registration's token moves here with
its player's creation time as its issue time, and the column it came from goes.
"""

from __future__ import annotations

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None

UPGRADE_STATEMENTS = (
    """
    CREATE TABLE player_tokens (
        token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
        player_id uuid NOT NULL REFERENCES players (player_id),
        issued_at timestamptz NOT NULL DEFAULT now(),
        rotated_from bytea CHECK (rotated_from IS NULL OR length(rotated_from) = 32),
        rotation_salt bytea CHECK (rotation_salt IS NULL OR length(rotation_salt) = 32),
        rotation_request_id text,
        revoked_at timestamptz,
        revoked_because text CHECK (revoked_because IN ('ROTATED', 'REVOKED')),
        revocation_request_id text,
        -- A row is either live or says when and why it stopped; a rotated-to row has all three.
        CHECK ((revoked_at IS NULL) = (revoked_because IS NULL)),
        CHECK ((rotated_from IS NULL) = (rotation_salt IS NULL)),
        CHECK ((rotated_from IS NULL) = (rotation_request_id IS NULL)),
        UNIQUE (player_id, rotation_request_id)
    )
    """,
    # At most one working token per player: the row lock of the old token serialises rotations,
    # and this index is the database's own guarantee that none of them doubles a token.
    """
    CREATE UNIQUE INDEX player_tokens_live_key ON player_tokens (player_id)
        WHERE revoked_at IS NULL
    """,
    """
    INSERT INTO player_tokens (token_hash, player_id, issued_at)
    SELECT token_hash, player_id, created_at FROM players
    """,
    "ALTER TABLE players DROP COLUMN token_hash",
)

DOWNGRADE_STATEMENTS = (
    "ALTER TABLE players ADD COLUMN token_hash bytea",
    # Each player gets back its working token; one with none (revoked) gets the hash of a random
    # value nobody holds, so a downgrade never revives a revoked token.
    """
    UPDATE players p SET token_hash = coalesce(
        (SELECT t.token_hash FROM player_tokens t
         WHERE t.player_id = p.player_id AND t.revoked_at IS NULL),
        sha256(convert_to(gen_random_uuid()::text || clock_timestamp()::text, 'UTF8'))
    )
    """,
    "ALTER TABLE players ALTER COLUMN token_hash SET NOT NULL",
    "ALTER TABLE players ADD CONSTRAINT players_token_hash_check CHECK (length(token_hash) = 32)",
    "ALTER TABLE players ADD CONSTRAINT players_token_hash_key UNIQUE (token_hash)",
    "DROP TABLE player_tokens",
)


def upgrade() -> None:
    """Create player_tokens, move each player's token there, drop players.token_hash."""
    for statement in UPGRADE_STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    """Put each player's working token back on players and drop player_tokens."""
    for statement in DOWNGRADE_STATEMENTS:
        op.execute(statement)
