"""Deciding naturals at a table (docs/rules.md §2.9, docs/fairness.md §21): the declaration a
seat commits to before its arrangement, its opening with the reveal, and the verdict on each seat.

Hidden information: at a table with naturals **every** seat declares, ``none`` included, and only
the declaration's hash is recorded (``NaturalDeclared``), so neither the log nor the order of
events tells who holds a natural until the reveals, which open the declarations with the rows.
The hooks in the shared deciders are one call each: ``require_declared`` before a commitment,
``open_declaration`` in a reveal, ``seat_verdicts`` when the deal is scored.
"""

from __future__ import annotations

from collections.abc import Sequence

from sapsam import fairness
from sapsam.domain.commands import DeclareNatural, RevealArrangement
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import Event, NaturalDeclared, NaturalRevealed
from sapsam.domain.move_signatures import check_signature
from sapsam.domain.table_checks import current_deal, require_deal, require_phase, seat_for
from sapsam.domain.table_frame import require_nonce_size
from sapsam.domain.table_state import DealState, TablePhase, TableState
from sapsam.fairness.natural_commitments import declaration_opens, declare_message
from sapsam.rules.arrangement import Arrangement, ArrangementCheck
from sapsam.rules.cards import Card
from sapsam.rules.naturals import Natural, NaturalHand, NaturalsTable, declared, judge_seat

DECLARATIONS = ", ".join(natural.value for natural in Natural)


def plays_naturals(state: TableState) -> bool:
    """Whether the table's rule set has naturals (then every seat declares)."""
    return state.rule_set.naturals is not NaturalsTable.NONE


def _refuse_without_naturals(state: TableState) -> None:
    if not plays_naturals(state):
        raise DomainError(
            Reason.NATURALS_NOT_PLAYED,
            f"this table's rule set ({state.rule_set.name!r}) plays no naturals (naturals none):"
            " there is nothing to declare",
        )


def decide_declare(state: TableState, command: DeclareNatural) -> list[Event]:
    """``NaturalDeclared``: once per seat and deal, while arranging, before any commitment."""
    _refuse_without_naturals(state)
    seat = seat_for(state, command.player_id)
    require_deal(state, command.deal_number)
    require_phase(state, TablePhase.ARRANGING)
    deal = current_deal(state)
    if deal.timeouts[seat] is not None:
        raise DomainError(Reason.SEAT_TIMED_OUT, "this seat missed its deadline for this deal")
    if deal.declarations[seat] is not None:
        raise DomainError(
            Reason.ALREADY_DECLARED, "this seat already declared in this deal; it is final"
        )
    if deal.confirmed[seat] or deal.commitments[seat] is not None:  # pragma: no cover - guarded
        raise DomainError(Reason.ALREADY_CONFIRMED, "a declaration comes before the commitment")
    if len(command.commitment) != fairness.COMMITMENT_BYTES:
        raise DomainError(
            Reason.BAD_COMMITMENT,
            f"a declaration commitment is a 32-byte SHA-256 hash, not {len(command.commitment)}"
            " bytes (docs/fairness.md §21)",
            field="commitment",
        )
    table_id = state.table_id
    assert table_id is not None
    signed = check_signature(
        command.signature,
        command.player_keys,
        lambda: declare_message(table_id, deal.number, seat, command.player_id, command.commitment),
    )
    return [
        NaturalDeclared(
            deal_number=deal.number,
            seat=seat,
            commitment=command.commitment.hex(),
            player_key=None if signed is None else signed.public_key.hex(),
            signature=None if signed is None else signed.signature.hex(),
        )
    ]


def require_declared(state: TableState, deal: DealState, seat: int) -> None:
    """At a table with naturals a seat declares before it commits its arrangement."""
    if plays_naturals(state) and deal.declarations[seat] is None:
        raise DomainError(
            Reason.DECLARATION_REQUIRED,
            "declare first (DeclareNatural, 'none' if the hand holds no natural): at this table"
            " every seat declares before committing its arrangement (docs/rules.md §2.9.1)",
        )


def open_declaration(
    state: TableState, deal: DealState, seat: int, command: RevealArrangement
) -> tuple[list[Event], Natural]:
    """The reveal's opening of the seat's declaration: its event and the natural declared."""
    if not plays_naturals(state):
        if command.natural:
            _refuse_without_naturals(state)
        return [], Natural.NONE
    commitment = deal.declarations[seat]
    if commitment is None:  # pragma: no cover - a confirmed seat has declared
        return [], Natural.NONE
    if not command.natural:
        raise DomainError(
            Reason.DECLARATION_REQUIRED,
            "open the seat's declaration with the reveal: natural and natural_nonce",
            field="natural",
        )
    try:
        natural = Natural(command.natural)
    except ValueError:
        raise DomainError(
            Reason.INVALID_ARGUMENT,
            f"natural must be one of {DECLARATIONS}",
            field="natural",
        ) from None
    nonce = command.natural_nonce
    require_nonce_size(nonce, "natural_nonce")
    table_id = state.table_id
    assert table_id is not None
    if not declaration_opens(
        commitment, table_id, deal.number, seat, command.player_id, natural.value, nonce
    ):
        raise DomainError(
            Reason.DECLARATION_MISMATCH,
            "this natural and natural_nonce do not hash to the declaration this seat committed",
        )
    opened = NaturalRevealed(
        deal_number=deal.number, seat=seat, natural=natural.value, nonce=nonce.hex()
    )
    return [opened], natural


def reveal_verdict(
    state: TableState, arrangement: Arrangement, dealt: Sequence[Card], natural: Natural
) -> ArrangementCheck:
    """The foul recorded with a reveal: the rows, judged with the seat's declaration."""
    return judge_seat(state.rule_set, arrangement, dealt, natural)[0]


def seat_verdicts(
    state: TableState,
    deal: DealState,
    arrangements: Sequence[Arrangement],
    hands: Sequence[Sequence[Card]],
) -> tuple[list[ArrangementCheck], list[NaturalHand | None]]:
    """Each seat's verdict and real natural for scoring. A seat whose declaration was never
    opened (it timed out) declared ``none``."""
    checks: list[ArrangementCheck] = []
    naturals: list[NaturalHand | None] = []
    opened = deal.naturals or (None,) * len(hands)
    for arrangement, dealt, natural in zip(arrangements, hands, opened, strict=True):
        check, hand = judge_seat(state.rule_set, arrangement, dealt, declared(natural))
        checks.append(check)
        naturals.append(hand)
    return checks, naturals
