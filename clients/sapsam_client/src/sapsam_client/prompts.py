"""``sapsam-play``'s screen: lines written, questions asked, and one status line.

Everything goes through two functions, ``ask`` and ``say`` (``input`` and ``print`` in the
program, scripted ones in tests). The status line ("waiting for Bob (seat 1) to reveal: 25 s
left") is written by a timer thread as well as by the main one, so every write holds one lock. On
a terminal that can (``redraw`` given: a tty that is not ``TERM=dumb``) the status is redrawn in
place every second; elsewhere it is printed as a line when it changes and repeated now and then.
"""

from __future__ import annotations

import textwrap
import threading
from collections.abc import Callable
from typing import Final

from sapsam_client.card_style import PLAIN, CardStyle

Ask = Callable[[str], str]
Say = Callable[[str], None]

YES: Final = ("y", "yes")
NO: Final = ("n", "no")


class SessionEndedError(Exception):
    """The player ended input (Ctrl-D) or asked to leave."""


class Terminal:
    """The prompts and the printed table, over two functions (so tests can drive them).

    ``redraw`` writes a line in place, without a newline (``\\r`` then the text then "erase to
    the end of the line"); without it the status is printed as ordinary lines.
    """

    def __init__(
        self,
        ask: Ask,
        say: Say,
        *,
        style: CardStyle = PLAIN,
        redraw: Say | None = None,
    ) -> None:
        self.ask = ask
        self._say = say
        self.style = style
        self.redraw = redraw
        self._lock = threading.Lock()
        self._status_shown = False  # a status is drawn in place on the current line
        self.prompting = False
        self.after_answer: Callable[[], None] | None = None
        """Called after each answer is read, before it is used: it may raise to end the
        dialogue (``sapsam_client.deal_watch``: the deal ended while the person typed)."""

    def say(self, line: str) -> None:
        """Write a line (below a status drawn in place, which it replaces)."""
        with self._lock:
            self._clear_status()
            self._say(line)

    def interrupt(self, text: str) -> None:
        """Say ``text`` at once, even while the person is being asked something: below the
        question, on lines of its own (the answer is still read)."""
        with self._lock:
            self._clear_status()
            if self.prompting:
                self._say("")  # end the line the question is on
            for line in textwrap.wrap(text, 79, subsequent_indent="  "):
                self._say(line)

    def status(self, text: str) -> None:
        """Show the waiting status: in place where the terminal can, else as a line. Nothing
        while the player is being asked something."""
        with self._lock:
            if self.prompting:
                return
            if self.redraw is not None:
                self.redraw(text[:79])
                self._status_shown = True
            else:
                for line in textwrap.wrap(text, 79, subsequent_indent="  "):
                    self._say(line)

    def end_status(self) -> None:
        """Take a status drawn in place off the screen."""
        with self._lock:
            self._clear_status()

    def _clear_status(self) -> None:
        if self._status_shown and self.redraw is not None:
            self.redraw("")
            self._status_shown = False

    def prompt(self, question: str) -> str:
        """Ask a question; Ctrl-D ends the session."""
        with self._lock:
            self._clear_status()
            self.prompting = True
        try:
            answer = self.ask(question).strip()
        except EOFError:
            raise SessionEndedError() from None
        finally:
            self.prompting = False
        if self.after_answer is not None:
            self.after_answer()
        return answer

    def yes_no(self, question: str) -> bool:
        """A question answered yes or no, and nothing else (asked again until it is)."""
        while True:
            answer = self.prompt(f"{question} [y/n] ").lower()
            if answer in YES:
                return True
            if answer in NO:
                return False
            self.say("  please answer y (yes) or n (no)")
