"""Natural declarations in a published deal (docs/fairness.md §14, §21), and what a verifier
checks of them: each seat's ``declaration[s]`` check opens the seat's declaration commitment
with the declaration and nonce it revealed. The verdict on the declared natural (real, or a
false declaration and so a foul) is the ``fouls`` check's, by ``sapsam.rules.naturals``.

Pure, like the rest of ``sapsam.fairness``; ``sapsam.fairness.verify`` runs the check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sapsam.fairness.encoding import MAX_NONCE_BYTES, MIN_NONCE_BYTES, FairnessError
from sapsam.fairness.natural_commitments import declaration_opens
from sapsam.rules.naturals import Natural, declared


@dataclass(frozen=True)
class Declaration:
    """A seat's natural declaration as published: its commitment (``NaturalDeclared``) and,
    once opened with the reveal (``NaturalRevealed``), what it declared and the nonce."""

    commitment: bytes
    natural: str | None = None
    nonce: bytes | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"commitment": hex, "natural": name or null, "nonce": hex or null}``."""
        return {
            "commitment": self.commitment.hex(),
            "natural": self.natural,
            "nonce": None if self.nonce is None else self.nonce.hex(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Declaration:
        """Read :meth:`to_dict`'s form; a malformed value raises :class:`FairnessError`."""
        try:
            natural = data.get("natural")
            nonce = data.get("nonce")
            if natural is not None and not isinstance(natural, str):
                raise FairnessError("a declaration's natural is a name")
            return cls(
                commitment=bytes.fromhex(data["commitment"]),
                natural=natural,
                nonce=None if nonce is None else bytes.fromhex(nonce),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise FairnessError(f"malformed natural declaration: {error}") from None


def declared_natural(declaration: Declaration | None) -> Natural:
    """What a seat declared, for judging its hand: ``none`` when it declared nothing or never
    opened its declaration (it timed out)."""
    return declared(None if declaration is None else declaration.natural)


def declaration_problem(
    declaration: Declaration | None,
    *,
    plays_naturals: bool,
    revealed: bool,
    table_id: Any,
    deal_number: int,
    seat: int,
    player_id: str | None,
) -> tuple[str, str, str] | None:
    """Why seat ``seat``'s published declaration does not hold, as (expected, found, detail), or
    ``None`` when it does: a declaration at a table without naturals; a seat that revealed
    without having declared, or without opening its declaration; an unknown name, a malformed
    nonce; or a declaration and nonce that do not open the commitment."""
    if not plays_naturals:
        if declaration is None:
            return None
        return "no declaration", "a declaration", "the table's rule set plays no naturals"
    if declaration is None:
        if revealed:
            return "a declaration", "none", "the seat revealed without having declared"
        return None
    if declaration.natural is None or declaration.nonce is None:
        if revealed:
            return "an opened declaration", "none", "the seat revealed without opening it"
        return None
    try:
        Natural(declaration.natural)
    except ValueError:
        return "a natural's name", declaration.natural[:40], "an unknown declaration"
    if not MIN_NONCE_BYTES <= len(declaration.nonce) <= MAX_NONCE_BYTES:
        return "a 16 to 64-byte nonce", f"{len(declaration.nonce)} bytes", "a malformed nonce"
    if player_id is None:
        return "a player id", "none", "a declaration binds the seated player"
    if declaration_opens(
        declaration.commitment,
        table_id,
        deal_number,
        seat,
        player_id,
        declaration.natural,
        declaration.nonce,
    ):
        return None
    return (
        declaration.commitment.hex(),
        "another commitment",
        f"the declaration {declaration.natural!r} with nonce {declaration.nonce.hex()} does not"
        f" open the seat's declaration commitment (player {player_id})",
    )
