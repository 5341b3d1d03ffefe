"""A one-line progress bar for commands that run long (``sapsam audit verify --all``), drawn on
stderr only when it is a terminal. Kept apart so a command loads it only when it draws one."""

from __future__ import annotations

import time
from typing import Final, TextIO


class ProgressBar:
    """A one-line progress bar redrawn in place (only used when stderr is a terminal)."""

    WIDTH: Final = 30

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.drawn = False
        self.started = time.monotonic()

    def update(self, done: int, total: int) -> None:
        """Redraw for ``done`` of ``total`` deals."""
        filled = self.WIDTH if total == 0 else self.WIDTH * done // total
        bar = "#" * filled + "." * (self.WIDTH - filled)
        elapsed = time.monotonic() - self.started
        rate = f" ({done / elapsed:,.0f} deals/s)" if elapsed > 1 else ""
        self.stream.write(f"\rverifying deals [{bar}] {done}/{total}{rate}")
        self.stream.flush()
        self.drawn = True

    def finish(self) -> None:
        """End the bar's line (the requests, deals in play and read models follow)."""
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
