"""How ``rules_v1_log.json`` was made (run once, on 2026-12-02, before rules version 2 existed).

Every table the ``sapsam demo`` runs of that day left in a database (four presets, 2 to 4 seats,
bots playing the solver and random arrangements, so fouls too) is read back from the log and
written as its events: type, schema version and data, in stream order. The file is test data and
must never be regenerated with later code: it is what rules version 1 recorded, and
``tests/unit/test_rules_versions.py`` holds today's code to verifying and replaying it exactly.

    python -m sapsam.cli demo --preset pagat --seats 4 --deals 3 --database-url URL   # and so on
    python tests/unit/data/make_rules_v1_log.py URL > tests/unit/data/rules_v1_log.json
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
                "SELECT DISTINCT stream_id FROM events WHERE stream_id LIKE 'table-%' ORDER BY 1"
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
    json.dump({"made_with_rules_version": 1, "tables": tables}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
