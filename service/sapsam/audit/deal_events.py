"""What every check of a deal reads: one deal's decoded events, and which series a deal is in.
Pure; the checks themselves are in ``sapsam.audit.deal_checks`` and the modules it names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from sapsam.domain.events import DealScored, Event

# What malformed field values raise when a check reads them (the codec checks names, not types).
MALFORMED: Final = (TypeError, ValueError, KeyError, AttributeError, IndexError)
NEW_SERIES: Final = "new_series"


def first_deal_of_series(deal_number: int, series_length: int, after_series: str) -> int:
    """The number of the first deal of the series that deal ``deal_number`` belongs to."""
    if after_series != NEW_SERIES:
        return 1
    return (deal_number - 1) // series_length * series_length + 1


def series_of_deal(deal_number: int, series_length: int, after_series: str) -> int:
    """The number of the series (from 1) that deal ``deal_number`` belongs to."""
    if after_series != NEW_SERIES:
        return 1
    return (deal_number - 1) // series_length + 1


@dataclass
class DealEvents:
    """One deal's decoded events in export order, with their stream versions."""

    number: int
    events: list[Event] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)

    _found: dict[type[Event], Event | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _found_among: int = field(default=0, init=False, repr=False, compare=False)

    def first(self, event_type: type[Event]) -> Event | None:
        """The first event of a type, if any."""
        # The checks ask for the same few types again and again (ten look-ups per deal): each
        # answer is kept while the events are the ones it was found among (the verifier appends
        # them all before any check reads them; an event appended later forgets the answers).
        found = self._found
        if self._found_among != len(self.events):
            found.clear()
            self._found_among = len(self.events)
        elif event_type in found:
            return found[event_type]
        answer = None
        for event in self.events:  # a plain loop
            if isinstance(event, event_type):
                answer = event
                break
        found[event_type] = answer
        return answer

    @property
    def finished(self) -> bool:
        """Scored (and so its seed is published)."""
        return self.first(DealScored) is not None
