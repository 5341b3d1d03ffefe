"""Fair dealing: seeded shuffle, cut, deal order, commitments and the deal verifier.

Pure code: no I/O, no clock; the only randomness is :func:`new_seed`, which reads the operating
system's CSPRNG. Every construction is specified to the byte in docs/fairness.md, with test
vectors in docs/fairness-vectors.json.
"""

from sapsam.fairness.commitments import (
    COMMITMENT_BYTES,
    Rows,
    arrangement_commitment,
    check_reveal,
    commit,
    encode_rows,
    require_scheme,
)
from sapsam.fairness.deal import (
    DealRecord,
    cut_deck,
    cutter_for,
    deal_hands,
    deal_record,
    hands_for_deal,
    left_of,
    record_key,
    remembered_hands_for_deal,
    right_of,
)
from sapsam.fairness.encoding import (
    COMMITMENT_SCHEMES,
    MAX_CONTRIBUTION_BYTES,
    MAX_NONCE_BYTES,
    MAX_SEATS,
    MIN_CONTRIBUTION_BYTES,
    MIN_NONCE_BYTES,
    MIN_SEATS,
    SEED_BYTES,
    VERSION,
    FairnessError,
)
from sapsam.fairness.published import PublishedDeal, Reveal
from sapsam.fairness.shuffle import (
    DealerLot,
    draw_dealer,
    lot_commitment,
    new_seed,
    seed_commitment,
    shuffle_deck,
    shuffle_key,
)
from sapsam.fairness.verification_checks import Check, VerificationReport
from sapsam.fairness.verify import verify_deal

__all__ = [
    "COMMITMENT_BYTES",
    "COMMITMENT_SCHEMES",
    "MAX_CONTRIBUTION_BYTES",
    "MAX_NONCE_BYTES",
    "MAX_SEATS",
    "MIN_CONTRIBUTION_BYTES",
    "MIN_NONCE_BYTES",
    "MIN_SEATS",
    "SEED_BYTES",
    "VERSION",
    "Check",
    "DealRecord",
    "DealerLot",
    "FairnessError",
    "PublishedDeal",
    "Reveal",
    "Rows",
    "VerificationReport",
    "arrangement_commitment",
    "check_reveal",
    "commit",
    "cut_deck",
    "cutter_for",
    "deal_hands",
    "deal_record",
    "draw_dealer",
    "encode_rows",
    "hands_for_deal",
    "left_of",
    "lot_commitment",
    "new_seed",
    "record_key",
    "remembered_hands_for_deal",
    "require_scheme",
    "right_of",
    "seed_commitment",
    "shuffle_deck",
    "shuffle_key",
    "verify_deal",
]
