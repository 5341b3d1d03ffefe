"""Open face's checks of one deal, as the verifier's framework runs them (``AuditFamily``).

A deal is checked by **re-deciding** it: the table's state before the deal is folded from the
export's opening and its earlier deals (``DealContext.earlier``), then every event of the deal
is turned back into the command that must have produced it -- a street's digests from the
published seed, a placement with the cards the seed dealt that seat, a Fantasyland hand with its
nonce, the seed itself -- and ``sapsam.domain.open_face``'s ``decide`` must produce exactly the
recorded event (deadlines aside: no clock is replayed offline). So every rule the service
enforced is checked by the same code, from the log alone (docs/audit.md, "Open face").

The first event that does not re-decide fails the check it belongs to and the rest of the deal
is not checked (its state would rest on a forgery):

* ``seed``: the deal's start, entropy, cut and ``SeedRevealed`` against its commitment;
* ``streets``: each ``StreetDealt``'s per-seat digests recomputed from the seed's cards;
* ``placements``: each ``CardsPlaced`` legal, in turn, of cards dealt to that seat on that
  street, and an automatic move exactly what the rule set's policy places; each
  ``DeadlinesExtended`` (an outage's, docs/events.md) exactly what the domain extends for its
  recorded window and grace, the seats still due and no other; a timeout after it re-decided at
  the extended deadline;
* ``fantasyland``: each hand committed by the right seat and opened matching its commitment, or
  timed out after the first street's deadline and set by the rule set's policy; the reveals
  opened (``FantasylandRevealsOpened``) exactly with the move that made them due, and a
  committed hand timed out only once the reveals are due, dead; a timeout where no deadline
  ran is re-decided as the operator's ``ForceSeatTimeout`` (``forced_seat``);
* ``discards`` (Pineapple): each ``DiscardCommitted`` recorded with the placement it belongs to,
  and each ``DiscardsRevealed`` opening every commitment of the seat to dealt cards of that
  street left off its board (docs/fairness.md §23); a move made for the seat discards as the
  rule set's policy does, checked with its placement;
* ``scores``: ``DealScored`` (royalties, dead hands, totals) recomputed with
  ``sapsam.rules.open_face``, and ``SeriesCompleted`` recorded exactly when the button has
  moved as many times as there are seats (a Fantasyland deal keeps the button: the set is
  counted in button moves, not deals), or, under 003's timeout policy, at the first button move
  after a timeout; a ``SeatReplaced`` after the score is re-decided here too.

A voided deal (``DealVoided``, which publishes its seed) is re-decided the same way up to the
voiding, which must match the deal's commitment; it has no score.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sapsam import fairness
from sapsam.audit.deal_events import MALFORMED, DealEvents
from sapsam.audit.open_face_checks import (
    CHECK_OF,
    OPEN_FACE_CHECKS,
    PASSED,
    ReplayError,
    fantasyland_timeout_command,
    timed_out_by,
)
from sapsam.audit.open_face_checks import (
    event_name as _name,
)
from sapsam.audit.pineapple_discards import discard_commitment_after, reveal_discards_command
from sapsam.audit.report import AuditCheck, Status
from sapsam.domain.commands import (
    ContributeEntropy,
    CutDeck,
    ReplaceSeat,
    RevealSeed,
    StartDeal,
    VoidDeal,
)
from sapsam.domain.errors import DomainError
from sapsam.domain.events import (
    DeadlinesExtended,
    DealerChosen,
    DealScored,
    DealStarted,
    DealVoided,
    DeckCut,
    EntropyContributed,
    Event,
    PlayerSeated,
    SeatReplaced,
    SeedRevealed,
    SeriesCompleted,
    TableCreated,
)
from sapsam.domain.family import without_family
from sapsam.domain.open_face.commands import (
    CommitFantasyland,
    DealStreet,
    PlaceCards,
    PlaceForSeat,
    RevealFantasyland,
    TimeOutDiscards,
)
from sapsam.domain.open_face.deal_deadlines import DISCARDING_STAGE
from sapsam.domain.open_face.deal_state import OpenFaceDeal
from sapsam.domain.open_face.events import (
    TIMED_OUT_BY_OPERATOR,
    CardsPlaced,
    DiscardCommitted,
    DiscardsRevealed,
    FantasylandCommitted,
    FantasylandRevealed,
    FantasylandRevealsOpened,
    FantasylandTimedOut,
    StreetDealt,
)
from sapsam.domain.open_face.table_decide import (
    SERIES_LENGTH_KEY,
    decide_table,
    read_recorded_rules,
)
from sapsam.domain.open_face.table_evolve import evolve_table, fold_table
from sapsam.domain.open_face.table_state import (
    INITIAL_OPEN_FACE_TABLE,
    OpenFaceTable,
    dealt_streets,
)
from sapsam.domain.table_deadlines import EXTENSION_REASONS, UnservedWindow
from sapsam.fairness.open_face_deal import street_digest
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.open_face.board import Placement, discards_due
from sapsam.rules.open_face.parameters import OpenFaceRules, OpenFaceRulesError

__all__ = [
    "OPEN_FACE_CHECKS",
    "OpenFaceAuditRules",
    "ReplayError",
    "open_face_deal_checks",
    "read_open_face_rules",
    "replay_deal",
]


@dataclass(frozen=True)
class OpenFaceAuditRules:
    """A recorded open-face rule set as the verifier reads it: what the framework reads
    (``name``, ``series_length``: the seats, in button moves) and the family's rules."""

    name: str
    series_length: int
    rules: OpenFaceRules


def read_open_face_rules(created: TableCreated | None) -> OpenFaceAuditRules | None:
    """The rule set ``created`` records, or None when there is none or it is invalid."""
    if created is None or not isinstance(created.rule_set, Mapping):
        return None
    try:
        rules = read_recorded_rules(without_family(created.rule_set))
    except (OpenFaceRulesError, *MALFORMED):
        return None
    length = created.rule_set.get(SERIES_LENGTH_KEY)
    if length != created.seat_count or not rules.min_seats <= length <= rules.max_seats:
        return None  # the set has as many button moves as seats (001)
    return OpenFaceAuditRules(rules.name, length, rules)


@dataclass
class _Replay:
    """The table as the deal's events are re-decided, and what the seed dealt."""

    state: OpenFaceTable
    seed: bytes
    cards: tuple[tuple[tuple[Card, ...], ...], ...] = ()
    """``cards[street][seat]``, known once the deck is cut."""


def opening_state(
    created: TableCreated, seated: Sequence[PlayerSeated], chosen: DealerChosen | None
) -> OpenFaceTable:
    """The table before its first deal (trusted: the framework checks the opening)."""
    opening: list[Event] = [created, *seated]
    if chosen is not None:
        opening.append(chosen)
    return fold_table(opening, INITIAL_OPEN_FACE_TABLE)


def open_face_deal_checks(
    deal: DealEvents,
    created: TableCreated | None,
    chosen: DealerChosen | None,
    seated: Sequence[PlayerSeated],
    earlier: Sequence[DealEvents],
) -> tuple[list[AuditCheck], tuple[int, ...] | None]:
    """Every check of one open-face deal, and its verified totals (None: not verified)."""
    number = deal.number
    if created is None:
        return [AuditCheck("seed", Status.SKIPPED, "no TableCreated", deal=number)], None
    if not deal.finished and deal.first(DealVoided) is None:
        return [
            AuditCheck(
                "seed",
                Status.PENDING,
                "the deal is still being played: its seed is secret until SeedRevealed, so "
                "its streets cannot be checked yet",
                deal=number,
            )
        ], None
    if [previous.number for previous in earlier] != list(range(1, number)):
        return [
            AuditCheck(
                name,
                Status.NOT_COVERED,
                f"not checkable from this export: deal {number} starts from what deals 1 to "
                f"{number - 1} decided (Fantasyland, the button, hands dead for the set); "
                "export the whole table",
                deal=number,
            )
            for name in OPEN_FACE_CHECKS
        ], None
    try:
        state = opening_state(created, seated, chosen)
        for previous in earlier:
            for event in previous.events:
                state = evolve_table(state, event)
    except (*MALFORMED, AssertionError) as error:
        detail = f"the deals before this one cannot be folded: {type(error).__name__}: {error}"
        return [AuditCheck("seed", Status.FAILED, detail, deal=number)], None
    return replay_deal(deal, state)


def replay_deal(
    deal: DealEvents, before: OpenFaceTable
) -> tuple[list[AuditCheck], tuple[int, ...] | None]:
    """Re-decide the deal's events from the table ``before`` it (see the module docstring)."""
    number = deal.number
    failed: ReplayError | None = None
    reached: set[str] = set()
    events = deal.events
    index = 0
    current = "seed"  # the check of the event being re-decided
    replay_cut = False
    try:
        revealed = deal.first(SeedRevealed) or deal.first(DealVoided)
        if not isinstance(revealed, SeedRevealed | DealVoided):
            raise ReplayError("seed", "the deal is scored without SeedRevealed")
        replay = _Replay(before, bytes.fromhex(revealed.seed))
        while index < len(events):
            event = events[index]
            current = CHECK_OF.get(type(event), "placements")
            reached.add(current)
            if type(event) not in CHECK_OF:
                raise ReplayError(
                    current, f"{type(event).__name__} is not an event of an open-face deal"
                )
            if isinstance(event, DealScored | SeriesCompleted):
                raise ReplayError("scores", f"{_name(event)} recorded where the rules make none")
            index += _redecide(replay, event, events[index:], current)
            replay_cut = bool(replay.cards)
    except ReplayError as failure:
        failed = failure
    except (*MALFORMED, AssertionError) as error:
        failed = ReplayError(current, f"malformed event: {type(error).__name__}: {error}")
    # A check passes only when every event of it was re-decided before the replay stopped.
    unchecked = {
        CHECK_OF.get(type(event), "placements")
        for event in events[index:]
        # The seed's commitment is checked when the deck is cut, before any street.
        if not (isinstance(event, SeedRevealed | DealVoided) and replay_cut)
    }
    voided = deal.first(DealVoided) is not None
    checks: list[AuditCheck] = []
    for name in OPEN_FACE_CHECKS:
        if failed is not None and name == failed.check:
            checks.append(AuditCheck(name, Status.FAILED, failed.detail, deal=number))
        elif failed is not None and name in unchecked:
            checks.append(
                AuditCheck(
                    name,
                    Status.SKIPPED,
                    f"not checked: the replay stopped at a failed {failed.check} check",
                    deal=number,
                )
            )
        elif name == "fantasyland" and name not in reached:
            checks.append(
                AuditCheck(name, Status.PASSED, "no Fantasyland hand in this deal", deal=number)
            )
        elif name == "discards" and name not in reached:
            checks.append(
                AuditCheck(name, Status.PASSED, "no discard committed in this deal", deal=number)
            )
        elif name == "scores" and voided:
            checks.append(
                AuditCheck(name, Status.PASSED, "the deal was voided: nothing scored", deal=number)
            )
        else:
            checks.append(AuditCheck(name, Status.PASSED, PASSED[name], deal=number))
    if failed is not None or voided:
        return checks, None
    scored = deal.first(DealScored)
    assert isinstance(scored, DealScored)
    return checks, tuple(scored.totals)


def _redecide(replay: _Replay, event: Event, rest: Sequence[Event], check: str) -> int:
    """Re-decide ``event`` (and, for the seed's reveal, the score that follows it); the number
    of recorded events it accounts for."""
    state = replay.state
    command = _command_for(replay, event, rest)
    try:
        produced = decide_table(state, command)
    except DomainError as error:
        raise ReplayError(check, f"{_name(event)} is refused by the rules: {error}") from None
    recorded = list(rest[: len(produced)])
    for made, found in zip(produced, recorded, strict=False):
        if (
            isinstance(found, CardsPlaced | FantasylandTimedOut | DiscardsRevealed)
            and found.timed_out_by is None
            and type(made) is type(found)
        ):
            # Recorded before a timeout named who made it: checked as it was then (the
            # command re-decided as _timed_out_by says), without the name.
            made = dataclasses.replace(made, timed_out_by=None)
        if _without_deadline(made) != _without_deadline(found):
            where = CHECK_OF.get(type(found), check)
            raise ReplayError(
                where, f"{_name(found)} is not what the rules decide: expected {made!r}"
            )
    if len(recorded) < len(produced):
        missing = _name(produced[len(recorded)])
        raise ReplayError("scores", f"the deal ends without its {missing}")
    for found in recorded:
        replay.state = evolve_table(replay.state, found)
    if isinstance(event, DeckCut):
        _deal_cards(replay)
    return len(produced)


def _command_for(replay: _Replay, event: Event, rest: Sequence[Event] = ()) -> Any:
    state = replay.state
    play = state.play
    if isinstance(event, DealStarted):
        return StartDeal(bytes.fromhex(event.seed_commitment))
    if isinstance(event, EntropyContributed):
        return ContributeEntropy(_player(state, event.seat), bytes.fromhex(event.entropy))
    if isinstance(event, DeckCut):
        return CutDeck(_player(state, event.seat), event.position)
    if isinstance(event, SeedRevealed):
        return RevealSeed(bytes.fromhex(event.seed))
    if isinstance(event, DealVoided):
        return VoidDeal(event.reason, bytes.fromhex(event.seed), event.deal_number)
    if isinstance(event, SeatReplaced):
        return ReplaceSeat(event.seat, event.player_id)
    if not replay.cards or play is None:
        raise ReplayError(CHECK_OF[type(event)], f"{_name(event)} before the deck is cut")
    key = fairness.record_key(state.table_id or uuid.UUID(int=0), state.deal_number, replay.seed)
    if isinstance(event, StreetDealt):
        street = play.streets_dealt
        if street >= len(replay.cards):
            raise ReplayError("streets", f"{_name(event)}: every street is already dealt")
        digests = tuple(
            street_digest(key, street, seat, cards) if cards else b""
            for seat, cards in enumerate(replay.cards[street])
        )
        return DealStreet(digests)
    if isinstance(event, DeadlinesExtended):
        # The sweep's timeout, which met a deadline that fell while no server served: the
        # domain must extend exactly these seats' deadline, to exactly where the recorded
        # window and grace move it (no clock is replayed: the sweep is taken to come at the
        # deadline). A timeout after it is re-decided at the extended deadline.
        window = UnservedWindow(event.unserved_from_ms, event.unserved_until_ms, event.reason)
        grace = event.deadline_ms - event.unserved_until_ms
        if event.reason not in EXTENSION_REASONS or grace < 0:
            raise ReplayError("placements", f"{_name(event)}: not an extension the rules make")
        if event.stage == DISCARDING_STAGE:
            seat = event.seats[0] if event.seats else -1
            dealt_streets = tuple(street[seat] for street in replay.cards) if seat >= 0 else ()
            return TimeOutDiscards(
                seat, dealt_streets, event.previous_deadline_ms, (window,), grace
            )
        return PlaceForSeat(
            _dealt_to_turn(replay), event.previous_deadline_ms, True, (window,), grace
        )
    if isinstance(event, CardsPlaced):
        dealt = _street_cards(replay, event.street, event.seat)
        if event.automatic is not None:
            # The service placed them: the rule set's policy must place exactly these cards
            # here (a timeout only once the seat's time has run out; where no deadline ran,
            # only as the operator's ForceSeatTimeout of the seat on turn).
            timeout = event.automatic == "timeout"
            by = timed_out_by(event, "placements")
            at = play.deadline_ms if play.deadline_ms is not None else 0
            if by is None and _seat_played_for(play, event.seat):
                # The rest of a hand after 003's timeout, named by nobody: the move made for a
                # seat whose moves are all made for it (deadline or not).
                return PlaceForSeat(_dealt_to_turn(replay), at, False)
            if by == TIMED_OUT_BY_OPERATOR or (by is None and timeout and play.deadline_ms is None):
                return PlaceForSeat(_dealt_to_turn(replay), 0, True, forced_seat=event.seat)
            # The sweep's (``service``) only past a deadline that ran: none, and it is refused.
            return PlaceForSeat(_dealt_to_turn(replay), at, timeout or by is not None)
        placement = Placement(
            parse_cards(event.front), parse_cards(event.middle), parse_cards(event.back)
        )
        thrown = discards_due(play.rules, event.street)
        if not set(placement.cards) <= set(dealt) or len(placement.cards) != len(dealt) - thrown:
            raise ReplayError(
                "placements",
                f"{_name(event)} places {' '.join(map(str, sorted(placement.cards)))}: not the "
                f"cards the seed dealt seat {event.seat} on street {event.street}"
                + (f" less {thrown} discarded" if thrown else ""),
            )
        player = _player(state, event.seat)
        commitment = discard_commitment_after(event, rest) if thrown else None
        return PlaceCards(player, event.street, placement, dealt, discard_commitment=commitment)
    if isinstance(event, DiscardCommitted):
        raise ReplayError("discards", f"{_name(event)} without the placement it belongs to")
    if isinstance(event, DiscardsRevealed):
        if event.nonces and all(nonce == "" for nonce in event.nonces):
            # Opened by the service: the sweep's after the deadline (no clock replayed: the
            # recorded one; where none ran, refused), the operator's ForceSeatTimeout at any
            # time. Recorded before the name: where no deadline ran, as the operator's.
            by = timed_out_by(event, "discards")
            seat_streets = tuple(street[event.seat] for street in replay.cards)
            due = play.deadline_ms
            if by == TIMED_OUT_BY_OPERATOR or (by is None and due is None):
                return TimeOutDiscards(event.seat, seat_streets, 0, forced=True)
            return TimeOutDiscards(event.seat, seat_streets, 0 if due is None else due)
        return reveal_discards_command(_player(state, event.seat), event, replay.cards, event.seat)
    if isinstance(event, FantasylandCommitted):
        return CommitFantasyland(_player(state, event.seat), bytes.fromhex(event.commitment))
    if isinstance(event, FantasylandTimedOut):
        return fantasyland_timeout_command(play, event)
    if isinstance(event, FantasylandRevealsOpened):
        # Only ever recorded with the move that made the reveals due (re-decided with it).
        raise ReplayError("fantasyland", f"{_name(event)} recorded where the rules open none")
    assert isinstance(event, FantasylandRevealed)
    if event.nonce == "":
        # Set by the service after a timeout and opened with the seed: the seed's reveal must
        # produce exactly these rows (the rule set's policy), then the seed and the score.
        return RevealSeed(replay.seed)
    arrangement = Arrangement(
        parse_cards(event.front), parse_cards(event.middle), parse_cards(event.back)
    )
    dealt = _street_cards(replay, 0, event.seat)
    return RevealFantasyland(
        _player(state, event.seat), arrangement, bytes.fromhex(event.nonce), dealt
    )


def _seat_played_for(play: OpenFaceDeal, seat: int) -> bool:
    """Whether ``seat``'s moves are made for it after 003's timeout (its hand not dead), so a
    move recorded for it with no ``timed_out_by`` is the rest of its hand, not a new timeout."""
    return 0 <= seat < len(play.automatic) and play.automatic[seat] and not play.declared_dead[seat]


def _deal_cards(replay: _Replay) -> None:
    """What the published seed dealt, once the deck is cut (docs/fairness.md §22)."""
    state = replay.state
    play = state.play
    assert state.table_id is not None and play is not None and state.cut_position is not None
    if fairness.seed_commitment(state.table_id, play.number, replay.seed) != state.seed_commitment:
        raise ReplayError("seed", "the published seed does not match the deal's commitment")
    replay.cards = dealt_streets(state, replay.seed)


def _street_cards(replay: _Replay, street: int, seat: int) -> tuple[Card, ...]:
    if not 0 <= street < len(replay.cards) or not 0 <= seat < len(replay.cards[street]):
        raise ReplayError("placements", f"no street {street} is dealt to seat {seat}")
    return replay.cards[street][seat]


def _dealt_to_turn(replay: _Replay) -> tuple[Card, ...]:
    play = replay.state.play
    assert play is not None
    if play.turn is None or play.streets_dealt == 0:
        return ()  # decide refuses: nobody is on turn
    return replay.cards[play.streets_dealt - 1][play.turn]


def _player(state: OpenFaceTable, seat: int) -> str:
    if not 0 <= seat < len(state.seats) or state.seats[seat] is None:
        raise ReplayError("seed", f"seat {seat} is not held at this table")
    player = state.seats[seat]
    assert player is not None
    return player


def _without_deadline(event: Event) -> Event:
    # Deadlines follow from the service's clock, which the log does not replay. A player's
    # signature (and the signing scheme the event was recorded under) is no rule's outcome: the
    # replay makes the move unsigned, and player_signature[s] checks the recorded one.
    if isinstance(
        event, FantasylandCommitted | FantasylandRevealed | CardsPlaced | DiscardsRevealed
    ):
        event = dataclasses.replace(event, player_key=None, signature=None, signing_scheme=2)
    if isinstance(event, StreetDealt | CardsPlaced | FantasylandRevealsOpened):
        return dataclasses.replace(event, deadline_ms=None)
    return event
