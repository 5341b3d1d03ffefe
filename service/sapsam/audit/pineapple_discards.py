"""The verifier's half of Pineapple's discards (docs/fairness.md §23, docs/audit.md "Open face"):
the commands that re-decide a placement with its discard commitment and the opening of a seat's
discards, from the log and the published seed alone. ``open_face_deals`` re-decides them; the
domain (``sapsam.domain.open_face.discard_decide``) then checks every opened card against the
cards the seed dealt that seat on that street, its board and its commitment."""

from __future__ import annotations

from collections.abc import Sequence

from sapsam.domain.events import Event
from sapsam.domain.open_face.commands import RevealDiscards
from sapsam.domain.open_face.events import CardsPlaced, DiscardCommitted, DiscardsRevealed
from sapsam.rules.cards import Card, parse_cards

__all__ = ["discard_commitment_after", "reveal_discards_command"]


def discard_commitment_after(placed: CardsPlaced, rest: Sequence[Event]) -> bytes | None:
    """The commitment recorded right after ``placed`` (``rest[0]``) for its seat and street, or
    None when none is (the placement is then refused for want of it)."""
    following = rest[1] if len(rest) > 1 else None
    if (
        isinstance(following, DiscardCommitted)
        and following.seat == placed.seat
        and following.street == placed.street
    ):
        return bytes.fromhex(following.commitment)
    return None


def reveal_discards_command(
    player: str,
    event: DiscardsRevealed,
    cards: Sequence[Sequence[Sequence[Card]]],
    seat: int,
) -> RevealDiscards:
    """The ``RevealDiscards`` that must have produced ``event``: its cards and nonces, with the
    cards the seed dealt ``seat`` on every street (``cards[street][seat]``)."""
    return RevealDiscards(
        player,
        tuple(parse_cards(opened) for opened in event.cards),
        tuple(bytes.fromhex(nonce) for nonce in event.nonces),
        tuple(tuple(street[seat]) for street in cards),
    )
