-- name: player_exists
SELECT 1 FROM players WHERE player_id = %(player)s

-- name: insert
-- A newly registered player's first token, issued now (the transaction's time).
INSERT INTO player_tokens (token_hash, player_id) VALUES (%(token)s, %(player)s)

-- name: find
SELECT player_id, issued_at, revoked_because FROM player_tokens WHERE token_hash = %(token)s

-- name: find_rotation
-- The rotation a player made with a request id; replayable while its new token works and it is
-- inside the retry window (measured by the database's clock, the one that stamped issued_at).
SELECT rotated_from, token_hash, rotation_salt,
    revoked_at IS NULL AND issued_at > now() - %(window)s
FROM player_tokens WHERE player_id = %(player)s AND rotation_request_id = %(request)s

-- name: retire
-- The row lock makes a concurrent rotation of the same token wait, then find it retired.
UPDATE player_tokens SET revoked_at = now(), revoked_because = %(because)s
WHERE token_hash = %(token)s AND player_id = %(player)s AND revoked_at IS NULL

-- name: insert_rotated
INSERT INTO player_tokens
    (token_hash, player_id, rotated_from, rotation_salt, rotation_request_id)
VALUES (%(token)s, %(player)s, %(old)s, %(salt)s, %(request)s)

-- name: revoked_by
-- Whose tokens a revocation request id revoked, and how many.
SELECT player_id::text, count(*) FROM player_tokens
WHERE revocation_request_id = %(request)s GROUP BY player_id

-- name: revoke_all
UPDATE player_tokens
SET revoked_at = now(), revoked_because = %(because)s, revocation_request_id = %(request)s
WHERE player_id = %(player)s AND revoked_at IS NULL

-- name: retired_since
-- The database's clock now, and the tokens rotated away or revoked after ``since`` less
-- ``overlap`` (``since`` NULL: now), by the same clock (the partial index player_tokens_retired
-- reads only those): each server process asks every second and drops them from its token cache.
SELECT now(), ARRAY(
    SELECT token_hash FROM player_tokens
    WHERE revoked_at > coalesce(%(since)s::timestamptz, now()) - %(overlap)s::interval)
