"""How many appends and events this process has written: two integers, read by the metrics
endpoint (``sapsam.api.metrics_endpoint``: ``sapsam_appends_total`` and
``sapsam_events_appended_total``).

Counted when an append's statement succeeded (a retried request id, answered from its record,
appends nothing and is not counted); an append inside a transaction that later rolls back is
still counted, which the rate of appends can bear. Plain integers on the process's one event
loop: no lock, nothing measurable per append.
"""

from __future__ import annotations


class AppendCount:
    """The process's running totals."""

    __slots__ = ("appends", "events")

    def __init__(self) -> None:
        self.appends = 0
        self.events = 0

    def add(self, events: int) -> None:
        """One append of ``events`` events."""
        self.appends += 1
        self.events += events


APPENDED = AppendCount()
"""This process's totals."""
