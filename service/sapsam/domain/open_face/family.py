"""Open face as a game family (docs/architecture.md): the table's ``decide``/``evolve``
(``table_decide``, ``table_evolve``), its rule set recorded with ``family: open_face``, what
each caller may see of the running deal (``deal_views``) and the seeded placement solver for
bots, hints and timeouts (``sapsam.rules.open_face.solver``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Final

from sapsam.domain.events import Event
from sapsam.domain.family import GameFamily
from sapsam.domain.open_face.commands import CreateOpenFaceTable
from sapsam.domain.open_face.deal_decide import decide_deal_folded
from sapsam.domain.open_face.deal_views import OpenFaceDealView, deal_view_for
from sapsam.domain.open_face.events import OPEN_FACE_EVENT_TYPES
from sapsam.domain.open_face.table_decide import (
    OPEN_FACE_FAMILY,
    PLAY_COMMANDS,
    decide_table,
    read_recorded_rules,
    recorded_rules,
    require_play,
)
from sapsam.domain.open_face.table_evolve import evolve_table, fold_table
from sapsam.domain.open_face.table_state import (
    INITIAL_OPEN_FACE_TABLE,
    OpenFaceTable,
    OpenFaceTablePhase,
)
from sapsam.rules.cards import Card
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.solver import solve_placement

__all__ = ["OPEN_FACE", "decide_table_folded", "open_face_view"]


def open_face_view(
    state: OpenFaceTable,
    viewer: int | None,
    dealt: Sequence[Sequence[Card]] | None = None,
) -> OpenFaceDealView | None:
    """The running (or last) deal as ``viewer`` (a seat, or None) may see it; None before the
    first deal."""
    if state.play is None:
        return None
    return deal_view_for(state.play, viewer, dealt, seed_revealed=state.seed is not None)


def decide_table_folded(state: OpenFaceTable, command: Any) -> tuple[list[Event], OpenFaceTable]:
    """``decide_table``, and the table after the events, folded once: a deal's play is folded
    as it is decided (``deal_decide.decide_deal_folded``), and each of its events changes only
    the table's play and version (``table_evolve``'s ``_on_play``)."""
    if type(command) not in PLAY_COMMANDS:
        events = decide_table(state, command)
        return events, fold_table(events, state)
    if state.table_id is None:
        decide_table(state, command)  # refused: the table does not exist
    events, play = decide_deal_folded(require_play(state), command)
    return events, dataclasses.replace(state, play=play, version=state.version + len(events))


OPEN_FACE: Final[GameFamily[OpenFaceTable, OpenFaceRules]] = GameFamily(
    name=OPEN_FACE_FAMILY,
    rules_type=OpenFaceRules,
    create_command=CreateOpenFaceTable,
    read_rules=read_recorded_rules,
    record_rules=recorded_rules,
    initial_state=INITIAL_OPEN_FACE_TABLE,
    decide=decide_table,
    evolve=evolve_table,
    fold_events=fold_table,
    view_for=open_face_view,
    automatic_move=solve_placement,
    event_types=OPEN_FACE_EVENT_TYPES,
    phases=tuple(OpenFaceTablePhase),
    decide_folded=decide_table_folded,
)
"""Open-face Chinese poker (sources 001 and 003; docs/rules.md §8), behind the family seam."""
