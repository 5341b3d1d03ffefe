"""Players by display name, and display names by player, for the operator's tools.

On a synchronous connection (the tools' offline reads); the statements are in
``store/sql/players.sql``. A display name need not be unique, so a look-up by name returns every
player holding it and the caller decides (``sapsam tournament register`` refuses an ambiguous
name and lists the ids).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import psycopg

from sapsam.store.queries import query

Connection = psycopg.Connection[Any]


def players_named(connection: Connection, display_name: str) -> list[str]:
    """The ids of every player called ``display_name``, oldest first."""
    rows = connection.execute(query("players.named"), {"name": display_name}).fetchall()
    return [str(row[0]) for row in rows]


def display_names(connection: Connection, player_ids: Iterable[str]) -> dict[str, str]:
    """The display name of each of ``player_ids`` that is a registered player."""
    ids = sorted(set(player_ids))
    if not ids:
        return {}
    rows = connection.execute(query("players.display_names"), {"players": ids}).fetchall()
    return {str(row[0]): str(row[1]) for row in rows}
