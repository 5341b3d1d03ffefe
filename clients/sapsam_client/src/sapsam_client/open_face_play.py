"""``sapsam-play`` at an open-face table (issue #18): every seat's rows as they fill, the person's
own dealt cards, the solver's suggestion on request, and Fantasyland.

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

While another seat is on turn (or a Fantasyland hand is still to be set or opened) a status says
whom the table waits for, once each time that changes. Other seats' placements, Fantasyland
commitments, openings and timeouts are told as they happen;
each deal's score shows every seat's rows, ``DEAD`` for a dead hand, and the set totals.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sapsam_client.card_style import PLAIN, CardStyle, card_shown
from sapsam_client.client import Client
from sapsam_client.commitment import Rows, arrangement_commitment, fresh_nonce
from sapsam_client.connection import deal_number, seat_position
from sapsam_client.errors import SapsamError
from sapsam_client.open_face import OpenFaceHand
from sapsam_client.prompts import Terminal
from sapsam_client.results_text import label, seat_labels
from sapsam_client.rules import rules_module
from sapsam_client.seat import Commitment, CommitmentKeeper, Seat
from sapsam_proto.v1 import open_face_pb2, table_event_pb2, table_pb2

ROW_NAMES: Final = ("front", "middle", "back")
ROW_SIZES: Final = (3, 5, 5)
ROW_LETTERS: Final = {"f": 0, "m": 1, "b": 2}
EMPTY: Final = "__"
FANTASYLAND_SCHEME: Final = 2
HINT_ROLLOUTS: Final = 200
"""The solver's futures per candidate for a hint (its default is for bots under a time limit)."""

HELP: Final = (
    "type one letter per card, in the order shown: f (front), m (middle), b (back),",
    "  e.g. 'bbmmf' puts the first two cards in the back row and the last in the front",
    "hint  show the solver's suggestion    s  take it    ?  this help",
)
FANTASYLAND_HELP: Final = (
    "type the front row (3 cards), then the middle and the back (5 each), e.g. 'Qs Qd 2c';",
    "  the cards left over are discarded",
    "hint  show the solver's setting    s  take it    ?  this help",
)


def is_open_face(table: table_pb2.Table) -> bool:
    """Whether ``table`` plays open face (its rule set is an open-face one)."""
    return table.HasField("open_face_rule_set")


def rules_of(table: table_pb2.Table) -> Any:
    """The table's open-face rule set as the rules code takes it (``OpenFaceRules``)."""
    from sapsam_client.open_face_bot import open_face_rules

    return open_face_rules(table.open_face_rule_set)


def hint_seed(table: str, deal: int, street: int) -> int:
    """The solver's seed for a hint: the same street of the same deal gets the same hint."""
    digest = hashlib.sha256(f"sapsam-play hint {table} {deal} {street}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


# -- what the screen shows ------------------------------------------------------------------


def row_text(cards: Sequence[str], size: int, style: CardStyle = PLAIN) -> str:
    """One row as placed (placement order), ``__`` for each place still empty."""
    shown = [card_shown(card, style) for card in cards]
    return " ".join(shown + [EMPTY] * (size - len(cards)))


def rows_text(rows: open_face_pb2.OpenFaceRows, style: CardStyle = PLAIN) -> str:
    """A seat's three rows: ``front | middle | back``."""
    return " | ".join(
        row_text(list(row), size, style)
        for row, size in zip((rows.front, rows.middle, rows.back), ROW_SIZES, strict=True)
    )


def seat_status(seat: open_face_pb2.OpenFaceSeat) -> str:
    """What a seat's line says besides its rows."""
    if seat.fantasyland and not seat.committed:
        return "Fantasyland: setting its hand"
    if seat.fantasyland and not seat.revealed:
        return "Fantasyland: set face down"
    if seat.rows_hidden:
        return "placing (hidden until the Fantasyland hand is set)"
    return ""


def board_lines(
    deal: open_face_pb2.OpenFaceDeal,
    labels: dict[str, str],
    me: str,
    style: CardStyle = PLAIN,
) -> list[str]:
    """Every seat's rows, one line each (front | middle | back), the person's marked."""
    lines = []
    for seat in deal.seats:
        name = "you" if seat.seat == me else label(labels, seat.seat)
        tag = f"{name} (seat {seat_position(seat.seat)})"
        if seat.fantasyland:
            tag += " FL"
        status = seat_status(seat)
        shown = status if seat.rows_hidden or (seat.fantasyland and not seat.revealed) else ""
        body = shown or rows_text(seat.rows, style)
        if status and not shown:
            body += f"  ({status})"
        lines.append(f"  {tag:<24} {body}")
    return lines


def placement_from_letters(
    answer: str, cards: Sequence[str], free: Sequence[int]
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | str:
    """The rows ``answer`` (one of f, m, b per card of ``cards``, in order; spaces and commas
    ignored) puts the cards in, or why it cannot: a wrong letter, a wrong count, a row that has
    fewer free places (``free``: front, middle, back) than cards sent to it."""
    letters = [letter for letter in answer.lower() if letter not in " ,"]
    if len(letters) != len(cards):
        plural = "s" if len(cards) != 1 else ""
        return f"give {len(cards)} letter{plural} (f, m or b), one for each card, in order"
    wrong = sorted({letter for letter in letters if letter not in ROW_LETTERS})
    if wrong:
        return f"{', '.join(wrong)}: use f (front), m (middle) or b (back)"
    rows: tuple[list[str], list[str], list[str]] = ([], [], [])
    for letter, card in zip(letters, cards, strict=True):
        rows[ROW_LETTERS[letter]].append(card)
    for index, row in enumerate(rows):
        if len(row) > free[index]:
            return f"the {ROW_NAMES[index]} row has room for {free[index]} more, not {len(row)}"
    return tuple(rows[0]), tuple(rows[1]), tuple(rows[2])


def letters_of(placement: Sequence[Sequence[str]], cards: Sequence[str]) -> str:
    """The letters that type ``placement`` (front, middle, back) for ``cards`` in order."""
    where = {card: "fmb"[index] for index, row in enumerate(placement) for card in row}
    return "".join(where[card] for card in cards)


def fantasyland_row_problem(
    typed: Sequence[str], size: int, cards: Sequence[str], used: Sequence[str]
) -> str:
    """Why the cards typed for a Fantasyland row will not do ('' when they will)."""
    if len(typed) != size:
        return f"give {size} cards"
    if len(set(typed)) != len(typed):
        return "a card is typed twice"
    missing = [card for card in typed if card not in cards]
    if missing:
        return f"not among your cards: {' '.join(missing)}"
    again = [card for card in typed if card in used]
    if again:
        return f"already in another row: {' '.join(again)}"
    return ""


def normal_cards(text: str) -> list[str]:
    """Card words as the server writes them (``as`` → ``As``, ``10h`` → ``Th``)."""
    cards = []
    for word in text.replace(",", " ").split():
        word = word.replace("10", "T")
        cards.append(word[:-1].upper() + word[-1:].lower() if len(word) == 2 else word)
    return cards


# -- the person's moves ---------------------------------------------------------------------


@dataclass
class OpenFaceMoves:
    """The person's decisions, asked at the terminal (tests give scripted answers)."""

    terminal: Terminal
    style: CardStyle = PLAIN

    def placement(
        self, rules: Any, hand: OpenFaceHand, table: str
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """Where the street's cards go, as the person says."""
        cards_module = rules_module("cards")
        board_module = rules_module("open_face.board")
        dead = rules_module("open_face.dead")
        dealt = list(hand.to_place())
        front, middle, back = hand.rows
        board = board_module.Board(
            *(cards_module.parse_cards(list(row)) for row in (front, middle, back))
        )
        free = tuple(board.free_slots)
        shown = "  ".join(
            f"{number}) {card_shown(card, self.style)}" for number, card in enumerate(dealt, 1)
        )
        self.terminal.say(f"street {hand.street + 1}: your cards to place  {shown}")
        while True:
            answer = self.terminal.prompt("where do they go (f/m/b each, hint, s, ?): ")
            word = answer.lower()
            if word in ("?", "help"):
                for line in HELP:
                    self.terminal.say(f"  {line}")
                continue
            if word in ("hint", "s", ""):
                suggested = self._suggestion(rules, board, dealt, table, hand)
                if word != "s":  # Enter or hint: shown, never placed unless taken
                    letters = letters_of(suggested, dealt)
                    self.terminal.say(f"  suggested: {letters}  ({self._rows_said(suggested)})")
                    self.terminal.say("  s takes it; or type your own letters")
                    continue
                chosen = suggested
            else:
                parsed = placement_from_letters(answer, dealt, free)
                if isinstance(parsed, str):
                    self.terminal.say(f"  {parsed}")
                    continue
                chosen = parsed
            placement = board_module.Placement(
                *(cards_module.parse_cards(list(row)) for row in chosen)
            )
            if dead.kills(board, placement) and not self.terminal.yes_no(
                f"  {self._rows_said(chosen)}: your rows can no longer end in order"
                " (a dead hand); place them so?"
            ):
                continue
            return chosen

    def fantasyland(
        self, rules: Any, cards: Sequence[str]
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """The person's Fantasyland setting of ``cards``."""
        suggested = self._fantasyland_suggestion(rules, cards)
        shown = " ".join(card_shown(card, self.style) for card in cards)
        self.terminal.say(f"Fantasyland: your {len(cards)} cards  {shown}")
        while True:
            rows: list[tuple[str, ...]] = []
            for index, size in enumerate(ROW_SIZES):
                while True:
                    answer = self.terminal.prompt(
                        f"{ROW_NAMES[index]} ({size} cards; hint, s, ?): "
                    )
                    word = answer.lower()
                    if word in ("?", "help"):
                        for line in FANTASYLAND_HELP:
                            self.terminal.say(f"  {line}")
                        continue
                    if word == "hint":
                        self.terminal.say(f"  suggested: {self._rows_said(suggested)}")
                        continue
                    if word == "s":
                        return suggested
                    typed = normal_cards(answer)
                    used = [card for row in rows for card in row]
                    problem = fantasyland_row_problem(typed, size, cards, used)
                    if problem:
                        self.terminal.say(f"  {problem}")
                        continue
                    rows.append(tuple(typed))
                    break
            chosen = (rows[0], rows[1], rows[2])
            if self._in_order(chosen) or self.terminal.yes_no(
                f"  {self._rows_said(chosen)}: the rows are out of order (a dead hand);"
                " set them so?"
            ):
                return chosen

    def _suggestion(
        self, rules: Any, board: Any, dealt: list[str], table: str, hand: OpenFaceHand
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        cards_module = rules_module("cards")
        solver = rules_module("open_face.solver")
        choice = solver.solve_placement(
            rules,
            board,
            cards_module.parse_cards(dealt),
            seed=hint_seed(table, hand.deal_number, hand.street),
            rollouts=HINT_ROLLOUTS,
        ).placement
        return (
            tuple(str(card) for card in choice.front),
            tuple(str(card) for card in choice.middle),
            tuple(str(card) for card in choice.back),
        )

    def _fantasyland_suggestion(
        self, rules: Any, cards: Sequence[str]
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        cards_module = rules_module("cards")
        setting = rules_module("open_face.fantasyland_setting")
        arrangement, _ = setting.solve_fantasyland(rules, cards_module.parse_cards(list(cards)))
        return (
            tuple(str(card) for card in arrangement.front),
            tuple(str(card) for card in arrangement.middle),
            tuple(str(card) for card in arrangement.back),
        )

    def _in_order(self, rows: Sequence[Sequence[str]]) -> bool:
        cards_module = rules_module("cards")
        board_module = rules_module("open_face.board")
        dead = rules_module("open_face.dead")
        board = board_module.Board(*(cards_module.parse_cards(list(row)) for row in rows))
        return not bool(dead.is_dead(board))

    def _rows_said(self, rows: Sequence[Sequence[str]]) -> str:
        return ", ".join(
            f"{ROW_NAMES[index]} {' '.join(card_shown(card, self.style) for card in row)}"
            for index, row in enumerate(rows)
            if row
        )


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
        self._waiting_told: tuple[int, int, str] | None = None
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
        if mine.fantasyland:
            if not mine.committed:
                self._once("commit", number, 0, lambda: self._commit(table))
            elif deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_FANTASYLAND and not mine.revealed:
                self._once("reveal", number, 0, lambda: self._reveal(number))
            return
        if deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_PLACING and deal.turn_seat == self.name:
            self._once("place", number, deal.street, lambda: self._place(table))
        else:
            self._tell_waiting(deal)

    def _tell_waiting(self, deal: open_face_pb2.OpenFaceDeal) -> None:
        """Say once whom the table waits for now (another seat's turn, a Fantasyland hand)."""
        if deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_PLACING and deal.turn_seat:
            whom = f"{label(self.labels, deal.turn_seat)} to place street {deal.street + 1}"
        elif deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_FANTASYLAND:
            waited = [seat.seat for seat in deal.seats if seat.fantasyland and not seat.revealed]
            whom = " and ".join(label(self.labels, seat) for seat in waited) + " (Fantasyland)"
        else:
            return
        key = (deal.deal_number, deal.street, whom)
        if key != self._waiting_told:
            self._waiting_told = key
            self.terminal.status(f"waiting for {whom}")

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
        for line in board_lines(hand.view, self.labels, self.name, self.terminal.style):
            self.terminal.say(line)
        front, middle, back = self.moves.placement(rules_of(table), hand, self.seat.table)
        self.client.place_cards(
            self.name,
            hand.street,
            front,
            middle,
            back,
            deal=hand.deal_number,
            player=self.seat.player_id(),
        )
        self._told("placed")

    def _commit(self, table: table_pb2.Table) -> None:
        hand = self.client.get_open_face_hand(self.name)
        kept = self._kept(hand.deal_number)
        if kept is None:
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


def event_lines(
    event: table_event_pb2.TableEvent,
    labels: dict[str, str],
    me: str,
    style: CardStyle = PLAIN,
) -> list[str]:
    """What an open-face event tells the person at seat ``me``."""
    kind = event.WhichOneof("payload")

    def who(seat: str) -> str:
        return "you" if seat == me else label(labels, seat)

    if kind == "cards_placed":
        placed = event.cards_placed
        if placed.hidden or (placed.seat == me and not placed.automatic):
            return []
        how = f" (automatic: {placed.automatic})" if placed.automatic else ""
        return [f"{who(placed.seat)} placed {_placed_said(placed.placed, style)}{how}"]
    if kind == "fantasyland_committed":
        committed = event.fantasyland_committed
        if committed.seat == me:
            return []
        return [f"{who(committed.seat)} set a Fantasyland hand face down"]
    if kind == "fantasyland_reveals_opened":
        opened = event.fantasyland_reveals_opened
        seats = ", ".join(who(seat) for seat in opened.seats)
        return [f"every hand is set: {seats} to open the Fantasyland hand (or it is dead)"]
    if kind == "fantasyland_timed_out":
        timed = event.fantasyland_timed_out
        return [f"{who(timed.seat)} ran out of time setting the Fantasyland hand"]
    if kind == "fantasyland_revealed":
        revealed = event.fantasyland_revealed
        dead = " DEAD" if revealed.dead else ""
        return [f"{who(revealed.seat)} opened Fantasyland: {rows_text(revealed.rows, style)}{dead}"]
    if kind == "deal_scored" and event.deal_scored.HasField("open_face"):
        score = event.deal_scored.open_face
        lines = [f"deal {deal_number(score.deal)} scored:"]
        for seat in score.seats:
            dead = "  DEAD" if seat.dead else ""
            lines.append(
                f"  {who(seat.seat):<12} {rows_text(seat.rows, style)}{dead}"
                f"  {seat.score_delta:+d} (total {seat.series_total:+d})"
            )
        return lines
    if kind == "series_completed":
        lines = ["the set is over:"]
        for standing in event.series_completed.standings:
            lines.append(f"  {standing.place}. {who(standing.seat)}  {standing.total:+d}")
        return lines
    return []


def _placed_said(rows: open_face_pb2.OpenFaceRows, style: CardStyle) -> str:
    parts = [
        f"{name} {' '.join(card_shown(card, style) for card in row)}"
        for name, row in zip(ROW_NAMES, (rows.front, rows.middle, rows.back), strict=True)
        if row
    ]
    return ", ".join(parts) or "nothing"


def _no_arranger(_hand: object, _table: object) -> Rows:
    raise AssertionError("an open-face table arranges no closed hand")


_TOO_LATE: Final = frozenset({"WRONG_PHASE", "WRONG_DEAL", "NOT_YOUR_TURN"})
