"""The state of one open-face deal's play, as its events describe it, and the phase derived.

A deal opens (``open_deal``) with what the table's frame knows when it starts: the table, who
holds each seat, the rule set, the deal's number and dealer, and which seats play a Fantasyland
hand this deal (the previous deal earned it; ``sapsam.rules.open_face.fantasyland``). From then
on only its events change it: streets dealt, cards placed, Fantasyland hands committed and
revealed. Frozen records only; ``deal_evolve`` builds them, ``deal_decide`` reads them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from enum import StrEnum

from sapsam.fairness.open_face_deal import street_schedule
from sapsam.rules.cards import Card
from sapsam.rules.open_face.board import Board
from sapsam.rules.open_face.parameters import OpenFaceRules

__all__ = ["OpenFaceDeal", "OpenFacePhase", "open_deal"]


class OpenFacePhase(StrEnum):
    """What an open-face deal waits for next."""

    DEALING = "DEALING"
    """The next street is due (the first one, or the next once every normal seat placed)."""
    PLACING = "PLACING"
    """A normal seat places its cards of the street (``OpenFaceDeal.turn``)."""
    FANTASYLAND = "FANTASYLAND"
    """Every normal hand is complete; a Fantasyland hand is still to be committed or revealed."""
    DISCARDS = "DISCARDS"
    """Every hand is finished; a Pineapple seat is still to open the discards it committed."""
    COMPLETE = "COMPLETE"
    """Every hand is finished: the frame reveals the seed (opening a Fantasyland hand the
    service set after a timeout) and scores the deal."""


@dataclass(frozen=True)
class OpenFaceDeal:
    """One deal's play: everything public about it, as the log tells it."""

    table_id: uuid.UUID
    players: tuple[str, ...]
    rules: OpenFaceRules
    number: int
    dealer: int
    fantasyland: tuple[int | None, ...]
    """Per seat, the cards it gets at once as a Fantasyland hand, or None for a normal hand."""
    schedule: tuple[tuple[int, ...], ...]
    """``schedule[street][seat]``: the cards each seat receives on each street."""
    streets_dealt: int = 0
    boards: tuple[Board, ...] = ()
    """Each normal seat's rows so far, face up (empty for a Fantasyland seat until revealed)."""
    placed: tuple[bool, ...] = ()
    """Per seat, whether it has placed its cards of the last street dealt (or had none)."""
    commitments: tuple[bytes | None, ...] = ()
    """Per Fantasyland seat, its commitment once made."""
    revealed: tuple[bool, ...] = ()
    """Per Fantasyland seat, whether its hand was opened."""
    dead: tuple[bool, ...] = ()
    """Per seat, whether its revealed Fantasyland hand is out of order."""
    declared_dead: tuple[bool, ...] = ()
    """Per seat, whether its hand is dead whatever its rows (001's timeout: for the set)."""
    automatic: tuple[bool, ...] = ()
    """Per seat, whether every move left in this hand is made for it (after a timeout)."""
    move_seconds: int | None = None
    """Seconds a street's placements may take (None: no limit); the frame sets it."""
    deadline_ms: int | None = None
    """When the last street's placements are due."""
    fantasyland_deadline_ms: int | None = None
    """When every Fantasyland hand must be set (the first street's deadline), or None."""
    timed_out: tuple[bool, ...] = ()
    """Per seat, whether its time ran out in this deal: a placement made for it after its
    deadline, or a Fantasyland hand not set in time (``FantasylandTimedOut``)."""
    deadline_set_ms: int | None = None
    """When ``deadline_ms`` was set (its ``move_seconds`` before it; the end of the outage
    after a ``DeadlinesExtended``): an outage counts only for a deadline already running
    (``sapsam.domain.table_deadlines``)."""
    fantasyland_deadline_set_ms: int | None = None
    """When ``fantasyland_deadline_ms`` was set, likewise."""
    reveals_open: bool = False
    """Whether ``FantasylandRevealsOpened`` was recorded (the committed hands are to be opened)."""
    reveal_deadline_ms: int | None = None
    """By when the committed Fantasyland hands must be opened, or None (no limit)."""
    reveal_deadline_set_ms: int | None = None
    """When ``reveal_deadline_ms`` was set, likewise."""
    discard_commitments: tuple[tuple[tuple[int, bytes], ...], ...] = ()
    """Per seat, its Pineapple discards committed so far: (street, commitment), street order."""
    discards: tuple[tuple[tuple[int, tuple[Card, ...]], ...] | None, ...] = ()
    """Per seat, its discards once opened: (street, cards); None until then."""
    discards_made: tuple[int, ...] = ()
    """Per seat, how many cards it has discarded (its own moves and those made for it): what
    the others may know before the end ("a card was discarded")."""

    def awaits_discards(self, seat: int) -> bool:
        """Whether ``seat`` committed discards it has not opened yet."""
        return bool(self.discard_commitments[seat]) and self.discards[seat] is None

    @property
    def seat_count(self) -> int:
        return len(self.players)

    def is_fantasyland(self, seat: int) -> bool:
        return self.fantasyland[seat] is not None

    @property
    def streets_due(self) -> int:
        """The streets this deal deals: the rule set's, or only the first when every seat
        plays a Fantasyland hand (it gets all its cards at once)."""
        if all(cards is not None for cards in self.fantasyland):
            return 1
        return len(self.schedule)

    @property
    def turn(self) -> int | None:
        """The seat that places now: the first, clockwise from the dealer's left, that has not
        placed its cards of the street (001: placements in turn); None when nobody owes one."""
        if self.streets_dealt == 0:
            return None
        for step in range(1, self.seat_count + 1):
            seat = (self.dealer + step) % self.seat_count
            if not self.placed[seat]:
                return seat
        return None

    @property
    def fantasyland_hidden(self) -> bool:
        """Whether a Fantasyland hand is still being set: the others' placements are then shown
        to their own seats only (001: online, the others place while the Fantasyland hand is
        set, their placements hidden until it is committed)."""
        return any(self.fantasyland_unset(seat) for seat in range(self.seat_count))

    @property
    def reveals_due(self) -> bool:
        """Whether the committed Fantasyland hands may (and must) be opened now: every normal
        hand complete and every Fantasyland hand set."""
        return self.phase is OpenFacePhase.FANTASYLAND and not self.fantasyland_hidden

    def awaits_reveal(self, seat: int) -> bool:
        """Whether ``seat`` plays a Fantasyland hand its player has still to set or open (a hand
        the service took over after a timeout is opened with the seed, not by the player)."""
        return self.is_fantasyland(seat) and not self.revealed[seat] and not self.timed_out[seat]

    def fantasyland_unset(self, seat: int) -> bool:
        """Whether ``seat`` plays a Fantasyland hand not yet set: neither committed nor taken
        over by the service after a timeout."""
        return (
            self.is_fantasyland(seat)
            and self.commitments[seat] is None
            and not self.timed_out[seat]
        )

    @property
    def phase(self) -> OpenFacePhase:
        """Derived from the facts, so it can never disagree with them."""
        if self.streets_dealt == 0:
            return OpenFacePhase.DEALING
        if self.turn is not None:
            return OpenFacePhase.PLACING
        if self.streets_dealt < self.streets_due:
            return OpenFacePhase.DEALING
        if any(self.awaits_reveal(seat) for seat in self.seats):
            return OpenFacePhase.FANTASYLAND
        if any(self.awaits_discards(seat) for seat in self.seats):
            return OpenFacePhase.DISCARDS
        return OpenFacePhase.COMPLETE

    @property
    def seats(self) -> range:
        return range(self.seat_count)

    def seat_of(self, player_id: str) -> int | None:
        for seat, holder in enumerate(self.players):
            if holder == player_id:
                return seat
        return None


def open_deal(
    table_id: uuid.UUID,
    players: tuple[str, ...],
    rules: OpenFaceRules,
    number: int,
    dealer: int,
    fantasyland: tuple[int | None, ...],
    move_seconds: int | None = None,
    dead_for_set: tuple[bool, ...] | None = None,
) -> OpenFaceDeal:
    """A deal's state when it starts, before its first street; ``dead_for_set`` names the seats
    whose hands a timeout declared dead for the rest of the set (001). Raises ``ValueError``
    for a Fantasyland schedule the deck cannot deal (``sapsam.fairness.open_face_deal``)."""
    seats = len(players)
    dead = (False,) * seats if dead_for_set is None else dead_for_set
    if len(fantasyland) != seats:
        raise ValueError(f"fantasyland covers {len(fantasyland)} seats, not {seats}")
    return OpenFaceDeal(
        table_id=table_id,
        players=players,
        rules=rules,
        number=number,
        dealer=dealer,
        fantasyland=fantasyland,
        schedule=street_schedule(rules.dealt_street_cards, fantasyland),
        boards=(Board(),) * seats,
        placed=(True,) * seats,
        commitments=(None,) * seats,
        revealed=(False,) * seats,
        dead=(False,) * seats,
        declared_dead=dead,
        automatic=dead,
        move_seconds=move_seconds,
        timed_out=(False,) * seats,
        discard_commitments=((),) * seats,
        discards=(None,) * seats,
        discards_made=(0,) * seats,
    )
