"""The public event feed on the wire: one recorded event as a ``TableEvent``, public part only.

Each event type has one converter, found by type in :data:`_CONVERTERS` (an event type without
one goes out with its header only). What the public may see is decided in the domain: an
``ArrangementRevealed`` is sent without its rows and nonce (``sapsam.domain.table_views``: they
wait for the seed), ``DealScored`` carries the deal's record as a spectator sees it, and a
``CardsDealt`` is public; :func:`with_my_cards` makes the variant a seat's holder is sent.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sapsam.api import resources
from sapsam.api.common_messages import (
    OPERATOR_ACTOR,
    creator_name,
    rule_set_message,
    surrender_choice,
    timeout_consequence,
    timeout_stage,
    timestamp_from_ms,
    timestamp_from_text,
)
from sapsam.api.deal_messages import deal_result_message
from sapsam.domain import events as domain_events
from sapsam.domain.deal_facts import DealFacts
from sapsam.domain.table_views import SPECTATOR
from sapsam.log.records import RecordedEvent
from sapsam.rules.cards import Card
from sapsam.rules.ruleset import RuleSet
from sapsam_proto.v1 import table_event_pb2, table_pb2


@dataclass(frozen=True)
class _Feed:
    """What a converter needs besides the event: the table, its players, the current deal."""

    table_id: uuid.UUID
    seat_players: Sequence[str | None]
    deal: DealFacts | None
    by_operator: bool = False
    """The event was recorded by the operator (its actor: a forced timeout, a void ...)."""

    def seat(self, number: int) -> str:
        return resources.seat_name(self.table_id, number)

    def deal_of(self, number: int) -> str:
        return resources.deal_name(self.table_id, number)


def table_event_message(
    table_id: uuid.UUID,
    recorded: RecordedEvent,
    event: domain_events.Event,
    seat_players: Sequence[str | None],
    deal: DealFacts | None,
) -> table_event_pb2.TableEvent:
    """One recorded event, public part only.

    ``seat_players`` are the players in the seats (for standings); ``deal`` holds the current
    deal's events up to this one, for DealScored, which carries the whole deal.
    """
    message = table_event_header(table_id, recorded)
    convert = _CONVERTERS.get(type(event))
    if convert is not None:
        by_operator = recorded.metadata.get("actor") == OPERATOR_ACTOR
        convert(message, event, _Feed(table_id, seat_players, deal, by_operator))
    return message


def table_event_header(table_id: uuid.UUID, recorded: RecordedEvent) -> table_event_pb2.TableEvent:
    """A recorded event's ``TableEvent`` with its header only (no payload)."""
    recorded_at = recorded.metadata.get("recorded_at")
    return table_event_pb2.TableEvent(
        table=resources.table_name(table_id),
        version=recorded.version,
        type=recorded.type,
        record_time=timestamp_from_text(recorded_at if isinstance(recorded_at, str) else ""),
    )


def with_my_cards(message: table_event_pb2.TableEvent, cards: Sequence[Card]) -> Any:
    """A ``CardsDealt`` message as sent to the one watcher the domain shows ``cards``
    (``sapsam.domain.table_views.dealt_cards_for``): a copy, ``my_cards`` filled in."""
    variant = table_event_pb2.TableEvent()
    variant.CopyFrom(message)
    variant.cards_dealt.my_cards.extend(str(card) for card in cards)
    return variant


def _table_created(
    message: table_event_pb2.TableEvent, event: domain_events.TableCreated, feed: _Feed
) -> None:
    message.table_created.CopyFrom(
        table_event_pb2.TableCreated(
            rule_set=rule_set_message(RuleSet.from_dict(event.rule_set)),
            seat_count=event.seat_count,
            lot_commitment=bytes.fromhex(event.lot_commitment),
            creator=creator_name(event.created_by),
        )
    )


def _player_seated(
    message: table_event_pb2.TableEvent, event: domain_events.PlayerSeated, feed: _Feed
) -> None:
    message.player_seated.CopyFrom(
        table_event_pb2.PlayerSeated(
            seat=feed.seat(event.seat), player=resources.player_name(event.player_id)
        )
    )


def _seat_replaced(
    message: table_event_pb2.TableEvent, event: domain_events.SeatReplaced, feed: _Feed
) -> None:
    message.seat_replaced.CopyFrom(
        table_event_pb2.SeatReplaced(
            seat=feed.seat(event.seat),
            previous_player=resources.player_name(event.previous_player_id),
            player=resources.player_name(event.player_id),
        )
    )


def _dealer_chosen(
    message: table_event_pb2.TableEvent, event: domain_events.DealerChosen, feed: _Feed
) -> None:
    message.dealer_chosen.CopyFrom(
        table_event_pb2.DealerChosen(
            dealer_seat=feed.seat(event.dealer),
            lot_seed=bytes.fromhex(event.lot_seed),
            lot_cards=list(event.lot_cards),
        )
    )


def _deal_started(
    message: table_event_pb2.TableEvent, event: domain_events.DealStarted, feed: _Feed
) -> None:
    message.deal_started.CopyFrom(
        table_event_pb2.DealStarted(
            deal=feed.deal_of(event.deal_number),
            deal_number=event.deal_number,
            dealer_seat=feed.seat(event.dealer),
            seed_commitment=bytes.fromhex(event.seed_commitment),
        )
    )


def _entropy_contributed(
    message: table_event_pb2.TableEvent, event: domain_events.EntropyContributed, feed: _Feed
) -> None:
    message.entropy_contributed.CopyFrom(
        table_event_pb2.EntropyContributed(
            deal=feed.deal_of(event.deal_number),
            seat=feed.seat(event.seat),
            entropy=bytes.fromhex(event.entropy),
        )
    )


def _deck_cut(
    message: table_event_pb2.TableEvent, event: domain_events.DeckCut, feed: _Feed
) -> None:
    message.deck_cut.CopyFrom(
        table_event_pb2.DeckCut(
            deal=feed.deal_of(event.deal_number),
            seat=feed.seat(event.seat),
            position=event.position,
        )
    )


def _cards_dealt(
    message: table_event_pb2.TableEvent, event: domain_events.CardsDealt, feed: _Feed
) -> None:
    dealt = table_event_pb2.CardsDealt(deal=feed.deal_of(event.deal_number))
    if event.arrange_deadline_ms is not None:
        dealt.arrange_deadline_time.CopyFrom(timestamp_from_ms(event.arrange_deadline_ms))
    message.cards_dealt.CopyFrom(dealt)


def _arrangement_committed(
    message: table_event_pb2.TableEvent, event: domain_events.ArrangementCommitted, feed: _Feed
) -> None:
    message.arrangement_committed.CopyFrom(
        table_event_pb2.ArrangementCommitted(
            deal=feed.deal_of(event.deal_number),
            seat=feed.seat(event.seat),
            commitment=bytes.fromhex(event.commitment),
            commitment_scheme=event.scheme,
        )
    )


def _natural_declared(
    message: table_event_pb2.TableEvent, event: domain_events.NaturalDeclared, feed: _Feed
) -> None:
    message.natural_declared.CopyFrom(
        table_event_pb2.NaturalDeclared(
            deal=feed.deal_of(event.deal_number),
            seat=feed.seat(event.seat),
            commitment=bytes.fromhex(event.commitment),
        )
    )


def _natural_revealed(
    message: table_event_pb2.TableEvent, event: domain_events.NaturalRevealed, feed: _Feed
) -> None:
    # Which seat opened its declaration, nothing more: what it declared waits for the seed, as
    # the rows do (docs/events.md, "What is hidden").
    message.natural_revealed.CopyFrom(
        table_event_pb2.NaturalRevealed(
            deal=feed.deal_of(event.deal_number), seat=feed.seat(event.seat)
        )
    )


def _seat_confirmed(
    message: table_event_pb2.TableEvent, event: domain_events.SeatConfirmed, feed: _Feed
) -> None:
    message.seat_confirmed.CopyFrom(
        table_event_pb2.SeatConfirmed(
            deal=feed.deal_of(event.deal_number),
            seat=feed.seat(event.seat),
            commitment=bytes.fromhex(event.commitment),
            commitment_scheme=event.scheme,
        )
    )


def _reveals_opened(
    message: table_event_pb2.TableEvent, event: domain_events.RevealsOpened, feed: _Feed
) -> None:
    opened = table_event_pb2.RevealsOpened(deal=feed.deal_of(event.deal_number))
    if event.reveal_deadline_ms is not None:
        opened.reveal_deadline_time.CopyFrom(timestamp_from_ms(event.reveal_deadline_ms))
    message.reveals_opened.CopyFrom(opened)


def _arrangement_revealed(
    message: table_event_pb2.TableEvent, event: domain_events.ArrangementRevealed, feed: _Feed
) -> None:
    # Which seat revealed, nothing more: the rows and nonce wait for the seed (DealScored).
    message.arrangement_revealed.CopyFrom(
        table_event_pb2.ArrangementRevealed(
            deal=feed.deal_of(event.deal_number), seat=feed.seat(event.seat)
        )
    )


def _seat_timed_out(
    message: table_event_pb2.TableEvent, event: domain_events.SeatTimedOut, feed: _Feed
) -> None:
    message.seat_timed_out.CopyFrom(
        table_event_pb2.SeatTimedOut(
            deal=feed.deal_of(event.deal_number),
            seat=feed.seat(event.seat),
            stage=timeout_stage(event.stage),
            consequence=timeout_consequence(event.consequence),
            by_operator=feed.by_operator,
        )
    )


def _seed_revealed(
    message: table_event_pb2.TableEvent, event: domain_events.SeedRevealed, feed: _Feed
) -> None:
    message.seed_revealed.CopyFrom(
        table_event_pb2.SeedRevealed(
            deal=feed.deal_of(event.deal_number), seed=bytes.fromhex(event.seed)
        )
    )


def _deal_voided(
    message: table_event_pb2.TableEvent, event: domain_events.DealVoided, feed: _Feed
) -> None:
    message.deal_voided.CopyFrom(
        table_event_pb2.DealVoided(
            deal=feed.deal_of(event.deal_number),
            reason=event.reason,
            seed=bytes.fromhex(event.seed),
        )
    )


def _deal_scored(
    message: table_event_pb2.TableEvent, event: domain_events.DealScored, feed: _Feed
) -> None:
    if feed.deal is None:  # the feed started mid-deal: no record to send
        return
    result = deal_result_message(feed.table_id, len(feed.seat_players), feed.deal, SPECTATOR)
    message.deal_scored.CopyFrom(table_event_pb2.DealScored(result=result))


def _series_completed(
    message: table_event_pb2.TableEvent, event: domain_events.SeriesCompleted, feed: _Feed
) -> None:
    message.series_completed.CopyFrom(
        table_event_pb2.SeriesCompleted(
            deals_played=event.deals_played,
            standings=[
                table_pb2.Standing(
                    seat=feed.seat(standing.seat),
                    player=resources.player_name(feed.seat_players[standing.seat] or ""),
                    total=standing.total,
                    place=standing.place,
                )
                for standing in event.standings
            ],
        )
    )


def _series_started(
    message: table_event_pb2.TableEvent, event: domain_events.SeriesStarted, feed: _Feed
) -> None:
    message.series_started.CopyFrom(
        table_event_pb2.SeriesStarted(
            series_number=event.series_number, first_deal_number=event.first_deal_number
        )
    )


def _deadlines_extended(
    message: table_event_pb2.TableEvent, event: domain_events.DeadlinesExtended, feed: _Feed
) -> None:
    message.deadlines_extended.CopyFrom(
        table_event_pb2.DeadlinesExtended(
            deal=feed.deal_of(event.deal_number),
            stage=timeout_stage(event.stage),
            seats=[feed.seat(number) for number in event.seats],
            previous_deadline_time=timestamp_from_ms(event.previous_deadline_ms),
            deadline_time=timestamp_from_ms(event.deadline_ms),
            reason=event.reason,
            unserved_from_time=timestamp_from_ms(event.unserved_from_ms),
            unserved_until_time=timestamp_from_ms(event.unserved_until_ms),
        )
    )


def _announcements_opened(
    message: table_event_pb2.TableEvent, event: domain_events.AnnouncementsOpened, feed: _Feed
) -> None:
    opened = table_event_pb2.AnnouncementsOpened(
        deal=feed.deal_of(event.deal_number), seats=[feed.seat(seat) for seat in event.order]
    )
    if event.deadline_ms is not None:
        opened.deadline_time.CopyFrom(timestamp_from_ms(event.deadline_ms))
    message.announcements_opened.CopyFrom(opened)


def _surrender_announced(
    message: table_event_pb2.TableEvent, event: domain_events.SurrenderAnnounced, feed: _Feed
) -> None:
    # The announcement is public at once (docs/rules.md §2.8); it carries no card.
    announced = table_event_pb2.SurrenderAnnounced(
        deal=feed.deal_of(event.deal_number),
        seat=feed.seat(event.seat),
        choice=surrender_choice(event.surrender),
        timed_out=event.timed_out,
        by_operator=event.timed_out and feed.by_operator,
    )
    if event.deadline_ms is not None:
        announced.next_deadline_time.CopyFrom(timestamp_from_ms(event.deadline_ms))
    message.surrender_announced.CopyFrom(announced)


_CONVERTERS: Final[
    dict[type[domain_events.Event], Callable[[table_event_pb2.TableEvent, Any, _Feed], None]]
] = {
    domain_events.TableCreated: _table_created,
    domain_events.PlayerSeated: _player_seated,
    domain_events.DealerChosen: _dealer_chosen,
    domain_events.DealStarted: _deal_started,
    domain_events.EntropyContributed: _entropy_contributed,
    domain_events.DeckCut: _deck_cut,
    domain_events.CardsDealt: _cards_dealt,
    domain_events.ArrangementCommitted: _arrangement_committed,
    domain_events.SeatConfirmed: _seat_confirmed,
    domain_events.RevealsOpened: _reveals_opened,
    domain_events.ArrangementRevealed: _arrangement_revealed,
    domain_events.SeatTimedOut: _seat_timed_out,
    domain_events.SeedRevealed: _seed_revealed,
    domain_events.DealScored: _deal_scored,
    domain_events.SeriesCompleted: _series_completed,
    domain_events.SeriesStarted: _series_started,
    domain_events.DeadlinesExtended: _deadlines_extended,
    domain_events.AnnouncementsOpened: _announcements_opened,
    domain_events.SurrenderAnnounced: _surrender_announced,
    domain_events.DealVoided: _deal_voided,
    domain_events.SeatReplaced: _seat_replaced,
    domain_events.NaturalDeclared: _natural_declared,
    domain_events.NaturalRevealed: _natural_revealed,
}
"""Event type -> the converter that fills its ``TableEvent`` payload."""
