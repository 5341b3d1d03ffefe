-- The database-wide gauges of the metrics endpoint (sapsam.store.metrics_reads), read every
-- few seconds by each serving process: each the same from every replica.

-- name: deadlines
-- Tables waiting for seats under a deadline: still running, and passed (the sweeper acts on
-- those within a second; more than a handful for long is a stuck sweeper).
SELECT count(*) FILTER (WHERE deadline_ms > %(now)s),
    count(*) FILTER (WHERE deadline_ms <= %(now)s)
FROM table_state
WHERE deadline_ms IS NOT NULL AND phase IN ('ARRANGING', 'ANNOUNCING', 'REVEALING', 'PLAYING')

-- name: failing_tables
-- Tables background work keeps failing on, per process (deadlines, results).
SELECT process, count(*) FROM background_failures GROUP BY process

-- name: log_position
-- The last position drawn in the log (its rate is the appends' events per second, every
-- replica's together).
SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('events', 'position')::regclass), 0)

-- name: checkpoint_lag
-- The newest signed checkpoint: its age in seconds, and the events appended after the last
-- one it covers, counted up to %(cap)s (a checkpointer stopped for long must not make this
-- statement long); no row before the first checkpoint.
SELECT extract(epoch FROM now() - c.issued_at)::float8,
    (SELECT count(*) FROM (
        SELECT 1 FROM events e WHERE e.position > l.position LIMIT %(cap)s) AS after)
FROM log_checkpoints c
JOIN merkle_leaves l ON l.leaf_index = c.size - 1
ORDER BY c.size DESC LIMIT 1
