"""What an export needs of the transparency log (docs/audit.md §2.5), on a plain connection.

The command line's exports read the database through one synchronous psycopg connection
(``sapsam.store.embedded.database_connection``); these are the reads of
``sapsam.store.transparency`` they need, with the same named statements: the latest signed
checkpoint (and the newest one a witness cosigned) and the witnesses' cosignatures kept for it,
the leaf indexes of given event positions,
and stored perfect subtrees. The server's
asynchronous versions are in ``sapsam.store.transparency``.

A database the transparency log was never set up in (migration 0008 not applied), or a role that
may not read its tables, raises ``TransparencyUnavailableError`` (``sapsam.app.transparency``,
shared with the server's reads), as does a stored tree missing a subtree a proof needs
(``IncompleteTreeError``): the caller exports without a proof.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

import psycopg

from sapsam.app.transparency import (
    IncompleteTreeError,
    StoredCheckpoint,
    TransparencyUnavailableError,
)
from sapsam.log.merkle import NodeId
from sapsam.log.merkle_proofs import Range, plan_nodes, proof_from_plan
from sapsam.store.queries import query
from sapsam.store.transparency import readable

__all__ = ["TransparencyUnavailableError", "latest_checkpoint", "proof_hashes", "read_nodes"]

Connection = psycopg.Connection[Any]

NODES_PER_STATEMENT: Final = 20_000
"""Subtrees read in one statement (a whole-table export of thousands of deals needs more)."""


def latest_checkpoint(connection: Connection) -> StoredCheckpoint | None:
    """The last signed checkpoint, or None before the first."""
    with readable():
        row = connection.execute(query("transparency.latest_checkpoint")).fetchone()
    return StoredCheckpoint(int(row[0]), bytes(row[1]), str(row[2])) if row else None


def latest_witnessed_checkpoint(connection: Connection) -> StoredCheckpoint | None:
    """The newest checkpoint a witness cosigned, or None before the first cosignature."""
    with readable():
        row = connection.execute(query("transparency.latest_witnessed_checkpoint")).fetchone()
    return StoredCheckpoint(int(row[0]), bytes(row[1]), str(row[2])) if row else None


def cosignatures(connection: Connection, size: int) -> list[str]:
    """The witnesses' cosignature lines kept for the checkpoint of ``size`` leaves."""
    with readable():
        rows = connection.execute(query("transparency.cosignatures"), {"size": size}).fetchall()
    return [str(line) for (line,) in rows]


def leaves_of_positions(connection: Connection, positions: Sequence[int]) -> dict[int, int]:
    """The leaf index of each event position already in the tree."""
    with readable():
        rows = connection.execute(
            query("transparency.leaves_of_positions"), {"positions": list(positions)}
        ).fetchall()
    return {int(position): int(leaf) for position, leaf in rows}


def read_nodes(connection: Connection, ids: Iterable[NodeId]) -> dict[NodeId, bytes]:
    """The stored perfect subtrees among ``ids``, in statements of at most
    ``NODES_PER_STATEMENT``."""
    wanted = list(dict.fromkeys(ids))
    found: dict[NodeId, bytes] = {}
    for start in range(0, len(wanted), NODES_PER_STATEMENT):
        part = wanted[start : start + NODES_PER_STATEMENT]
        with readable():
            rows = connection.execute(
                query("transparency.nodes"),
                {"levels": [n.level for n in part], "indexes": [n.index for n in part]},
            ).fetchall()
        found.update({NodeId(int(level), int(index)): bytes(value) for level, index, value in rows})
    return found


def proof_hashes(connection: Connection, plan: Sequence[Range]) -> list[bytes]:
    """A proof's hashes from its plan (``merkle_proofs.consistency_plan``);
    ``IncompleteTreeError`` (a ``TransparencyUnavailableError`` and a ``LookupError``) when the
    stored tree does not reach that far."""
    nodes = read_nodes(connection, plan_nodes(plan))

    def node(node_id: NodeId) -> bytes:
        try:
            return nodes[node_id]
        except KeyError:
            raise IncompleteTreeError(f"the stored tree lacks subtree {node_id}") from None

    return proof_from_plan(plan, node)
