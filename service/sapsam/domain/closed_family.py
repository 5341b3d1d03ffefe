"""The closed game as a game family: 13 cards to each seat, set face down, committed, revealed.

Nothing here is new: the closed game's aggregate (``sapsam.domain.table`` and the modules beside
it), its views (``sapsam.domain.table_views``) and its solver (``sapsam.rules.solver``) are named
as one :class:`~sapsam.domain.family.GameFamily`, the default of the registry
(``sapsam.domain.families``). A closed rule set is recorded as it always was, without the family
key, so every recorded table, vector and hash reads exactly as before.
"""

from __future__ import annotations

from typing import Final

from sapsam.domain.commands import CreateTable
from sapsam.domain.family import CLOSED_FAMILY, GameFamily
from sapsam.domain.table_decide import decide
from sapsam.domain.table_evolve import evolve, fold
from sapsam.domain.table_state import INITIAL_STATE, TablePhase, TableState
from sapsam.domain.table_views import table_view_for
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.solver import solve


def _recorded(rule_set: RuleSet, seat_count: int) -> dict[str, object]:
    # A closed rule set holds its series length itself, and is recorded as it always was.
    return rule_set.to_dict()


CLOSED: Final[GameFamily[TableState, RuleSet]] = GameFamily(
    name=CLOSED_FAMILY,
    rules_type=RuleSet,
    create_command=CreateTable,
    read_rules=RuleSet.from_dict,
    record_rules=_recorded,
    initial_state=INITIAL_STATE,
    decide=decide,
    evolve=evolve,
    fold_events=fold,
    view_for=table_view_for,
    automatic_move=solve,
    phases=tuple(TablePhase),
)
"""The closed game (docs/rules.md §1 and §2), behind the family interface."""
