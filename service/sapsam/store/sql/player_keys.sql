-- name: register
-- A player's new public key, unless it has %(limit)s keys already; nothing (no row returned) when
-- the key is already registered or the player is at its limit.
INSERT INTO player_keys (public_key, player_id, proof, request_id)
SELECT %(key)s, %(player)s, %(proof)s, %(request)s
WHERE (SELECT count(*) FROM player_keys WHERE player_id = %(player)s) < %(limit)s
ON CONFLICT (public_key) DO NOTHING
RETURNING created_at

-- name: owner
-- Who registered a key, and when.
SELECT player_id::text, created_at FROM player_keys WHERE public_key = %(key)s

-- name: keys_of
-- A player's keys, oldest first.
SELECT public_key FROM player_keys WHERE player_id = %(player)s ORDER BY created_at, public_key

-- name: by_request
-- The key a player registered with a request id, if any.
SELECT public_key FROM player_keys WHERE player_id = %(player)s AND request_id = %(request)s
