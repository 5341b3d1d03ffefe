-- name: safe_position
-- The proven high-water mark of the global order (see sapsam.store.reads).
SELECT sapsam_safe_position()

-- name: stream_version
SELECT coalesce(max(version), 0) FROM events WHERE stream_id = %(stream)s

-- name: last_position
SELECT coalesce(max(position), 0) FROM events
