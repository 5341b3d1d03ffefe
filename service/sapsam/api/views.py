"""From domain values to API messages: the one import for the servicers.

Everything here is a pure function of the table's state or its recorded events, so an original
response and its retry are built alike. What a caller may see is decided in the domain
(``sapsam.domain.table_views``: a ``DealResult`` shows hands, nonces and dealt cards only once the
deal's seed is in the log, an ``ArrangementRevealed`` event never carries them, and no view ever
reads a secret seed); the modules behind this one translate views to messages:

- ``common_messages``: rule sets (both ways), timestamps, timeout stages, a table's creator;
- ``table_messages``: ``Table``;
- ``deal_messages``: ``DealResult``;
- ``event_messages``: the public event feed's ``TableEvent``, one converter per event type;
- ``tournament_messages``: ``Tournament`` and its seated rounds.
"""

from __future__ import annotations

from collections.abc import Mapping

from sapsam.api.common_messages import (
    OPERATOR_ACTOR,
    rule_set_for_request,
    timestamp_from_text,
)
from sapsam.api.deal_messages import deal_result_message
from sapsam.api.event_messages import table_event_header, table_event_message
from sapsam.api.open_face_messages import open_face_table_message
from sapsam.api.table_messages import (
    TableFacts,
    facts_from_first_event,
    table_message,
    table_status,
)
from sapsam.api.tournament_messages import tournament_message
from sapsam.domain.deal_facts import DealFacts, gather_deal
from sapsam.domain.open_face.table_state import OpenFaceTable
from sapsam.domain.table import TableState
from sapsam.domain.table_views import Viewer
from sapsam_proto.v1 import table_pb2

# Only what the servicers and the stream channels use; the rest is imported from its module.
__all__ = [
    "OPERATOR_ACTOR",
    "DealFacts",
    "TableFacts",
    "Viewer",
    "deal_result_message",
    "facts_from_first_event",
    "gather_deal",
    "rule_set_for_request",
    "table_event_header",
    "table_event_message",
    "table_message",
    "table_message_of_any_family",
    "table_status",
    "timestamp_from_text",
    "tournament_message",
]


def table_message_of_any_family(
    state: TableState, facts: TableFacts, display_names: Mapping[str, str]
) -> table_pb2.Table:
    """The ``Table`` GetTable shows, whatever the table's family: the closed game's view, or
    open face's (``sapsam.api.open_face_messages``)."""
    if isinstance(state, OpenFaceTable):
        return open_face_table_message(state, facts, display_names)
    return table_message(state, facts, display_names)
