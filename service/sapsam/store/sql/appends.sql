-- name: keep_secret_with_append
-- A deal's (or lot's) secret seed kept by the append that starts it, inside the append's own
-- statement: written only if the events were (``inserted`` holds their rows); a second seed for
-- the same number is refused on the key, and the append with it.
INSERT INTO deal_secrets (stream_id, deal_number, seed)
SELECT %(stream)s::text, %(number)s::int, %(seed)s::bytea
FROM (SELECT 1 FROM inserted LIMIT 1) AS appended

-- name: forget_secret_with_append
-- A seed the appended events publish, deleted by the same statement: never in both places or in
-- neither.
DELETE FROM deal_secrets
WHERE stream_id = %(stream)s::text AND deal_number = %(number)s::int
    AND EXISTS (SELECT 1 FROM inserted)

-- name: keep_secrets_with_batch
-- The same for every append of a commit group's batch statement (sapsam.store.batch_statement)
-- that keeps seeds: ``appended`` holds only appends whose events were inserted.
INSERT INTO deal_secrets (stream_id, deal_number, seed)
SELECT a.stream, (part.x->>'number')::int, decode(part.x->>'seed', 'hex')
FROM appended AS a, jsonb_array_elements(a.parts->'keep_secret') AS part(x)

-- name: forget_secrets_with_batch
-- The seeds the batch's appended events publish, deleted by the same statement.
DELETE FROM deal_secrets
USING appended AS a, jsonb_array_elements(a.parts->'forget_secret') AS part(x)
WHERE deal_secrets.stream_id = a.stream
    AND deal_secrets.deal_number = (part.x->>'number')::int
