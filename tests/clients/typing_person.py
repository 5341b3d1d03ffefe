"""A person at sapsam-play who is typing deal 2's rows when the deal ends under them: shared by
the tests of a deal voided (test_play_deal_ends_while_typing) and of an operator's forced timeout
(test_play_forced_timeout) while the person types."""

from __future__ import annotations

import re
import threading
import time


class Person:
    """Answers sapsam-play's questions: Enter (the suggestion) and yes; at deal 2's first
    question, waits (the operator acts meanwhile) until the screen shows ``notice``, then types
    half a row, which must go nowhere."""

    def __init__(self, notice: re.Pattern[str]) -> None:
        self.notice = notice
        self.said: list[str] = []
        self.lock = threading.Lock()
        self.typing_deal_2 = threading.Event()
        self.current_deal = 0

    def say(self, line: str) -> None:
        with self.lock:
            self.said.append(line)
        if line.lstrip().startswith("Deal "):  # "\nDeal 2: your cards (seat 1, dealer seat 0)"
            self.current_deal = int(line.split()[1].rstrip(":"))

    def ask(self, question: str) -> str:
        self.say(question)
        if self.current_deal == 2 and not self.typing_deal_2.is_set():
            self.typing_deal_2.set()
            deadline = time.monotonic() + 60  # a loaded machine answers slowly
            while not any(self.notice.search(line) for line in self.lines()):
                assert time.monotonic() < deadline, "the prompt never said the deal was over"
                time.sleep(0.05)
            return "Kh"  # half a row, typed after the notice: it must go nowhere
        return "y" if "[y/n]" in question else ""

    def lines(self) -> list[str]:
        with self.lock:
            return list(self.said)
