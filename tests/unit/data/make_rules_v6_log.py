"""How ``rules_v6_log.json`` was made (run once, on 2026-12-03, before rules version 7 existed).

As ``make_rules_v1_log.py``: every table the ``sapsam demo`` runs below left in a database (the
presets whose rules version 7 could read otherwise, ``thirteen_waters`` first, and one of each
family: naturals and surrender, royalties, the base game; four seats, bots playing the solver
and random arrangements) is read back from the log and written as its events. The file is test
data and must never be regenerated with later code: it is what rules version 6 recorded, and
``tests/unit/test_rules_versions.py`` holds today's code to verifying and replaying it exactly.

    python -m sapsam.cli demo --preset thirteen_waters --deals 4 --database-url URL
    python -m sapsam.cli demo --preset capsa_susun --deals 2 --database-url URL
    python -m sapsam.cli demo --preset four_player_bonus --deals 2 --database-url URL
    python -m sapsam.cli demo --preset closed_russian --deals 2 --database-url URL
    python tests/unit/data/make_rules_v6_log.py URL > tests/unit/data/rules_v6_log.json
"""

from __future__ import annotations

import json
import sys

import psycopg

from sapsam.store.offline_reads import read_stream


def main(database_url: str) -> None:
    with psycopg.connect(database_url) as connection:
        streams = [
            row[0]
            for row in connection.execute(
                "SELECT stream_id FROM events WHERE stream_id LIKE 'table-%'"
                " GROUP BY stream_id ORDER BY min(position)"
            )
        ]
        tables = [
            {
                "stream": stream,
                "events": [
                    {"type": event.type, "schema_version": event.schema_version, "data": event.data}
                    for event in read_stream(connection, stream)
                ],
            }
            for stream in streams
        ]
    json.dump({"made_with_rules_version": 6, "tables": tables}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
