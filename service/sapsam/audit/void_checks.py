"""The check of a voided deal (``DealVoided``, docs/fairness.md "A voided deal"). Pure.

A voided deal has no score to verify, but its seed is published in the voiding event, so an
auditor checks that the operator did not void a deal to hide something:

- the seed matches the commitment published when the deal started (``DealStarted``);
- when the cards were dealt, the deck, the cut deck and every seat's hand recomputed from the
  seed, the contributions and the cut give the digests recorded in ``CardsDealt``: the deal that
  was voided is the deal that was dealt;
- nothing was scored (no ``SeedRevealed``, no ``DealScored`` in the deal; the ``sequence`` check
  holds the order), so no total changed.
"""

from __future__ import annotations

import uuid

from sapsam import fairness
from sapsam.audit.deal_events import DealEvents
from sapsam.audit.report import AuditCheck, Status
from sapsam.domain.events import (
    CardsDealt,
    DealScored,
    DealStarted,
    DealVoided,
    DeckCut,
    EntropyContributed,
    SeedRevealed,
)


def voided_check(deal: DealEvents, table_id: uuid.UUID, seat_count: int) -> AuditCheck:
    """``voided_deal``: the published seed is the committed one, it deals what was dealt, and
    no score was recorded."""
    voided = deal.first(DealVoided)
    started = deal.first(DealStarted)
    assert isinstance(voided, DealVoided)
    number = deal.number

    def failed(detail: str) -> AuditCheck:
        return AuditCheck("voided_deal", Status.FAILED, detail, deal=number)

    if not isinstance(started, DealStarted):
        return failed("the voided deal has no DealStarted, so no commitment to check against")
    seed = bytes.fromhex(voided.seed)
    commitment = fairness.seed_commitment(table_id, number, seed)
    if commitment.hex() != started.seed_commitment:
        return failed("the seed published with DealVoided does not match the deal's commitment")
    if deal.first(DealScored) is not None or deal.first(SeedRevealed) is not None:
        return failed("a voided deal has a SeedRevealed or DealScored: it was scored")
    dealt = deal.first(CardsDealt)
    cut = deal.first(DeckCut)
    detail = "the published seed matches the commitment; nothing was scored"
    if isinstance(dealt, CardsDealt) and isinstance(cut, DeckCut):
        contributions: list[bytes | None] = [None] * seat_count
        for event in deal.events:
            if isinstance(event, EntropyContributed):
                contributions[event.seat] = bytes.fromhex(event.entropy)
        record = fairness.deal_record(
            seed, contributions, table_id, number, cut.position, started.dealer, seat_count
        )
        recorded = (
            dealt.deck_digest,
            dealt.cut_deck_digest,
            tuple(dealt.hand_digests),
        )
        if recorded != (
            record.deck.hex(),
            record.cut_deck.hex(),
            tuple(digest.hex() for digest in record.hands),
        ):
            return failed(
                "the deck recomputed from the published seed, the contributions and the cut does"
                " not give the digests recorded in CardsDealt"
            )
        detail = (
            "the published seed matches the commitment and deals the cards recorded in"
            " CardsDealt; nothing was scored"
        )
    return AuditCheck(
        "voided_deal", Status.PASSED, f"{detail} (voided: {voided.reason})", deal=number
    )
