-- name: register
-- A new player; nothing (no row returned) when the request id already registered one.
INSERT INTO players (player_id, display_name, request_id, request_digest)
VALUES (%(player)s, %(name)s, %(request)s, %(digest)s)
ON CONFLICT (request_id) DO NOTHING
RETURNING created_at

-- name: registered_by
-- The player a request id registered, and that request's digest.
SELECT player_id, request_digest FROM players WHERE request_id = %(request)s

-- name: profile
SELECT display_name, created_at FROM players WHERE player_id = %(player)s

-- name: display_names
SELECT player_id::text, display_name FROM players WHERE player_id = ANY(%(players)s::uuid[])

-- name: named
-- Every player with exactly this display name, oldest first (display names need not be unique).
SELECT player_id::text, display_name FROM players WHERE display_name = %(name)s
ORDER BY created_at, player_id
