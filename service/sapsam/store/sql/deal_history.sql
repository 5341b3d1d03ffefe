-- A player's hand history: the scored deals of the seats they held (seat_scores), each with its
-- table's facts (table_state) and the time the deal was scored (the DealScored event).

-- name: page
-- A page of one player's scored deals: the newest table first (creation time, then id), its
-- latest deal first, then by seat; after a page token's (created_at, table_id, deal_number, seat).
-- Only the page's rows look up their DealScored event, by the table's stream.
SELECT s.table_id, s.deal_number, s.seat, s.delta, s.series_total, s.fouled, t.created_at,
    t.rule_set_name, t.seat_count, scored.recorded_at
FROM (
    SELECT s.table_id, s.deal_number, s.seat, s.delta, s.series_total, s.fouled
    FROM seat_scores s JOIN table_state t ON t.table_id = s.table_id
    WHERE s.player_id = %(player)s
        AND (%(after_created)s::text IS NULL
            OR (t.created_at, s.table_id, s.deal_number, s.seat)
                < (%(after_created)s::text, %(after_id)s::uuid, %(after_deal)s::integer,
                    %(after_seat)s::integer))
    ORDER BY t.created_at DESC, s.table_id DESC, s.deal_number DESC, s.seat DESC
    LIMIT %(limit)s
) s
JOIN table_state t ON t.table_id = s.table_id
LEFT JOIN LATERAL (
    SELECT e.metadata->>'recorded_at' AS recorded_at FROM events e
    WHERE e.stream_id = 'table-' || s.table_id::text AND e.type = 'DealScored'
        AND (e.data->>'deal_number')::integer = s.deal_number
    LIMIT 1
) scored ON true
ORDER BY t.created_at DESC, s.table_id DESC, s.deal_number DESC, s.seat DESC
