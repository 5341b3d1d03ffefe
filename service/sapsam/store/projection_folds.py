"""The game's read models computed in memory from the log, for the whole-database audit.

``sapsam audit verify --all`` must say whether the live read models are what the log makes of
them. Replaying the log through the projectors' SQL does that, but it updates a long-lived table's
``table_state`` row once per event inside one transaction: every update walks the row's chain of
versions, so the cost grows with the square of the table's length (a 2,000-deal table took
minutes). Here each read model is a fold over one stream's events into plain rows, shaped as
``to_jsonb`` prints the live rows, so the audit compares them with one read of each live table and
its cost grows linearly with the log.

Each fold states the same change as its projector's SQL (``sapsam.store.table_state_projection``,
``sapsam.store.tournament_projections``), event type by event type.
``tests/tournament/test_audit_folds.py`` holds every fold to its projector's rebuilt rows and
``FOLDED_TABLE_EVENTS`` to the SQL's list of event types, so the two cannot drift apart unnoticed.
A projector without a fold is compared by replaying its SQL (``projection_audit``). No I/O here.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from sapsam.log.records import RecordedEvent
from sapsam.store.tournament_projections import period_of

Row = dict[str, Any]
TABLE_PREFIX = "table-"
TOURNAMENT_PREFIX = "tournament-"
_FRESH_SEAT: Row = {"committed": False, "confirmed": False, "revealed": False, "timed_out": None}


class ReadModelFold(Protocol):
    """A projector's tables as rows folded from the log, one stream at a time."""

    @property
    def name(self) -> str:
        """The projector's name."""
        ...

    def fold_stream(self, events: Sequence[RecordedEvent]) -> None:
        """Fold one whole stream (in version order); each stream is given once."""
        ...

    def rows(self) -> dict[str, list[Row]]:
        """Every table of the projector and its rows, as ``to_jsonb`` gives the live ones."""
        ...


def _uuid_text(text: str) -> str:
    """A uuid column's value as PostgreSQL prints it (lowercase, hyphenated)."""
    return str(uuid.UUID(text))


def _after_reveal(status: list[Row]) -> str:
    """REVEALING while a seat has neither revealed nor timed out, else AWAITING_SEED."""
    waiting = any(
        seat.get("revealed") is False and seat.get("timed_out") is None for seat in status
    )
    return "REVEALING" if waiting else "AWAITING_SEED"


def _set_seat(row: Row, data: Row, key: str, value: object) -> None:
    seat = data.get("seat")
    status = row["seat_status"]
    if isinstance(seat, int) and 0 <= seat < len(status):
        status[seat][key] = value


def _player_seated(row: Row, data: Row) -> None:
    seat = data.get("seat")
    if isinstance(seat, int) and 0 <= seat < len(row["players"]):
        row["players"][seat] = str(data["player_id"])
    if None not in row["players"]:
        row["phase"] = "AWAITING_DEALER"


def _seat_replaced(row: Row, data: Row) -> None:
    seat = data.get("seat")
    if isinstance(seat, int) and 0 <= seat < len(row["players"]):
        row["players"][seat] = str(data["player_id"])


def _deal_started(row: Row, data: Row) -> None:
    row.update(phase="AWAITING_CUT", dealer=data["dealer"], deal_number=data["deal_number"])
    row["seat_status"] = [dict(_FRESH_SEAT) for _ in range(row["seat_count"])]


def _revealed(row: Row, data: Row) -> None:
    _set_seat(row, data, "revealed", True)
    row["phase"] = _after_reveal(row["seat_status"])


def _timed_out(row: Row, data: Row) -> None:
    _set_seat(row, data, "timed_out", data["stage"])
    if row["phase"] == "REVEALING":
        row["phase"] = _after_reveal(row["seat_status"])


def _reveals_opened(row: Row, data: Row) -> None:
    row.update(phase=_after_reveal(row["seat_status"]), deadline_ms=data["reveal_deadline_ms"])


def _announced(row: Row, data: Row) -> None:
    _set_seat(row, data, "announced", True)
    row["deadline_ms"] = data["deadline_ms"]


def _scored(row: Row, data: Row) -> None:
    row.update(phase="BETWEEN_DEALS", deadline_ms=None, deals_scored=data["deal_number"])
    row["series_totals"] = list(data["series_totals"])


# table_state_projection._ASSIGNMENTS, event type by event type (the rest change only the version
# and the position).
_TABLE_CHANGES: dict[str, Callable[[Row, Row], None]] = {
    "PlayerSeated": _player_seated,
    "DealerChosen": lambda row, data: row.update(phase="BETWEEN_DEALS", dealer=data["dealer"]),
    "DealStarted": _deal_started,
    "DeckCut": lambda row, data: row.update(phase="DEALING"),
    "CardsDealt": lambda row, data: row.update(
        phase="ARRANGING", deadline_ms=data["arrange_deadline_ms"]
    ),
    "ArrangementCommitted": lambda row, data: _set_seat(row, data, "committed", True),
    "SeatConfirmed": lambda row, data: _set_seat(row, data, "confirmed", True),
    "ArrangementRevealed": _revealed,
    "SeatTimedOut": _timed_out,
    "RevealsOpened": _reveals_opened,
    "DealScored": _scored,
    "DeadlinesExtended": lambda row, data: row.update(deadline_ms=data["deadline_ms"]),
    "AnnouncementsOpened": lambda row, data: row.update(
        phase="ANNOUNCING", deadline_ms=data["deadline_ms"]
    ),
    "SurrenderAnnounced": _announced,
    "DealVoided": lambda row, data: row.update(phase="BETWEEN_DEALS", deadline_ms=None),
    "SeatReplaced": _seat_replaced,
    "SeriesCompleted": lambda row, data: row.update(phase="SERIES_COMPLETE"),
    "StreetDealt": lambda row, data: row.update(phase="PLAYING", deadline_ms=data["deadline_ms"]),
    "CardsPlaced": lambda row, data: row.update(deadline_ms=data["deadline_ms"]),
    "FantasylandRevealsOpened": lambda row, data: row.update(deadline_ms=data["deadline_ms"]),
    "SeriesStarted": lambda row, data: row.update(
        phase="BETWEEN_DEALS", series_totals=[0] * row["seat_count"]
    ),
}
FOLDED_TABLE_EVENTS = frozenset(_TABLE_CHANGES)


def _created_row(event: RecordedEvent) -> Row:
    data = event.data
    rule_set = data["rule_set"]
    seat_count = data["seat_count"]
    assert isinstance(rule_set, dict) and isinstance(seat_count, int)
    return {
        "table_id": _uuid_text(event.stream_id.removeprefix(TABLE_PREFIX)),
        "rule_set_name": rule_set["name"],
        "seat_count": seat_count,
        "series_length": rule_set["series_length"],
        "created_by": data["created_by"],
        "created_at": event.metadata.get("recorded_at", ""),
        "players": [None] * seat_count,
        "phase": "SEATING",
        "dealer": None,
        "deal_number": 0,
        "deals_scored": 0,
        "seat_status": [dict(_FRESH_SEAT) for _ in range(seat_count)],
        "series_totals": [0] * seat_count,
        "deadline_ms": None,
        "version": event.version,
        "last_position": event.position,
    }


def table_state_row(events: Iterable[RecordedEvent]) -> Row | None:
    """The ``table_state`` row of one table's stream (None before its ``TableCreated``)."""
    row: Row | None = None
    for event in events:
        if event.type == "TableCreated":
            row = _created_row(event)
            continue
        if row is None:
            continue  # the SQL's UPDATE finds no row either
        change = _TABLE_CHANGES.get(event.type)
        if change is not None:
            data: Any = event.data  # shapes are checked as they are read
            change(row, data)
        row["version"] = event.version
        row["last_position"] = event.position
    return row


class TableStateFold:
    """``table_state``: one row per table, and what the audit reads of a table's phase."""

    name = "table_state"

    def __init__(self) -> None:
        self.tables: dict[str, Row] = {}

    def fold_stream(self, events: Sequence[RecordedEvent]) -> None:
        """Fold a table's stream into its row (other streams have none)."""
        if events and events[0].stream_id.startswith(TABLE_PREFIX):
            row = table_state_row(events)
            if row is not None:
                self.tables[events[0].stream_id] = row

    def rows(self) -> dict[str, list[Row]]:
        """The ``table_state`` rows."""
        return {"table_state": list(self.tables.values())}


class SeatScoresFold:
    """``seat_scores``: one row per seat of every scored deal, with the seat's player then."""

    name = "seat_scores"

    def __init__(self) -> None:
        self.scores: list[Row] = []

    def fold_stream(self, events: Sequence[RecordedEvent]) -> None:
        """Fold a table's stream: its players as seated (or replaced), a row per seat per
        ``DealScored``."""
        if not events or not events[0].stream_id.startswith(TABLE_PREFIX):
            return
        table_id = _uuid_text(events[0].stream_id.removeprefix(TABLE_PREFIX))
        players: list[str | None] | None = None
        for event in events:
            data: Any = event.data  # shapes are checked as they are read
            if event.type == "TableCreated":
                count = data["seat_count"]
                players = [None] * count if isinstance(count, int) else None
            elif event.type in ("PlayerSeated", "SeatReplaced") and players is not None:
                seat = data.get("seat")
                if isinstance(seat, int) and 0 <= seat < len(players):
                    players[seat] = str(data["player_id"])
            elif event.type == "DealScored":
                seated = players or []
                for seat, (delta, total, fouled) in enumerate(
                    zip(data["totals"], data["series_totals"], data["fouls"], strict=False)
                ):
                    self.scores.append(
                        {
                            "table_id": table_id,
                            "deal_number": data["deal_number"],
                            "seat": seat,
                            "player_id": (seated[seat] if seat < len(seated) else None) or "",
                            "delta": delta,
                            "series_total": total,
                            "fouled": fouled,
                        }
                    )

    def rows(self) -> dict[str, list[Row]]:
        """The ``seat_scores`` rows."""
        return {"seat_scores": self.scores}


class TournamentsFold:
    """``tournaments``, ``tournament_entries`` and ``tournament_tables`` (one projector)."""

    name = "tournaments"

    def __init__(self) -> None:
        self.tournaments: list[Row] = []
        self.entries: list[Row] = []
        self.tables: list[Row] = []

    def fold_stream(self, events: Sequence[RecordedEvent]) -> None:
        """Fold one tournament's stream into its rows (other streams have none)."""
        if not events or not events[0].stream_id.startswith(TOURNAMENT_PREFIX):
            return
        tournament_id = _uuid_text(events[0].stream_id.removeprefix(TOURNAMENT_PREFIX))
        row: Row | None = None
        entries: dict[str, Row] = {}
        for event in events:
            data: Any = event.data  # shapes are checked as they are read
            if event.type == "TournamentCreated":
                row = _tournament_row(tournament_id, event)
                continue
            if row is not None:
                row["version"] = event.version
            if event.type == "PlayerRegistered":
                player = str(data["player_id"])
                entries[player] = {
                    "tournament_id": tournament_id,
                    "player_id": player,
                    "total": 0,
                    "deals_won": 0,
                    "deals_played": 0,
                }
                if row is not None:
                    row["entrant_count"] = len(entries)
            elif event.type == "PlayerUnregistered":
                entries.pop(str(data["player_id"]), None)
                if row is not None:
                    row["entrant_count"] = len(entries)
            elif event.type == "SeatReassigned":
                player = str(data["player_id"])
                entries.setdefault(
                    player,
                    {
                        "tournament_id": tournament_id,
                        "player_id": player,
                        "total": 0,
                        "deals_won": 0,
                        "deals_played": 0,
                    },
                )
                if row is not None:
                    row["entrant_count"] = len(entries)
            elif event.type == "RoundSeated":
                for index, (table_id, players) in enumerate(
                    zip(data["table_ids"], data["seatings"], strict=False)
                ):
                    self.tables.append(
                        {
                            "table_id": _uuid_text(table_id),
                            "tournament_id": tournament_id,
                            "round": data["round"],
                            "table_index": index,
                            "players": players,
                        }
                    )
            elif event.type == "DealCredited":
                for player, delta in zip(data["players"], data["deltas"], strict=False):
                    entry = entries.get(player)
                    if entry is not None:
                        entry["total"] += delta
                        entry["deals_won"] += 1 if delta > 0 else 0
                        entry["deals_played"] += 1
            if row is not None:
                _tournament_change(row, event.type, data)
        if row is not None:
            self.tournaments.append(row)
        self.entries.extend(entries.values())

    def rows(self) -> dict[str, list[Row]]:
        """The rows of the three tables."""
        return {
            "tournaments": self.tournaments,
            "tournament_entries": self.entries,
            "tournament_tables": self.tables,
        }


def _tournament_row(tournament_id: str, event: RecordedEvent) -> Row:
    data = event.data
    rule_set = data["rule_set"]
    assert isinstance(rule_set, dict)
    row = {
        field: data[field]
        for field in (
            "name",
            "seats_per_table",
            "rounds",
            "deals_per_round",
            "reseating",
            "tie_break",
            "registration_opens_ms",
            "registration_closes_ms",
            "max_entrants",
            "created_at_ms",
        )
    }
    row.update(
        tournament_id=tournament_id,
        rule_set_name=rule_set["name"],
        started_at_ms=None,
        period=None,
        phase="REGISTRATION",
        current_round=0,
        rounds_completed=0,
        entrant_count=0,
        version=event.version,
    )
    return row


def _tournament_change(row: Row, event_type: str, data: Row) -> None:
    if event_type == "TournamentStarted":
        started = data["started_at_ms"]
        assert isinstance(started, int)
        row.update(started_at_ms=started, period=period_of(started), phase="RUNNING")
    elif event_type == "RoundSeated":
        row.update(current_round=data["round"], phase="RUNNING")
    elif event_type == "RoundCompleted":
        paused = row["phase"] == "PAUSED"  # a round may complete during a pause
        row.update(rounds_completed=data["round"], phase="PAUSED" if paused else "BETWEEN_ROUNDS")
    elif event_type == "TournamentCompleted":
        row["phase"] = "COMPLETE"
    elif event_type == "TournamentPaused":
        row["phase"] = "PAUSED"
    elif event_type == "TournamentResumed":
        between = row["rounds_completed"] >= row["current_round"]
        row["phase"] = "BETWEEN_ROUNDS" if between else "RUNNING"
    elif event_type == "TournamentCancelled":
        row["phase"] = "CANCELLED"


# Projector name -> its fold; a projector not listed here is compared by replaying its SQL.
FOLDS: dict[str, Callable[[], ReadModelFold]] = {
    "table_state": TableStateFold,
    "seat_scores": SeatScoresFold,
    "tournaments": TournamentsFold,
}
