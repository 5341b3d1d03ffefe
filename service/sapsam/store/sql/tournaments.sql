-- Places are rank(): equal keys share a place and the next place skips (1, 1, 3), exactly as
-- sapsam.domain.tournament.rank_players; lines sharing a place are listed by player id so that
-- pages are stable. A leaderboard sums tournament_entries over the tournaments that started,
-- optionally only those of one rule set and one period (the UTC month a tournament started in);
-- both its statements share the same two CTEs (board, ranked).

-- name: standings
SELECT player_id, total, deals_won, deals_played,
    rank() OVER (ORDER BY total DESC) AS place
FROM tournament_entries WHERE tournament_id = %(tournament)s
ORDER BY place, player_id OFFSET %(offset)s LIMIT %(limit)s

-- name: standings_deals_won
-- Tie-break deals_won: equal totals are ranked by deals won.
SELECT player_id, total, deals_won, deals_played,
    rank() OVER (ORDER BY total DESC, deals_won DESC) AS place
FROM tournament_entries WHERE tournament_id = %(tournament)s
ORDER BY place, player_id OFFSET %(offset)s LIMIT %(limit)s

-- name: standings_size
SELECT count(*) FROM tournament_entries WHERE tournament_id = %(tournament)s

-- name: leaderboard
-- A page of the board and the board's size, in one pass over the entries: the size rides on
-- every line, and on one line of NULLs when the page is past the end.
WITH board AS (
    SELECT entry.player_id, sum(entry.total)::bigint AS total,
        sum(entry.deals_played) AS deals_played, count(*) AS tournaments_played
    FROM tournament_entries entry JOIN tournaments USING (tournament_id)
    WHERE tournaments.started_at_ms IS NOT NULL
        AND (%(rule_set)s::text IS NULL OR tournaments.rule_set_name = %(rule_set)s)
        AND (%(period)s::text IS NULL OR tournaments.period = %(period)s)
    GROUP BY entry.player_id
), ranked AS (
    SELECT player_id, total, deals_played, tournaments_played,
        rank() OVER (ORDER BY total DESC) AS place,
        row_number() OVER (ORDER BY total DESC, player_id) AS line
    FROM board
)
SELECT page.player_id, page.total, page.deals_played, page.tournaments_played, page.place,
    page.line, sizes.size
FROM (SELECT count(*) AS size FROM board) sizes
LEFT JOIN (
    SELECT player_id, total, deals_played, tournaments_played, place, line
    FROM ranked ORDER BY line OFFSET %(offset)s LIMIT %(limit)s
) page ON true
ORDER BY page.line

-- name: leaderboard_around
-- A player's line with up to radius lines above and below; nothing if not on the board.
WITH board AS (
    SELECT entry.player_id, sum(entry.total)::bigint AS total,
        sum(entry.deals_played) AS deals_played, count(*) AS tournaments_played
    FROM tournament_entries entry JOIN tournaments USING (tournament_id)
    WHERE tournaments.started_at_ms IS NOT NULL
        AND (%(rule_set)s::text IS NULL OR tournaments.rule_set_name = %(rule_set)s)
        AND (%(period)s::text IS NULL OR tournaments.period = %(period)s)
    GROUP BY entry.player_id
), ranked AS (
    SELECT player_id, total, deals_played, tournaments_played,
        rank() OVER (ORDER BY total DESC) AS place,
        row_number() OVER (ORDER BY total DESC, player_id) AS line
    FROM board
)
SELECT player_id, total, deals_played, tournaments_played, place, line
FROM ranked WHERE line BETWEEN
    (SELECT line FROM ranked WHERE player_id = %(player)s) - %(radius)s
    AND (SELECT line FROM ranked WHERE player_id = %(player)s) + %(radius)s
ORDER BY line

-- name: page
-- Tournament ids with their creation time, newest first, after a page boundary.
SELECT tournament_id::text, created_at_ms FROM tournaments
WHERE (%(phases)s::text[] IS NULL OR phase = ANY(%(phases)s))
    AND (%(after_time)s::bigint IS NULL
         OR (created_at_ms, tournament_id) < (%(after_time)s, %(after_id)s::uuid))
ORDER BY created_at_ms DESC, tournament_id DESC LIMIT %(limit)s

-- name: running
SELECT tournament_id FROM tournaments WHERE phase = 'RUNNING'

-- name: of_table
SELECT tournament_id FROM tournament_tables WHERE table_id = %(table)s

-- name: hold_control_lock
-- The tournament's control lock (session level, two keys: this lock space and the tournament's
-- key), held by the one operator command whose steps span two streams (a re-seat).
SELECT pg_advisory_lock(1953461870, %(key)s)

-- name: release_control_lock
SELECT pg_advisory_unlock(1953461870, %(key)s)

-- name: phase_of_table
-- The phase of the tournament a table belongs to; no row for a table of no tournament.
SELECT t.phase FROM tournament_tables tt JOIN tournaments t USING (tournament_id)
WHERE tt.table_id = %(table)s

-- name: paused_tables
-- Which of these tables belong to a paused tournament (held: no deal starts and no deadline runs
-- out there until the resume), for the operator's list of stuck tables.
SELECT tt.table_id::text FROM tournament_tables tt JOIN tournaments t USING (tournament_id)
WHERE tt.table_id = ANY(%(tables)s::uuid[]) AND t.phase = 'PAUSED'

-- name: hold_pause_lock
-- The tournament's pause lock (session level; its own lock space, the tournament's key), held
-- exclusively by a pause over its append and shared by a deal's start at one of the tournament's
-- tables over its check and its append: a deal starts wholly before the pause is recorded, or
-- sees it and is refused (sapsam.app.tournament_pause).
SELECT pg_advisory_lock(1953461871, %(key)s)

-- name: release_pause_lock
SELECT pg_advisory_unlock(1953461871, %(key)s)

-- name: hold_pause_lock_shared
SELECT pg_advisory_lock_shared(1953461871, %(key)s)

-- name: release_pause_lock_shared
SELECT pg_advisory_unlock_shared(1953461871, %(key)s)
