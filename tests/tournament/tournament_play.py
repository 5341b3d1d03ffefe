"""Helpers: create, fill and play tournaments through the real services, and check the results."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass

import psycopg

from sapsam.app.tables import TableService
from sapsam.app.tournament_control import TournamentControl
from sapsam.app.tournaments import TournamentService, TournamentSettings
from sapsam.audit.database import verify_table_online
from sapsam.audit.sample_play import play_deal
from sapsam.domain.events import DealScored
from sapsam.domain.tournament import TournamentState
from sapsam.domain.tournament_events import DealCredited
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.store.event_store import EventStore

FAR_FUTURE_MS = 4_102_444_800_000  # 2100-01-01
OPERATOR_TOKEN = "operator-token-for-tournament-tests-0123"


@dataclass(frozen=True)
class Services:
    """What a tournament test drives (the ``services`` fixture)."""

    store: EventStore
    tables: TableService
    tournaments: TournamentControl
    database_url: str


def settings(
    seats: int = 4, rounds: int = 2, deals: int = 2, reseating: str = "random", **changes: object
) -> TournamentSettings:
    """Tournament settings whose registration is open now."""
    values: dict[str, object] = {
        "name": "Test cup",
        "rule_set": DEFAULT_RULE_SET,
        "seats_per_table": seats,
        "rounds": rounds,
        "deals_per_round": deals,
        "registration_opens_ms": 0,
        "registration_closes_ms": FAR_FUTURE_MS,
        "max_entrants": 64,
        "reseating": reseating,
    }
    values.update(changes)
    return TournamentSettings(**values)  # type: ignore[arg-type]


async def started_tournament(
    tournaments: TournamentService, players: int, **changes: object
) -> uuid.UUID:
    """A tournament with ``players`` registered and started (round 1 tables ready)."""
    created = await tournaments.create(settings(**changes), "operator", f"create-{uuid.uuid4()}")
    tournament_id = created.tournament_id
    for index in range(players):
        await tournaments.register(tournament_id, f"player-{index:02}", f"register-{tournament_id}")
    await tournaments.start(tournament_id, "operator", f"start-{tournament_id}")
    return tournament_id


async def play_round_deal(
    tables: TableService, state: TournamentState, deal_number: int
) -> list[uuid.UUID]:
    """Play deal ``deal_number`` at every table of the current round; returns the tables."""
    played = []
    for table in state.round_tables(state.current_round):
        await play_deal(tables, table.table_id, deal_number, entropy=deal_number % 2 == 1)
        played.append(table.table_id)
    return played


async def credited_deals(tournaments: TournamentService, tournament_id: uuid.UUID) -> Counter[str]:
    """How often each (table, deal) was credited in the tournament's stream."""
    counts: Counter[str] = Counter()
    for recorded in await tournaments.events(tournament_id):
        event = tournaments.decode(recorded)
        if isinstance(event, DealCredited):
            counts[f"{event.table_id}/{event.deal_number}"] += 1
    return counts


async def verified_totals(
    tables: TableService, tournaments: TournamentService, tournament_id: uuid.UUID
) -> dict[str, int]:
    """Each player's total summed from the tables' scored deals, every table verified first."""
    state = await tournaments.load(tournament_id)
    totals = dict.fromkeys(state.entrants, 0)
    # The audit reads on a synchronous connection of its own.
    conninfo = tables.store.pool.conninfo  # type: ignore[attr-defined]
    with psycopg.connect(conninfo) as connection:
        for table in state.tables.values():
            report = verify_table_online(connection, table.table_id)
            assert report.ok, report
            for recorded in await tables.events(table.table_id):
                event = tables.decode(recorded)
                if isinstance(event, DealScored):
                    for player, delta in zip(table.players, event.totals, strict=True):
                        totals[player] += delta
    return totals
