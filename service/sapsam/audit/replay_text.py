"""What ``sapsam audit replay`` says happened at each event, in sentences a player reads.

Seats are named by their players' display names where the export carries one (``Ann (seat 0)``),
else by number; the ids those names stand for head the replay (``sapsam.audit.deal_account``'s
``player_lines``), so no sentence needs a raw id. Cards are written as ``sapsam-play`` writes them
(strongest first, with the reader's suit symbols and colour). An event the operator recorded (a
forced timeout, a void, a replacement) says so: the event's ``actor`` is ``operator``. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from sapsam.audit.deal_account import CardWriting
from sapsam.audit.deal_account_facts import FOUL_WORDS
from sapsam.audit.natural_account import tell_natural
from sapsam.audit.surrender_checks import tell_announcement
from sapsam.domain.events import (
    AnnouncementsOpened,
    ArrangementCommitted,
    ArrangementRevealed,
    CardsDealt,
    DeadlinesExtended,
    DealerChosen,
    DealScored,
    DealStarted,
    DealVoided,
    DeckCut,
    EntropyContributed,
    Event,
    PlayerSeated,
    RevealsOpened,
    SeatConfirmed,
    SeatReplaced,
    SeatTimedOut,
    SeedRevealed,
    SeriesCompleted,
    SeriesStarted,
    SurrenderAnnounced,
    TableCreated,
)
from sapsam.domain.table import TableState
from sapsam.plurals import plural
from sapsam.rules.hand_text import cards_shown

PLAIN: Final = CardWriting()
OPERATOR: Final = "operator"
"""The actor of the operator's commands (``sapsam.app.operator_commands.OPERATOR``)."""
STAGE_WORDS: Final = {"arranging": "arranging", "revealing": "reveal", "announcing": "announcing"}
FORCED_WHEN: Final = {"arranging": "while it was arranging", "revealing": "before it revealed"}
EXTENDED_BECAUSE: Final = {
    "server_restart": "it fell while no server was serving (server restart)",
    "database_outage": "it fell while no server was serving (database outage)",
    "tournament_paused": "it fell while the operator had paused the tournament",
}


@dataclass(frozen=True)
class Teller:
    """What the sentences need besides the event: the players' display names (by player id)
    and how to write cards."""

    names: Mapping[str, str]
    writing: CardWriting = PLAIN

    def player(self, player_id: str) -> str:
        """A player: its display name, else its id."""
        return self.names.get(player_id) or f"player {player_id}"

    def seat(self, state: TableState, seat: int) -> str:
        """A seat as its player then: ``Ann (seat 0)``, or ``seat 0`` without a name."""
        player = state.seats[seat] if 0 <= seat < len(state.seats) else None
        name = self.names.get(player) if player is not None else None
        return f"{name} (seat {seat})" if name else f"seat {seat}"

    def seats(self, state: TableState, seats: Sequence[int]) -> str:
        return ", ".join(self.seat(state, seat) for seat in seats)

    def cards(self, cards: Sequence[str]) -> str:
        """Cards as ``sapsam-play`` shows them; as recorded when they do not parse (a forgery)."""
        try:
            return cards_shown(
                list(cards), symbols=self.writing.symbols, colour=self.writing.colour
            )
        except ValueError:
            return " ".join(cards)

    def totals(self, state: TableState, totals: Sequence[int]) -> str:
        return ", ".join(
            f"{self.seat(state, seat)} {total:+d}" for seat, total in enumerate(totals)
        )


def happened(
    event: Event,
    state: TableState,
    actor: str,
    teller: Teller,
    earlier: Mapping[int, Sequence[str]] | None = None,
) -> str:
    """The event in words; ``state`` is the table right after it, ``actor`` who recorded it,
    ``earlier`` the players who held a seat before its player now (``SeatReplaced``: the
    seat's total holds their points too)."""
    told = _opening(event, state, teller)
    if told is None:
        told = _deal(event, state, actor, teller)
    if told is None:
        told = _ending(event, state, teller, earlier or {})
    return event.TYPE if told is None else told


def _opening(event: Event, state: TableState, teller: Teller) -> str | None:
    if isinstance(event, TableCreated):
        rules = state.rule_set
        after = ", a new series after each" if event.after_series == "new_series" else ""
        creator = (
            "the operator" if event.created_by == OPERATOR else teller.player(event.created_by)
        )
        return (
            f"{creator} created the table: {event.seat_count} seats, rule set {rules.name!r},"
            f" a series of {plural(rules.series_length, 'deal')}{after}"
        )
    if isinstance(event, PlayerSeated):
        return f"{teller.player(event.player_id)} sat down at seat {event.seat}"
    if isinstance(event, DealerChosen):
        drawn = ", ".join(
            f"{teller.seat(state, seat)} drew {teller.cards([card])}"
            for seat, card in enumerate(event.lot_cards)
        )
        return f"the lot: {drawn}; {teller.seat(state, event.dealer)} deals first"
    if isinstance(event, SeatReplaced):
        return (
            f"the operator gave seat {event.seat} to {teller.player(event.player_id)} (it was"
            f" {teller.player(event.previous_player_id)}'s) from the next deal on; the seat's"
            " series total carries on"
        )
    return None


def _deal(event: Event, state: TableState, actor: str, teller: Teller) -> str | None:
    def who(seat: int) -> str:
        return teller.seat(state, seat)

    if isinstance(event, DealStarted):
        return (
            f"deal {event.deal_number} started, dealt by {who(event.dealer)}; the seed is"
            f" committed as {event.seed_commitment[:16]}…"
        )
    if isinstance(event, EntropyContributed):
        return f"{who(event.seat)} mixed entropy of its own into the shuffle"
    if isinstance(event, DeckCut):
        return f"{who(event.seat)} cut the deck at position {event.position}"
    if isinstance(event, CardsDealt):
        return "thirteen cards were dealt to each seat (the log holds only their digests)"
    if isinstance(event, ArrangementCommitted):
        return f"{who(event.seat)} committed to an arrangement ({event.commitment[:16]}…)"
    if isinstance(event, SeatConfirmed):
        return f"{who(event.seat)} confirmed its arrangement"
    if isinstance(event, RevealsOpened):
        return "every seat is settled: reveals are open"
    if isinstance(event, (AnnouncementsOpened, SurrenderAnnounced)):
        return tell_announcement(event, who, by_operator=actor == OPERATOR)
    told = tell_natural(event, who)
    if told is not None:
        return told
    if isinstance(event, ArrangementRevealed):
        rows = " | ".join(teller.cards(row) for row in (event.front, event.middle, event.back))
        foul = ""
        if event.foul:
            foul = f" — a foul ({FOUL_WORDS.get(event.foul_reason or '', 'a foul')})"
        return f"{who(event.seat)} revealed {rows}{foul}"
    if isinstance(event, SeatTimedOut):
        counts = "the solver sets its rows" if event.consequence == "solver" else "a foul"
        stage = STAGE_WORDS.get(event.stage, event.stage)
        if actor == OPERATOR:
            when = FORCED_WHEN.get(event.stage, f"in {event.stage}")
            return (
                f"the operator timed {who(event.seat)} out {when} (a forced timeout, not a missed"
                f" deadline): its hand counts as {counts}"
            )
        return f"{who(event.seat)} missed the {stage} deadline: its hand counts as {counts}"
    if isinstance(event, DeadlinesExtended):
        seconds = (event.deadline_ms - event.previous_deadline_ms) / 1000
        stage = event.stage
        because = EXTENDED_BECAUSE.get(event.reason, event.reason.replace("_", " "))
        return (
            f"the {stage} deadline was extended by {seconds:g} s for"
            f" {teller.seats(state, event.seats)}: {because}"
        )
    if isinstance(event, SeedRevealed):
        return "the seed was revealed: anyone can now recompute every hand of this deal"
    return None


def _ending(
    event: Event, state: TableState, teller: Teller, earlier: Mapping[int, Sequence[str]]
) -> str | None:
    if isinstance(event, DealScored):
        return (
            f"deal {event.deal_number} scored: {teller.totals(state, event.totals)}; running"
            f" totals {teller.totals(state, event.series_totals)}"
        )
    if isinstance(event, SeriesCompleted):
        places = [standing.place for standing in event.standings]
        ranked = ", ".join(
            f"{s.place}{'=' if places.count(s.place) > 1 else ''} {teller.seat(state, s.seat)}"
            f" {s.total:+d}"
            for s in sorted(event.standings, key=lambda s: (s.place, s.seat))
        )
        held = "".join(
            f"; seat {seat}'s total includes the points"
            f" {' and '.join(teller.player(player) for player in players)} scored there before"
            for seat, players in sorted(earlier.items())
        )
        return f"the series is complete after {plural(event.deals_played, 'deal')}: {ranked}{held}"
    if isinstance(event, SeriesStarted):
        dealer = state.next_dealer
        by = (
            ""
            if dealer is None
            else f", dealt by {teller.seat(state, dealer)} (the deal keeps passing left)"
        )
        return (
            f"series {event.series_number} started: every total is back to zero; deal"
            f" {event.first_deal_number} comes next{by}"
        )
    if isinstance(event, DealVoided):
        return (
            f"the operator voided deal {event.deal_number} ({event.reason}): nobody scores, and"
            f" the deal does not count towards the series; its seed, published now"
            f" ({event.seed[:16]}…), lets anyone recompute the hands it dealt"
        )
    return None
