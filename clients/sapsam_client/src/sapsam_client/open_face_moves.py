"""The person's decisions at an open-face table, asked at the terminal (issues #18, #19): where
each street's cards go (one letter a card: ``f`` front, ``m`` middle, ``b`` back, and at
Pineapple ``x`` for the card discarded), the solver's suggestion on request, a Fantasyland
setting row by row. ``sapsam_client.open_face_play`` is the session that asks them."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from sapsam_client.card_style import PLAIN, CardStyle, card_shown
from sapsam_client.open_face import OpenFaceHand
from sapsam_client.open_face_text import (
    ROW_NAMES,
    ROW_SIZES,
    Rows3,
    fantasyland_row_problem,
    letters_of,
    normal_cards,
    street_from_letters,
)
from sapsam_client.prompts import Terminal
from sapsam_client.rules import rules_module

HINT_ROLLOUTS: Final = 200
"""The solver's futures per candidate for a hint (its default is for bots under a time limit)."""

HELP: Final = (
    "type one letter per card, in the order shown: f (front), m (middle), b (back),",
    "  e.g. 'bbmmf' puts the first two cards in the back row and the last in the front;",
    "  Pineapple: x discards a card (face down: the others see only that you discarded)",
    "hint  show the solver's suggestion    s  take it    ?  this help",
)
FANTASYLAND_HELP: Final = (
    "type the front row (3 cards), then the middle and the back (5 each), e.g. 'Qs Qd 2c';",
    "  the cards left over are discarded",
    "hint  show the solver's setting    s  take it    ?  this help",
)


def hint_seed(table: str, deal: int, street: int) -> int:
    """The solver's seed for a hint: the same street of the same deal gets the same hint."""
    digest = hashlib.sha256(f"sapsam-play hint {table} {deal} {street}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


# -- the person's moves ---------------------------------------------------------------------


@dataclass
class OpenFaceMoves:
    """The person's decisions, asked at the terminal (tests give scripted answers)."""

    terminal: Terminal
    style: CardStyle = PLAIN

    def placement(self, rules: Any, hand: OpenFaceHand, table: str) -> Rows3:
        """Where the street's cards go, as the person says (a street that discards nothing)."""
        return self.street(rules, hand, table)[0]

    def street(
        self, rules: Any, hand: OpenFaceHand, table: str, deadline: str = ""
    ) -> tuple[Rows3, tuple[str, ...]]:
        """Where the street's cards go and, at Pineapple, which card is discarded (``x``), as
        the person says; ``deadline``: how long it has, said with the cards."""
        cards_module = rules_module("cards")
        board_module = rules_module("open_face.board")
        dead = rules_module("open_face.dead")
        dealt = list(hand.to_place())
        front, middle, back = hand.rows
        board = board_module.Board(
            *(cards_module.parse_cards(list(row)) for row in (front, middle, back))
        )
        free = tuple(board.free_slots)
        thrown_count = rules.street_discards if hand.street else 0
        shown = "  ".join(
            f"{number}) {card_shown(card, self.style)}" for number, card in enumerate(dealt, 1)
        )
        self.terminal.say(f"street {hand.street + 1}: your cards to place  {shown}")
        if thrown_count:
            self.terminal.say(f"  place {len(dealt) - thrown_count}, discard {thrown_count} (x)")
        if hand.discards:
            mine = " ".join(card_shown(card, self.style) for card in hand.discards)
            self.terminal.say(f"  your discards so far (only you see them): {mine}")
        if deadline:
            self.terminal.say(f"  {deadline}")
        letters = "f/m/b/x" if thrown_count else "f/m/b"
        while True:
            answer = self.terminal.prompt(f"where do they go ({letters} each, hint, s, ?): ")
            word = answer.lower()
            if word in ("?", "help"):
                for line in HELP:
                    self.terminal.say(f"  {line}")
                continue
            if word in ("hint", "s", ""):
                suggested, thrown = self._suggestion(rules, board, dealt, table, hand)
                if word != "s":  # Enter or hint: shown, never placed unless taken
                    typed = letters_of(suggested, dealt, thrown)
                    said = self._rows_said(suggested)
                    if thrown:
                        said += f"; discard {' '.join(thrown)}"
                    self.terminal.say(f"  suggested: {typed}  ({said})")
                    self.terminal.say("  s takes it; or type your own letters")
                    continue
                chosen = suggested
            else:
                parsed = street_from_letters(answer, dealt, free, thrown_count)
                if isinstance(parsed, str):
                    self.terminal.say(f"  {parsed}")
                    continue
                chosen, thrown = parsed
            placement = board_module.Placement(
                *(cards_module.parse_cards(list(row)) for row in chosen)
            )
            if dead.kills(board, placement) and not self.terminal.yes_no(
                f"  {self._rows_said(chosen)}: your rows can no longer end in order"
                " (a dead hand); place them so?"
            ):
                continue
            return chosen, thrown

    def fantasyland(self, rules: Any, cards: Sequence[str]) -> Rows3:
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
    ) -> tuple[Rows3, tuple[str, ...]]:
        cards_module = rules_module("cards")
        solver = rules_module("open_face.solver")
        thrown = rules.street_discards if hand.street else 0
        choice = solver.solve_street(
            rules,
            board,
            cards_module.parse_cards(dealt),
            thrown,
            seed=hint_seed(table, hand.deal_number, hand.street),
            rollouts=HINT_ROLLOUTS,
        )
        placed = choice.placement
        rows = (
            tuple(str(card) for card in placed.front),
            tuple(str(card) for card in placed.middle),
            tuple(str(card) for card in placed.back),
        )
        return rows, tuple(str(card) for card in choice.discards)

    def _fantasyland_suggestion(self, rules: Any, cards: Sequence[str]) -> Rows3:
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
