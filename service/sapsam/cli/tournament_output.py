"""Standings and leaderboards as an operator reads them, or as a program does: ``--format``.

- ``table`` (the default): a title, then aligned columns, players by display name; a shared place
  is marked ``=`` (equal totals share a place: 1, 1, 3), a forfeited player ``(forfeited)``.
- ``csv``: one header row, then one row per line (RFC 4180 quoting, by the ``csv`` module).
- ``json``: one object: what the lines belong to, and the lines, with both the player's resource
  name and its display name.

Pure formatting: the commands read the rows and the names, this module only lays them out.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

FORMATS: Final = ("table", "csv", "json")
FORMAT_HELP: Final = (
    "table: aligned columns with display names (default); csv: a header row, then one row a"
    " line; json: one object"
)


@dataclass(frozen=True)
class Column:
    """One column: the key in each line, its CSV/JSON name is the key, its table header."""

    key: str
    header: str
    numeric: bool = False


STANDING_COLUMNS: Final = (
    Column("place", "place", numeric=True),
    Column("display_name", "player"),
    Column("total", "total", numeric=True),
    Column("deals_won", "deals won", numeric=True),
    Column("deals_played", "deals played", numeric=True),
    Column("player", "id"),
)
LEADERBOARD_COLUMNS: Final = (
    Column("place", "place", numeric=True),
    Column("display_name", "player"),
    Column("total", "total", numeric=True),
    Column("deals_played", "deals played", numeric=True),
    Column("tournaments_played", "tournaments", numeric=True),
    Column("player", "id"),
)


def display_name(names: Mapping[str, str], player_id: str) -> str:
    """A player's display name, or its id when it has none (a player id is always shown too)."""
    return names.get(player_id) or f"players/{player_id}"


def shared_places(places: Sequence[int]) -> set[int]:
    """The places more than one line holds."""
    seen: set[int] = set()
    shared: set[int] = set()
    for place in places:
        (shared if place in seen else seen).add(place)
    return shared


def _cell(line: Mapping[str, Any], column: Column, shared: set[int]) -> str:
    value = line[column.key]
    if column.key == "place":
        return f"{value}{'=' if value in shared else ''}"
    if column.key == "total":
        return f"{value:+d}"
    if column.key == "display_name" and line.get("forfeited"):
        return f"{value} (forfeited)"
    return str(value)


def render(
    title: str,
    meta: Mapping[str, Any],
    lines: Sequence[Mapping[str, Any]],
    columns: Sequence[Column],
    output_format: str,
) -> str:
    """The lines in ``output_format``; ``title`` heads the table, ``meta`` the JSON object."""
    if output_format == "json":
        return json.dumps({**meta, "lines": list(lines)}, indent=2, ensure_ascii=False)
    if output_format == "csv":
        buffer = io.StringIO()
        keys = [column.key for column in columns]
        extra = [key for key in (lines[0] if lines else {}) if key not in keys]
        writer = csv.DictWriter(buffer, [*keys, *extra], lineterminator="\n")
        writer.writeheader()
        writer.writerows(lines)
        return buffer.getvalue().rstrip("\n")
    shared = shared_places([int(line["place"]) for line in lines])
    rows = [[column.header for column in columns]]
    rows += [[_cell(line, column, shared) for column in columns] for line in lines]
    widths = [max(len(row[index]) for row in rows) for index in range(len(columns))]
    text = [title]
    for row in rows:
        cells = [
            cell.rjust(width) if column.numeric else cell.ljust(width)
            for cell, width, column in zip(row, widths, columns, strict=True)
        ]
        text.append("  ".join(cells).rstrip())
    if not lines:
        text.append("(nobody yet)")
    return "\n".join(text)
