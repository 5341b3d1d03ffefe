-- name: keep
-- Keep a deal's (or lot's, or round's) secret seed; a second one for the same number is refused.
INSERT INTO deal_secrets (stream_id, deal_number, seed) VALUES (%(stream)s, %(number)s, %(seed)s)

-- name: load
SELECT seed FROM deal_secrets WHERE stream_id = %(stream)s AND deal_number = %(number)s

-- name: forget
-- Once the log publishes the seed, in the same transaction.
DELETE FROM deal_secrets WHERE stream_id = %(stream)s AND deal_number = %(number)s
