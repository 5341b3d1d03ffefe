"""``sapsam-play`` at an open-face table (issues #18, #19): every seat's rows as they fill, the
person's own dealt cards, the solver's suggestion on request, Fantasyland, Pineapple's discards.

The session follows the table's ``WatchTable`` stream and, after each event, reads the table
(``GetTable``, whose public ``open_face`` view says whose turn it is) to make the move that falls
to the person's seat. The dealer, cut and entropy steps are the closed game's
(:meth:`sapsam_client.seat.Seat.act`). On the person's turn the screen shows every seat's rows
(one line a seat: front | middle | back, ``__`` for a place still empty; a seat's rows the
person may not see yet, while a Fantasyland hand is set, shown as hidden), then the cards dealt
on this street, each with a number, and asks where each goes: one letter per card in the order
shown (``f`` front, ``m`` middle, ``b`` back), e.g. ``bbmmf``. ``hint`` shows the solver's
suggestion (``sapsam.rules.open_face.solver``, seeded by the table, deal and street, so the same
street always gets the same hint); ``s`` takes it; ``?`` lists the commands. A placement is
final: the person confirms it when it kills the hand (the rows can no longer end in order).

A Fantasyland hand (13 to 16 cards at once) is set as three rows of cards typed one row at a time
(front, middle, back; the cards left over are discarded), or ``s`` for the suggested setting; it
is committed as a hash only (scheme 2, :func:`sapsam_client.commitment.arrangement_commitment`),
its rows and nonce kept on disk first (``commitments.json``, as for the closed game's
arrangements), so a session restarted before the end of the deal still opens it
(``RevealFantasyland``) once every other hand is complete.

At Pineapple (issue #19) each street after the first shows the 3 cards to choose from; the
person types ``x`` for the one it discards, which is committed as a hash (its nonce kept beside
the other commitments) and shown to the person alone (``your discards so far``); the others see
only a count (``2 discarded``) and "discarded a card face down" until the deal's end, when the
session opens its discards (``RevealDiscards``, signed) and every seat's are told.

While another seat is on turn (or a Fantasyland hand is still to be set or opened, or discards
to be opened) a status says whom the table waits for, with the move's deadline counted down
(``sapsam_client.open_face_status``, as the closed game's play shows it); on its own turn the
person is told how long it has. Other seats' placements, Fantasyland
commitments, openings and timeouts are told as they happen;
each deal's score shows every seat's rows, ``DEAD`` for a dead hand, and the set totals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from sapsam_client.client import Client
from sapsam_client.commitment import Rows, arrangement_commitment, fresh_nonce
from sapsam_client.connection import deal_number
from sapsam_client.discards import DiscardKeeper
from sapsam_client.errors import SapsamError
from sapsam_client.open_face_moves import OpenFaceMoves, hint_seed
from sapsam_client.open_face_status import OpenFaceWaiting, deadline_of, time_left_text
from sapsam_client.open_face_text import (
    board_lines,
    event_lines,
    placement_from_letters,
    street_from_letters,
)
from sapsam_client.prompts import Terminal
from sapsam_client.results_text import label, seat_labels
from sapsam_client.seat import Seat
from sapsam_client.seat_types import Commitment, CommitmentKeeper
from sapsam_proto.v1 import open_face_pb2, table_event_pb2, table_pb2

__all__ = [
    "OpenFaceMoves",
    "OpenFacePlayer",
    "board_lines",
    "event_lines",
    "hint_seed",
    "is_open_face",
    "placement_from_letters",
    "street_from_letters",
]

FANTASYLAND_SCHEME: Final = 2


def is_open_face(table: table_pb2.Table) -> bool:
    """Whether ``table`` plays open face (its rule set is an open-face one)."""
    return table.HasField("open_face_rule_set")


def rules_of(table: table_pb2.Table) -> Any:
    """The table's open-face rule set as the rules code takes it (``OpenFaceRules``)."""
    from sapsam_client.open_face_bot import open_face_rules

    return open_face_rules(table.open_face_rule_set)


# -- the session ----------------------------------------------------------------------------


class OpenFacePlayer:
    """One person's seat at an open-face table, played from the terminal until the set ends."""

    def __init__(
        self,
        client: Client,
        seat: Seat,
        terminal: Terminal,
        keeper: CommitmentKeeper | None = None,
        moves: OpenFaceMoves | None = None,
        *,
        contribute_entropy: bool = True,
    ) -> None:
        self.client = client
        self.seat = seat
        self.terminal = terminal
        self.keeper = keeper
        self.moves = moves or OpenFaceMoves(terminal, terminal.style)
        self.contribute_entropy = contribute_entropy
        self.labels: dict[str, str] = {}
        self._done: set[tuple[str, int, int]] = set()
        self._deal_told = 0
        self.waiting = OpenFaceWaiting(terminal)
        if isinstance(keeper, DiscardKeeper):  # Pineapple's discards kept beside the rest
            client.discard_keeper = keeper
        self.on_move: Callable[[str], None] | None = None
        """Told of each move sent ("placed", "committed", "revealed"): tests wait on it."""

    @property
    def name(self) -> str:
        return self.seat.name

    def play(self) -> list[table_pb2.Standing]:
        """Play until the set is complete; the standings."""
        table = self.client.get_table(self.seat.table)
        self.labels = seat_labels(table.seats)
        standings: list[table_pb2.Standing] = []
        seen = 0
        self.waiting.start()
        try:
            for event in self.client.watch(self.seat.table):
                self.show_event(event)
                if event.WhichOneof("payload") == "series_completed":
                    standings = list(event.series_completed.standings)
                    break
                if event.version <= seen:
                    continue
                table = self.client.get_table(self.seat.table)
                seen = table.version
                self.act(table)
        finally:
            self.waiting.stop()
        return standings

    def act(self, table: table_pb2.Table) -> None:
        """Make whatever move the table, as read, expects of this seat (possibly none)."""
        if table.phase == table_pb2.TABLE_PHASE_BETWEEN_DEALS:
            # Any seat may start the next deal (the button is the server's: it stays for a
            # Fantasyland); the first to ask starts it, the others are told it is started.
            number = table.deal_number + 1
            self._once("start", number, 0, lambda: self._start(table))
            return
        if table.phase != table_pb2.TABLE_PHASE_PLAYING:
            if table.phase != table_pb2.TABLE_PHASE_SERIES_COMPLETE:
                # the dealer's draw, the entropy, the cut: the closed game's steps
                self.seat.act(table, _no_arranger, contribute_entropy=self.contribute_entropy)
            return
        self.labels = seat_labels(table.seats)
        deal = table.open_face
        mine = deal.seats[self.seat.position]
        number = deal.deal_number
        self._tell_deal(number)
        if (
            deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_DISCARDS
            and mine.discards_made
            and not mine.discards
        ):
            self._once("discards", number, 0, lambda: self._reveal_discards(number))
            return
        if mine.fantasyland:
            if not mine.committed:
                self._once("commit", number, 0, lambda: self._commit(table))
            elif deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_FANTASYLAND and not mine.revealed:
                self._once("reveal", number, 0, lambda: self._reveal(number))
            return
        if deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_PLACING and deal.turn_seat == self.name:
            self._once("place", number, deal.street, lambda: self._place(table))
        else:
            self._tell_waiting(table)

    def _tell_waiting(self, table: table_pb2.Table) -> None:
        """Say whom the table waits for now (another seat's turn, a Fantasyland hand, the
        discards), its deadline counted down (``OpenFaceWaiting``)."""
        deal = table.open_face
        if deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_PLACING and deal.turn_seat:
            whom = f"{label(self.labels, deal.turn_seat)} to place street {deal.street + 1}"
        elif deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_FANTASYLAND:
            waited = [seat.seat for seat in deal.seats if seat.fantasyland and not seat.revealed]
            whom = " and ".join(label(self.labels, seat) for seat in waited) + " (Fantasyland)"
        elif deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_DISCARDS:
            waited = [seat.seat for seat in deal.seats if seat.discards_made and not seat.discards]
            if not waited:
                return
            whom = " and ".join(label(self.labels, seat) for seat in waited)
            whom += " to open the discards"
        else:
            return
        self.waiting.update(whom, deadline_of(deal) or deadline_of(table))

    def _once(self, step: str, deal: int, street: int, move: Callable[[], None]) -> None:
        """Make a move once; a refusal because the table moved on is told, not raised."""
        if (step, deal, street) in self._done:
            return
        self._done.add((step, deal, street))
        try:
            move()
        except SapsamError as error:
            if error.reason not in _TOO_LATE:
                raise
            self.terminal.say(f"too late: {error.message}")

    def _start(self, table: table_pb2.Table) -> None:
        try:
            self.client.start_deal(self.seat.table, expected_version=table.version)
        except SapsamError as error:
            if error.reason == "VERSION_MISMATCH":  # the table moved: look again at its next event
                self._done.discard(("start", table.deal_number + 1, 0))
            elif error.reason != "WRONG_PHASE":  # WRONG_PHASE: another seat started it first
                raise

    def _place(self, table: table_pb2.Table) -> None:
        hand = self.client.get_open_face_hand(self.name)
        if not hand.my_turn:
            return
        self.waiting.pause()
        for line in board_lines(hand.view, self.labels, self.name, self.terminal.style):
            self.terminal.say(line)
        rows, thrown = self.moves.street(
            rules_of(table), hand, self.seat.table, time_left_text(table)
        )
        front, middle, back = rows
        self.client.place_cards(
            self.name,
            hand.street,
            front,
            middle,
            back,
            deal=hand.deal_number,
            player=self.seat.player_id(),
            discard=thrown,
        )
        if thrown:
            self.terminal.say(f"you discarded {' '.join(thrown)} (only its hash is sent)")
        self._told("placed")

    def _reveal_discards(self, number: int) -> None:
        kept = self.client.discard_keeper.load_discards(self.name).get(number)
        if not kept:
            self.terminal.say(
                "your discards cannot be opened here: their nonces are not kept on this"
                " computer (the server opens them from the seed at the deadline)"
            )
            return
        self.client.reveal_discards(self.name, deal=number, player=self.seat.player_id())
        self._told("discards opened")

    def _commit(self, table: table_pb2.Table) -> None:
        hand = self.client.get_open_face_hand(self.name)
        kept = self._kept(hand.deal_number)
        if kept is None:
            self.waiting.pause()
            left = time_left_text(table)
            if left:
                self.terminal.say(left)
            front, middle, back = self.moves.fantasyland(rules_of(table), hand.cards)
            rows = Rows.of(front, middle, back)
            nonce = fresh_nonce()
            player = table.seats[self.seat.position].player.removeprefix("players/")
            commitment = arrangement_commitment(
                self.seat.table.removeprefix("tables/"),
                hand.deal_number,
                self.seat.position,
                rows,
                nonce,
                scheme=FANTASYLAND_SCHEME,
                player_id=player,
            )
            kept = Commitment(hand.deal_number, rows, nonce, commitment)
            if self.keeper is not None:  # on disk before it is sent: a restart can still open it
                self.keeper.save(self.name, kept)
            self.seat.commitments[hand.deal_number] = kept
        self.client.commit_fantasyland(
            self.name, kept.commitment, deal=hand.deal_number, player=self.seat.player_id()
        )
        self.terminal.say("your Fantasyland hand is set face down (only its hash is sent)")
        self._told("committed")

    def _reveal(self, number: int) -> None:
        kept = self._kept(number)
        if kept is None:
            self.terminal.say(
                "your Fantasyland hand cannot be opened here: its rows and nonce are not kept"
                " on this computer"
            )
            return
        rows = kept.rows
        self.client.reveal_fantasyland(
            self.name,
            rows.front,
            rows.middle,
            rows.back,
            kept.nonce,
            deal=number,
            player=self.seat.player_id(),
        )
        if self.keeper is not None:
            self.keeper.forget(self.name, number)
        self.seat.commitments.pop(number, None)
        self._told("revealed")

    def _kept(self, number: int) -> Commitment | None:
        if number in self.seat.commitments:
            return self.seat.commitments[number]
        if self.keeper is not None:
            return self.keeper.load(self.name).get(number)
        return None

    def _tell_deal(self, number: int) -> None:
        """Say a deal began, once, before anything of it (the table read may run ahead of the
        stream)."""
        if number > self._deal_told:
            self._deal_told = number
            self.terminal.say(f"-- deal {number} --")

    def _told(self, move: str) -> None:
        if self.on_move is not None:
            self.on_move(move)

    # -- what the table tells ---------------------------------------------------------------

    def show_event(self, event: table_event_pb2.TableEvent) -> None:
        """Say what an event of the table's stream tells the person (most say nothing)."""
        if event.WhichOneof("payload") == "street_dealt":
            self._tell_deal(deal_number(event.street_dealt.deal))
        for line in event_lines(event, self.labels, self.name, self.terminal.style):
            self.terminal.say(line)


def _no_arranger(_hand: object, _table: object) -> Rows:
    raise AssertionError("an open-face table arranges no closed hand")


_TOO_LATE: Final = frozenset({"WRONG_PHASE", "WRONG_DEAL", "NOT_YOUR_TURN"})
