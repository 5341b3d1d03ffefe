"""The table aggregate: ``decide(state, command) -> events`` and ``evolve(state, event) -> state``.

``decide``, ``evolve`` and ``fold`` here are a table's of any game family: they hand each command
and event to the family the table plays (``sapsam.domain.families``; the rule set recorded in
``TableCreated`` names it, and a rule set that names none is the closed game's, so every table
recorded before families replays as it did). The rest of this module is the closed game's.

Only ``decide`` validates: it refuses a command with a ``DomainError`` and then produces no events.
``evolve`` trusts the log and never raises, so any stored stream replays to the state it describes.

A table's life: created → seats filled → dealer drawn by lot → deals, each going
``AWAITING_CUT → DEALING → ARRANGING → REVEALING → AWAITING_SEED → (scored)`` → the next deal with
the dealer passing left → after ``series_length`` deals, the series is complete.

This module is the aggregate's public entry; the closed game's parts live beside it:

- ``table_state``: the state records (``TableState``, ``DealState``, ``Reveal``) and the phase;
- ``table_decide``: ``decide``, one function per command (the play of a deal in ``table_play``,
  its end and the arrangements it scores in ``table_scoring``, shared checks in ``table_checks``);
- ``table_evolve``: ``evolve`` and ``fold``, one function per event;
- ``table_deadlines``: when a passed deadline is extended rather than enforced (outages).
"""

from __future__ import annotations

from sapsam.domain.families import decide, decide_folded, evolve, fold
from sapsam.domain.table_decide import (
    AFTER_SERIES_OPTIONS,
    COMMITMENT_BYTES,
    arrangement_text,
    final_arrangements,
)
from sapsam.domain.table_state import (
    INITIAL_STATE,
    DealState,
    Reveal,
    SeatTimeout,
    TablePhase,
    TableState,
)

__all__ = [
    "AFTER_SERIES_OPTIONS",
    "COMMITMENT_BYTES",
    "INITIAL_STATE",
    "DealState",
    "Reveal",
    "SeatTimeout",
    "TablePhase",
    "TableState",
    "arrangement_text",
    "decide",
    "decide_folded",
    "evolve",
    "final_arrangements",
    "fold",
]
