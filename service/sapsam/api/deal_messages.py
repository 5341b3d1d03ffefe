"""A deal's record on the wire: a ``DealResult`` from the view a caller may see of a deal.

What the caller may see is decided in ``sapsam.domain.table_views`` (hands, rows and nonces only
once the deal's seed is in the log); this module translates.
"""

from __future__ import annotations

import uuid
from typing import Final

from sapsam.api import resources
from sapsam.api.common_messages import timeout_consequence, timeout_stage
from sapsam.domain.deal_facts import DealFacts
from sapsam.domain.table_views import (
    SPECTATOR,
    DealSeatView,
    DealView,
    Viewer,
    deal_view_for,
)
from sapsam_proto.v1 import table_pb2

_ROW_TO_WIRE: Final = {
    1: table_pb2.ROW_OUTCOME_FIRST_SEAT_WON,
    -1: table_pb2.ROW_OUTCOME_SECOND_SEAT_WON,
    0: table_pb2.ROW_OUTCOME_TIE,
}


def deal_result_message(
    table_id: uuid.UUID, seat_count: int, facts: DealFacts, viewer: Viewer = SPECTATOR
) -> table_pb2.DealResult:
    """Deal ``facts`` as ``viewer`` may see them, on the wire."""
    return deal_view_message(table_id, deal_view_for(table_id, seat_count, facts, viewer))


def deal_view_message(table_id: uuid.UUID, view: DealView) -> table_pb2.DealResult:
    """A deal view on the wire."""
    result = table_pb2.DealResult(
        name=resources.deal_name(table_id, view.deal_number),
        deal_number=view.deal_number,
        dealer_seat=resources.seat_name(table_id, view.dealer),
        seed_commitment=view.seed_commitment,
        cutter_seat=resources.seat_name(table_id, view.cutter),
        seed_revealed=view.seed is not None,
        scored=view.scored,
    )
    if view.cut_position is not None:
        result.cut_position = view.cut_position
    if view.seed is not None:
        result.seed = view.seed
    result.seats.extend(_seat_message(table_id, seat) for seat in view.seats)
    for pair in view.pairs:
        front, middle, back = (_ROW_TO_WIRE[_sign(row)] for row in pair.rows)
        result.pairs.append(
            table_pb2.PairResult(
                first_seat=resources.seat_name(table_id, pair.seat_a),
                second_seat=resources.seat_name(table_id, pair.seat_b),
                front=front,
                middle=middle,
                back=back,
                first_seat_delta=pair.delta,
            )
        )
    return result


def _seat_message(table_id: uuid.UUID, seat: DealSeatView) -> table_pb2.DealSeatResult:
    message = table_pb2.DealSeatResult(
        seat=resources.seat_name(table_id, seat.seat),
        entropy=seat.entropy,
        commitment=seat.commitment,
        confirmed=seat.confirmed,
        foul=seat.foul,
        foul_reason=seat.foul_reason,
    )
    if seat.timed_out_stage is not None:
        message.timed_out_stage = timeout_stage(seat.timed_out_stage)
    if seat.timeout_consequence is not None:
        message.timeout_consequence = timeout_consequence(seat.timeout_consequence)
    if seat.hand is not None:
        message.dealt_cards.extend(str(card) for card in seat.hand)
    if seat.nonce is not None:
        message.nonce = seat.nonce
    if seat.arrangement is not None:
        front, middle, back = seat.arrangement
        message.arrangement.CopyFrom(
            table_pb2.Arrangement(front=list(front), middle=list(middle), back=list(back))
        )
    if seat.score_delta is not None:
        message.score_delta = seat.score_delta
    if seat.series_total is not None:
        message.series_total = seat.series_total
    return message


def _sign(number: int) -> int:
    return (number > 0) - (number < 0)
