"""Open face on the wire (proto/sapsam/v1/open_face.proto): requests read, rule sets, deal and
table views written. Its events and deal results are ``sapsam.api.open_face_event_messages``.

What a caller may see is decided in the domain (``sapsam.domain.open_face.deal_views``:
``deal_view_for``); this module only translates what a view gives it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Final

from sapsam import fairness
from sapsam.api import resources
from sapsam.api.api_error import ApiError
from sapsam.api.common_messages import creator_name, timestamp_from_ms, timestamp_from_text
from sapsam.api.table_messages import STAGE_STATUS, TableFacts
from sapsam.domain.families import stage_of_state
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.deal_views import OpenFaceDealView, deal_view_for
from sapsam.domain.open_face.table_state import OpenFaceTable, OpenFaceTablePhase
from sapsam.rules.cards import Card, CardError, canonical_order, parse_cards
from sapsam.rules.open_face.board import Placement
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam_proto.v1 import open_face_pb2, table_pb2

__all__ = [
    "MAX_STREET",
    "discard_commitment_of",
    "discard_openings_of",
    "open_face_deal_message",
    "open_face_rows",
    "open_face_rule_set_message",
    "open_face_table_message",
    "placement_of",
]

MAX_STREET: Final = 12
"""The highest street a request may name (13 streets of one card at most)."""
_ROW_SIZES: Final = (("front", 3), ("middle", 5), ("back", 5))
_COMMITMENT_BYTES: Final = 32
_MAX_DISCARDED: Final = 3
"""The most cards one street's discard opening may name (Pineapple discards one)."""

_PHASES: Final = {
    OpenFacePhase.DEALING: open_face_pb2.OPEN_FACE_DEAL_PHASE_DEALING,
    OpenFacePhase.PLACING: open_face_pb2.OPEN_FACE_DEAL_PHASE_PLACING,
    OpenFacePhase.FANTASYLAND: open_face_pb2.OPEN_FACE_DEAL_PHASE_FANTASYLAND,
    OpenFacePhase.COMPLETE: open_face_pb2.OPEN_FACE_DEAL_PHASE_COMPLETE,
    OpenFacePhase.DISCARDS: open_face_pb2.OPEN_FACE_DEAL_PHASE_DISCARDS,
}
_TABLE_PHASES: Final = {
    OpenFaceTablePhase.SEATING: table_pb2.TABLE_PHASE_SEATING,
    OpenFaceTablePhase.AWAITING_DEALER: table_pb2.TABLE_PHASE_AWAITING_DEALER,
    OpenFaceTablePhase.BETWEEN_DEALS: table_pb2.TABLE_PHASE_BETWEEN_DEALS,
    OpenFaceTablePhase.AWAITING_CUT: table_pb2.TABLE_PHASE_AWAITING_CUT,
    OpenFaceTablePhase.PLAYING: table_pb2.TABLE_PHASE_PLAYING,
    OpenFaceTablePhase.AWAITING_SEED: table_pb2.TABLE_PHASE_AWAITING_SEED,
    OpenFaceTablePhase.SERIES_COMPLETE: table_pb2.TABLE_PHASE_SERIES_COMPLETE,
}


# -- requests ----------------------------------------------------------------------------------


def placement_of(message: open_face_pb2.OpenFaceRows, field: str = "placement") -> Placement:
    """A request's placement: each row's cards parsed (BAD_CARDS naming the row), no row longer
    than it can ever be (BAD_CARDS); whether the cards are the seat's and fit is the domain's."""
    rows: list[tuple[Card, ...]] = []
    for name, size in _ROW_SIZES:
        texts = list(getattr(message, name))
        if len(texts) > size:
            raise ApiError(
                "BAD_CARDS",
                f"the {name} row holds at most {size} cards; {len(texts)} were sent",
                field=f"{field}.{name}",
            )
        try:
            rows.append(parse_cards(texts))
        except CardError as error:
            raise ApiError("BAD_CARDS", str(error), field=f"{field}.{name}") from None
    return Placement(rows[0], rows[1], rows[2])


def discard_commitment_of(commitment: bytes) -> bytes | None:
    """A placement's discard commitment: None when not sent, else 32 bytes (BAD_COMMITMENT,
    field ``discard_commitment``); whether the street discards is the domain's."""
    if not commitment:
        return None
    if len(commitment) != _COMMITMENT_BYTES:
        raise ApiError(
            "BAD_COMMITMENT",
            f"a discard commitment is {_COMMITMENT_BYTES} bytes, got {len(commitment)}",
            field="discard_commitment",
        )
    return bytes(commitment)


def discard_openings_of(
    openings: Sequence[Any],
) -> tuple[tuple[tuple[Card, ...], ...], tuple[bytes, ...]]:
    """A RevealDiscards request's openings: each one's cards parsed (BAD_CARDS, field
    ``discards.cards``) and its nonce, at most ``MAX_STREET`` openings of at most
    ``_MAX_DISCARDED`` cards (INVALID_ARGUMENT); whether they open the seat's commitments is
    the domain's."""
    if len(openings) > MAX_STREET:
        raise ApiError(
            "INVALID_ARGUMENT",
            f"at most {MAX_STREET} discards are opened, got {len(openings)}",
            field="discards",
        )
    cards: list[tuple[Card, ...]] = []
    for opening in openings:
        if len(opening.cards) > _MAX_DISCARDED:
            raise ApiError(
                "BAD_CARDS",
                f"a street discards at most {_MAX_DISCARDED} cards, got {len(opening.cards)}",
                field="discards.cards",
            )
        try:
            cards.append(parse_cards(list(opening.cards)))
        except CardError as error:
            raise ApiError("BAD_CARDS", str(error), field="discards.cards") from None
    return tuple(cards), tuple(bytes(opening.nonce) for opening in openings)


def street_of(street: int) -> int:
    """A request's street, 0 to ``MAX_STREET`` (INVALID_ARGUMENT, field ``street``)."""
    if not 0 <= street <= MAX_STREET:
        raise ApiError(
            "INVALID_ARGUMENT", f"street must be 0 to {MAX_STREET}, got {street}", field="street"
        )
    return street


# -- views ---------------------------------------------------------------------------------


def open_face_rows(cards: tuple[Sequence[Card], Sequence[Card], Sequence[Card]]) -> Any:
    front, middle, back = cards
    return open_face_pb2.OpenFaceRows(
        front=[str(card) for card in front],
        middle=[str(card) for card in middle],
        back=[str(card) for card in back],
    )


def open_face_rule_set_message(rules: OpenFaceRules, series_length: int) -> Any:
    """An open-face rule set on the wire, every field set."""
    message = open_face_pb2.OpenFaceRuleSet(
        name=rules.name,
        street_cards=list(rules.street_cards),
        min_seats=rules.min_seats,
        max_seats=rules.max_seats,
        two_of_three_points=rules.two_of_three_points,
        scoop_points=rules.scoop_points,
        royalty_table=rules.royalty_table,
        middle_trips_royalty=rules.middle_trips_royalty,
        fantasyland_entry_rank=rules.fantasyland_entry_rank or "",
        fantasyland_cards=rules.fantasyland_cards.value,
        fantasyland_reentry=rules.fantasyland_reentry.value,
        timeout_policy=rules.timeout_policy.value,
        automatic_moves=rules.automatic_moves.value,
        series_length=series_length,
        street_discards=rules.street_discards,
        middle_row=rules.middle_row.value,
        lowball_order=rules.lowball_order.value,
        finnish_two_of_spades=rules.finnish_two_of_spades.value,
    )
    if rules.fantasyland_max_consecutive is not None:
        message.fantasyland_max_consecutive = rules.fantasyland_max_consecutive
    if rules.move_seconds is not None:
        message.move_seconds = rules.move_seconds
    if rules.reveal_seconds is not None:
        message.reveal_seconds = rules.reveal_seconds
    return message


_TIMED_PHASES: Final = (OpenFacePhase.PLACING, OpenFacePhase.FANTASYLAND, OpenFacePhase.DISCARDS)
"""The phases a deal's deadline runs in: a placement's, the Fantasyland hands' (to be set by
the first street's deadline, then opened by the reveal deadline), or Pineapple's discards' (to
be opened by the deadline the last placement set)."""


def open_face_deal_message(table_id: uuid.UUID, view: OpenFaceDealView) -> Any:
    """A deal view (``deal_views.deal_view_for``: what one caller may see) on the wire."""
    message = open_face_pb2.OpenFaceDeal(
        deal=resources.deal_name(table_id, view.number),
        deal_number=view.number,
        dealer_seat=resources.seat_name(table_id, view.dealer),
        phase=_PHASES[view.phase],
        turn_seat="" if view.turn is None else resources.seat_name(table_id, view.turn),
        seats=[
            open_face_pb2.OpenFaceSeat(
                seat=resources.seat_name(table_id, seat.seat),
                fantasyland=seat.fantasyland,
                placed=seat.placed,
                committed=seat.committed,
                revealed=seat.revealed,
                rows_hidden=seat.board is None,
                rows=None if seat.board is None else open_face_rows(seat.board.rows),
                dealt_cards=(
                    []
                    if seat.dealt is None
                    else [str(card) for card in canonical_order(seat.dealt)]
                ),
                discards_made=seat.discards_made,
                discards=[] if seat.discards is None else [str(card) for card in seat.discards],
            )
            for seat in view.seats
        ],
    )
    if view.street is not None:
        message.street = view.street
    if view.deadline_ms is not None and view.phase in _TIMED_PHASES:
        message.deadline_time.CopyFrom(timestamp_from_ms(view.deadline_ms))
    return message


def open_face_table_message(
    state: OpenFaceTable, facts: TableFacts, display_names: Mapping[str, str]
) -> table_pb2.Table:
    """An open-face table as the public sees it (the deal by ``deal_view_for`` for a
    spectator: every face-up row, no hidden card)."""
    table_id = state.table_id
    assert table_id is not None
    play = state.play
    totals = state.series_totals or (0,) * state.seat_count
    seats = [
        table_pb2.Seat(
            name=resources.seat_name(table_id, seat),
            position=seat,
            player=resources.player_name(player or ""),
            display_name=display_names.get(player or "", ""),
            series_total=totals[seat],
            entropy_contributed=(
                not state.scored
                and seat < len(state.contributions)
                and state.contributions[seat] is not None
            ),
            committed=play is not None and play.commitments[seat] is not None,
            revealed=play is not None and play.revealed[seat],
        )
        for seat, player in enumerate(state.seats)
    ]
    phase = state.phase
    table = table_pb2.Table(
        name=resources.table_name(table_id),
        status=STAGE_STATUS[stage_of_state(state)],
        phase=_TABLE_PHASES.get(phase, table_pb2.TABLE_PHASE_UNSPECIFIED),
        open_face_rule_set=open_face_rule_set_message(state.rules, state.seat_count),
        seat_count=state.seat_count,
        seats=seats,
        version=state.version,
        create_time=timestamp_from_text(facts.create_time),
        creator=creator_name(facts.created_by),
    )
    dealer = state.dealer if state.dealer is not None else state.first_dealer
    if dealer is not None:
        table.dealer_seat = resources.seat_name(table_id, dealer)
    if state.deal_number:
        table.deal_number = state.deal_number
        table.current_deal = resources.deal_name(table_id, state.deal_number)
        table.seed_commitment = state.seed_commitment
    if phase is OpenFaceTablePhase.AWAITING_CUT and state.dealer is not None:
        table.cutter_seat = resources.seat_name(
            table_id, fairness.cutter_for(state.dealer, state.seat_count)
        )
    if play is not None and play.streets_dealt:
        view = deal_view_for(play, None, seed_revealed=state.seed is not None)
        table.open_face.CopyFrom(open_face_deal_message(table_id, view))
        if view.deadline_ms is not None and view.phase in _TIMED_PHASES:
            table.deadline_time.CopyFrom(timestamp_from_ms(view.deadline_ms))
    return table
