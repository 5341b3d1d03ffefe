-- Who wants the appends' wake-ups (migration 0006, sapsam.store.subscriptions). A listener is a
-- LISTENing session, known by its backend pid; its row holds until expires_at unless renewed.

-- name: register
-- This session wants wake-ups of appends with one of these event types (NULL: of every append)
-- for the next ``seconds``. Written with its LISTEN, before its first read.
INSERT INTO wakeup_listeners (listener, event_types, expires_at)
VALUES (pg_backend_pid()::text, %(types)s::text[], now() + %(seconds)s * interval '1 second')
ON CONFLICT (listener) DO UPDATE
SET event_types = excluded.event_types, expires_at = excluded.expires_at

-- name: unregister
DELETE FROM wakeup_listeners WHERE listener = pg_backend_pid()::text

-- name: renew_if_listening
-- A session that LISTENs on the wake-up channel (the event feed, at each poll) wants every
-- append's wake-up for the next ``seconds`` more: a row lost with a crash comes back within a poll.
INSERT INTO wakeup_listeners (listener, event_types, expires_at)
SELECT pg_backend_pid()::text, NULL, now() + %(seconds)s * interval '1 second'
WHERE %(channel)s = ANY (ARRAY(SELECT pg_listening_channels()))
ON CONFLICT (listener) DO UPDATE SET event_types = NULL, expires_at = excluded.expires_at
