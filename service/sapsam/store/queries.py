"""The store's named SQL: every fixed statement lives in ``store/sql/*.sql``, loaded once by name.

A file may open with comment lines about all its statements; then come blocks, each opened by a
``-- name: <name>`` line, whose comment lines say what the statement does, and the statement. A
query is known as ``<file>.<name>`` (``deal_secrets.load``), which is how the store's modules
execute it::

    connection.execute(query("deal_secrets.load"), {"stream": stream_id, "number": number})

Parameters are named (``%(stream)s``), so a statement reads on its own. Statements built from
parts at run time (the append's batch insert with its read models, a projector's rebuild, the
schema's checks) stay with the code that builds them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Final

SQL_FOLDER: Final = Path(__file__).parent / "sql"
_NAME_LINE: Final = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)


class UnknownQueryError(KeyError):
    """No statement of that name in ``store/sql``."""


def parse_queries(file_stem: str, text: str) -> dict[str, str]:
    """The named statements of one ``.sql`` file, by ``<file_stem>.<name>``."""
    found: dict[str, str] = {}
    marks = list(_NAME_LINE.finditer(text))
    preamble = text[: marks[0].start() if marks else len(text)]
    if any(_is_sql(line) for line in preamble.splitlines()):
        raise ValueError(f"{file_stem}.sql: a statement before the first '-- name:' line")
    for mark, following in zip(marks, [*marks[1:], None], strict=True):
        body = text[mark.end() : following.start() if following else len(text)]
        statement = "\n".join(line for line in body.splitlines() if _is_sql(line)).strip()
        name = f"{file_stem}.{mark.group(1)}"
        if not statement:
            raise ValueError(f"{name}: no statement")
        if name in found:
            raise ValueError(f"{name}: named twice")
        found[name] = statement
    return found


def _is_sql(line: str) -> bool:
    """A line of a statement: neither blank nor a comment line."""
    return bool(line.strip()) and not line.lstrip().startswith("--")


@cache
def all_queries() -> Mapping[str, str]:
    """Every named statement of ``store/sql``, read once per process."""
    found: dict[str, str] = {}
    for path in sorted(SQL_FOLDER.glob("*.sql")):
        found.update(parse_queries(path.stem, path.read_text(encoding="utf-8")))
    return found


def query(name: str) -> str:
    """The statement named ``name`` (``<file>.<name>``)."""
    try:
        return all_queries()[name]
    except KeyError:
        raise UnknownQueryError(f"no query {name!r} in {SQL_FOLDER}") from None
