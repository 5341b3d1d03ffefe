"""Open face on the wire (proto/sapsam/v1/open_face.proto): requests read, views and events
written.

What a caller may see is decided in the domain (``sapsam.domain.open_face.deal_views``:
``deal_view_for`` and ``may_see_board``); this module only translates what a view or the domain's
decision gives it. A ``CardsPlaced`` message is built twice when the domain shows it to its seat's
holder only (a Fantasyland hand still being set): the public copy with ``hidden`` and no card,
the holder's with the placement; a ``StreetDealt`` is public without a card, and each receiving
seat's holder is sent its own cards of the street.
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
from sapsam.domain import events as domain_events
from sapsam.domain.families import stage_of_state
from sapsam.domain.open_face.deal_state import OpenFaceDeal, OpenFacePhase
from sapsam.domain.open_face.deal_views import OpenFaceDealView, deal_view_for, may_see_board
from sapsam.domain.open_face.events import (
    CardsPlaced,
    DiscardCommitted,
    DiscardsRevealed,
    FantasylandCommitted,
    FantasylandRevealed,
    FantasylandRevealsOpened,
    FantasylandTimedOut,
    StreetDealt,
)
from sapsam.domain.open_face.table_decide import read_recorded_rules
from sapsam.domain.open_face.table_state import OpenFaceTable, OpenFaceTablePhase
from sapsam.fairness.open_face_deal import deal_of_seed
from sapsam.log.records import RecordedEvent
from sapsam.rules.cards import Card, CardError, canonical_order, parse_cards
from sapsam.rules.open_face.board import Placement
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam_proto.v1 import open_face_pb2, table_event_pb2, table_pb2

__all__ = [
    "MAX_STREET",
    "discard_commitment_of",
    "discard_openings_of",
    "open_face_deal_message",
    "open_face_deal_result",
    "open_face_event",
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
_ROW_OUTCOMES: Final = {
    1: table_pb2.ROW_OUTCOME_FIRST_SEAT_WON,
    -1: table_pb2.ROW_OUTCOME_SECOND_SEAT_WON,
    0: table_pb2.ROW_OUTCOME_TIE,
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


def _rows(cards: tuple[Sequence[Card], Sequence[Card], Sequence[Card]]) -> Any:
    front, middle, back = cards
    return open_face_pb2.OpenFaceRows(
        front=[str(card) for card in front],
        middle=[str(card) for card in middle],
        back=[str(card) for card in back],
    )


def _text_rows(front: Sequence[str], middle: Sequence[str], back: Sequence[str]) -> Any:
    return open_face_pb2.OpenFaceRows(front=list(front), middle=list(middle), back=list(back))


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
                rows=None if seat.board is None else _rows(seat.board.rows),
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


# -- events --------------------------------------------------------------------------------


def open_face_event(
    table_id: uuid.UUID,
    recorded: RecordedEvent,
    event: domain_events.Event,
    before: OpenFaceTable | None,
    after: OpenFaceTable,
    base: table_event_pb2.TableEvent,
    street_cards: Sequence[Sequence[Card]] | None,
) -> tuple[table_event_pb2.TableEvent, dict[str, table_event_pb2.TableEvent] | None] | None:
    """An open-face table's event on the wire when it differs from the frame's message
    (``base``, the header and any frame payload already set): the public message and, when the
    domain shows one seat's holder more, that holder's, by player id. None: ``base`` as it is.

    ``street_cards``: for a ``StreetDealt``, each seat's cards of the street (from the seed),
    None when not known; each is sent to its own seat's holder only."""
    if isinstance(event, domain_events.TableCreated):
        base.table_created.ClearField("rule_set")
        rules = read_recorded_rules(
            {key: value for key, value in event.rule_set.items() if key != "family"}
        )
        base.table_created.open_face_rule_set.CopyFrom(
            open_face_rule_set_message(rules, event.seat_count)
        )
        return base, None
    play = after.play
    if isinstance(event, StreetDealt):
        return _street_dealt(table_id, event, after, base, street_cards)
    if isinstance(event, CardsPlaced) and play is not None:
        return _cards_placed(table_id, event, play, after, base)
    if isinstance(event, FantasylandCommitted) and play is not None:
        return _fantasyland_committed(table_id, event, before, play, base), None
    if isinstance(event, DiscardCommitted):
        # Public: the commitment (docs/fairness.md §23) -- the event holds no card.
        base.discard_committed.CopyFrom(
            table_event_pb2.DiscardCommitted(
                deal=resources.deal_name(table_id, event.deal_number),
                seat=resources.seat_name(table_id, event.seat),
                street=event.street,
                commitment=bytes.fromhex(event.commitment),
            )
        )
        return base, None
    if isinstance(event, DiscardsRevealed):
        base.discards_revealed.CopyFrom(
            table_event_pb2.DiscardsRevealed(
                deal=resources.deal_name(table_id, event.deal_number),
                seat=resources.seat_name(table_id, event.seat),
                discards=[
                    table_event_pb2.OpenedDiscard(
                        street=street, cards=cards.split(), nonce=bytes.fromhex(nonce)
                    )
                    for street, cards, nonce in zip(
                        event.streets, event.cards, event.nonces, strict=True
                    )
                ],
            )
        )
        return base, None
    if isinstance(event, FantasylandTimedOut):
        base.fantasyland_timed_out.CopyFrom(
            table_event_pb2.FantasylandTimedOut(
                deal=resources.deal_name(table_id, event.deal_number),
                seat=resources.seat_name(table_id, event.seat),
            )
        )
        return base, None
    if isinstance(event, FantasylandRevealsOpened):
        opened = table_event_pb2.FantasylandRevealsOpened(
            deal=resources.deal_name(table_id, event.deal_number),
            seats=[resources.seat_name(table_id, seat) for seat in event.seats],
        )
        if event.deadline_ms is not None:
            opened.deadline_time.CopyFrom(timestamp_from_ms(event.deadline_ms))
        base.fantasyland_reveals_opened.CopyFrom(opened)
        return base, None
    if isinstance(event, FantasylandRevealed):
        base.fantasyland_revealed.CopyFrom(
            table_event_pb2.FantasylandRevealed(
                deal=resources.deal_name(table_id, event.deal_number),
                seat=resources.seat_name(table_id, event.seat),
                rows=_text_rows(event.front, event.middle, event.back),
                discards=list(event.discards),
                nonce=bytes.fromhex(event.nonce),
                dead=event.dead,
            )
        )
        return base, None
    if isinstance(event, domain_events.DealScored):
        base.deal_scored.CopyFrom(table_event_pb2.DealScored(open_face=_score(table_id, event)))
        return base, None
    return None


def _street_dealt(
    table_id: uuid.UUID,
    event: StreetDealt,
    after: OpenFaceTable,
    base: table_event_pb2.TableEvent,
    street_cards: Sequence[Sequence[Card]] | None,
) -> tuple[table_event_pb2.TableEvent, dict[str, table_event_pb2.TableEvent] | None]:
    dealt = table_event_pb2.StreetDealt(
        deal=resources.deal_name(table_id, event.deal_number),
        street=event.street,
        card_counts=list(event.card_counts),
    )
    if event.deadline_ms is not None:
        dealt.deadline_time.CopyFrom(timestamp_from_ms(event.deadline_ms))
    base.street_dealt.CopyFrom(dealt)
    if street_cards is None:
        return base, None
    variants: dict[str, table_event_pb2.TableEvent] = {}
    for seat, cards in enumerate(street_cards):
        holder = after.seats[seat]
        if cards and holder is not None:
            own = table_event_pb2.TableEvent()
            own.CopyFrom(base)
            own.street_dealt.my_cards.extend(str(card) for card in cards)
            variants[holder] = own
    return base, variants


def _cards_placed(
    table_id: uuid.UUID,
    event: CardsPlaced,
    play: OpenFaceDeal,
    after: OpenFaceTable,
    base: table_event_pb2.TableEvent,
) -> tuple[table_event_pb2.TableEvent, dict[str, table_event_pb2.TableEvent] | None]:
    placed = table_event_pb2.CardsPlaced(
        deal=resources.deal_name(table_id, event.deal_number),
        seat=resources.seat_name(table_id, event.seat),
        street=event.street,
        automatic=event.automatic or "",
    )
    if event.deadline_ms is not None:
        placed.next_deadline_time.CopyFrom(timestamp_from_ms(event.deadline_ms))
    shown = table_event_pb2.CardsPlaced()
    shown.CopyFrom(placed)
    shown.placed.CopyFrom(_text_rows(event.front, event.middle, event.back))
    # The domain decides who sees the placement now: everyone, or its own seat alone.
    if may_see_board(play, None, event.seat):
        base.cards_placed.CopyFrom(shown)
        return base, None
    placed.hidden = True
    base.cards_placed.CopyFrom(placed)
    holder = after.seats[event.seat]
    if holder is None or not may_see_board(play, event.seat, event.seat):
        return base, None  # pragma: no cover - a seat always sees its own placements
    own = table_event_pb2.TableEvent()
    own.CopyFrom(base)
    own.cards_placed.CopyFrom(shown)
    return base, {holder: own}


def _fantasyland_committed(
    table_id: uuid.UUID,
    event: FantasylandCommitted,
    before: OpenFaceTable | None,
    play: OpenFaceDeal,
    base: table_event_pb2.TableEvent,
) -> table_event_pb2.TableEvent:
    committed = table_event_pb2.FantasylandCommitted(
        deal=resources.deal_name(table_id, event.deal_number),
        seat=resources.seat_name(table_id, event.seat),
        commitment=bytes.fromhex(event.commitment),
    )
    was_hidden = before is not None and before.play is not None and before.play.fantasyland_hidden
    if was_hidden and not play.fantasyland_hidden:
        # The wait is over: the rows placed meanwhile, as the domain now lets everyone see them.
        for seat in play.seats:
            if not play.is_fantasyland(seat) and may_see_board(play, None, seat):
                committed.shown_rows.append(
                    table_event_pb2.OpenFaceSeatRows(
                        seat=resources.seat_name(table_id, seat),
                        rows=_rows(play.boards[seat].rows),
                    )
                )
    base.fantasyland_committed.CopyFrom(committed)
    return base


def _score(table_id: uuid.UUID, event: domain_events.DealScored) -> Any:
    seats = []
    for seat, total in enumerate(event.totals):
        front, middle, back = [*(event.arrangements[seat] or "||").split("|"), "", ""][:3]
        seats.append(
            table_event_pb2.OpenFaceSeatScore(
                seat=resources.seat_name(table_id, seat),
                rows=_text_rows(front.split(), middle.split(), back.split()),
                dead=event.fouls[seat],
                score_delta=total,
                series_total=event.series_totals[seat],
            )
        )
    pairs = [
        table_pb2.PairResult(
            first_seat=resources.seat_name(table_id, pair.seat_a),
            second_seat=resources.seat_name(table_id, pair.seat_b),
            front=_ROW_OUTCOMES[_sign(pair.rows[0])],
            middle=_ROW_OUTCOMES[_sign(pair.rows[1])],
            back=_ROW_OUTCOMES[_sign(pair.rows[2])],
            first_seat_delta=pair.delta,
        )
        for pair in event.pairs
    ]
    return table_event_pb2.OpenFaceScore(
        deal=resources.deal_name(table_id, event.deal_number), seats=seats, pairs=pairs
    )


def _sign(number: int) -> int:
    return (number > 0) - (number < 0)


def open_face_deal_result(
    table_id: uuid.UUID, seat_count: int, events: Sequence[domain_events.Event], number: int
) -> table_pb2.DealResult | None:
    """An open-face deal's public record (GetDealResult) from its events: what every caller may
    see, since each field comes from an event as public as the field (the seed and every dealt
    card once ``SeedRevealed`` publishes the seed, the rows scored with ``DealScored``, a
    Fantasyland's commitment and nonce as they are recorded). None if the deal never began."""
    started = next(
        (e for e in events if isinstance(e, domain_events.DealStarted) and e.deal_number == number),
        None,
    )
    if started is None:
        return None
    result = table_pb2.DealResult(
        name=resources.deal_name(table_id, number),
        deal_number=number,
        dealer_seat=resources.seat_name(table_id, started.dealer),
        seed_commitment=bytes.fromhex(started.seed_commitment),
    )
    seats = [
        table_pb2.DealSeatResult(seat=resources.seat_name(table_id, s)) for s in range(seat_count)
    ]
    contributions: list[bytes | None] = [None] * seat_count
    schedule: list[tuple[int, ...]] = []
    cut: int | None = None
    seed: bytes | None = None
    for event in events:
        if getattr(event, "deal_number", number) != number:
            continue
        if isinstance(event, domain_events.EntropyContributed):
            contributions[event.seat] = bytes.fromhex(event.entropy)
            seats[event.seat].entropy = contributions[event.seat] or b""
        elif isinstance(event, domain_events.DeckCut):
            cut = event.position
            result.cut_position = event.position
            result.cutter_seat = resources.seat_name(table_id, event.seat)
        elif isinstance(event, StreetDealt):
            schedule.append(tuple(event.card_counts))
        elif isinstance(event, FantasylandCommitted):
            seats[event.seat].commitment = bytes.fromhex(event.commitment)
            seats[event.seat].confirmed = True
        elif isinstance(event, FantasylandRevealed):
            seats[event.seat].nonce = bytes.fromhex(event.nonce)
        elif isinstance(event, domain_events.SeedRevealed):
            seed = bytes.fromhex(event.seed)
            result.seed = seed
            result.seed_revealed = True
        elif isinstance(event, domain_events.DealScored):
            result.scored = True
            score = _score(table_id, event)
            for seat, scored in zip(seats, score.seats, strict=True):
                seat.foul = scored.dead
                seat.score_delta = scored.score_delta
                seat.series_total = scored.series_total
                seat.arrangement.CopyFrom(
                    table_pb2.Arrangement(
                        front=scored.rows.front, middle=scored.rows.middle, back=scored.rows.back
                    )
                )
            result.pairs.extend(score.pairs)
    if seed is not None and cut is not None and schedule:
        # Public now: anyone can deal the deck again from the seed, the entropy and the cut.
        streets = deal_of_seed(
            table_id, number, seed, tuple(contributions), cut, started.dealer, tuple(schedule)
        )
        for index, seat in enumerate(seats):
            dealt = [card for street in streets for card in street[index]]
            seat.dealt_cards.extend(str(card) for card in canonical_order(dealt))
    result.seats.extend(seats)
    return result
