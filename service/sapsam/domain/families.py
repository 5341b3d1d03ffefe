"""The registry of game families, and a table's ``decide``/``evolve``/``fold`` through it.

A table plays the family its ``TableCreated``'s rule set names (``sapsam.domain.family``;
absent: ``closed``). Everything that runs a table without knowing its game -- the application's
runner, replay, the read side -- goes through the functions here, which hand each command and
event to the table's family:

- ``decide(state, command)``: a command creating a table (each family's ``create_command``: the
  closed game's ``CreateTable``, open face's ``CreateOpenFaceTable``) on a table not yet created
  goes to its family; every other command to the family whose state the table is in.
- ``evolve(state, event)``: a ``TableCreated`` starting a table goes to the family its recorded
  rule set names, from that family's initial state; every other event to the state's family.
- ``fold(events, state)``: ``evolve`` over a run, the family found once for the run.

The dispatch is one dictionary lookup by the state's class: a family's state class is its own
(``GameFamily.initial_state``), so no state is ever handed to another family.

Adding a family is a module building its ``GameFamily`` and one line in ``FAMILIES``; the store,
the transport and the audit's framework are not touched (docs/architecture.md, "Game families").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, TypeVar

from sapsam.domain.closed_family import CLOSED
from sapsam.domain.events import Event, TableCreated
from sapsam.domain.family import (
    FamilyState,
    GameFamily,
    TableStage,
    UnknownFamilyError,
    family_name_of,
    without_family,
)
from sapsam.domain.open_face.family import OPEN_FACE
from sapsam.domain.table_state import INITIAL_STATE

__all__ = [
    "FAMILIES",
    "NO_TABLE",
    "PHASES_BY_STAGE",
    "decide",
    "decide_folded",
    "evolve",
    "family_named",
    "family_of_rule_set",
    "family_of_rules",
    "family_of_state",
    "fold",
    "read_recorded_rules",
    "stage_of_state",
]

FAMILIES: Final[Mapping[str, GameFamily[Any, Any]]] = MappingProxyType(
    {CLOSED.name: CLOSED, OPEN_FACE.name: OPEN_FACE}
)
"""Every family this code plays, by the name a rule set records."""

NO_TABLE: Final = INITIAL_STATE
"""The state of a stream before its ``TableCreated``, whatever family the table will play (the
closed family's initial state: before creation no family's particulars are read)."""

_BY_STATE: Final[Mapping[type[Any], GameFamily[Any, Any]]] = MappingProxyType(
    {type(family.initial_state): family for family in FAMILIES.values()}
)
_BY_CREATE: Final[Mapping[type[Any], GameFamily[Any, Any]]] = MappingProxyType(
    {family.create_command: family for family in FAMILIES.values()}
)
_BY_RULES: Final[Mapping[type[Any], GameFamily[Any, Any]]] = MappingProxyType(
    {family.rules_type: family for family in FAMILIES.values()}
)

_State = TypeVar("_State", bound=FamilyState)


def _phases_by_stage() -> Mapping[TableStage, tuple[str, ...]]:
    by_stage: dict[TableStage, list[str]] = {stage: [] for stage in TableStage}
    for family in FAMILIES.values():
        for phase in family.phases:
            stage = family.stage_of(phase)
            if phase in by_stage[stage]:
                continue
            if any(phase in others for others in by_stage.values()):
                # One name, one stage: the read models filter by the name alone.
                raise AssertionError(f"phase {phase} has two stages across the families")
            by_stage[stage].append(str(phase))
    return MappingProxyType({stage: tuple(names) for stage, names in by_stage.items()})


PHASES_BY_STAGE: Final = _phases_by_stage()
"""Each stage's phase names across every family (the ListTables filter: the read models record
a table's phase by name, whatever its family)."""


def stage_of_state(state: FamilyState) -> TableStage:
    """The stage of a table, by its family's mapping of its phase."""
    return _BY_STATE[type(state)].stage_of(state.phase)


def family_named(name: str) -> GameFamily[Any, Any]:
    """The family called ``name``; an unknown name raises :class:`UnknownFamilyError`."""
    family = FAMILIES.get(name)
    if family is None:
        raise UnknownFamilyError(
            f"unknown game family {name[:32]!r} (known families: {', '.join(FAMILIES)})"
        )
    return family


def family_of_rule_set(recorded: Mapping[str, Any]) -> GameFamily[Any, Any]:
    """The family a recorded rule set (``TableCreated.rule_set``) belongs to."""
    return family_named(family_name_of(recorded))


def read_recorded_rules(recorded: Mapping[str, Any]) -> tuple[GameFamily[Any, Any], Any]:
    """A recorded rule set's family and the rule set read by it (strictly: a malformed one
    raises ``ValueError`` naming the key)."""
    family = family_of_rule_set(recorded)
    return family, family.read_rules(without_family(recorded))


def family_of_rules(rules: object) -> GameFamily[Any, Any]:
    """The family whose rule-set class ``rules`` is an instance of."""
    family = _BY_RULES.get(type(rules))
    if family is None:
        raise UnknownFamilyError(f"{type(rules).__name__} is no game family's rule set")
    return family


def family_of_state(state: FamilyState) -> GameFamily[Any, Any]:
    """The family whose table ``state`` describes."""
    return _BY_STATE[type(state)]


def decide(state: _State, command: Any) -> list[Event]:
    """The events ``command`` produces on the table, decided by the table's family."""
    if state.table_id is None:
        creating = _BY_CREATE.get(type(command))
        if creating is not None:
            return creating.decide(creating.initial_state, command)
    decided: list[Event] = _BY_STATE[type(state)].decide(state, command)
    return decided


def decide_folded(state: _State, command: Any) -> tuple[list[Event], _State]:
    """``decide`` and the state after its events, folded once: by the family's own
    ``decide_folded`` when it has one (it knows the state after as it decides), else ``fold``
    of what ``decide`` produced."""
    own = None if state.table_id is None else _BY_STATE[type(state)].decide_folded
    if own is None:
        events = decide(state, command)
        return events, fold(events, state)
    folded: tuple[list[Event], _State] = own(state, command)
    return folded


def evolve(state: _State, event: Event) -> _State:
    """The state after one event, by the table's family. Never raises for a recorded event of a
    family this code plays; a ``TableCreated`` naming another raises
    :class:`UnknownFamilyError` (replaying it as some other game would be wrong)."""
    if type(event) is TableCreated and state.table_id is None:
        family = family_of_rule_set(event.rule_set)
        started: _State = family.evolve(family.initial_state, event)
        return started
    evolved: _State = _BY_STATE[type(state)].evolve(state, event)
    return evolved


def fold(events: Sequence[Event], state: _State = NO_TABLE) -> _State:  # type: ignore[assignment]
    """The state after a run of events, from ``state`` (no table yet, by default)."""
    if not events:
        return state
    start = 0
    if state.table_id is None and type(events[0]) is TableCreated:
        state = evolve(state, events[0])
        start = 1
    folded: _State = _BY_STATE[type(state)].fold_events(events[start:], state)
    return folded
