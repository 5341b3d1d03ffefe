"""``sapsam-play``'s arranging dialogue: the hand, the rows typed one at a time
(``sapsam_client.row_entry``), the solver's suggestion on request (``hint``), a foul announced
before confirming, and a yes/no confirmation."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime

from sapsam_client.card_style import CardStyle, cards_shown
from sapsam_client.client import Hand, seat_position
from sapsam_client.commitment import ROW_SIZES, Rows
from sapsam_client.hand_names import row_name
from sapsam_client.prompts import Terminal
from sapsam_client.row_entry import HINT_WORDS, ROW_NAMES, RowEntry, enter
from sapsam_client.rules import best_declaration, foul_detail, naturals_in_hand, solver_rows
from sapsam_proto.v1 import rule_set_pb2, table_pb2

CHANGE_HINT = (
    "Change the rows (swap C1 C2, front|middle|back CARDS, u = undo, r = start again,"
    " ? = help), or press Enter to confirm them."
)


HINT_TITLE = "The solver suggests, for this table's rules (s takes these rows):"


def row_line(name: str, cards: tuple[str, ...], style: CardStyle) -> str:
    """``  front  Ks Kd 3c          pair of kings``: a row, strongest card first, and its name.
    Cards take two columns whatever the style (colour codes take none)."""
    shown = cards_shown(cards, style)
    padding = " " * (15 - 3 * len(cards) + 1)
    return f"  {name:<6} {shown}{padding} {row_name(cards)}"


def rows_block(rows: Rows, title: str, style: CardStyle) -> list[str]:
    """A title and three lines, one per row, each with its name."""
    lines = [title]
    for name, row in zip(ROW_NAMES, (rows.front, rows.middle, rows.back), strict=True):
        lines.append(row_line(name, row, style))
    return lines


def entry_lines(entry: RowEntry, style: CardStyle) -> list[str]:
    """The rows set so far and the cards left, while some row is still empty."""
    lines = [
        row_line(name, row, style)
        for name, row in zip(ROW_NAMES, entry.rows, strict=True)
        if row is not None
    ]
    return [*lines, f"  cards left: {cards_shown(entry.left, style)}"]


def question(entry: RowEntry) -> str:
    """The prompt: the row to type next, or a change once all rows are set."""
    row = entry.next_row
    if row is None:
        return "change> "
    if not entry.started:
        return f"{row} ({ROW_SIZES[row]} cards, Enter = suggestion)> "
    return f"{row} ({ROW_SIZES[row]} cards)> "


def arrange(terminal: Terminal, hand: Hand, table: table_pb2.Table, position: int) -> Rows:
    """Show the hand; read rows until the player confirms some (the solver's suggestion shown
    only when asked for, ``hint``)."""
    style = terminal.style
    suggestion = solver_rows(hand.cards, table.rule_set)
    dealer = seat_position(table.dealer_seat) if table.dealer_seat else "?"
    terminal.say(f"\nDeal {hand.deal_number}: your cards (seat {position}, dealer seat {dealer})")
    terminal.say("  " + cards_shown(hand.cards, style))
    if table.HasField("deadline_time"):
        left = table.deadline_time.ToDatetime(tzinfo=UTC) - datetime.now(UTC)
        terminal.say(f"time limit: confirm within {max(0, int(left.total_seconds()))} s")
    # The solver's suggestion only on request (hint): the player's own play comes first.
    terminal.say("Type the front row's 3 cards, then the middle's 5; the back is what is left.")
    terminal.say("hint shows the solver's suggestion; ? for help (swap, undo, named rows).")
    entry = RowEntry.start(hand.cards)
    confirming = False
    while True:
        if entry.complete and confirming:
            rows = entry.arranged()
            if confirmed(terminal, rows, hand, table.rule_set):
                return rows
            confirming = False
            for line in textwrap.wrap(CHANGE_HINT, 79):
                terminal.say(line)
        line = terminal.prompt(question(entry))
        if line.strip().lower() in HINT_WORDS:  # shown only: the rows stay as they are
            for text in rows_block(suggestion, HINT_TITLE, style):
                terminal.say(text)
            continue
        after, message = enter(entry, line, suggestion)
        for text in message.splitlines():
            terminal.say(f"  {text}")
        if after.complete:
            confirming = confirming or after != entry or not line.strip()
        elif after != entry:
            for text in entry_lines(after, style):
                terminal.say(text)
        entry = after


def declaration(terminal: Terminal, hand: Hand, table: table_pb2.Table) -> str:
    """At a table with naturals: offer to declare the strongest natural the hand holds (a yes or
    a no); ``none`` when it holds none or the player says no (docs/rules.md §2.9)."""
    held = naturals_in_hand(hand.cards, table.rule_set)
    if not held:
        return "none"
    style = terminal.style
    name = held[0].replace("_", " ")
    terminal.say(f"\nDeal {hand.deal_number}: your cards  {cards_shown(hand.cards, style)}")
    terminal.say(
        f"They hold a natural: {name}. Declared, it beats every ordinary hand and collects its"
        " units from each opponent (the stronger natural wins between two); declared falsely it"
        " would be a foul. You still set rows, which then do not count."
    )
    advice = best_declaration(hand, table)
    terminal.say(
        f"The solver would declare {advice.replace('_', ' ')}: it pays at least what its rows"
        " are expected to."
        if advice != "none"
        else "The solver would not declare it: its rows are expected to pay more."
    )
    return held[0] if terminal.yes_no(f"Declare {name}?") else "none"


def confirmed(
    terminal: Terminal, rows: Rows, hand: Hand, rule_set: rule_set_pb2.RuleSet | None = None
) -> bool:
    """Show the rows (and the foul, if they foul under the table's rule set: its row order) and
    ask for a yes or a no."""
    for line in rows_block(rows, "Your rows:", terminal.style):
        terminal.say(line)
    foul = foul_detail(rows, hand.cards, rule_set)
    if not foul:
        return terminal.yes_no("Confirm these rows?")
    terminal.say("WARNING: these rows are a FOUL:")
    for line in textwrap.wrap(foul, 76):
        terminal.say(f"  {line}")
    terminal.say("A fouled hand loses every row to every other seat.")
    return terminal.yes_no("Confirm the foul anyway?")
