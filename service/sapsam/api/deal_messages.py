"""A deal's record on the wire: a ``DealResult`` from the view a caller may see of a deal.

What the caller may see is decided in ``sapsam.domain.table_views`` (hands, rows and nonces only
once the deal's seed is in the log); this module translates.
"""

from __future__ import annotations

import uuid
from typing import Any, Final

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
from sapsam.rules.cards import card_texts
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
    """A deal view on the wire.

    Built in one constructor call from plain values (nested messages as dicts), which the
    protobuf runtime fills without a Python message object per seat and pair to copy in."""
    table = resources.table_name(table_id)
    fields: dict[str, Any] = {
        "name": resources.deal_of(table, view.deal_number),
        "deal_number": view.deal_number,
        "dealer_seat": resources.seat_of(table, view.dealer),
        "seed_commitment": view.seed_commitment,
        "cutter_seat": resources.seat_of(table, view.cutter),
        "seed_revealed": view.seed is not None,
        "scored": view.scored,
        "seats": [_seat_fields(table, seat) for seat in view.seats],
        "pairs": [
            {
                "first_seat": resources.seat_of(table, pair.seat_a),
                "second_seat": resources.seat_of(table, pair.seat_b),
                "front": _ROW_TO_WIRE[_sign(pair.rows[0])],
                "middle": _ROW_TO_WIRE[_sign(pair.rows[1])],
                "back": _ROW_TO_WIRE[_sign(pair.rows[2])],
                "first_seat_delta": pair.delta,
            }
            for pair in view.pairs
        ],
    }
    if view.cut_position is not None:
        fields["cut_position"] = view.cut_position
    if view.seed is not None:
        fields["seed"] = view.seed
    return table_pb2.DealResult(**fields)


def _seat_fields(table: str, seat: DealSeatView) -> dict[str, Any]:
    """One seat of a deal view as the fields of its ``DealSeatResult``."""
    fields: dict[str, Any] = {
        "seat": resources.seat_of(table, seat.seat),
        "entropy": seat.entropy,
        "commitment": seat.commitment,
        "confirmed": seat.confirmed,
        "foul": seat.foul,
        "foul_reason": seat.foul_reason,
        "natural": seat.natural,
    }
    if seat.timed_out_stage is not None:
        fields["timed_out_stage"] = timeout_stage(seat.timed_out_stage)
    if seat.timeout_consequence is not None:
        fields["timeout_consequence"] = timeout_consequence(seat.timeout_consequence)
    if seat.hand is not None:
        fields["dealt_cards"] = card_texts(seat.hand)
    if seat.nonce is not None:
        fields["nonce"] = seat.nonce
    if seat.arrangement is not None:
        front, middle, back = seat.arrangement
        fields["arrangement"] = {"front": list(front), "middle": list(middle), "back": list(back)}
    if seat.score_delta is not None:
        fields["score_delta"] = seat.score_delta
    if seat.series_total is not None:
        fields["series_total"] = seat.series_total
    return fields


def _sign(number: int) -> int:
    return (number > 0) - (number < 0)
