"""Open face's events and deal results on the wire (proto/sapsam/v1/table_event.proto,
table.proto): what ``WatchTable`` sends of an open-face table's event and what
``GetDealResult`` gives of an open-face deal.

What a caller may see is decided in the domain (``sapsam.domain.open_face.deal_views``:
``may_see_board``); this module only translates the domain's decision. A ``CardsPlaced`` message
is built twice when the domain shows it to its seat's holder only (a Fantasyland hand still being
set): the public copy with ``hidden`` and no card, the holder's with the placement; a
``StreetDealt`` is public without a card, and each receiving seat's holder is sent its own cards
of the street.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Final

from sapsam.api import resources
from sapsam.api.common_messages import timestamp_from_ms
from sapsam.api.open_face_messages import open_face_rows, open_face_rule_set_message
from sapsam.domain import events as domain_events
from sapsam.domain.open_face.deal_state import OpenFaceDeal
from sapsam.domain.open_face.deal_views import may_see_board
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
from sapsam.domain.open_face.table_state import OpenFaceTable
from sapsam.fairness.open_face_deal import deal_of_seed
from sapsam.log.records import RecordedEvent
from sapsam.rules.cards import Card, canonical_order
from sapsam_proto.v1 import open_face_pb2, table_event_pb2, table_pb2

__all__ = ["open_face_deal_result", "open_face_event"]

_ROW_OUTCOMES: Final = {
    1: table_pb2.ROW_OUTCOME_FIRST_SEAT_WON,
    -1: table_pb2.ROW_OUTCOME_SECOND_SEAT_WON,
    0: table_pb2.ROW_OUTCOME_TIE,
}


def _text_rows(front: Sequence[str], middle: Sequence[str], back: Sequence[str]) -> Any:
    return open_face_pb2.OpenFaceRows(front=list(front), middle=list(middle), back=list(back))


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
                        rows=open_face_rows(play.boards[seat].rows),
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
