"""The solver's suggestion for the decision a seat's holder faces now (``GetSuggestion``).

A hint, never a move: it reads the table as ``own_hand`` does (one read, from memory when the
copy is current), checks that the seat has something to decide, runs the project's solver on the
seat's own cards, and records nothing.

- Closed game, while the seat arranges: ``best_play`` (``sapsam.rules.solver_play``), the rows
  and, at a table with naturals, the natural to declare: what ``sapsam arrange``, the SDK's bots
  and ``sapsam-play``'s hint choose.
- Open face, on the seat's turn: ``solve_street`` (``sapsam.rules.open_face.solver``) for the
  street's cards on the seat's board, with ``SUGGESTION_ROLLOUTS`` futures (``sapsam-play``'s
  hint takes as many) and a seed from the table, deal, street and seat only, so the same
  question gets the same answer; the cards it counts as seen are those the seat may see (the
  others' rows as its view shows them, its own discards), never another seat's hidden cards.
- Open face, a Fantasyland hand not yet set: ``solve_fantasyland``, bounded by its budget.

What it costs: the closed solver takes about 10 ms of CPU; a street with 200 futures about 0.1 s;
a Fantasyland hand at most about 0.3 s (17 cards). The solver runs in the server's solver
processes (``sapsam.app.solver_processes``: out of the serving process's GIL, at a lower CPU
priority, with a bound on the suggestions waiting for them); what goes there is the seat's
cards, the rules, the cards it has seen and the seed (``sapsam.app.suggestion_solving``). The
calls are also limited per player by ``sapsam.api.limits`` (``suggestions_per_minute``).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Final

from sapsam.app.solver_processes import SolverProcesses
from sapsam.app.suggestion_solving import (
    Suggestion,
    closed_suggestion,
    fantasyland_suggestion,
    street_suggestion,
)
from sapsam.app.table_queries import OwnHand, TableQueries
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.deal_views import OpenFaceDealView
from sapsam.domain.open_face.table_state import OpenFaceTable, OpenFaceTablePhase
from sapsam.domain.table import TablePhase, TableState
from sapsam.rules.open_face.board import Board
from sapsam.rules.open_face.parameters import OpenFaceRules

__all__ = ["Suggestion", "TableSuggestions", "suggestion_seed"]


def suggestion_seed(table_id: uuid.UUID, deal_number: int, street: int, seat: int) -> int:
    """The open-face solver's seed for a suggestion: public facts only (never the deal's secret
    seed), so the same street of the same deal gets the same suggestion."""
    text = f"sapsam suggestion {table_id} {deal_number} {street} {seat}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


async def _street_suggestion(
    solvers: SolverProcesses,
    table_id: uuid.UUID,
    hand: OwnHand,
    view: OpenFaceDealView,
    rules: OpenFaceRules,
) -> Suggestion:
    own = view.seats[hand.seat]
    board = own.board or Board((), (), ())
    on_board = set(board.cards)
    thrown = set(hand.discards)
    street_cards = tuple(card for card in hand.cards if card not in on_board and card not in thrown)
    street = view.street or 0
    # Seen: what this seat may see of the others' rows (its view), and its own discards.
    seen = {card for other in view.seats if other.board is not None for card in other.board.cards}
    seen.update(thrown)
    seed = suggestion_seed(table_id, hand.deal_number, street, hand.seat)
    return await solvers.solve(
        street_suggestion,
        hand.seat,
        hand.deal_number,
        street,
        rules,
        board,
        street_cards,
        frozenset(seen),
        seed,
    )


_AFTER_ARRANGING: Final = frozenset(
    {TablePhase.ANNOUNCING, TablePhase.REVEALING, TablePhase.AWAITING_SEED}
)
"""The phases of a deal whose seats have all confirmed or timed out."""


def _closed_due(state: TableState, seat: int) -> None:
    """The seat arranges now: cards dealt, not confirmed, not timed out."""
    deal = state.deal
    if deal is None or (
        state.phase is not TablePhase.ARRANGING and state.phase not in _AFTER_ARRANGING
    ):
        raise DomainError(Reason.WRONG_PHASE, "there is nothing to arrange now")
    if deal.timeouts[seat] is not None:
        raise DomainError(Reason.SEAT_TIMED_OUT, "your seat ran out of time in this deal")
    if deal.confirmed[seat] or state.phase in _AFTER_ARRANGING:
        raise DomainError(Reason.ALREADY_CONFIRMED, "your rows are confirmed for this deal")


def _open_face_due(state: OpenFaceTable, view: OpenFaceDealView, seat: int) -> bool:
    """The seat has a decision now; True for a Fantasyland hand to set, False for a street."""
    own = view.seats[seat]
    if state.phase is not OpenFaceTablePhase.PLAYING:
        raise DomainError(Reason.WRONG_PHASE, "no deal is being played")
    if own.timed_out:
        raise DomainError(Reason.SEAT_TIMED_OUT, "your seat ran out of time in this deal")
    if own.fantasyland:
        if own.committed:
            raise DomainError(Reason.ALREADY_CONFIRMED, "your Fantasyland hand is set")
        return True
    if view.phase is not OpenFacePhase.PLACING:
        raise DomainError(Reason.WRONG_PHASE, "no street is being placed")
    if view.turn != seat:
        raise DomainError(Reason.NOT_YOUR_TURN, "another seat places now")
    return False


def _deal_number(state: TableState | OpenFaceTable) -> int | None:
    if isinstance(state, OpenFaceTable):
        return None if state.play is None else state.play.number
    return None if state.deal is None else state.deal.number


def _check_deal(state: TableState | OpenFaceTable, deal_number: int | None) -> None:
    if deal_number is not None and deal_number != _deal_number(state):
        current = _deal_number(state)
        now = "no deal has started" if current is None else f"the current deal is {current}"
        raise DomainError(Reason.WRONG_DEAL, f"this call is for deal {deal_number}, but {now}")


class TableSuggestions(TableQueries):
    """The suggestion query (``sapsam.app.tables.TableService`` has it)."""

    async def suggestion(
        self, table_id: uuid.UUID, player_id: str, deal_number: int | None
    ) -> Suggestion:
        """The solver's suggestion for ``player_id``'s seat now (module documentation):
        NOT_SEATED, WRONG_DEAL, WRONG_PHASE, SEAT_TIMED_OUT, ALREADY_CONFIRMED or NOT_YOUR_TURN
        when it has nothing to decide; ``SolverBusyError`` or ``SolverUnavailableError``
        (``sapsam.app.solver_processes``) when the solver cannot take or finish it. Records
        nothing."""
        hand, state = await self.own_hand_and_table(table_id, player_id)
        _check_deal(state, deal_number)
        if isinstance(state, OpenFaceTable):
            view, play = hand.open_face, state.play
            assert view is not None and play is not None  # own_hand gave its cards
            if _open_face_due(state, view, hand.seat):
                return await self.solvers.solve(
                    fantasyland_suggestion, hand.seat, hand.deal_number, hand.cards, play.rules
                )
            return await _street_suggestion(self.solvers, table_id, hand, view, play.rules)
        _closed_due(state, hand.seat)
        return await self.solvers.solve(
            closed_suggestion, hand.seat, hand.deal_number, hand.cards, state.rule_set
        )
