"""``decide`` for an open-face table: the frame's commands (create, seat, the dealer by lot, a
deal's start, entropy, the cut, the seed and the score) here, a deal's play handed to
``deal_decide``. Only ``decide`` validates; a refused command produces no events."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sapsam import fairness
from sapsam.domain.commands import (
    ChooseDealer,
    ContributeEntropy,
    CutDeck,
    ReplaceSeat,
    RevealSeed,
    SeatPlayer,
    StartDeal,
    VoidDeal,
)
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import (
    DealScored,
    DealStarted,
    DealVoided,
    Event,
    PairScored,
    SeatReplaced,
    SeatStanding,
    SeedRevealed,
    SeriesCompleted,
    TableCreated,
)
from sapsam.domain.family import FAMILY_KEY
from sapsam.domain.open_face.commands import (
    CommitFantasyland,
    CreateOpenFaceTable,
    DealStreet,
    PlaceCards,
    PlaceForSeat,
    RevealDiscards,
    RevealFantasyland,
    TimeOutDiscards,
    TimeOutFantasyland,
)
from sapsam.domain.open_face.deal_decide import decide_deal
from sapsam.domain.open_face.deal_evolve import evolve_deal
from sapsam.domain.open_face.deal_state import OpenFaceDeal
from sapsam.domain.open_face.events import FantasylandRevealed
from sapsam.domain.open_face.table_state import (
    OpenFaceTable,
    OpenFaceTablePhase,
    dead_seats,
    dealt_streets,
    next_deal,
    set_progress,
)
from sapsam.domain.table_checks import require_seed_size
from sapsam.domain.table_frame import (
    decide_cut_at,
    decide_dealer_lot,
    decide_entropy,
    decide_seating,
    require_hash_size,
    require_seat_count,
    require_seat_index,
)
from sapsam.domain.table_void import require_void_reason
from sapsam.rules.cards import Card, format_cards
from sapsam.rules.open_face.board import PlacementError
from sapsam.rules.open_face.fantasyland import verify_fantasyland_arrangement
from sapsam.rules.open_face.fantasyland_setting import fantasyland_timeout_setting
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.scoring import score_open_face_deal
from sapsam.rules.scoring import add_totals, standings

__all__ = [
    "OPEN_FACE_FAMILY",
    "PLAY_COMMANDS",
    "decide_table",
    "read_recorded_rules",
    "recorded_rules",
    "require_play",
]

OPEN_FACE_FAMILY = "open_face"


SERIES_LENGTH_KEY = "series_length"


def recorded_rules(rules: OpenFaceRules, seat_count: int) -> dict[str, Any]:
    """The rule set as ``TableCreated`` records it: the family's name, its parameters, and the
    frame's ``series_length``: a set counts as many deals as seats (001), the deals after which
    the button stayed for a Fantasyland not counted (``set_is_over``)."""
    return {FAMILY_KEY: OPEN_FACE_FAMILY, **rules.to_dict(), SERIES_LENGTH_KEY: seat_count}


def read_recorded_rules(recorded: Mapping[str, Any]) -> OpenFaceRules:
    """A recorded open-face rule set read back (the family key already left out): the frame's
    ``series_length`` follows from the seat count, the rest is ``OpenFaceRules``, strictly."""
    return OpenFaceRules.from_dict(
        {key: value for key, value in recorded.items() if key != SERIES_LENGTH_KEY}
    )


def decide_table(state: OpenFaceTable, command: Any) -> list[Event]:
    """The events a command produces on this open-face table, or a ``DomainError``."""
    handler = _DECIDERS.get(type(command))
    if handler is None:
        raise DomainError(Reason.INVALID_ARGUMENT, f"unknown command {type(command).__name__}")
    if not isinstance(command, CreateOpenFaceTable) and state.table_id is None:
        raise DomainError(Reason.TABLE_NOT_CREATED, "the table does not exist")
    return handler(state, command)


def _require_phase(state: OpenFaceTable, *phases: OpenFaceTablePhase) -> None:
    if state.phase in phases:
        return
    if state.phase is OpenFaceTablePhase.SERIES_COMPLETE:
        raise DomainError(Reason.SERIES_COMPLETE, "the set is over; the table is closed")
    wanted = " or ".join(phase.value for phase in phases)
    raise DomainError(
        Reason.WRONG_PHASE, f"the table is in phase {state.phase.value}; this needs {wanted}"
    )


def _seat_for(state: OpenFaceTable, player_id: str) -> int:
    seat = state.seat_of(player_id)
    if seat is None:
        raise DomainError(Reason.NOT_SEATED, "you do not hold a seat at this table")
    return seat


def _decide_create(state: OpenFaceTable, command: CreateOpenFaceTable) -> list[Event]:
    if state.table_id is not None:
        raise DomainError(Reason.TABLE_EXISTS, "the table already exists")
    rules = command.rules
    require_seat_count(rules.min_seats, rules.max_seats, rules.name, command.seat_count)
    require_hash_size(command.lot_commitment, "lot commitment")
    return [
        TableCreated(
            table_id=str(command.table_id),
            rule_set=recorded_rules(rules, command.seat_count),
            seat_count=command.seat_count,
            lot_commitment=command.lot_commitment.hex(),
            created_by=command.created_by,
        )
    ]


def _decide_seat(state: OpenFaceTable, command: SeatPlayer) -> list[Event]:
    return decide_seating(state.seats, command.player_id, command.seat)


def _decide_choose_dealer(state: OpenFaceTable, command: ChooseDealer) -> list[Event]:
    _require_phase(state, OpenFaceTablePhase.AWAITING_DEALER)
    assert state.table_id is not None
    return decide_dealer_lot(
        state.table_id, state.lot_commitment, state.seat_count, command.lot_seed
    )


def _decide_start_deal(state: OpenFaceTable, command: StartDeal) -> list[Event]:
    _require_phase(state, OpenFaceTablePhase.BETWEEN_DEALS)
    require_hash_size(command.seed_commitment, "seed commitment")
    if state.dealer is None:
        dealer = state.first_dealer
    elif state.button_stays:
        # 001: when a Fantasyland follows, the button does not move.
        dealer = state.dealer
    else:
        dealer = fairness.left_of(state.dealer, state.seat_count)
    assert dealer is not None
    return [
        DealStarted(
            deal_number=state.deal_number + 1,
            dealer=dealer,
            seed_commitment=command.seed_commitment.hex(),
        )
    ]


def _decide_contribute(state: OpenFaceTable, command: ContributeEntropy) -> list[Event]:
    seat = _seat_for(state, command.player_id)
    _require_phase(state, OpenFaceTablePhase.AWAITING_CUT)
    contributed = state.contributions[seat] is not None
    return decide_entropy(state.deal_number, seat, contributed, command.entropy)


def _decide_cut(state: OpenFaceTable, command: CutDeck) -> list[Event]:
    seat = _seat_for(state, command.player_id)
    _require_phase(state, OpenFaceTablePhase.AWAITING_CUT)
    assert state.dealer is not None
    return decide_cut_at(state.deal_number, state.dealer, state.seat_count, seat, command.position)


def _decide_play(state: OpenFaceTable, command: Any) -> list[Event]:
    return decide_deal(require_play(state), command)


def require_play(state: OpenFaceTable) -> OpenFaceDeal:
    """The deal being played, for a command of its play (refused outside phase ``PLAYING``)."""
    _require_phase(state, OpenFaceTablePhase.PLAYING)
    assert state.play is not None
    return state.play


def _decide_reveal_seed(state: OpenFaceTable, command: RevealSeed) -> list[Event]:
    _require_phase(state, OpenFaceTablePhase.AWAITING_SEED)
    play = state.play
    assert state.table_id is not None and play is not None and state.cut_position is not None
    require_seed_size(command.seed, "seed")
    number = state.deal_number
    if fairness.seed_commitment(state.table_id, number, command.seed) != state.seed_commitment:
        raise DomainError(
            Reason.SEED_MISMATCH, "the seed does not match the commitment published for this deal"
        )
    streets = dealt_streets(state, command.seed)
    opened = _open_timed_out_fantasylands(play, streets)
    for event in opened:
        play = evolve_deal(play, event)
    for seat in play.seats:
        dealt = {card for street in streets for card in street[seat]}
        if not set(play.boards[seat].cards) <= dealt:
            # Every placement was checked against the cards the application dealt from this
            # seed; a board holding others means the seed is not the deal's.
            raise DomainError(
                Reason.SEED_MISMATCH, f"seat {seat}'s rows hold cards this seed did not deal it"
            )
    try:
        score = score_open_face_deal(play.rules, play.boards, dead_seats(play))
    except PlacementError as error:  # pragma: no cover - every board is complete here
        raise DomainError(Reason.INVALID_ARGUMENT, str(error)) from None
    series_totals = add_totals(state.series_totals, score.totals)
    events: list[Event] = [
        *opened,
        SeedRevealed(deal_number=number, seed=command.seed.hex()),
        DealScored(
            deal_number=number,
            pairs=tuple(
                PairScored(seat_a=pair.seat_a, seat_b=pair.seat_b, rows=pair.rows, delta=pair.delta)
                for pair in score.pairs
            ),
            totals=score.totals,
            fouls=tuple(hand.dead for hand in score.hands),
            arrangements=tuple(
                "|".join(format_cards(row) for row in board.rows) for board in play.boards
            ),
            series_totals=series_totals,
            solver_arrangements=None,
        ),
    ]
    after = next_deal(play, state.fantasylands_in_a_row)
    if set_progress(state, play, after).over:
        events.append(
            SeriesCompleted(
                deals_played=number - state.deals_voided,
                standings=tuple(
                    SeatStanding(seat=standing.seat, total=standing.total, place=standing.place)
                    for standing in standings(series_totals)
                ),
            )
        )
    return events


def _open_timed_out_fantasylands(
    play: OpenFaceDeal, streets: tuple[tuple[tuple[Card, ...], ...], ...]
) -> list[Event]:
    """The Fantasyland hands the service took over after a timeout (``FantasylandTimedOut``),
    set from the cards the seed dealt them by the rule set's ``timeout_policy`` and opened with
    the seed (``nonce`` empty: no commitment was made)."""
    opened: list[Event] = []
    for seat in play.seats:
        if not play.is_fantasyland(seat) or play.revealed[seat] or not play.timed_out[seat]:
            continue
        dealt = streets[0][seat]
        setting = fantasyland_timeout_setting(play.rules, dealt)
        checked = verify_fantasyland_arrangement(dealt, setting.arrangement, play.rules)
        rows = setting.arrangement
        opened.append(
            FantasylandRevealed(
                deal_number=play.number,
                seat=seat,
                front=tuple(map(str, rows.front)),
                middle=tuple(map(str, rows.middle)),
                back=tuple(map(str, rows.back)),
                discards=tuple(map(str, checked.discards)),
                nonce="",
                # A hand committed and never opened is dead (docs/rules.md §8.7): these rows
                # only give it a board to score, as dead.
                dead=checked.dead or play.commitments[seat] is not None,
            )
        )
    return opened


def _decide_void(state: OpenFaceTable, command: VoidDeal) -> list[Event]:
    """Void the deal in progress, as the closed game does (``sapsam.domain.table_void``): no
    score, no total changes, its seed published in ``DealVoided``. An open-face deal is then
    dealt again by the same dealer (the button stays, so each seat still deals once in the
    set) and nothing it decided counts: the Fantasylands, the hands dead for the set and the
    set's end stand as the last scored deal left them."""
    reason = command.reason
    require_void_reason(reason)
    if command.deal_number is not None and command.deal_number != state.deal_number:
        raise DomainError(
            Reason.WRONG_DEAL,
            f"deal {command.deal_number} is not the current deal ({state.deal_number})",
        )
    _require_phase(
        state,
        OpenFaceTablePhase.AWAITING_CUT,
        OpenFaceTablePhase.PLAYING,
        OpenFaceTablePhase.AWAITING_SEED,
    )
    assert state.table_id is not None
    require_seed_size(command.seed, "seed")
    number = state.deal_number
    if fairness.seed_commitment(state.table_id, number, command.seed) != state.seed_commitment:
        raise DomainError(
            Reason.SEED_MISMATCH, "the seed does not match the commitment published for this deal"
        )
    return [DealVoided(deal_number=number, reason=reason, seed=command.seed.hex())]


def _decide_replace(state: OpenFaceTable, command: ReplaceSeat) -> list[Event]:
    """Give a seat to another player between deals, after the first, as the closed game does
    (``sapsam.domain.table_replace``). The seat keeps its totals and a Fantasyland it earned
    (the button already stayed for it); a hand a timeout declared dead for the set (001) was
    the previous player's penalty and ends with them."""
    require_seat_index(command.seat, state.seat_count)
    if state.phase is not OpenFaceTablePhase.BETWEEN_DEALS or not state.deal_number:
        raise DomainError(
            Reason.WRONG_PHASE,
            "a seat's player can be replaced only between deals, after the first deal; the"
            f" table is {state.phase.value}",
        )
    if state.seat_of(command.player_id) is not None:
        raise DomainError(Reason.ALREADY_SEATED, "that player already holds a seat here")
    previous = state.seats[command.seat]
    assert previous is not None  # every seat is taken once a deal has started
    return [
        SeatReplaced(seat=command.seat, previous_player_id=previous, player_id=command.player_id)
    ]


PLAY_COMMANDS: frozenset[type[Any]] = frozenset(
    (
        DealStreet,
        PlaceCards,
        PlaceForSeat,
        CommitFantasyland,
        RevealFantasyland,
        RevealDiscards,
        TimeOutDiscards,
        TimeOutFantasyland,
    )
)
"""The commands of a deal's play, which ``deal_decide`` decides (in phase ``PLAYING``)."""

_DECIDERS: dict[type[Any], Callable[[OpenFaceTable, Any], list[Event]]] = {
    CreateOpenFaceTable: _decide_create,
    SeatPlayer: _decide_seat,
    ChooseDealer: _decide_choose_dealer,
    StartDeal: _decide_start_deal,
    ContributeEntropy: _decide_contribute,
    CutDeck: _decide_cut,
    **dict.fromkeys(PLAY_COMMANDS, _decide_play),
    RevealSeed: _decide_reveal_seed,
    VoidDeal: _decide_void,
    ReplaceSeat: _decide_replace,
}
