-- name: start_interval
-- This process starts (or resumes, after an outage) a serving interval.
INSERT INTO serving_intervals (server_id, started_ms, beat_ms)
VALUES (%(server)s, %(now)s, %(now)s) ON CONFLICT DO NOTHING

-- name: beat
UPDATE serving_intervals SET beat_ms = greatest(beat_ms, %(now)s)
WHERE server_id = %(server)s AND started_ms = %(started)s

-- name: intervals_since
-- The intervals that reach since, and the last one before it.
(SELECT server_id::text, started_ms, beat_ms FROM serving_intervals
    WHERE beat_ms >= %(since)s)
UNION ALL
(SELECT server_id::text, started_ms, beat_ms FROM serving_intervals
    WHERE beat_ms < %(since)s ORDER BY beat_ms DESC LIMIT 1)

-- name: known_before
SELECT EXISTS (SELECT 1 FROM serving_intervals WHERE started_ms < %(first)s)
