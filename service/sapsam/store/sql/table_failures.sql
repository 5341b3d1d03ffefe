-- name: record
-- One more failure of a process at a table: the count, when to try next (first_retry doubled at
-- each failure up to cap), only the error's type, and the results process's positions still due.
INSERT INTO background_failures (process, table_id, failures, first_failed_ms,
    last_failed_ms, retry_at_ms, last_error, pending_positions)
VALUES (%(process)s, %(table)s, 1, %(now)s, %(now)s, %(now)s + %(first)s, %(error)s,
    %(pending)s::bigint[])
ON CONFLICT (process, table_id) DO UPDATE SET
    failures = background_failures.failures + 1,
    last_failed_ms = excluded.last_failed_ms,
    last_error = excluded.last_error,
    retry_at_ms = excluded.last_failed_ms + least(
        %(first)s * power(2, least(background_failures.failures, 20))::bigint, %(cap)s),
    pending_positions = background_failures.pending_positions || ARRAY(
        SELECT position FROM unnest(excluded.pending_positions) AS position
        WHERE position <> ALL (background_failures.pending_positions))
RETURNING process, table_id::text, failures, first_failed_ms, last_failed_ms, retry_at_ms,
    last_error, pending_positions

-- name: clear
DELETE FROM background_failures WHERE process = %(process)s AND table_id = %(table)s

-- name: failing
-- Every recorded failure (of one process, or of all when process is NULL), longest failing first.
SELECT process, table_id::text, failures, first_failed_ms, last_failed_ms, retry_at_ms,
    last_error, pending_positions
FROM background_failures
WHERE %(process)s::text IS NULL OR process = %(process)s
ORDER BY first_failed_ms, process, table_id

-- name: add_pending
UPDATE background_failures SET pending_positions = pending_positions || %(position)s::bigint
WHERE process = %(process)s AND table_id = %(table)s

-- name: remove_pending
UPDATE background_failures SET pending_positions =
    array_remove(pending_positions, %(position)s::bigint)
WHERE process = %(process)s AND table_id = %(table)s

-- name: pending_count
-- Locks the row: the caller clears it only if nothing is left pending.
SELECT cardinality(pending_positions) FROM background_failures
WHERE process = %(process)s AND table_id = %(table)s FOR UPDATE

-- name: overdue
-- Tables in play whose deadline passed long ago: nobody timed their seats out.
SELECT table_id::text, phase, deadline_ms FROM table_state
WHERE deadline_ms < %(before)s AND phase IN ('ARRANGING', 'ANNOUNCING', 'REVEALING', 'PLAYING')
ORDER BY deadline_ms LIMIT %(limit)s
