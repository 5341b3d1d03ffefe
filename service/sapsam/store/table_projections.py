"""The game's read models: ``table_state`` (one row per table) and ``seat_scores`` (per deal).

Both are kept current inside each append's transaction and can be rebuilt from the log at any
time (``sapsam projections rebuild``) to the same rows. They hold public facts only: never a card
before the seed is revealed, never a nonce or a seed.

Each has its own module: ``sapsam.store.table_state_projection`` and
``sapsam.store.seat_scores_projection``. This one lists them, in the order they are applied (the
registry, ``sapsam.store.projectors``, names this module), and reads both back for comparing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import psycopg

from sapsam.store.projections import Projector
from sapsam.store.seat_scores_projection import SEAT_SCORES
from sapsam.store.table_state_projection import TABLE_STATE

Connection = psycopg.Connection[Any]


def projectors() -> Sequence[Projector]:
    """The game's read models, in the order they must be applied."""
    return (TABLE_STATE, SEAT_SCORES)


def table_rows_as_json(connection: Connection) -> str:
    """Both read models as canonical JSON text, for comparing a rebuild with the live rows."""
    tables = connection.execute(
        "SELECT row_to_json(t)::text FROM table_state t ORDER BY table_id"
    ).fetchall()
    scores = connection.execute(
        "SELECT row_to_json(s)::text FROM seat_scores s ORDER BY table_id, deal_number, seat"
    ).fetchall()
    return json.dumps([[row[0] for row in tables], [row[0] for row in scores]])
