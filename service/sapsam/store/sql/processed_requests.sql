-- name: find
SELECT stream_id, fingerprint, first_version, last_version, first_position,
    last_position, response, request_digest
FROM processed_requests WHERE request_id = %(request)s

-- name: prune
DELETE FROM processed_requests WHERE processed_at < now() - %(older_than)s
