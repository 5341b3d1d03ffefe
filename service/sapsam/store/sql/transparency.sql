-- The transparency log's tree, leaves and signed checkpoints (docs/transparency.md §7). Every
-- table here is append-only: rows are only ever inserted, by the one checkpointer holding the
-- lock (sapsam.store.transparency).

-- name: try_lock
-- One checkpointer at a time across processes, for the length of its transaction.
SELECT pg_try_advisory_xact_lock(7526466447829417326)

-- name: last_leaf
-- The tree's size is the last leaf's index + 1; its position is where the next read starts.
SELECT leaf_index, position FROM merkle_leaves ORDER BY leaf_index DESC LIMIT 1

-- name: event_hashes_after
-- The chained hashes the next leaves are made of, in global order, at or below a bound
-- (the proven high-water mark when the page has a hole: see sapsam.store.reads).
SELECT position, hash FROM events
WHERE position > %(after)s AND position <= %(bound)s
ORDER BY position LIMIT %(limit)s

-- name: nodes
-- Stored perfect subtrees by (level, index), the ids given as two parallel arrays.
SELECT n.level, n.index, n.hash
FROM unnest(%(levels)s::smallint[], %(indexes)s::bigint[]) AS wanted (level, index)
JOIN merkle_nodes n ON n.level = wanted.level AND n.index = wanted.index

-- name: insert_nodes
-- The arrays go in binary (%b): a hash array in text costs psycopg an escaped copy of every byte
-- (~3 us a node, two nodes a leaf, against ~0.5 in binary).
INSERT INTO merkle_nodes (level, index, hash)
SELECT * FROM unnest(%(levels)b::smallint[], %(indexes)b::bigint[], %(hashes)b::bytea[])

-- name: insert_leaves
INSERT INTO merkle_leaves (leaf_index, position)
SELECT * FROM unnest(%(indexes)b::bigint[], %(positions)b::bigint[])

-- name: insert_checkpoint
INSERT INTO log_checkpoints (size, root, issued_at, note)
VALUES (%(size)s, %(root)s, to_timestamp(%(time)s), %(note)s)

-- name: latest_checkpoint
SELECT size, root, note FROM log_checkpoints ORDER BY size DESC LIMIT 1

-- name: latest_witnessed_checkpoint
-- The newest checkpoint a witness cosigned (an export carries it when it covers every exported
-- event: docs/audit.md §2.5); max(size) reads the cosignatures' primary key from its end.
SELECT size, root, note FROM log_checkpoints
WHERE size = (SELECT max(size) FROM checkpoint_cosignatures)

-- name: checkpoint_of_size
SELECT size, root, note FROM log_checkpoints WHERE size = %(size)s

-- name: leaf_of_position
SELECT leaf_index FROM merkle_leaves WHERE position = %(position)s

-- name: position_of_leaf
SELECT position FROM merkle_leaves WHERE leaf_index = %(leaf)s

-- name: leaves
-- A range of leaves with each event's position and chained hash (GetLeaves; at most 1,000).
SELECT l.leaf_index, l.position, e.hash
FROM merkle_leaves l JOIN events e ON e.position = l.position
WHERE l.leaf_index >= %(start)s AND l.leaf_index < %(end)s
ORDER BY l.leaf_index

-- name: cosignatures
-- The witnesses' cosignature lines of one checkpoint, in the order they were kept.
SELECT line FROM checkpoint_cosignatures WHERE size = %(size)s ORDER BY received_at, witness_key

-- name: cosignature_lock
-- One AddCheckpointCosignature at a time per checkpoint (the count below stays true until the
-- commit); the two-key advisory locks are apart from the checkpointer's one-key lock.
SELECT pg_advisory_xact_lock(1936289635, mod(%(size)s, 2147483647)::integer)

-- name: cosignature_count
SELECT count(*), count(*) FILTER (WHERE witness_key = %(witness_key)s)
FROM checkpoint_cosignatures WHERE size = %(size)s

-- name: insert_cosignature
INSERT INTO checkpoint_cosignatures (size, witness_key, line, cosigned_at)
VALUES (%(size)s, %(witness_key)s, %(line)s, %(cosigned_at)s)

-- name: leaves_of_positions
-- The leaf indexes of events by position (an export's events; absent: not in the tree yet).
SELECT position, leaf_index FROM merkle_leaves WHERE position = ANY(%(positions)s::bigint[])
