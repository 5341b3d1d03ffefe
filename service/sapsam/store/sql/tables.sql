-- name: page
-- A page of tables, newest first (ties by id), optionally only those in some phases, after a
-- page token's (created_at, table_id); each with its creator and creation time.
SELECT table_id, created_at, created_by FROM table_state
WHERE (%(phases)s::text[] IS NULL OR phase = ANY(%(phases)s::text[]))
    AND (%(after_created)s::text IS NULL
        OR (created_at, table_id) < (%(after_created)s::text, %(after_id)s::uuid))
ORDER BY created_at DESC, table_id DESC
LIMIT %(limit)s

-- name: past_deadline
-- Tables whose arranging, announcing or reveal deadline (open face: a placement's) has passed by now,
-- earliest first; a table the
-- sweeper keeps failing on waits out its back-off and is left out meanwhile.
SELECT t.table_id::text, t.deadline_ms, f.table_id IS NOT NULL FROM table_state t
LEFT JOIN background_failures f ON f.process = %(process)s AND f.table_id = t.table_id
WHERE t.deadline_ms <= %(now)s AND t.phase IN ('ARRANGING', 'ANNOUNCING', 'REVEALING', 'PLAYING')
    AND (f.retry_at_ms IS NULL OR f.retry_at_ms <= %(now)s)
ORDER BY t.deadline_ms LIMIT %(limit)s

-- name: waiting
-- Tables in some phases (NULL: every phase but SERIES_COMPLETE), longest waiting first: what the
-- lobby shows of each, and when its last event was recorded (since then it waits).
SELECT t.table_id::text, t.phase, t.seat_count, t.players, t.dealer, t.deal_number,
    t.seat_status, t.deadline_ms, e.metadata->>'recorded_at'
FROM table_state t JOIN events e ON e.position = t.last_position
WHERE (%(phases)s::text[] IS NULL AND t.phase <> 'SERIES_COMPLETE')
    OR t.phase = ANY(%(phases)s::text[])
ORDER BY e.position LIMIT %(limit)s

-- name: waiting_past_deadline
-- The tables not complete whose deadline passed by %(now)s, as ``waiting`` shows them, longest
-- waiting first: found by their deadline (table_state_deadline), not behind every table that
-- has waited longer for something else.
SELECT t.table_id::text, t.phase, t.seat_count, t.players, t.dealer, t.deal_number,
    t.seat_status, t.deadline_ms, e.metadata->>'recorded_at'
FROM table_state t JOIN events e ON e.position = t.last_position
WHERE t.deadline_ms <= %(now)s AND t.phase <> 'SERIES_COMPLETE'
ORDER BY e.position LIMIT %(limit)s
