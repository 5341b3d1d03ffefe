"""Example deals, as an honest server would publish them, for the vectors, tests and benchmarks.

Why apart: ``sapsam.fairness.vectors`` builds docs/fairness-vectors.json; these deals are one of
its sections, and the tests and benchmarks that want a finished deal to verify, alter or time
take them from here without the rest of the file's construction.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

from sapsam.fairness.commitments import arrangement_commitment
from sapsam.fairness.deal import cut_deck, deal_hands, deal_record
from sapsam.fairness.natural_checks import Declaration
from sapsam.fairness.natural_commitments import declaration_commitment
from sapsam.fairness.published import PublishedDeal, Reveal
from sapsam.fairness.shuffle import seed_commitment, shuffle_deck
from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.naturals import NaturalsTable
from sapsam.rules.ruleset import MajorityRule, RuleSet, ScoringMethod
from sapsam.rules.scoring import score_deal
from sapsam.rules.solver import solve

# The published-deal vectors were recorded under rules version 1, before the presets had deadlines;
# a deal is published with the rule set its table recorded, so they keep the rule sets of that time.
VECTOR_RULE_SET: Final = RuleSet(name="pagat", rules_version=1, majority=MajorityRule.MORE_ROWS_WON)
VECTOR_TWO_FOUR_RULE_SET: Final = VECTOR_RULE_SET.with_changes(
    name="two_four", scoring=ScoringMethod.TWO_FOUR
)


def bytes_from_label(label: str, length: int) -> bytes:
    """Fixed, reproducible test bytes: the first ``length`` bytes of SHA-256 of the label."""
    return hashlib.sha256(label.encode()).digest()[:length]


def simple_arrangement(hand: Sequence[int]) -> Arrangement:
    """A plain arrangement of 13 cards for examples: strongest groups to the back.

    Cards are ordered by how many of their rank the hand holds, then by rank, both high first;
    the first five go to the back, the next five to the middle, the last three to the front. It
    is often legal and sometimes a foul, which the examples want too.
    """
    counts = Counter(card >> 2 for card in hand)
    ordered = sorted(hand, key=lambda card: (-counts[card >> 2], -(card >> 2), card & 3))
    return Arrangement.of(ordered[10:13], ordered[5:10], ordered[0:5]).canonical()


def example_published_deal(
    inputs: dict[str, Any],
    rule_set: RuleSet = VECTOR_RULE_SET,
    revealed: bool = True,
    solver: bool = False,
    players: tuple[str, ...] = (),
) -> PublishedDeal:
    """A finished deal built from ``inputs`` as an honest server would publish it.

    Each seat plays :func:`simple_arrangement` with a nonce derived from its seat. With
    ``revealed=False`` the last seat never reveals: a foul, or, with ``solver=True``, a seat that
    timed out while arranging and whose hand the solver set. With ``players`` (one id per seat)
    every seat commits under scheme 2, binding its player id. Under a rule set with naturals
    every seat declares ``none`` (docs/fairness.md §21; a seat that never revealed never opened
    it, one whose hand the solver set never declared), bound to ``players`` or, without them, to
    ids named after the seats.
    """
    table_id: uuid.UUID = inputs["table_id"]
    deal_number: int = inputs["deal_number"]
    seed: bytes = inputs["seed"]
    contributions: tuple[bytes | None, ...] = inputs["contributions"]
    seat_count = len(contributions)
    args = (seed, contributions, table_id, deal_number, inputs["cut_position"], inputs["dealer"])
    hands = deal_hands(
        cut_deck(shuffle_deck(seed, contributions, table_id, deal_number), inputs["cut_position"]),
        inputs["dealer"],
        seat_count,
    )
    reveals: list[Reveal | None] = []
    commitments: list[bytes | None] = []
    for seat, hand in enumerate(hands):
        arrangement = simple_arrangement(hand)
        nonce = bytes_from_label(f"nonce {deal_number} {seat}", 16)
        commitments.append(
            arrangement_commitment(
                table_id,
                deal_number,
                seat,
                arrangement,
                nonce,
                scheme=2 if players else 1,
                player_id=players[seat] if players else None,
            )
        )
        reveals.append(Reveal(arrangement, nonce))
    solver_seats = [False] * seat_count
    if not revealed:
        reveals[-1] = None
        commitments[-1] = None if solver else commitments[-1]
        solver_seats[-1] = solver
    declarations: tuple[Declaration | None, ...] | None = None
    seated = players
    if rule_set.naturals is not NaturalsTable.NONE:
        seated = players or tuple(f"player {seat}" for seat in range(seat_count))
        declarations = tuple(
            _declared_none(table_id, deal_number, seat, seated[seat], reveals[seat] is not None)
            if commitments[seat] is not None
            else None
            for seat in range(seat_count)
        )
    set_for: list[Arrangement | None] = [
        solve(hand, rule_set) if solver_seat else None
        for hand, solver_seat in zip(hands, solver_seats, strict=True)
    ]
    verdicts = []
    for seat, reveal in enumerate(reveals):
        scored = reveal.arrangement if reveal is not None else set_for[seat]
        arrangement = scored or Arrangement((), (), ())
        verdicts.append(check_arrangement(arrangement, hands[seat], rule_set.strict_row_order))
    scores = score_deal(rule_set, verdicts)
    return PublishedDeal(
        table_id=table_id,
        deal_number=deal_number,
        rule_set=rule_set,
        seat_count=seat_count,
        dealer=inputs["dealer"],
        seed_commitment=seed_commitment(table_id, deal_number, seed),
        seed=seed,
        contributions=contributions,
        cut_position=inputs["cut_position"],
        record=deal_record(*args, seat_count),
        seat_commitments=tuple(commitments),
        reveals=tuple(reveals),
        recorded_fouls=tuple(verdict.foul for verdict in verdicts),
        recorded_scores=scores,
        solver_seats=tuple(solver_seats),
        solver_arrangements=tuple(set_for) if solver else None,
        commitment_schemes=(2,) * seat_count if players else (),
        players=seated,
        natural_declarations=declarations,
    )


def _declared_none(
    table_id: uuid.UUID, deal_number: int, seat: int, player: str, opened: bool
) -> Declaration:
    """A seat's declaration of ``none``, opened (with its nonce) or not."""
    nonce = bytes_from_label(f"declaration {deal_number} {seat}", 16)
    commitment = declaration_commitment(table_id, deal_number, seat, player, "none", nonce)
    return Declaration(commitment, "none", nonce) if opened else Declaration(commitment)
