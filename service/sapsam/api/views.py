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

from sapsam.api.common_messages import (
    OPERATOR_ACTOR,
    creator_name,
    rule_set_for_request,
    rule_set_from_message,
    rule_set_message,
    timestamp_from_ms,
    timestamp_from_text,
)
from sapsam.api.deal_messages import deal_result_message, deal_view_message
from sapsam.api.event_messages import table_event_message
from sapsam.api.table_messages import (
    TableFacts,
    facts_from_first_event,
    table_message,
    table_status,
    table_view_message,
)
from sapsam.api.tournament_messages import round_message, tournament_message, tournament_name
from sapsam.domain.deal_facts import DealFacts, gather_deal
from sapsam.domain.table_views import MISSED_DEADLINE_FOUL, OPERATOR, SPECTATOR, Viewer

__all__ = [
    "MISSED_DEADLINE_FOUL",
    "OPERATOR",
    "OPERATOR_ACTOR",
    "SPECTATOR",
    "DealFacts",
    "TableFacts",
    "Viewer",
    "creator_name",
    "deal_result_message",
    "deal_view_message",
    "facts_from_first_event",
    "gather_deal",
    "round_message",
    "rule_set_for_request",
    "rule_set_from_message",
    "rule_set_message",
    "table_event_message",
    "table_message",
    "table_status",
    "table_view_message",
    "timestamp_from_ms",
    "timestamp_from_text",
    "tournament_message",
    "tournament_name",
]
