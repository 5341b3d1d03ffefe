"""The tournament's events: frozen dataclasses in the past tense, JSON-native fields only.

A tournament is one stream, ``tournament-<uuid>``. Its events use the table events' conventions
(``sapsam.domain.events``): a stable ``TYPE``, a ``SCHEMA_VERSION``, bytes as lowercase hex, no
floats. Lists that belong together are parallel tuples (players and their deltas, in seat order),
so an auditor in another language reads them without knowing our classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from sapsam.domain.event_codec import EventCodec
from sapsam.domain.events import Event, JsonValue


@dataclass(frozen=True)
class TournamentCreated(Event):
    """A tournament exists, with every setting and one seating commitment per round.

    ``seating_commitments[r - 1]`` binds round ``r``'s seating seed (docs/tournaments.md), so the
    seats cannot be chosen after the entrants are known. Times are Unix milliseconds.
    """

    TYPE: ClassVar[str] = "TournamentCreated"
    tournament_id: str
    name: str
    rule_set: Mapping[str, JsonValue]
    seats_per_table: int
    rounds: int
    deals_per_round: int
    registration_opens_ms: int
    registration_closes_ms: int
    max_entrants: int
    reseating: str
    tie_break: str
    seating_commitments: tuple[str, ...]
    created_by: str
    created_at_ms: int


@dataclass(frozen=True)
class PlayerRegistered(Event):
    """A player entered the tournament."""

    TYPE: ClassVar[str] = "PlayerRegistered"
    player_id: str
    registered_at_ms: int


@dataclass(frozen=True)
class PlayerUnregistered(Event):
    """A player withdrew before the start."""

    TYPE: ClassVar[str] = "PlayerUnregistered"
    player_id: str


@dataclass(frozen=True)
class TournamentStarted(Event):
    """Registration closed; ``entrants`` in canonical order (by their ids' UTF-8 bytes)."""

    TYPE: ClassVar[str] = "TournamentStarted"
    entrants: tuple[str, ...]
    started_at_ms: int


@dataclass(frozen=True)
class RoundSeated(Event):
    """A round's tables and who sits where, with the round's seating seed revealed.

    ``seatings[i]`` lists table ``table_ids[i]``'s players by seat (seat 0 first). ``method`` is
    ``random`` or ``standings``; either way anyone can redo the draw from the seed.
    """

    TYPE: ClassVar[str] = "RoundSeated"
    round: int
    method: str
    seating_seed: str
    table_ids: tuple[str, ...]
    seatings: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class DealCredited(Event):
    """A finished deal of a tournament table counted towards the standings.

    ``players`` and ``deltas`` are in seat order, as the table's ``DealScored.totals``;
    ``source_position`` is that ``DealScored`` event's position in the log.
    """

    TYPE: ClassVar[str] = "DealCredited"
    round: int
    table_id: str
    deal_number: int
    players: tuple[str, ...]
    deltas: tuple[int, ...]
    source_position: int


@dataclass(frozen=True)
class TableSetCompleted(Event):
    """An open-face table of the round finished its set (its ``SeriesCompleted``), after the
    credited deal ``last_deal``: its round is complete, whatever the number of deals (a set
    counts its Fantasyland deals and may end early after a timeout, docs/tournaments.md).
    Never recorded for a closed tournament, whose tables complete after ``deals_per_round``
    credited deals."""

    TYPE: ClassVar[str] = "TableSetCompleted"
    round: int
    table_id: str
    last_deal: int
    deals_credited: int


@dataclass(frozen=True)
class RoundCompleted(Event):
    """Every deal of every table of the round is credited."""

    TYPE: ClassVar[str] = "RoundCompleted"
    round: int


@dataclass(frozen=True)
class TournamentCompleted(Event):
    """The last round is complete: final standings, best first (parallel tuples)."""

    TYPE: ClassVar[str] = "TournamentCompleted"
    players: tuple[str, ...]
    totals: tuple[int, ...]
    places: tuple[int, ...]


@dataclass(frozen=True)
class TournamentPaused(Event):
    """The operator paused the tournament: no round is seated, no deal starts at its tables and
    no deadline runs out there until it resumes (docs/tournaments.md, "Pause, resume, cancel")."""

    TYPE: ClassVar[str] = "TournamentPaused"
    reason: str
    paused_at_ms: int


@dataclass(frozen=True)
class TournamentResumed(Event):
    """The pause that began at ``paused_at_ms`` ended; deadlines that fell in it (or within the
    grace after it) are extended at each table as after a server outage."""

    TYPE: ClassVar[str] = "TournamentResumed"
    paused_at_ms: int
    resumed_at_ms: int


@dataclass(frozen=True)
class TournamentCancelled(Event):
    """The operator ended the tournament before its last round: nothing is credited after this.
    The standings as they stood, best first (parallel tuples), as ``TournamentCompleted``'s."""

    TYPE: ClassVar[str] = "TournamentCancelled"
    reason: str
    cancelled_at_ms: int
    players: tuple[str, ...]
    totals: tuple[int, ...]
    places: tuple[int, ...]


@dataclass(frozen=True)
class PlayerForfeited(Event):
    """An entrant left the tournament during ``round``: seated in no later round, the deals
    already credited stay theirs, and their seat this round is theirs until it is re-seated."""

    TYPE: ClassVar[str] = "PlayerForfeited"
    player_id: str
    round: int
    reason: str
    forfeited_at_ms: int


@dataclass(frozen=True)
class SeatReassigned(Event):
    """A forfeited player's seat at a table of the current round passed to ``player_id`` from
    deal ``from_deal`` on (the table records the same as ``SeatReplaced``); the new player is an
    entrant from now on. Deals before ``from_deal`` stay the previous player's."""

    TYPE: ClassVar[str] = "SeatReassigned"
    round: int
    table_id: str
    seat: int
    previous_player_id: str
    player_id: str
    from_deal: int


TOURNAMENT_EVENT_TYPES: tuple[type[Event], ...] = (
    TournamentCreated,
    PlayerRegistered,
    PlayerUnregistered,
    TournamentStarted,
    RoundSeated,
    DealCredited,
    RoundCompleted,
    TournamentCompleted,
    TournamentPaused,
    TournamentResumed,
    TournamentCancelled,
    PlayerForfeited,
    SeatReassigned,
    TableSetCompleted,
)

TOURNAMENT_CODEC = EventCodec(TOURNAMENT_EVENT_TYPES)
"""Encodes and decodes the tournament's events."""
