"""Who owns a read-model table and what others were granted on it, kept across a rebuild.

A rebuild drops and recreates tables (``sapsam.store.projections``), so it carries each existing
table's owner and grants over to its new table; a role that could not give a table back to its
owner is refused before anything changes (``ReadModelOwnerError``), so a read model never ends up
out of the service's reach.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from sapsam.log.records import DatabaseOpenError

Connection = psycopg.Connection[Any]


class ReadModelOwnerError(DatabaseOpenError):
    """A rebuild would take a read model away from its owner: run it as that role instead."""


@dataclass(frozen=True)
class TableAccess:
    """Who owns an existing read-model table and what others were granted on it."""

    table: str
    owner: str
    grants: tuple[tuple[str | None, str, bool], ...]  # grantee (None: PUBLIC), privilege, option


def access_of(connection: Connection, table: str) -> TableAccess | None:
    """The table's owner and grants (None: no such table); ``ReadModelOwnerError`` when the
    connected role could not give a rebuilt table back to that owner."""
    row = connection.execute(
        "SELECT pg_get_userbyid(relowner), pg_has_role(relowner, 'MEMBER'), current_user"
        " FROM pg_class WHERE oid = to_regclass(quote_ident(%s))",
        [table],
    ).fetchone()
    if row is None:
        return None
    owner, may_act_as_owner, current = str(row[0]), bool(row[1]), str(row[2])
    if not may_act_as_owner:
        raise ReadModelOwnerError(
            f"the read model {table} belongs to the role {owner}, and {current} may not give a"
            f" rebuilt table back to it: run `sapsam projections rebuild` as {owner} (or as a"
            " role that is a member of it), so that the read models keep their owner and grants"
        )
    grants = connection.execute(
        "SELECT CASE WHEN acl.grantee = 0 THEN NULL ELSE pg_get_userbyid(acl.grantee) END,"
        " acl.privilege_type, acl.is_grantable"
        " FROM pg_class c, aclexplode(c.relacl) AS acl"
        " WHERE c.oid = to_regclass(quote_ident(%s)) AND acl.grantee <> c.relowner"
        " ORDER BY 1, 2",
        [table],
    ).fetchall()
    return TableAccess(table, owner, tuple((g, str(p), bool(o)) for g, p, o in grants))


# What aclexplode can name on a table (MAINTAIN since PostgreSQL 17).
_TABLE_PRIVILEGES = frozenset(
    {"SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER", "MAINTAIN"}
)


def restore_access(connection: Connection, access: TableAccess) -> None:
    """Give the recreated table its old owner and grants (the creator's own are dropped with
    ownership, as they were before)."""
    table = sql.Identifier(access.table)
    current = connection.execute("SELECT current_user").fetchone()
    if current is None or current[0] != access.owner:
        connection.execute(
            sql.SQL("ALTER TABLE {} OWNER TO {}").format(table, sql.Identifier(access.owner))
        )
    for grantee, privilege, grantable in access.grants:
        if privilege not in _TABLE_PRIVILEGES:
            raise ValueError(f"unexpected privilege {privilege!r} on {access.table}")
        connection.execute(
            sql.SQL("GRANT {} ON {} TO {}{}").format(
                sql.SQL(privilege),
                table,
                sql.SQL("PUBLIC") if grantee is None else sql.Identifier(grantee),
                sql.SQL(" WITH GRANT OPTION" if grantable else ""),
            )
        )
