"""Tables on the wire: a ``Table`` message from the view a caller may see of a table's state.

What the caller may see is decided in ``sapsam.domain.table_views``; this module translates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from sapsam.api import resources
from sapsam.api.common_messages import (
    creator_name,
    rule_set_message,
    surrender_choice,
    timestamp_from_ms,
    timestamp_from_text,
)
from sapsam.domain.closed_family import CLOSED
from sapsam.domain.family import TableStage
from sapsam.domain.table_state import TablePhase, TableState
from sapsam.domain.table_views import SPECTATOR, TableView, Viewer, table_view_for
from sapsam.log.records import RecordedEvent
from sapsam.rules.ruleset import RuleSet
from sapsam_proto.v1 import rule_set_pb2, table_pb2

PHASE_TO_WIRE: Final = {
    TablePhase.SEATING: table_pb2.TABLE_PHASE_SEATING,
    TablePhase.AWAITING_DEALER: table_pb2.TABLE_PHASE_AWAITING_DEALER,
    TablePhase.BETWEEN_DEALS: table_pb2.TABLE_PHASE_BETWEEN_DEALS,
    TablePhase.AWAITING_CUT: table_pb2.TABLE_PHASE_AWAITING_CUT,
    TablePhase.DEALING: table_pb2.TABLE_PHASE_DEALING,
    TablePhase.ARRANGING: table_pb2.TABLE_PHASE_ARRANGING,
    TablePhase.ANNOUNCING: table_pb2.TABLE_PHASE_ANNOUNCING,
    TablePhase.REVEALING: table_pb2.TABLE_PHASE_REVEALING,
    TablePhase.AWAITING_SEED: table_pb2.TABLE_PHASE_AWAITING_SEED,
    TablePhase.SERIES_COMPLETE: table_pb2.TABLE_PHASE_SERIES_COMPLETE,
}
"""A table's phase as the API names it (and, read backwards, a phase a request names)."""


@dataclass(frozen=True)
class TableFacts:
    """What a table view needs beyond its folded state: immutable facts of its first event."""

    created_by: str
    create_time: str


def facts_from_first_event(recorded: RecordedEvent) -> TableFacts:
    """The creator and creation time, from the recorded TableCreated."""
    created_by = recorded.data.get("created_by")
    recorded_at = recorded.metadata.get("recorded_at")
    return TableFacts(
        created_by=created_by if isinstance(created_by, str) else "",
        create_time=recorded_at if isinstance(recorded_at, str) else "",
    )


STAGE_STATUS: Final[Mapping[TableStage, table_pb2.TableStatus.ValueType]] = {
    TableStage.OPEN: table_pb2.TABLE_STATUS_OPEN,
    TableStage.PLAYING: table_pb2.TABLE_STATUS_PLAYING,
    TableStage.COMPLETED: table_pb2.TABLE_STATUS_COMPLETED,
}
"""The API's status of each stage a table of any family is in (``sapsam.domain.family``)."""


def table_status(phase: TablePhase) -> table_pb2.TableStatus.ValueType:
    """The coarse status for a closed table's phase (the closed family's stage of it)."""
    return STAGE_STATUS[CLOSED.stage_of(phase)]


def table_message(
    state: TableState,
    facts: TableFacts,
    display_names: Mapping[str, str],
    viewer: Viewer = SPECTATOR,
) -> table_pb2.Table:
    """The table as ``viewer`` may see it (today every viewer sees the same ``Table``)."""
    return table_view_message(table_view_for(state, viewer), facts, display_names)


KEPT_RULE_SETS: Final = 4096
"""Rule-set messages kept (a table's, while it is among the latest served)."""
_rule_set_messages: dict[int, tuple[RuleSet, rule_set_pb2.RuleSet]] = {}


def _kept_rule_set_message(rule_set: RuleSet) -> rule_set_pb2.RuleSet:
    """``rule_set_message(rule_set)``, made once per rule-set object (a table's state keeps its
    own from event to event) and shared: the ``Table`` constructor copies it in. Kept with the
    rule set itself, so the id is not another object's while kept; the oldest go first."""
    kept = _rule_set_messages.get(id(rule_set))
    if kept is not None and kept[0] is rule_set:
        return kept[1]
    message = rule_set_message(rule_set)
    _rule_set_messages.pop(id(rule_set), None)  # re-inserted as the newest
    _rule_set_messages[id(rule_set)] = (rule_set, message)
    while len(_rule_set_messages) > KEPT_RULE_SETS:
        del _rule_set_messages[next(iter(_rule_set_messages))]
    return message


def table_view_message(
    view: TableView, facts: TableFacts, display_names: Mapping[str, str]
) -> table_pb2.Table:
    """A table view on the wire."""
    table_id = view.table_id
    table_name = resources.table_name(table_id)  # str(uuid) is Python code: once, not per seat
    seats = [
        table_pb2.Seat(
            name=resources.seat_of(table_name, seat.seat),
            position=seat.seat,
            player=resources.player_name(seat.player_id or ""),
            display_name=display_names.get(seat.player_id or "", ""),
            series_total=seat.series_total,
            entropy_contributed=seat.entropy_contributed,
            committed=seat.committed,
            confirmed=seat.confirmed,
            revealed=seat.revealed,
            timed_out=seat.timed_out,
            announcement=surrender_choice(seat.surrendered),
        )
        for seat in view.seats
    ]
    table = table_pb2.Table(
        name=table_name,
        status=table_status(view.phase),
        phase=PHASE_TO_WIRE.get(view.phase, table_pb2.TABLE_PHASE_UNSPECIFIED),
        rule_set=_kept_rule_set_message(view.rule_set),
        seat_count=view.seat_count,
        seats=seats,
        version=view.version,
        create_time=timestamp_from_text(facts.create_time),
        creator=creator_name(facts.created_by),
    )
    if view.dealer is not None:
        table.dealer_seat = resources.seat_of(table_name, view.dealer)
    if view.deal_number is not None:
        table.deal_number = view.deal_number
        table.current_deal = resources.deal_of(table_name, view.deal_number)
        table.seed_commitment = view.seed_commitment
    if view.cutter is not None:
        table.cutter_seat = resources.seat_of(table_name, view.cutter)
    if view.deadline_ms is not None:
        table.deadline_time.CopyFrom(timestamp_from_ms(view.deadline_ms))
    if view.announcing is not None:
        table.announcing_seat = resources.seat_of(table_name, view.announcing)
    return table
