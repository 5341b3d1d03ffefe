"""The closed game's checks of one deal, as the verifier's framework runs them per deal
(``sapsam.audit.families``): ``sequence`` and ``dealer_rotation`` for every deal, then
``voided_deal`` for a voided one, ``fair_dealing`` pending for one still being played, or fair
dealing's checks of a finished one (``sapsam.audit.deal_checks``). docs/audit.md describes each.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import partial

from sapsam.audit.check_guard import safely
from sapsam.audit.deal_checks import fairness_checks
from sapsam.audit.deal_events import DealEvents
from sapsam.audit.deal_sequence import rotation_check, sequence_check
from sapsam.audit.report import AuditCheck, Status, make_check
from sapsam.audit.surrender_checks import surrender_in
from sapsam.audit.void_checks import voided_check
from sapsam.domain.events import DealerChosen, DealVoided, PlayerSeated, TableCreated
from sapsam.rules.ruleset import RuleSet

__all__ = ["closed_deal_checks"]


def closed_deal_checks(
    deal: DealEvents,
    created: TableCreated | None,
    chosen: DealerChosen | None,
    seat_count: int,
    after_series: str,
    rule_set: RuleSet | None,
    seated: Sequence[PlayerSeated],
) -> tuple[list[AuditCheck], tuple[int, ...] | None]:
    """Every check of one closed deal, and its verified totals (None: not verified)."""
    surrender_on = created is not None and surrender_in(created.rule_set)
    checks = [
        safely(
            "sequence",
            deal.number,
            partial(sequence_check, deal, seat_count, after_series, surrender_on),
        ),
        safely("dealer_rotation", deal.number, partial(rotation_check, deal, chosen, seat_count)),
    ]
    if isinstance(deal.first(DealVoided), DealVoided) and created is not None:
        table_id = uuid.UUID(created.table_id)
        checks.append(
            safely(
                "voided_deal",
                deal.number,
                partial(voided_check, deal, table_id, created.seat_count),
            )
        )
        return checks, None
    if not deal.finished:
        checks.append(
            make_check(
                "fair_dealing",
                Status.PENDING,
                "the deal is still being played: its seed is secret until SeedRevealed, so "
                "its cards cannot be checked yet",
                deal=deal.number,
            )
        )
        return checks, None
    if created is None:
        checks.append(
            make_check("fair_dealing", Status.SKIPPED, "no TableCreated", deal=deal.number)
        )
        return checks, None
    deal_checks, totals = fairness_checks(deal, created, rule_set, seated)
    checks.extend(deal_checks)
    return checks, totals
