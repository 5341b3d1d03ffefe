-- Who wants the appends' wake-ups (migrations 0006 and 0012, sapsam.store.subscriptions). A
-- listener is a LISTENing session, known by its backend pid; its row holds until expires_at unless
-- renewed. The server's event feed wants no event type but the streams it lists in wakeup_streams,
-- whose rows go with its row (ON DELETE CASCADE).

-- name: register
-- This session wants wake-ups of appends with one of these event types (NULL: of every append)
-- for the next ``seconds``. Written with its LISTEN, before its first read. Streams a dead session
-- of the same pid had listed are dropped: this one wants them only by their event types.
WITH stale_streams AS (
    DELETE FROM wakeup_streams WHERE listener = pg_backend_pid()::text
)
INSERT INTO wakeup_listeners (listener, event_types, expires_at)
VALUES (pg_backend_pid()::text, %(types)s::text[], now() + %(seconds)s * interval '1 second')
ON CONFLICT (listener) DO UPDATE
SET event_types = excluded.event_types, expires_at = excluded.expires_at

-- name: unregister
-- Its streams go with it (ON DELETE CASCADE).
DELETE FROM wakeup_listeners WHERE listener = pg_backend_pid()::text

-- name: renew_feed
-- The event feed's session wants the wake-ups of its streams (wakeup_streams), of no event type,
-- for the next ``seconds`` more; answers whether its row was written anew (``created``: it had
-- been deleted, and its streams with it, so the feed lists them again). Deletes the rows of
-- listeners lapsed for more than ``seconds`` (a process that died), with their streams, so they
-- do not pile up; never its own (the statement would change that row twice).
WITH lapsed AS (
    DELETE FROM wakeup_listeners
    WHERE expires_at < now() - %(seconds)s * interval '1 second'
        AND listener <> pg_backend_pid()::text
)
INSERT INTO wakeup_listeners (listener, event_types, expires_at)
VALUES (pg_backend_pid()::text, '{}', now() + %(seconds)s * interval '1 second')
ON CONFLICT (listener) DO UPDATE SET event_types = '{}', expires_at = excluded.expires_at
RETURNING xmax = 0 AS created

-- name: watch_streams
-- The event feed's session wants the wake-ups of the ``added`` streams too, and no longer those of
-- the ``dropped`` ones. Answers the last version of each added stream (0: none yet): an append
-- that committed before the row could be seen sent no wake-up, so the feed reads what it missed.
WITH dropped AS (
    DELETE FROM wakeup_streams
    WHERE listener = pg_backend_pid()::text AND stream_id = ANY (%(dropped)s::text[])
), added AS (
    INSERT INTO wakeup_streams (stream_id, listener)
    SELECT stream, pg_backend_pid()::text FROM unnest(%(added)s::text[]) AS stream
    ON CONFLICT DO NOTHING
)
SELECT stream, (SELECT max(version) FROM events WHERE stream_id = stream)
FROM unnest(%(added)s::text[]) AS stream
