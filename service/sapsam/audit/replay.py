"""Replay an export: the table as it stood after each event, and what each seat could see. Pure.

The table state after each event is the domain's own fold (``sapsam.domain.table.evolve``) of the
exported events. The cards: the log never holds a hand; offline, the hands of a deal can be
recomputed only from its published seed (``SeedRevealed``). For a finished deal the replay shows
each seat's hand from the moment it was dealt, labelled as seen by that seat only, until the seat
reveals its arrangement or the seed is revealed, after which everyone can see it. For a deal still
being played the hands are not computable and the replay says so. The frames are written as text
by ``sapsam.audit.replay_rendering``.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sapsam import fairness
from sapsam.audit.deal_account import CardWriting
from sapsam.audit.deal_events import MALFORMED
from sapsam.audit.export_format import AuditExport
from sapsam.audit.open_face_replay import (
    fantasylands_by_deal,
    open_face_happened,
    open_face_seat_views,
    published_streets,
)
from sapsam.audit.replay_text import Teller, happened
from sapsam.domain.event_codec import DEFAULT_CODEC, EventCodec
from sapsam.domain.events import (
    DealScored,
    DealStarted,
    DealVoided,
    DeckCut,
    EntropyContributed,
    Event,
    SeatReplaced,
    SeedRevealed,
    SeriesStarted,
    TableCreated,
)
from sapsam.domain.family import CLOSED_FAMILY, family_name_of
from sapsam.domain.open_face.table_evolve import evolve_table
from sapsam.domain.open_face.table_state import INITIAL_OPEN_FACE_TABLE, OpenFaceTable
from sapsam.domain.table import INITIAL_STATE, TableState, arrangement_text, evolve
from sapsam.rules.cards import format_cards

PLAIN: Final = CardWriting()

TOTALS_FROM_EVENTS: Final = "events"
"""``ReplayFrame.totals_from`` when the running totals are folded from every event since the
table opened."""
TOTALS_UNKNOWN: Final = "unknown"
"""``ReplayFrame.totals_from`` when the export cannot tell the running totals."""


@dataclass(frozen=True)
class SeatView:
    """One seat at one moment: who sits there, how far it is, and its cards as far as known."""

    seat: int
    player: str | None
    status: str
    cards: str | None
    """The seat's 13 dealt cards (card notation), when they can be known offline."""
    seen_by: str
    """Who could see ``cards`` at that moment: ``nobody``, ``seat N only`` or ``everyone``."""
    arrangement: str | None
    """The revealed rows ``front|middle|back``, public from the reveal on."""
    series_total: int | None
    """The seat's running total in the series after the event; None when the export cannot
    tell (events before it are missing and no score record in it states the totals)."""
    played_by: str | None = None
    """The player who held the seat for the deal shown, when another holds it now (the operator
    gave the seat away after the deal: ``SeatReplaced``); None otherwise."""


@dataclass(frozen=True)
class ReplayFrame:
    """The table right after one event."""

    version: int
    position: int
    event_type: str
    actor: str
    recorded_at: str
    happened: str
    phase: str
    deal_number: int | None
    dealer: int | None
    seats: tuple[SeatView, ...]
    series_number: int | None = None
    """The series being played, at a table created with ``after_series = new_series``."""
    totals_from: str = TOTALS_FROM_EVENTS
    """Where the seats' running totals come from: :data:`TOTALS_FROM_EVENTS` (the exported
    events, every one since the table opened), ``"deal N's score"`` (a deal export: the deals
    before N are not in it, so the totals before deal N are its ``DealScored`` series totals less
    its own; the verifier's ``series_totals`` check is then *not covered*) or
    :data:`TOTALS_UNKNOWN`."""

    def to_dict(self) -> dict[str, Any]:
        """Plain values for JSON output."""
        return {
            "version": self.version,
            "position": self.position,
            "event_type": self.event_type,
            "actor": self.actor,
            "recorded_at": self.recorded_at,
            "happened": self.happened,
            "phase": self.phase,
            "deal_number": self.deal_number,
            "dealer": self.dealer,
            "series_number": self.series_number,
            "seats": [
                {
                    "seat": view.seat,
                    "player": view.player,
                    "status": view.status,
                    "cards": view.cards,
                    "seen_by": view.seen_by,
                    "arrangement": view.arrangement,
                    "series_total": view.series_total,
                    "played_by": view.played_by,
                }
                for view in self.seats
            ],
            "totals_from": self.totals_from,
        }


def _totals_before_deals(events: Sequence[Event]) -> dict[int, tuple[int, ...]]:
    """Each scored deal's running totals before it, as its ``DealScored`` states them: the
    series totals after it less its own totals."""
    before: dict[int, tuple[int, ...]] = {}
    for event in events:
        if isinstance(event, DealScored) and len(event.totals) == len(event.series_totals):
            before[event.deal_number] = tuple(
                after - own for after, own in zip(event.series_totals, event.totals, strict=True)
            )
    return before


@dataclass
class _RunningTotals:
    """The running totals as far as the export tells them, frame by frame.

    The fold of ``evolve`` holds the right totals only while every event since the table opened
    is there. A deal export skips the deals between the table's opening and its own: from that
    gap on, the totals are those its ``DealScored`` states (the totals before the deal: its
    series totals less its own), and unknown for a deal without one (a running deal).
    """

    before: dict[int, tuple[int, ...]]
    last_version: int = 0
    stated_by: int | None = None
    """The deal whose score record the totals rest on since a gap; None: the events."""
    gap: bool = False

    def after(
        self, version: int, event: Event, state: TableState | OpenFaceTable
    ) -> tuple[tuple[int, ...] | None, str]:
        """The totals after the event at ``version`` (folded into ``state``), and their source."""
        if version != self.last_version + 1:
            self.gap = True
            self.stated_by = None
        self.last_version = version
        if isinstance(event, SeriesStarted):  # every total is back to zero: known again
            self.gap, self.stated_by = False, None
        elif isinstance(event, DealScored) and self.gap:
            self.gap, self.stated_by = False, event.deal_number
        if not self.gap:
            source = (
                TOTALS_FROM_EVENTS if self.stated_by is None else f"deal {self.stated_by}'s score"
            )
            return state.series_totals, source
        if isinstance(state, OpenFaceTable):
            number: int | None = state.deal_number or None
        else:
            number = None if state.deal is None else state.deal.number
        if number is not None and number in self.before:
            return self.before[number], f"deal {number}'s score"
        return None, TOTALS_UNKNOWN


def _hands_by_deal(events: Sequence[Event], table_id: uuid.UUID | None) -> dict[int, list[str]]:
    """Each finished deal's dealt hands, recomputed from its published seed."""
    hands: dict[int, list[str]] = {}
    if table_id is None:
        return hands
    seat_count = 0
    started: dict[int, DealStarted] = {}
    cuts: dict[int, int] = {}
    contributions: dict[int, dict[int, bytes]] = {}
    for event in events:
        if isinstance(event, TableCreated):
            seat_count = event.seat_count
        elif isinstance(event, DealStarted):
            started[event.deal_number] = event
        elif isinstance(event, EntropyContributed):
            contributions.setdefault(event.deal_number, {})[event.seat] = bytes.fromhex(
                event.entropy
            )
        elif isinstance(event, DeckCut):
            cuts[event.deal_number] = event.position
        elif isinstance(event, (SeedRevealed, DealVoided)) and event.deal_number in started:
            # A voided deal publishes its seed in DealVoided: its hands are as computable.
            if event.deal_number not in cuts:
                continue  # voided before the cut: nothing was dealt
            number = event.deal_number
            given = contributions.get(number, {})
            try:
                dealt = fairness.hands_for_deal(
                    bytes.fromhex(event.seed),
                    tuple(given.get(seat) for seat in range(seat_count)),
                    table_id,
                    number,
                    cuts[number],
                    started[number].dealer,
                    seat_count,
                )
            except (KeyError, ValueError):
                continue  # a malformed record: the verifier names it; the replay just can't show
            hands[number] = [format_cards(hand) for hand in dealt]
    return hands


def _seat_status(state: TableState, seat: int) -> str:
    deal = state.deal
    if deal is not None and deal.voided:
        return "deal voided"
    if deal is None or deal.scored:
        return "seated" if state.seats[seat] is not None else "empty"
    if not deal.dealt:
        return "waiting for the deal"
    reveal = deal.reveals[seat]
    if reveal is not None:
        return "revealed (foul)" if reveal.foul else "revealed"
    if deal.timeouts[seat] is not None:
        return f"timed out ({deal.timeouts[seat]})"
    if deal.confirmed[seat]:
        announced = None if deal.announcements is None else deal.announcements.surrendered[seat]
        if announced is not None:  # docs/rules.md §2.8
            return "confirmed, surrenders" if announced else "confirmed, plays"
        return "confirmed"
    if deal.commitments[seat] is not None:
        return "committed"
    return "arranging"


def _seat_view(
    state: TableState,
    seat: int,
    hands: Mapping[int, list[str]],
    totals: tuple[int, ...] | None,
    deal_players: Sequence[str | None] = (),
) -> SeatView:
    deal = state.deal
    cards: str | None = None
    seen_by = "nobody"
    arrangement: str | None = None
    if deal is not None and deal.dealt:
        reveal = deal.reveals[seat]
        if reveal is not None:
            arrangement = arrangement_text(reveal.arrangement)
        known = hands.get(deal.number)
        cards = known[seat] if known is not None else None
        if deal.seed is not None or reveal is not None:
            seen_by = "everyone"
        else:
            seen_by = f"seat {seat} only"
            if cards is None:
                seen_by += " (not computable offline before the seed is revealed)"
    return SeatView(
        seat=seat,
        player=state.seats[seat],
        status=_seat_status(state, seat),
        cards=cards,
        seen_by=seen_by,
        arrangement=arrangement,
        series_total=None if totals is None or seat >= len(totals) else totals[seat],
        played_by=(
            deal_players[seat]
            if deal is not None
            and seat < len(deal_players)
            and deal_players[seat] != state.seats[seat]
            else None
        ),
    )


class ReplayError(ValueError):
    """The export cannot be replayed: an event cannot be read or folded (verify it to see why)."""


def replay(
    export: AuditExport, codec: EventCodec = DEFAULT_CODEC, writing: CardWriting = PLAIN
) -> list[ReplayFrame]:
    """One frame per exported event, in order, what happened told with the display names the
    export carries and cards written with ``writing`` (``sapsam.audit.replay_text``). Raises
    ``ReplayError`` for an event that cannot be read or folded (verify the export first to learn
    what is wrong with it)."""
    try:
        return _replay(export, codec, Teller(dict(export.header.display_names), writing))
    except (*MALFORMED, AssertionError) as error:
        # evolve trusts the log's order (it asserts a deal exists); a forged order trips it.
        raise ReplayError(f"{type(error).__name__}: {error}") from None


def _replay(export: AuditExport, codec: EventCodec, teller: Teller) -> list[ReplayFrame]:
    decoded = [codec.decode(e.type, e.schema_version, e.data) for e in export.events]
    created = next((event for event in decoded if isinstance(event, TableCreated)), None)
    if created is not None and family_name_of(created.rule_set) != CLOSED_FAMILY:
        return _open_face_replay(export, decoded, teller)
    table_id = uuid.UUID(created.table_id) if created is not None else None
    hands = _hands_by_deal(decoded, table_id)
    frames: list[ReplayFrame] = []
    state = INITIAL_STATE
    running = _RunningTotals(_totals_before_deals(decoded))
    deal_players: tuple[str | None, ...] = ()  # who held each seat when the deal started
    earlier: dict[int, list[str]] = {}  # the players who held a seat before its holder now
    for exported, event in zip(export.events, decoded, strict=True):
        state = evolve(state, event)
        totals, totals_from = running.after(exported.version, event, state)
        deal = state.deal
        if isinstance(event, DealStarted):
            deal_players = state.seats
        elif isinstance(event, SeatReplaced):
            earlier.setdefault(event.seat, []).append(event.previous_player_id)
        actor = str(exported.metadata.get("actor", ""))
        frames.append(
            ReplayFrame(
                version=exported.version,
                position=exported.position,
                event_type=exported.type,
                actor=actor,
                recorded_at=str(exported.metadata.get("recorded_at", "")),
                happened=happened(event, state, actor, teller, earlier),
                phase=state.phase.value,
                deal_number=None if deal is None else deal.number,
                dealer=None if deal is None else deal.dealer,
                seats=tuple(
                    _seat_view(state, seat, hands, totals, deal_players)
                    for seat in range(state.seat_count)
                ),
                series_number=state.series_number if state.after_series == "new_series" else None,
                totals_from=totals_from,
            )
        )
    return frames


def _open_face_replay(
    export: AuditExport, decoded: Sequence[Event], teller: Teller
) -> list[ReplayFrame]:
    """An open-face table's frames (``sapsam.audit.open_face_replay``): its own fold, each
    seat's cards dealt so far once the deal's seed is published, its rows as placed."""
    streets = published_streets(decoded)
    fantasylands = fantasylands_by_deal(decoded)
    frames: list[ReplayFrame] = []
    state = INITIAL_OPEN_FACE_TABLE
    running = _RunningTotals(_totals_before_deals(decoded))
    deal_players: tuple[str | None, ...] = ()
    earlier: dict[int, list[str]] = {}
    for exported, event in zip(export.events, decoded, strict=True):
        known = fantasylands.get(getattr(event, "deal_number", 0))
        if isinstance(event, DealStarted) and known is not None and len(known) == state.seat_count:
            # A deal export lacks the deals that earned its Fantasylands: its own first street
            # shows them (the same as the fold's in a whole-table export).
            state = dataclasses.replace(state, next_fantasyland=known)
        state = evolve_table(state, event)
        totals, totals_from = running.after(exported.version, event, state)
        if isinstance(event, DealStarted):
            deal_players = state.seats
        elif isinstance(event, SeatReplaced):
            earlier.setdefault(event.seat, []).append(event.previous_player_id)
        actor = str(exported.metadata.get("actor", ""))
        seats: list[SeatView] = []
        for seat in range(state.seat_count):
            status, cards, seen_by, rows = open_face_seat_views(state, seat, streets)
            before = deal_players[seat] if seat < len(deal_players) else None
            seats.append(
                SeatView(
                    seat=seat,
                    player=state.seats[seat],
                    status=status,
                    cards=cards,
                    seen_by=seen_by,
                    arrangement=rows,
                    series_total=None if totals is None or seat >= len(totals) else totals[seat],
                    played_by=before
                    if state.play is not None and before != state.seats[seat]
                    else None,
                )
            )
        frames.append(
            ReplayFrame(
                version=exported.version,
                position=exported.position,
                event_type=exported.type,
                actor=actor,
                recorded_at=str(exported.metadata.get("recorded_at", "")),
                happened=open_face_happened(event, state, actor, teller, earlier),
                phase=state.phase.value,
                deal_number=state.deal_number or None,
                dealer=state.dealer,
                seats=tuple(seats),
                totals_from=totals_from,
            )
        )
    return frames


def frame_at(frames: Sequence[ReplayFrame], version: int) -> ReplayFrame | None:
    """The table as it stood at ``version``: the frame of the last event at or before it."""
    chosen = None
    for frame in frames:
        if frame.version <= version:
            chosen = frame
    return chosen
