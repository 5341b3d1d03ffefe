"""A player's signature of its move: required once the player has registered a key, by one of its
keys, valid for the move's message (docs/fairness.md §19). Pure, like the rest of the domain."""

from __future__ import annotations

from collections.abc import Callable

from sapsam.domain.commands import PlayerSignature
from sapsam.domain.errors import DomainError, Reason
from sapsam.fairness import player_keys


def check_signature(
    signature: PlayerSignature | None,
    registered: tuple[bytes, ...],
    message: Callable[[], bytes],
) -> PlayerSignature | None:
    """The move's signature, checked (docs/fairness.md §19): required once the player has a key,
    by one of its keys, and valid for the move's message."""
    if signature is None:
        if registered:
            raise DomainError(
                Reason.SIGNATURE_REQUIRED,
                "this player has registered a key: its moves must be signed (docs/fairness.md §19)",
            )
        return None
    if signature.public_key not in registered:
        raise DomainError(
            Reason.BAD_SIGNATURE,
            "signature.public_key is not a key this player registered",
            field="signature.public_key",
        )
    if not player_keys.signature_holds(signature.public_key, message(), signature.signature):
        raise DomainError(
            Reason.BAD_SIGNATURE,
            "signature.signature is not the key's Ed25519 signature of this move's message"
            " (docs/fairness.md §19)",
            field="signature.signature",
        )
    return signature
