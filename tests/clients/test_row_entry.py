"""Row-by-row entry (``sapsam_client.row_entry``) and the card styles, without a terminal: every
line a player may type, every way a row can be refused, undo and swap."""

from __future__ import annotations

import io

import pytest

from sapsam_client.card_style import PLAIN, CardStyle, card_shown, cards_shown, style_for
from sapsam_client.commitment import Rows, canonical
from sapsam_client.row_entry import HELP, RowEntry, enter, read_cards


def cards(text: str) -> list[str]:
    """Cards written as a line (``"As Kd"``)."""
    return text.split()


HAND = cards("As Ks Qs Js Ts 9h 9d 9c 5c 5d 4h 3h 2c")
SUGGESTION = Rows.of(cards("5c 5d 4h"), cards("9h 9d 9c 3h 2c"), cards("As Ks Qs Js Ts"))
SORTED = Rows(*(canonical(row) for row in (SUGGESTION.front, SUGGESTION.middle, SUGGESTION.back)))


def typed(*lines: str, entry: RowEntry | None = None) -> tuple[RowEntry, list[str]]:
    current = entry or RowEntry.start(HAND)
    said = []
    for line in lines:
        current, message = enter(current, line, SUGGESTION)
        said.append(message)
    return current, said


def test_rows_are_kept_one_at_a_time_and_the_last_fills_itself() -> None:
    entry, said = typed("5c 5d 4h")
    assert entry.rows == (("4h", "5c", "5d"), None, None) and said == [""]
    assert entry.next_row == "middle" and not entry.complete
    assert entry.left == tuple(cards("2c 3h 9c 9d 9h Ts Js Qs Ks As"))
    entry, said = typed("9h, 9D 9c 3h 2C", entry=entry)
    assert entry.complete and said == [""]
    assert entry.arranged() == SORTED
    assert entry.left == ()


def test_the_rows_may_be_named_and_typed_in_any_order() -> None:
    entry, said = typed("back as ks qs js 10s", "middle 9h 9d 9c 3h 2c")
    assert said == ["", ""] and entry.complete
    assert entry.arranged() == SORTED
    # A named row replaces what it held; its own cards may be typed again.
    entry, said = typed("front 5c 5d 2c", "front 5c 5d 4h")
    assert entry.rows[0] == ("4h", "5c", "5d") and said == ["", ""]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("5c 5d", "the front row takes 3 cards, not 2"),
        ("5c 5d 4h 3h", "the front row takes 3 cards, not 4"),
        ("5c 5c 4h", "5c is typed twice"),
        ("5c 5d 8h", "8h is not in your hand"),
        ("5c 5d Zz", "'Zz' is not a card (cards look like As Td 9c 10h)"),
        ("5c 5d 1", "'1' is not a card (cards look like As Td 9c 10h)"),
        ("front", "the front row takes 3 cards, not 0"),
    ],
)
def test_a_refused_row_says_which_card_and_why_and_changes_nothing(line: str, message: str) -> None:
    start = RowEntry.start(HAND)
    entry, said = typed(line, entry=start)
    assert entry == start and said == [message]


def test_a_card_already_in_another_row_is_refused() -> None:
    entry, _ = typed("5c 5d 4h")
    after, said = typed("5c 9d 9c 3h 2c", entry=entry)
    assert after == entry and said == ["5c is already in the front row"]
    complete, _ = typed("", entry=RowEntry.start(HAND))
    after, said = typed("As Ks Qs", entry=complete)
    assert said == ["all three rows are set: swap cards, undo, or Enter to confirm (? for help)"]


def test_enter_takes_the_suggestion_only_before_any_row_is_set() -> None:
    entry, said = typed("")
    assert entry.arranged() == SORTED and said == [""]
    entry, said = typed("5c 5d 4h", "")
    assert entry.next_row == "middle" and said == ["", "type the middle row (? for help)"]
    entry, said = typed("", "")
    assert entry.complete and said == ["", ""]  # Enter once complete: the caller confirms


def test_undo_walks_back_every_change_including_the_filled_last_row() -> None:
    entry, _ = typed("5c 5d 4h", "9h 9d 9c 3h 2c", "swap 5c As")
    assert entry.rows[0] == ("4h", "5d", "As")
    assert entry.rows[2] == ("5c", "Ts", "Js", "Qs", "Ks")
    entry, _ = typed("u", entry=entry)
    assert entry.arranged() == SORTED
    entry, _ = typed("undo", entry=entry)
    assert entry.rows == (("4h", "5c", "5d"), None, None)  # the back row goes with the middle
    entry, said = typed("u", "u", entry=entry)
    assert entry == RowEntry.start(HAND) and said == ["", "nothing to undo"]


def test_swap_between_rows_or_with_a_card_left() -> None:
    entry, _ = typed("5c 5d 4h")
    swapped, said = typed("swap 4h 2c", entry=entry)
    assert swapped.rows[0] == ("2c", "5c", "5d") and "4h" in swapped.left and said == [""]
    for line, message in [
        ("swap 4h", "swap takes two cards, e.g.  swap Ks 7d"),
        ("x 8h 4h", "8h is not in your hand"),
        ("swap 2c 3h", "neither 2c nor 3h is in a row yet"),
        ("swap 5c 5d", "5c and 5d are both in the front row"),
        ("swap 5c ??", "'??' is not a card (cards look like As Td 9c 10h)"),
    ]:
        after, said = typed(line, entry=entry)
        assert after == entry and said == [message], line


def test_reset_suggest_and_help() -> None:
    entry, said = typed("5c 5d 4h", "r")
    assert not entry.started and said == ["", ""]
    entry, said = typed("r")
    assert entry == RowEntry.start(HAND)  # nothing to start again: no undo step either
    entry, said = typed("5c 5d 2c", "s", "?")
    assert entry.arranged() == SORTED and said[2] == "\n".join(HELP)
    assert all(len(line) <= 77 for line in HELP)
    with pytest.raises(ValueError, match="the middle row is not set"):
        typed("5c 5d 4h")[0].arranged()


def test_typed_cards_accept_every_notation() -> None:
    assert read_cards("as, KD 10h t♣ 9♥") == ("As", "Kd", "Th", "Tc", "9h")


def test_card_styles() -> None:
    assert card_shown("As") == "As" and card_shown("td", CardStyle(symbols=True)) == "T♦"
    red = card_shown("Kh", CardStyle(symbols=True, colour=True))
    assert red == "\033[31mK♥\033[0m"
    assert card_shown("Ks", CardStyle(symbols=True, colour=True)) == "K♠"
    assert cards_shown(["2c", "As", "Ah", "Td"]) == "As Ah Td 2c"


class Stream(io.StringIO):
    def __init__(self, encoding: str, tty: bool) -> None:
        super().__init__()
        self._encoding, self._tty = encoding, tty

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding

    def isatty(self) -> bool:
        return self._tty


def test_the_style_follows_the_terminal() -> None:
    utf8_tty = Stream("UTF-8", True)
    assert style_for(utf8_tty, {"TERM": "xterm-256color"}) == CardStyle(True, True)
    assert style_for(utf8_tty, {"TERM": "xterm", "NO_COLOR": "1"}) == CardStyle(True, False)
    assert style_for(utf8_tty, {"TERM": "xterm", "NO_COLOR": ""}) == CardStyle(True, True)
    assert style_for(utf8_tty, {"TERM": "xterm"}, plain=True) == PLAIN
    assert style_for(utf8_tty, {"TERM": "dumb"}) == PLAIN
    assert style_for(utf8_tty, {}) == PLAIN
    assert style_for(Stream("ascii", True), {"TERM": "xterm"}) == PLAIN
    assert style_for(Stream("utf-8", False), {"TERM": "xterm"}) == CardStyle(True, False)
