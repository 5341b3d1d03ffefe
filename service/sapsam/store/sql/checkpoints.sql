-- name: create_table
-- Process state, not a read model: created on first use, never rebuilt from the log.
CREATE TABLE IF NOT EXISTS tournament_checkpoints (
    name text PRIMARY KEY,
    position bigint NOT NULL
)

-- name: read
SELECT position FROM tournament_checkpoints WHERE name = %(name)s

-- name: save
-- GREATEST: a checkpoint never moves back, whoever writes it.
INSERT INTO tournament_checkpoints (name, position) VALUES (%(name)s, %(position)s)
ON CONFLICT (name) DO UPDATE
SET position = GREATEST(tournament_checkpoints.position, excluded.position)
