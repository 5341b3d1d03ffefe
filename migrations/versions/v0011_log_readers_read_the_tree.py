"""Whoever may read the log may read the transparency tree that proves it.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02

docs/store.md's read-only role (an auditor, a follower) was granted ``SELECT`` on ``events`` and
its sequence, nothing else, so since migrations 0008 and 0009 it could not read the Merkle tree,
the signed checkpoints or the witnesses' cosignatures: its exports came without their proof
(docs/audit.md §2.5) and it could not check a checkpoint against the log. These tables hold
nothing a reader of ``events`` does not already know or could not compute (leaves are the events'
chained hashes, nodes hashes of them; checkpoints and cosignatures are public, signed to be
published), so this migration gives ``SELECT`` on ``merkle_leaves``, ``merkle_nodes``,
``log_checkpoints`` and ``checkpoint_cosignatures`` to every role that holds ``SELECT`` on
``events`` (``PUBLIC`` included), the tables' owner aside. Migrations create no roles (roles
belong to the cluster, and the owner need not be allowed to create them), so a reader made after
this migration is given the same four grants by whoever makes it (docs/store.md lists them).

The downgrade leaves the grants: revoking them would also take them from roles granted them on
their own account (the service role, ``sapsam.store.schema.grant_service_role``).
"""

from __future__ import annotations

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None

TREE_TABLES = ("merkle_leaves", "merkle_nodes", "log_checkpoints", "checkpoint_cosignatures")

# aclexplode lists each privilege on ``events``; grantee 0 is PUBLIC. The owner holds every
# privilege implicitly (and owns the tree tables too), so it is left out.
UPGRADE_STATEMENTS = (
    f"""
    DO $$
    DECLARE
        reader oid;
    BEGIN
        FOR reader IN
            SELECT DISTINCT grant_row.grantee
            FROM pg_class AS log_table,
                LATERAL aclexplode(log_table.relacl) AS grant_row
            WHERE log_table.oid = 'events'::regclass
                AND grant_row.privilege_type = 'SELECT'
                AND grant_row.grantee <> log_table.relowner
        LOOP
            IF reader = 0 THEN
                EXECUTE 'GRANT SELECT ON {", ".join(TREE_TABLES)} TO PUBLIC';
            ELSE
                EXECUTE format(
                    'GRANT SELECT ON {", ".join(TREE_TABLES)} TO %I', pg_get_userbyid(reader)
                );
            END IF;
        END LOOP;
    END
    $$
    """,
)


def upgrade() -> None:
    """Grant the tree's tables to the log's readers."""
    for statement in UPGRADE_STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    """Nothing: the grants stay (see the module's docstring)."""
