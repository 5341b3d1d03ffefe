"""GetDealResult's answers, each built once for a deal as it stands and a kind of viewer.

A deal's record is a pure function of its events and of what the viewer may see
(``sapsam.domain.table_views``), and the last of those events' chained hash commits to every event
before it. So an answer is kept with that hash and given again while the deal's last event is the
same; a new event of the deal (another hash) builds it anew. The viewer (a seat, the operator,
anyone else) is part of the key, so what one seat may see is never answered to another. The
events come from the table's remembered copy when it is current, already decoded
(``TableRunner.decode_remembered``); otherwise from the log, as before.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from typing import Final

from sapsam.api import views
from sapsam.api.open_face_event_messages import open_face_deal_result
from sapsam.app.table_reads import TableReads
from sapsam.app.tables import TableService
from sapsam.domain.open_face.table_state import OpenFaceTable
from sapsam_proto.v1 import table_pb2

KEPT_RESULTS: Final = 4096
"""Answers kept per process (a deal and a viewer each), the latest used."""


class DealResults:
    """Deal records for GetDealResult over a ``TableService``, the latest answers kept."""

    def __init__(self, tables: TableService, reads: TableReads) -> None:
        self._tables = tables
        self._reads = reads
        self._kept: OrderedDict[
            tuple[uuid.UUID, int, views.Viewer], tuple[bytes, table_pb2.DealResult]
        ] = OrderedDict()

    async def result(
        self, table_id: uuid.UUID, deal_number: int, player_id: str | None, operator: bool
    ) -> table_pb2.DealResult | None:
        """Deal ``deal_number`` as the caller may see it now; None if it never began. The
        message is shared: a caller copies it into its response (as a constructor does)."""
        state, recorded = await self._reads.deal_events(table_id, deal_number)
        if not recorded:
            return None
        viewer = views.Viewer.of(state, player_id, operator=operator)
        key = (table_id, deal_number, viewer)
        last_hash = recorded[-1].hash
        kept = self._kept.get(key)
        if kept is not None and kept[0] == last_hash:
            self._kept.move_to_end(key)
            return kept[1]
        decoded = (self._tables.decode_remembered(table_id, event) for event in recorded)
        if isinstance(state, OpenFaceTable):
            # Open face: every field from its public event (the same for every viewer).
            message = open_face_deal_result(table_id, state.seat_count, list(decoded), deal_number)
            if message is None:
                return None
        else:
            facts = views.gather_deal(decoded, deal_number)
            if facts is None:
                return None
            message = views.deal_result_message(table_id, state.seat_count, facts, viewer)
        self._kept[key] = (last_hash, message)
        self._kept.move_to_end(key)
        while len(self._kept) > KEPT_RESULTS:
            self._kept.popitem(last=False)
        return message
