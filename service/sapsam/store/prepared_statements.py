"""An append's own statement, or a commit group's batch statement, sent through libpq's
prepared-statement calls directly.

Why: a single append (``INSERT_BATCH``, alone or with its companions: on the caller's
connection, or a commit group's batch of one) is one statement with a dozen typed parameters;
the commit group's batch statement (``sapsam.store.batch_statement``) one text of 8-10 KB with
one text parameter.
Through psycopg's ``execute`` each one costs the writer ~75 us of CPU here beyond the round trip
(``bench/store.py``: psycopg's query conversion, which it redoes on every call for a text
longer than its cache takes (4,096 characters, as the game's statements with companions are),
a dumper per parameter, the cursor, the transformer, the prepared-statement manager and its
generators). Prepared once per connection and text, and sent with ``PQsendQueryPrepared``, the
same statement costs a fraction of that (docs/performance.md, "2026-12-03 (evening)").

How: on each connection, each text is prepared once under a name of its own, its parameters'
types left to PostgreSQL, which infers them from the text's casts and context, and described
once: each parameter's type and the result's columns. Each call then sends every value in
PostgreSQL's text form of its parameter's type (an ``int`` for an integer parameter, a ``str``
for a text or jsonb one, a ``Jsonb`` as ``json.dumps`` of its object, a ``bool``) or, for
bytea, its bytes in binary; ``None`` as NULL. The database sees the same statement with the
same values and returns the same rows, read here as psycopg reads them (integers, booleans).
(A uuid parameter takes a ``UUID`` or its text, an integer or boolean array a list of such
values, a text one an ``int`` too, as its text; a parameter of any other type NULL only.)

The statement goes through psycopg's ``execute`` instead, exactly as before, whenever this
cannot be sure of the same outcome: a value of another kind for its parameter's type (a list,
a ``bool`` for an integer, a ``str`` holding NUL), a text PostgreSQL will not prepare without
types, a result with a column that is not an integer or a boolean, a connection not idle, in a
pipeline or not in UTF-8, or one already holding ``MAX_TEXTS`` texts.

An error result raises the error psycopg would (``psycopg.errors.UniqueViolation`` with its
diagnostics, say) once every result is read, so the connection is idle again; a statement
PostgreSQL no longer knows (``DEALLOCATE``, ``DISCARD ALL``) is prepared anew. The waits are
psycopg's own (``AsyncConnection.wait``: a cancelled wait cancels the statement on the server),
under the connection's lock, as psycopg's ``execute`` holds it.
"""

from __future__ import annotations

import json
import re
import uuid
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Final

import psycopg
from psycopg import errors, pq
from psycopg.generators import execute
from psycopg.types.json import Jsonb

Connection = psycopg.AsyncConnection[Any]
Row = tuple[Any, ...]

MAX_TEXTS: Final = 64
"""Most texts prepared on one connection (a process's appends use a few dozen: ``INSERT_BATCH``
with each combination of companions); past it, new texts go through psycopg."""

_NAMED = re.compile(r"%\((\w+)\)s")
_OTHER_PLACEHOLDER = re.compile(r"%(\(\w+\)[bt]|[sbt])")
_INVALID_STATEMENT_NAME: Final = "26000"  # the prepared statement is gone

# Parameter and column types by OID, and how each value kind is sent for them.
_INTEGER_TYPES: Final = frozenset({20, 21, 23})  # bigint, smallint, integer
_TEXT_TYPES: Final = frozenset({25, 1043})  # text, varchar
_JSON_TYPES: Final = frozenset({114, 3802})  # json, jsonb
_BYTEA: Final = 17
_BOOLEAN: Final = 16
_UUID: Final = 2950
_INTEGER_ARRAYS: Final = frozenset({1005, 1007, 1016})  # smallint[], integer[], bigint[]
_BOOLEAN_ARRAY: Final = 1000

Encoder = Callable[[Any], bytes | None]


def _text_without_nul(value: str) -> bytes | None:
    # psycopg refuses a NUL in text with its own error: leave such a value to it.
    return None if "\x00" in value else value.encode("utf-8")


def _jsonb(value: Jsonb) -> bytes | None:
    if value.dumps is not None:
        return None  # a caller's own serialiser: psycopg applies it
    try:
        return json.dumps(value.obj).encode("utf-8")
    except (TypeError, ValueError):
        return None


def _integer(value: int) -> bytes:
    return b"%d" % value


def _array_of(element: type, text: Callable[[Any], bytes]) -> Encoder:
    """An array's text form, ``{1,2,NULL}``, from a list of ``element`` values and Nones."""

    def encode(values: list[Any]) -> bytes | None:
        if any(value is not None and type(value) is not element for value in values):
            return None
        return b"{%b}" % b",".join(b"NULL" if value is None else text(value) for value in values)

    return encode


def _boolean(value: bool) -> bytes:
    return b"t" if value else b"f"


_INTEGER_ENCODERS: Final[dict[type, Encoder]] = {int: _integer}
# An integer in a text parameter: the statements cast such parameters (``%(seat)s::text``), and
# the integer psycopg sends becomes the same text there.
_TEXT_ENCODERS: Final[dict[type, Encoder]] = {str: _text_without_nul, int: _integer}
_JSON_ENCODERS: Final[dict[type, Encoder]] = {str: _text_without_nul, Jsonb: _jsonb}
_BYTEA_ENCODERS: Final[dict[type, Encoder]] = {bytes: lambda value: value}
_BOOLEAN_ENCODERS: Final[dict[type, Encoder]] = {bool: _boolean}
_INTEGER_ARRAY_ENCODERS: Final[dict[type, Encoder]] = {list: _array_of(int, _integer)}
_BOOLEAN_ARRAY_ENCODERS: Final[dict[type, Encoder]] = {list: _array_of(bool, _boolean)}
_UUID_ENCODERS: Final[dict[type, Encoder]] = {
    str: _text_without_nul,
    uuid.UUID: lambda value: str(value).encode("ascii"),
}
_NULL_ONLY: Final[dict[type, Encoder]] = {}


def _encoders_for(parameter_type: int) -> dict[type, Encoder]:
    """How values are sent for a parameter of this type (of another type: only NULL, any other
    value sends its call through psycopg)."""
    if parameter_type in _INTEGER_TYPES:
        return _INTEGER_ENCODERS
    if parameter_type in _TEXT_TYPES:
        return _TEXT_ENCODERS
    if parameter_type in _JSON_TYPES:
        return _JSON_ENCODERS
    if parameter_type == _BYTEA:
        return _BYTEA_ENCODERS
    if parameter_type == _BOOLEAN:
        return _BOOLEAN_ENCODERS
    if parameter_type == _UUID:
        return _UUID_ENCODERS
    if parameter_type in _INTEGER_ARRAYS:
        return _INTEGER_ARRAY_ENCODERS
    if parameter_type == _BOOLEAN_ARRAY:
        return _BOOLEAN_ARRAY_ENCODERS
    return _NULL_ONLY


class _Statement:
    """One text prepared on one connection: its name, its parameters in order with how each
    value is sent, and whether each result column is a boolean (else an integer)."""

    __slots__ = ("columns", "encoders", "formats", "name", "names", "slots")

    def __init__(
        self,
        name: bytes,
        names: list[str],
        encoders: list[dict[type, Encoder]],
        boolean_columns: tuple[bool, ...],
    ) -> None:
        self.name = name
        self.names = names
        self.encoders = encoders
        self.formats = [1 if encoder is _BYTEA_ENCODERS else 0 for encoder in encoders]
        self.columns: tuple[tuple[int, Callable[[bytes], Any]], ...] = tuple(
            (column, _true if boolean else int) for column, boolean in enumerate(boolean_columns)
        )
        # Each parameter with its encoders and whether a str or an int goes by the two common
        # encoders, which ``values`` then applies in place (a dozen parameters a write, most of
        # them text or integers: two calls fewer each).
        self.slots: tuple[tuple[str, dict[type, Encoder], bool, bool], ...] = tuple(
            (
                name,
                encoder,
                encoder.get(str) is _text_without_nul,
                encoder.get(int) is _integer,
            )
            for name, encoder in zip(names, encoders, strict=True)
        )

    def values(self, parameters: Mapping[str, Any]) -> list[bytes | None] | None:
        """The values as sent, or None if one is of a kind this does not send."""
        values: list[bytes | None] = []
        for name, encoders, takes_text, takes_int in self.slots:
            value = parameters[name]
            kind = type(value)
            if kind is str and takes_text:  # _text_without_nul, in place
                if "\x00" in value:
                    return None
                values.append(value.encode("utf-8"))
                continue
            if kind is int and takes_int:  # _integer, in place
                values.append(b"%d" % value)
                continue
            if value is None:
                values.append(None)
                continue
            encoder = encoders.get(kind)
            if encoder is None:
                return None
            encoded = encoder(value)
            if encoded is None:
                return None
            values.append(encoded)
        return values

    def rows(self, results: list[pq.abc.PGresult]) -> list[Row]:
        """The rows as psycopg reads them: text ``t``/``f`` a boolean, any other an int."""
        rows: list[Row] = []
        columns = self.columns
        for result in results:
            value = result.get_value
            for row in range(result.ntuples):
                rows.append(
                    tuple(
                        [
                            None if (text := value(row, column)) is None else read(text)
                            for column, read in columns
                        ]
                    )
                )
        return rows


def _true(text: bytes) -> bool:
    return text == b"t"


class _Refused:
    """A text that cannot take this path on a connection (it goes through psycopg)."""


_REFUSED: Final = _Refused()


class _Prepared:
    """The texts prepared (or refused) on one connection."""

    __slots__ = ("names_given", "texts")

    def __init__(self) -> None:
        self.texts: dict[str, _Statement | _Refused] = {}
        self.names_given = 0
        """Names ever given here: a new one never takes a name PostgreSQL may still hold."""


_by_connection: weakref.WeakKeyDictionary[Connection, _Prepared] = weakref.WeakKeyDictionary()


async def statement_rows(
    connection: Connection, text: str, parameters: Mapping[str, Any]
) -> list[Row]:
    """The rows of ``text`` (psycopg's ``%(name)s`` placeholders) run with ``parameters`` on
    ``connection`` (autocommit and idle: the statement is its own transaction), through libpq's
    prepared-statement calls where this can be sure of the same outcome, else psycopg's
    ``execute`` (see the module's docstring). Raises what psycopg's ``execute`` raises."""
    pgconn = connection.pgconn
    if (
        pgconn.transaction_status != pq.TransactionStatus.IDLE
        or pgconn.pipeline_status != pq.PipelineStatus.OFF
    ):
        return await _through_psycopg(connection, text, parameters)
    prepared = _by_connection.get(connection)
    if prepared is None:
        prepared = _by_connection[connection] = _Prepared()
    statement = prepared.texts.get(text)
    if statement is None:
        statement = await _prepare(connection, prepared, text)
    if isinstance(statement, _Refused):
        return await _through_psycopg(connection, text, parameters)
    values = statement.values(parameters)
    if values is None:
        return await _through_psycopg(connection, text, parameters)
    async with connection.lock:
        pgconn.send_query_prepared(statement.name, values, statement.formats)
        results = await connection.wait(execute(pgconn))
    for result in results:
        if result.status == pq.ExecStatus.FATAL_ERROR:
            error = errors.error_from_result(result, encoding="utf-8")
            if error.sqlstate == _INVALID_STATEMENT_NAME:
                # Deallocated behind our back: nothing ran. Prepared anew from the next call.
                prepared.texts.clear()
                return await _through_psycopg(connection, text, parameters)
            raise error
        if result.status not in (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK):
            raise psycopg.DatabaseError(f"unexpected result {pq.ExecStatus(result.status).name}")
    return statement.rows(results)


async def _through_psycopg(
    connection: Connection, text: str, parameters: Mapping[str, Any]
) -> list[Row]:
    cursor = await connection.execute(text, parameters)
    return await cursor.fetchall() if cursor.description is not None else []


async def _prepare(connection: Connection, prepared: _Prepared, text: str) -> _Statement | _Refused:
    """Prepare and describe ``text`` on the connection; ``_REFUSED`` if it cannot take the
    path there (remembered: it is not tried again on this connection)."""
    statement: _Statement | _Refused = _REFUSED
    numbered = _numbered(text)
    pgconn = connection.pgconn
    if (
        numbered is not None
        and len(prepared.texts) < MAX_TEXTS
        and pgconn.parameter_status(b"client_encoding") == b"UTF8"
    ):
        sql, names = numbered
        name = b"sapsam_statement_%d" % prepared.names_given
        prepared.names_given += 1
        made_ok = False
        async with connection.lock:
            pgconn.send_prepare(name, sql)
            made = await connection.wait(execute(pgconn))
            if all(result.status == pq.ExecStatus.COMMAND_OK for result in made):
                made_ok = True
                pgconn.send_describe_prepared(name)
                described = (await connection.wait(execute(pgconn)))[-1]
                statement = _described(name, names, described)
        if made_ok and isinstance(statement, _Refused):
            await connection.execute(b"DEALLOCATE " + name)  # not left holding server memory
    if len(prepared.texts) < MAX_TEXTS:  # past it nothing is remembered, refusals included
        prepared.texts[text] = statement
    return statement


def _described(name: bytes, names: list[str], described: pq.abc.PGresult) -> _Statement | _Refused:
    if described.status != pq.ExecStatus.COMMAND_OK or described.nparams != len(names):
        return _REFUSED
    encoders = [_encoders_for(described.param_type(index)) for index in range(len(names))]
    column_types = [described.ftype(column) for column in range(described.nfields)]
    if any(kind not in _INTEGER_TYPES and kind != _BOOLEAN for kind in column_types):
        return _REFUSED
    return _Statement(name, names, encoders, tuple(kind == _BOOLEAN for kind in column_types))


def _numbered(text: str) -> tuple[bytes, list[str]] | None:
    """The text as PostgreSQL takes it (``$n`` for the n-th name, ``%`` for ``%%``) and the
    names in order; None for a text with placeholders other than ``%(name)s``."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in names:
            names.append(name)
        return f"${names.index(name) + 1}"

    numbered = _NAMED.sub(number, text)
    if _OTHER_PLACEHOLDER.search(numbered.replace("%%", "")):
        return None
    return numbered.replace("%%", "%").encode("utf-8"), names
