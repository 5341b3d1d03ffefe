"""From domain values to API messages: rule sets, tables, deals and the public event feed.

Everything here is a pure function of the table's state or its recorded events, so an original
response and its retry are built alike. Hidden information is withheld here, in one place: a
``DealResult`` shows hands, nonces and dealt cards only once the deal's seed is in the log, an
``ArrangementRevealed`` event never carries them, and no view ever reads a secret seed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from google.protobuf.timestamp_pb2 import Timestamp

from sapsam import fairness
from sapsam.api import resources
from sapsam.api.errors import ApiError
from sapsam.domain import events as domain_events
from sapsam.domain.table import TablePhase, TableState
from sapsam.log.records import RecordedEvent
from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.ruleset import (
    DEFAULT_RULE_SET,
    RuleSet,
    RuleSetError,
    ScoringMethod,
    TimeoutPolicy,
    preset,
)
from sapsam_proto.v1 import rule_set_pb2, table_event_pb2, table_pb2

OPERATOR_ACTOR: Final = "operator"

_SCORING_TO_WIRE: Final = {
    ScoringMethod.PER_ROW: rule_set_pb2.SCORING_METHOD_PER_ROW,
    ScoringMethod.TWO_FOUR: rule_set_pb2.SCORING_METHOD_TWO_FOUR,
    ScoringMethod.ONE_SIX: rule_set_pb2.SCORING_METHOD_ONE_SIX,
    ScoringMethod.PER_ROW_SCOOP_BONUS: rule_set_pb2.SCORING_METHOD_PER_ROW_SCOOP_BONUS,
}
_SCORING_FROM_WIRE: Final = {wire: method for method, wire in _SCORING_TO_WIRE.items()}
_POLICY_TO_WIRE: Final = {
    TimeoutPolicy.FOUL: rule_set_pb2.TIMEOUT_POLICY_FOUL,
    TimeoutPolicy.SOLVER: rule_set_pb2.TIMEOUT_POLICY_SOLVER,
}
_POLICY_FROM_WIRE: Final = {wire: policy for policy, wire in _POLICY_TO_WIRE.items()}
_PHASE_TO_WIRE: Final = {
    TablePhase.SEATING: table_pb2.TABLE_PHASE_SEATING,
    TablePhase.AWAITING_DEALER: table_pb2.TABLE_PHASE_AWAITING_DEALER,
    TablePhase.BETWEEN_DEALS: table_pb2.TABLE_PHASE_BETWEEN_DEALS,
    TablePhase.AWAITING_CUT: table_pb2.TABLE_PHASE_AWAITING_CUT,
    TablePhase.DEALING: table_pb2.TABLE_PHASE_DEALING,
    TablePhase.ARRANGING: table_pb2.TABLE_PHASE_ARRANGING,
    TablePhase.REVEALING: table_pb2.TABLE_PHASE_REVEALING,
    TablePhase.AWAITING_SEED: table_pb2.TABLE_PHASE_AWAITING_SEED,
    TablePhase.SERIES_COMPLETE: table_pb2.TABLE_PHASE_SERIES_COMPLETE,
}
_STAGE_TO_WIRE: Final = {
    "arranging": table_pb2.TIMEOUT_STAGE_ARRANGING,
    "revealing": table_pb2.TIMEOUT_STAGE_REVEALING,
}
_CONSEQUENCE_TO_WIRE: Final = {
    "foul": table_pb2.TIMEOUT_CONSEQUENCE_FOUL,
    "solver": table_pb2.TIMEOUT_CONSEQUENCE_SOLVER,
}
_ROW_TO_WIRE: Final = {
    1: table_pb2.ROW_OUTCOME_FIRST_SEAT_WON,
    -1: table_pb2.ROW_OUTCOME_SECOND_SEAT_WON,
    0: table_pb2.ROW_OUTCOME_TIE,
}


# -- rule sets --------------------------------------------------------------------------------


def rule_set_message(rule_set: RuleSet) -> rule_set_pb2.RuleSet:
    """Every field of a rule set, on the wire."""
    message = rule_set_pb2.RuleSet(
        name=rule_set.name,
        rules_version=rule_set.rules_version,
        scoring_method=_SCORING_TO_WIRE[rule_set.scoring],
        row_unit=rule_set.row_unit,
        scoop_bonus=rule_set.scoop_bonus,
        one_six_two_of_three=rule_set.one_six_two_of_three,
        one_six_scoop=rule_set.one_six_scoop,
        min_seats=rule_set.min_seats,
        max_seats=rule_set.max_seats,
        series_length=rule_set.series_length,
        arrange_timeout_policy=_POLICY_TO_WIRE[rule_set.arrange_timeout_policy],
    )
    if rule_set.arrange_seconds is not None:
        message.arrange_seconds = rule_set.arrange_seconds
    if rule_set.reveal_seconds is not None:
        message.reveal_seconds = rule_set.reveal_seconds
    return message


_OPTIONAL_INTEGERS: Final = (
    "row_unit",
    "scoop_bonus",
    "one_six_two_of_three",
    "one_six_scoop",
    "min_seats",
    "max_seats",
    "series_length",
    "arrange_seconds",
    "reveal_seconds",
)


def _rule_set_error(error: RuleSetError, field_prefix: str) -> ApiError:
    text = str(error)
    key = next((name for name in _OPTIONAL_INTEGERS if f"'{name}'" in text), None)
    return ApiError("BAD_RULE_SET", text, field=f"{field_prefix}.{key}" if key else field_prefix)


def rule_set_from_message(message: rule_set_pb2.RuleSet) -> RuleSet:
    """A rule set from a request: unset fields take the base game's values."""
    values: dict[str, Any] = DEFAULT_RULE_SET.to_dict()
    values["name"] = message.name or "custom"
    if message.scoring_method != rule_set_pb2.SCORING_METHOD_UNSPECIFIED:
        method = _SCORING_FROM_WIRE.get(message.scoring_method)
        if method is None:
            raise ApiError(
                "BAD_RULE_SET", "unknown scoring method", field="rule_set.scoring_method"
            )
        values["scoring"] = method.value
    if message.arrange_timeout_policy != rule_set_pb2.TIMEOUT_POLICY_UNSPECIFIED:
        policy = _POLICY_FROM_WIRE.get(message.arrange_timeout_policy)
        if policy is None:
            raise ApiError(
                "BAD_RULE_SET", "unknown timeout policy", field="rule_set.arrange_timeout_policy"
            )
        values["arrange_timeout_policy"] = policy.value
    for name in _OPTIONAL_INTEGERS:
        if message.HasField(name):
            values[name] = getattr(message, name)
    try:
        rule_set = RuleSet.from_dict(values)
        rule_set.check_limits()  # a new table's: every number within its documented maximum
    except RuleSetError as error:
        raise _rule_set_error(error, "rule_set") from None
    return rule_set


def rule_set_for_request(
    preset_name: str | None, message: rule_set_pb2.RuleSet | None, series_length: int | None
) -> RuleSet:
    """The rule set a CreateTable request asks for (preset, full rules or the default)."""
    if message is not None:
        rule_set = rule_set_from_message(message)
    elif preset_name:
        try:
            rule_set = preset(preset_name)
        except RuleSetError as error:
            raise ApiError("BAD_RULE_SET", str(error), field="rule_set_preset") from None
    else:
        rule_set = DEFAULT_RULE_SET
    if series_length is not None:
        try:
            rule_set = rule_set.with_changes(series_length=series_length)
        except RuleSetError as error:
            raise ApiError("BAD_SERIES_LENGTH", str(error), field="series_length") from None
    return rule_set


# -- times --------------------------------------------------------------------------------------


def timestamp_from_ms(milliseconds: int) -> Timestamp:
    """A protobuf timestamp for Unix milliseconds."""
    stamp = Timestamp()
    stamp.FromMilliseconds(milliseconds)
    return stamp


def timestamp_from_text(text: str) -> Timestamp:
    """A protobuf timestamp for the store's ``recorded_at`` (ISO 8601, UTC)."""
    stamp = Timestamp()
    if text:
        stamp.FromJsonString(text)
    return stamp


# -- tables -------------------------------------------------------------------------------------


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


def creator_name(created_by: str) -> str:
    """``players/{player}`` for a player creator, empty for the operator."""
    return "" if created_by == OPERATOR_ACTOR else resources.player_name(created_by)


def table_status(phase: TablePhase) -> table_pb2.TableStatus.ValueType:
    """The coarse status for a phase."""
    if phase in (TablePhase.NOT_CREATED, TablePhase.SEATING):
        return table_pb2.TABLE_STATUS_OPEN
    if phase is TablePhase.SERIES_COMPLETE:
        return table_pb2.TABLE_STATUS_COMPLETED
    return table_pb2.TABLE_STATUS_PLAYING


def table_message(
    state: TableState, facts: TableFacts, display_names: Mapping[str, str]
) -> table_pb2.Table:
    """The public view of a table."""
    assert state.table_id is not None
    table_id = state.table_id
    deal = state.deal
    phase = state.phase
    seats = []
    for seat, player_id in enumerate(state.seats):
        view = table_pb2.Seat(
            name=resources.seat_name(table_id, seat),
            position=seat,
            player=resources.player_name(player_id or ""),
            display_name=display_names.get(player_id or "", ""),
            series_total=state.series_totals[seat] if state.series_totals else 0,
        )
        if deal is not None:
            view.entropy_contributed = deal.contributions[seat] is not None
            view.committed = deal.commitments[seat] is not None
            view.confirmed = deal.confirmed[seat]
            view.revealed = deal.reveals[seat] is not None
            view.timed_out = deal.timeouts[seat] is not None
        seats.append(view)
    table = table_pb2.Table(
        name=resources.table_name(table_id),
        status=table_status(phase),
        phase=_PHASE_TO_WIRE.get(phase, table_pb2.TABLE_PHASE_UNSPECIFIED),
        rule_set=rule_set_message(state.rule_set),
        seat_count=state.seat_count,
        seats=seats,
        version=state.version,
        create_time=timestamp_from_text(facts.create_time),
        creator=creator_name(facts.created_by),
    )
    if deal is not None:
        table.dealer_seat = resources.seat_name(table_id, deal.dealer)
        table.deal_number = deal.number
        table.current_deal = resources.deal_name(table_id, deal.number)
        table.seed_commitment = deal.seed_commitment
        if not deal.scored:
            cutter = fairness.cutter_for(deal.dealer, state.seat_count)
            table.cutter_seat = resources.seat_name(table_id, cutter)
        if phase is TablePhase.ARRANGING and deal.arrange_deadline_ms is not None:
            table.deadline_time.CopyFrom(timestamp_from_ms(deal.arrange_deadline_ms))
        elif phase is TablePhase.REVEALING and deal.reveal_deadline_ms is not None:
            table.deadline_time.CopyFrom(timestamp_from_ms(deal.reveal_deadline_ms))
    elif state.first_dealer is not None:
        table.dealer_seat = resources.seat_name(table_id, state.first_dealer)
    return table


# -- deals --------------------------------------------------------------------------------------


def _rows_message(front: Iterable[str], middle: Iterable[str], back: Iterable[str]) -> Any:
    return table_pb2.Arrangement(front=list(front), middle=list(middle), back=list(back))


@dataclass
class _SeatFacts:
    entropy: bytes = b""
    commitment: bytes = b""
    confirmed: bool = False
    revealed: domain_events.ArrangementRevealed | None = None
    timed_out: domain_events.SeatTimedOut | None = None


@dataclass
class DealFacts:
    """The events of one deal, gathered in order (see :func:`gather_deal`)."""

    deal_number: int
    dealer: int = 0
    seed_commitment: bytes = b""
    cut: domain_events.DeckCut | None = None
    seed: bytes | None = None
    scored: domain_events.DealScored | None = None
    seats: dict[int, _SeatFacts] = field(default_factory=dict)

    def seat(self, seat: int) -> _SeatFacts:
        """The facts of one seat (created on first use)."""
        return self.seats.setdefault(seat, _SeatFacts())

    def add(self, event: domain_events.Event) -> None:
        """Take one event of this deal into account."""
        if isinstance(event, domain_events.DealStarted):
            self.dealer = event.dealer
            self.seed_commitment = bytes.fromhex(event.seed_commitment)
        elif isinstance(event, domain_events.EntropyContributed):
            self.seat(event.seat).entropy = bytes.fromhex(event.entropy)
        elif isinstance(event, domain_events.DeckCut):
            self.cut = event
        elif isinstance(event, domain_events.ArrangementCommitted):
            self.seat(event.seat).commitment = bytes.fromhex(event.commitment)
        elif isinstance(event, domain_events.SeatConfirmed):
            facts = self.seat(event.seat)
            facts.confirmed = True
            facts.commitment = bytes.fromhex(event.commitment)
        elif isinstance(event, domain_events.ArrangementRevealed):
            self.seat(event.seat).revealed = event
        elif isinstance(event, domain_events.SeatTimedOut):
            self.seat(event.seat).timed_out = event
        elif isinstance(event, domain_events.SeedRevealed):
            self.seed = bytes.fromhex(event.seed)
        elif isinstance(event, domain_events.DealScored):
            self.scored = event


def gather_deal(events: Iterable[domain_events.Event], deal_number: int) -> DealFacts | None:
    """The facts of deal ``deal_number`` from a table's events; None if it never started."""
    facts: DealFacts | None = None
    for event in events:
        if getattr(event, "deal_number", None) != deal_number:
            continue
        if isinstance(event, domain_events.DealStarted):
            facts = DealFacts(deal_number)
        if facts is not None:
            facts.add(event)
    return facts


def deal_result_message(
    table_id: uuid.UUID, seat_count: int, facts: DealFacts
) -> table_pb2.DealResult:
    """A deal's public record: hands, nonces and the seed only once the seed is revealed."""
    result = table_pb2.DealResult(
        name=resources.deal_name(table_id, facts.deal_number),
        deal_number=facts.deal_number,
        dealer_seat=resources.seat_name(table_id, facts.dealer),
        seed_commitment=facts.seed_commitment,
        cutter_seat=resources.seat_name(table_id, fairness.cutter_for(facts.dealer, seat_count)),
        seed_revealed=facts.seed is not None,
        scored=facts.scored is not None,
    )
    if facts.cut is not None:
        result.cut_position = facts.cut.position
    contributions = [facts.seat(seat).entropy or None for seat in range(seat_count)]
    hands: Sequence[Sequence[Card]] = ()
    if facts.seed is not None and facts.cut is not None:
        result.seed = facts.seed
        hands = fairness.hands_for_deal(
            facts.seed,
            contributions,
            table_id,
            facts.deal_number,
            facts.cut.position,
            facts.dealer,
            seat_count,
        )
    scored = facts.scored
    for seat in range(seat_count):
        seat_facts = facts.seat(seat)
        view = table_pb2.DealSeatResult(
            seat=resources.seat_name(table_id, seat),
            entropy=seat_facts.entropy,
            commitment=seat_facts.commitment,
            confirmed=seat_facts.confirmed,
        )
        timed_out = seat_facts.timed_out
        if timed_out is not None:
            view.timed_out_stage = _STAGE_TO_WIRE.get(
                timed_out.stage, table_pb2.TIMEOUT_STAGE_UNSPECIFIED
            )
            view.timeout_consequence = _CONSEQUENCE_TO_WIRE.get(
                timed_out.consequence, table_pb2.TIMEOUT_CONSEQUENCE_UNSPECIFIED
            )
        if facts.seed is not None:
            _reveal_seat(view, seat, seat_facts, hands, scored)
        if scored is not None:
            view.score_delta = scored.totals[seat]
            view.series_total = scored.series_totals[seat]
        result.seats.append(view)
    if scored is not None:
        for pair in scored.pairs:
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


def _sign(number: int) -> int:
    return (number > 0) - (number < 0)


MISSED_DEADLINE_FOUL: Final = "MISSED_DEADLINE"
"""``DealSeatResult.foul_reason`` of a seat fouled for missing a deadline; the other codes are
the rules' :class:`~sapsam.rules.arrangement.FoulReason` values, recorded with the reveal."""


def _reveal_seat(
    view: table_pb2.DealSeatResult,
    seat: int,
    seat_facts: _SeatFacts,
    hands: Sequence[Sequence[Card]],
    scored: domain_events.DealScored | None,
) -> None:
    # Called only once the seed is in the log: nothing about this seat is secret any more.
    if hands:
        view.dealt_cards.extend(str(card) for card in sorted(hands[seat]))
    revealed = seat_facts.revealed
    if revealed is not None:
        view.nonce = bytes.fromhex(revealed.nonce)
        view.foul = revealed.foul
        view.foul_reason = revealed.foul_reason or ""
        view.arrangement.CopyFrom(_rows_message(revealed.front, revealed.middle, revealed.back))
    if scored is not None:
        view.foul = scored.fouls[seat]
        text = scored.arrangements[seat]
        if text is not None and revealed is None:
            # A solver-set hand (the seat timed out under the solver rule).
            front, middle, back = (parse_cards(row) for row in text.split("|"))
            view.arrangement.CopyFrom(
                _rows_message(
                    (str(c) for c in front), (str(c) for c in middle), (str(c) for c in back)
                )
            )
        if view.foul and not view.foul_reason and seat_facts.timed_out is not None:
            view.foul_reason = MISSED_DEADLINE_FOUL


# -- the public event feed -----------------------------------------------------------------------


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
    seat_count = len(seat_players)
    recorded_at = recorded.metadata.get("recorded_at")
    message = table_event_pb2.TableEvent(
        table=resources.table_name(table_id),
        version=recorded.version,
        type=recorded.type,
        record_time=timestamp_from_text(recorded_at if isinstance(recorded_at, str) else ""),
    )

    def seat(number: int) -> str:
        return resources.seat_name(table_id, number)

    def deal_of(number: int) -> str:
        return resources.deal_name(table_id, number)

    if isinstance(event, domain_events.TableCreated):
        message.table_created.CopyFrom(
            table_event_pb2.TableCreated(
                rule_set=rule_set_message(RuleSet.from_dict(event.rule_set)),
                seat_count=event.seat_count,
                lot_commitment=bytes.fromhex(event.lot_commitment),
                creator=creator_name(event.created_by),
            )
        )
    elif isinstance(event, domain_events.PlayerSeated):
        message.player_seated.CopyFrom(
            table_event_pb2.PlayerSeated(
                seat=seat(event.seat), player=resources.player_name(event.player_id)
            )
        )
    elif isinstance(event, domain_events.DealerChosen):
        message.dealer_chosen.CopyFrom(
            table_event_pb2.DealerChosen(
                dealer_seat=seat(event.dealer),
                lot_seed=bytes.fromhex(event.lot_seed),
                lot_cards=list(event.lot_cards),
            )
        )
    elif isinstance(event, domain_events.DealStarted):
        message.deal_started.CopyFrom(
            table_event_pb2.DealStarted(
                deal=deal_of(event.deal_number),
                deal_number=event.deal_number,
                dealer_seat=seat(event.dealer),
                seed_commitment=bytes.fromhex(event.seed_commitment),
            )
        )
    elif isinstance(event, domain_events.EntropyContributed):
        message.entropy_contributed.CopyFrom(
            table_event_pb2.EntropyContributed(
                deal=deal_of(event.deal_number),
                seat=seat(event.seat),
                entropy=bytes.fromhex(event.entropy),
            )
        )
    elif isinstance(event, domain_events.DeckCut):
        message.deck_cut.CopyFrom(
            table_event_pb2.DeckCut(
                deal=deal_of(event.deal_number), seat=seat(event.seat), position=event.position
            )
        )
    elif isinstance(event, domain_events.CardsDealt):
        dealt = table_event_pb2.CardsDealt(deal=deal_of(event.deal_number))
        if event.arrange_deadline_ms is not None:
            dealt.arrange_deadline_time.CopyFrom(timestamp_from_ms(event.arrange_deadline_ms))
        message.cards_dealt.CopyFrom(dealt)
    elif isinstance(event, domain_events.ArrangementCommitted):
        message.arrangement_committed.CopyFrom(
            table_event_pb2.ArrangementCommitted(
                deal=deal_of(event.deal_number),
                seat=seat(event.seat),
                commitment=bytes.fromhex(event.commitment),
            )
        )
    elif isinstance(event, domain_events.SeatConfirmed):
        message.seat_confirmed.CopyFrom(
            table_event_pb2.SeatConfirmed(
                deal=deal_of(event.deal_number),
                seat=seat(event.seat),
                commitment=bytes.fromhex(event.commitment),
            )
        )
    elif isinstance(event, domain_events.RevealsOpened):
        opened = table_event_pb2.RevealsOpened(deal=deal_of(event.deal_number))
        if event.reveal_deadline_ms is not None:
            opened.reveal_deadline_time.CopyFrom(timestamp_from_ms(event.reveal_deadline_ms))
        message.reveals_opened.CopyFrom(opened)
    elif isinstance(event, domain_events.ArrangementRevealed):
        # Which seat revealed, nothing more: the rows and nonce wait for the seed (DealScored).
        message.arrangement_revealed.CopyFrom(
            table_event_pb2.ArrangementRevealed(
                deal=deal_of(event.deal_number), seat=seat(event.seat)
            )
        )
    elif isinstance(event, domain_events.SeatTimedOut):
        message.seat_timed_out.CopyFrom(
            table_event_pb2.SeatTimedOut(
                deal=deal_of(event.deal_number),
                seat=seat(event.seat),
                stage=_STAGE_TO_WIRE.get(event.stage, table_pb2.TIMEOUT_STAGE_UNSPECIFIED),
                consequence=_CONSEQUENCE_TO_WIRE.get(
                    event.consequence, table_pb2.TIMEOUT_CONSEQUENCE_UNSPECIFIED
                ),
            )
        )
    elif isinstance(event, domain_events.SeedRevealed):
        message.seed_revealed.CopyFrom(
            table_event_pb2.SeedRevealed(
                deal=deal_of(event.deal_number), seed=bytes.fromhex(event.seed)
            )
        )
    elif isinstance(event, domain_events.DealScored) and deal is not None:
        message.deal_scored.CopyFrom(
            table_event_pb2.DealScored(result=deal_result_message(table_id, seat_count, deal))
        )
    elif isinstance(event, domain_events.SeriesCompleted):
        message.series_completed.CopyFrom(
            table_event_pb2.SeriesCompleted(
                deals_played=event.deals_played,
                standings=[
                    table_pb2.Standing(
                        seat=seat(standing.seat),
                        player=resources.player_name(seat_players[standing.seat] or ""),
                        total=standing.total,
                        place=standing.place,
                    )
                    for standing in event.standings
                ],
            )
        )
    elif isinstance(event, domain_events.SeriesStarted):
        message.series_started.CopyFrom(
            table_event_pb2.SeriesStarted(
                series_number=event.series_number, first_deal_number=event.first_deal_number
            )
        )
    elif isinstance(event, domain_events.DeadlinesExtended):
        message.deadlines_extended.CopyFrom(
            table_event_pb2.DeadlinesExtended(
                deal=deal_of(event.deal_number),
                stage=_STAGE_TO_WIRE.get(event.stage, table_pb2.TIMEOUT_STAGE_UNSPECIFIED),
                seats=[seat(number) for number in event.seats],
                previous_deadline_time=timestamp_from_ms(event.previous_deadline_ms),
                deadline_time=timestamp_from_ms(event.deadline_ms),
                reason=event.reason,
                unserved_from_time=timestamp_from_ms(event.unserved_from_ms),
                unserved_until_time=timestamp_from_ms(event.unserved_until_ms),
            )
        )
    return message
