-- name: start_interval
-- This process starts (or resumes, after an outage) a serving interval.
INSERT INTO serving_intervals (server_id, started_ms, beat_ms)
VALUES (%(server)s, %(now)s, %(now)s) ON CONFLICT DO NOTHING

-- name: beat
UPDATE serving_intervals SET beat_ms = greatest(beat_ms, %(now)s)
WHERE server_id = %(server)s AND started_ms = %(started)s

-- name: intervals_since
-- Every interval that overlaps the time from the start of interest on, and the one that ended last
-- before it (docs/reliability.md, finding 6). The start of interest steps back from since to the
-- earliest start of the intervals reaching it, until no interval reaching it starts earlier: then
-- every other interval ended before it, so they and the last of them say all about the time after.
WITH RECURSIVE reach (lo) AS (
    SELECT %(since)s::bigint
  UNION ALL
    SELECT earlier.lo FROM reach CROSS JOIN LATERAL (
        SELECT min(started_ms) AS lo FROM serving_intervals WHERE beat_ms >= reach.lo
    ) AS earlier
    WHERE earlier.lo < reach.lo
), interest AS (SELECT min(lo) AS lo FROM reach)
(SELECT server_id::text, started_ms, beat_ms FROM serving_intervals, interest
    WHERE beat_ms >= interest.lo)
UNION ALL
(SELECT server_id::text, started_ms, beat_ms FROM serving_intervals, interest
    WHERE beat_ms < interest.lo ORDER BY beat_ms DESC LIMIT 1)

-- name: known_before
SELECT EXISTS (SELECT 1 FROM serving_intervals WHERE started_ms < %(first)s)
