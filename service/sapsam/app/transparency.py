"""The transparency log's application side: what the server signs (docs/transparency.md).

The checkpointer (``sapsam.store.transparency.run_checkpointer``) asks ``checkpoint_signer`` for
the signed note of each checkpoint it issues: the C2SP checkpoint of origin ``keys.origin``
(``sapsam/<server name>``) with its ``time`` line, signed by the server's current key.
"""

from __future__ import annotations

from collections.abc import Callable

from sapsam.keys import ServerKeys
from sapsam.log.checkpoint import sapsam_checkpoint, sign_checkpoint


def checkpoint_signer(keys: ServerKeys) -> Callable[[int, bytes, int], str]:
    """sign(size, root, time) -> the signed note, by the server's current key."""

    def sign(size: int, root: bytes, time: int) -> str:
        return sign_checkpoint(sapsam_checkpoint(keys.origin, size, root, time), keys.signer)

    return sign
