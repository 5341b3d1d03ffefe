"""Verify a tournament from the log: ``sapsam audit verify --tournament ID``.

Checks, in order (each named in the report; docs/tournaments.md explains them):

- ``seating_seed[r]``: round r's revealed seating seed matches the commitment published at
  creation, before anyone registered.
- ``seating[r]``: round r's tables are the documented draw (random, or by standings with totals
  recomputed from the verified deals before that round) over the entrants in the log (players
  re-seated in included, those who forfeited left out).
- ``table_seats[r.i]``: table i of round r was created with the tournament's rules and seats the
  drawn players in the drawn order.
- ``deal[r.i.n]``: each credited deal verifies (the audit's full deal verification), its
  credited deltas are that deal's scored totals, credited to whoever held each seat in that deal
  by the table's own log (the drawn players, a seat re-seated by ``SeatReplaced`` from the next
  deal on); ``credits``: every scored deal of every
  tournament table is credited exactly once (a deal scored but not yet credited is pending; in a
  cancelled tournament a deal scored after the cancellation counts for nothing, and one scored
  before it but never credited fails).
- ``set[r.i]`` (open face): table i of round r ended its round where its own log ends its set:
  after the deal scored last before its ``SeriesCompleted``, every deal of the set credited.
- ``standings``: each player's total equals the sum of their verified deal results, and the
  final standings (if complete), or those the cancellation recorded (if cancelled), rank those
  sums with equal totals sharing a place.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Mapping
from typing import Any

import psycopg

from sapsam.app.tournaments import stream_id_for
from sapsam.audit.database import verify_deal_online
from sapsam.audit.report import AuditCheck, AuditReport, Status
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import (
    DealScored,
    DealStarted,
    PlayerSeated,
    SeatReplaced,
    SeriesCompleted,
    TableCreated,
)
from sapsam.domain.tournament import Reseating, TournamentState, evolve, rank_players
from sapsam.domain.tournament_events import (
    TOURNAMENT_CODEC,
    DealCredited,
    RoundSeated,
    TableSetCompleted,
    TournamentCancelled,
    TournamentCompleted,
)
from sapsam.domain.tournament_seating import (
    seat_by_standings,
    seat_randomly,
    seating_commitment,
)
from sapsam.fairness.encoding import FairnessError
from sapsam.plurals import plural
from sapsam.store.offline_reads import read_stream

Connection = psycopg.Connection[Any]


def _passed(name: str, detail: str) -> AuditCheck:
    return AuditCheck(name, Status.PASSED, detail)


def _failed(name: str, detail: str, expected: object = "", found: object = "") -> AuditCheck:
    return AuditCheck(name, Status.FAILED, detail, str(expected), str(found))


def _check_seating(
    state: TournamentState, seated: RoundSeated, verified_totals: dict[str, int]
) -> list[AuditCheck]:
    assert state.tournament_id is not None
    checks = []
    seed = bytes.fromhex(seated.seating_seed)
    name = f"seating_seed[{seated.round}]"
    try:
        commitment = seating_commitment(state.tournament_id, seated.round, seed)
    except FairnessError as error:
        return [_failed(name, str(error))]
    if commitment == state.seating_commitments[seated.round - 1]:
        checks.append(_passed(name, "the revealed seed matches the commitment made at creation"))
    else:
        checks.append(_failed(name, "the revealed seed does not match its commitment"))
        return checks
    method = Reseating.RANDOM if seated.round == 1 else state.reseating
    # Who the draw seats: the entrants, and any player re-seated in, less those who forfeited.
    pool = state.seating_pool
    if method is Reseating.RANDOM:
        expected = seat_randomly(
            state.tournament_id, seated.round, seed, pool, state.seats_per_table
        )
    else:
        totals = {player: verified_totals.get(player, 0) for player in pool}
        expected = seat_by_standings(
            state.tournament_id, seated.round, seed, totals, state.seats_per_table
        )
    name = f"seating[{seated.round}]"
    if seated.method == method.value and tuple(seated.seatings) == expected:
        checks.append(_passed(name, f"{method.value} draw over {len(pool)} entrants"))
    else:
        checks.append(
            _failed(name, "the tables are not the documented draw", expected, seated.seatings)
        )
    return checks


Scored = dict[int, tuple[tuple[int, ...], int]]
"""A table's scored deals: number -> (totals, log position)."""
Replaced = list[tuple[int, int, str]]
"""A table's re-seated seats in order: (seat, first deal, player), from its SeatReplaced."""


def _check_table(
    connection: Connection,
    state: TournamentState,
    seated: RoundSeated,
    index: int,
    set_ends: dict[str, int],
) -> tuple[list[AuditCheck], Scored, Replaced]:
    """The table's seats, its scored deals and its re-seated seats; ``set_ends`` gets the last
    scored deal before the table's ``SeriesCompleted``, if it has one."""
    table_id = seated.table_ids[index]
    players = seated.seatings[index]
    name = f"table_seats[{seated.round}.{index}]"
    seats: dict[int, str] = {}
    created: TableCreated | None = None
    scored: Scored = {}
    replaced: Replaced = []
    last_deal = 0
    for recorded in read_stream(connection, f"table-{table_id}"):
        event = DEFAULT_CODEC.decode(recorded.type, recorded.schema_version, recorded.data)
        if isinstance(event, TableCreated):
            created = event
        elif isinstance(event, PlayerSeated):
            seats[event.seat] = event.player_id
        elif isinstance(event, DealStarted):
            last_deal = event.deal_number
        elif isinstance(event, SeatReplaced):
            replaced.append((event.seat, last_deal + 1, event.player_id))
        elif isinstance(event, DealScored):
            scored[event.deal_number] = (event.totals, recorded.position)
        elif isinstance(event, SeriesCompleted):
            set_ends[table_id] = max(scored, default=0)
    if created is None:
        return [AuditCheck(name, Status.PENDING, "the table is not created yet")], scored, replaced
    wanted = state.table_rule_set(created.seat_count)
    found = tuple(seats.get(seat) for seat in range(created.seat_count))
    if _json_form(created.rule_set) == _json_form(wanted) and found == tuple(players):
        checks = [_passed(name, f"{plural(len(players), 'player')} seated as drawn, rules as set")]
        return checks, scored, replaced
    return (
        [_failed(name, "the table's seats or rules differ from the draw", players, found)],
        scored,
        replaced,
    )


def _json_form(rule_set: Mapping[str, object]) -> str:
    """A recorded rule set as JSON text, so one read back from the log (arrays as tuples)
    compares equal to the same one built in memory (lists)."""
    return json.dumps(rule_set, sort_keys=True, separators=(",", ":"))


def _check_set_completed(
    event: TableSetCompleted, set_ends: dict[str, int], credited: Counter[tuple[str, int]]
) -> AuditCheck:
    """An open-face table's round ended where its own log says its set did: after the deal
    scored last before its ``SeriesCompleted``, with every deal of the set credited."""
    name = f"set[{event.round}.{event.table_id[:8]}]"
    last = set_ends.get(event.table_id)
    count = sum(1 for table, _deal in credited if table == event.table_id)
    if last is None:
        return _failed(name, "the table's set is not over in its log", "SeriesCompleted", "none")
    if event.last_deal != last or event.deals_credited != count:
        return _failed(
            name,
            "the round ended elsewhere than the table's set",
            f"after deal {last}, {count} credited",
            f"after deal {event.last_deal}, {event.deals_credited} credited",
        )
    return _passed(name, f"the set ended after deal {last}; {plural(count, 'deal')} credited")


def _holders(drawn: tuple[str, ...], replaced: Replaced, deal_number: int) -> tuple[str, ...]:
    """Who held each seat in a deal, by the table's own log (its SeatReplaced events)."""
    holders = list(drawn)
    for seat, first_deal, player in replaced:
        if first_deal <= deal_number and 0 <= seat < len(holders):
            holders[seat] = player
    return tuple(holders)


def verify_tournament(connection: Connection, tournament_id: uuid.UUID) -> AuditReport:
    """Every check of the module docstring over the tournament's stream and its tables."""
    subject = f"tournament {tournament_id}"
    recorded_events = read_stream(connection, stream_id_for(tournament_id))
    if not recorded_events:
        return AuditReport(subject, (_failed("tournament", "no such tournament"),))
    checks: list[AuditCheck] = []
    state = TournamentState()
    verified_totals: dict[str, int] = {}
    credited: Counter[tuple[str, int]] = Counter()
    scored_deals: dict[tuple[str, int], tuple[tuple[int, ...], int]] = {}
    table_players: dict[str, tuple[str, ...]] = {}
    table_replaced: dict[str, Replaced] = {}
    set_ends: dict[str, int] = {}
    """An open-face table's last scored deal, once its set is over (its SeriesCompleted)."""
    deals_verified = 0
    final: TournamentCompleted | TournamentCancelled | None = None
    cancelled_at: int | None = None
    """The cancellation's log position (a deal scored after it counts for nothing)."""
    for recorded in recorded_events:
        event = TOURNAMENT_CODEC.decode(recorded.type, recorded.schema_version, recorded.data)
        if isinstance(event, RoundSeated):
            checks += _check_seating(state, event, verified_totals)
            for index, table_id in enumerate(event.table_ids):
                table_checks, scored, replaced = _check_table(
                    connection, state, event, index, set_ends
                )
                checks += table_checks
                table_players[table_id] = event.seatings[index]
                table_replaced[table_id] = replaced
                for number, outcome in scored.items():
                    scored_deals[(table_id, number)] = outcome
        elif isinstance(event, DealCredited):
            key = (event.table_id, event.deal_number)
            credited[key] += 1
            name = f"deal[{event.round}.{event.table_id[:8]}.{event.deal_number}]"
            report = verify_deal_online(connection, uuid.UUID(event.table_id), event.deal_number)
            result = scored_deals.get(key)
            if not report.ok:
                first = report.first_divergence
                checks.append(_failed(name, f"the deal does not verify: {first and first.label}"))
            elif result is None or result[0] != event.deltas or result[1] != event.source_position:
                checks.append(
                    _failed(
                        name, "credited deltas differ from the scored deal", result, event.deltas
                    )
                )
            elif event.players != _holders(
                table_players.get(event.table_id, ()),
                table_replaced.get(event.table_id, []),
                event.deal_number,
            ):
                checks.append(_failed(name, "credited to other players than the table's"))
            else:
                deals_verified += 1
                checks.append(_passed(name, f"verified; deltas {list(event.deltas)}"))
                for player, delta in zip(event.players, event.deltas, strict=True):
                    verified_totals[player] = verified_totals.get(player, 0) + delta
        elif isinstance(event, TableSetCompleted):
            checks.append(_check_set_completed(event, set_ends, credited))
        elif isinstance(event, TournamentCompleted):
            final = event
        elif isinstance(event, TournamentCancelled):
            final, cancelled_at = event, recorded.position
        state = evolve(state, event)
    doubled = sorted(
        f"{table[:8]}/{deal}" for (table, deal), count in credited.items() if count > 1
    )
    uncredited = [key for key in scored_deals if key not in credited]
    after_cancel = {
        key
        for key in uncredited
        if cancelled_at is not None and scored_deals[key][1] > cancelled_at
    }
    missing = sorted(
        f"{table[:8]}/{deal}" for (table, deal) in uncredited if (table, deal) not in after_cancel
    )
    passed = f"{len(credited)} scored deals, each credited once"
    if after_cancel:
        passed += f"; {len(after_cancel)} finished after the cancellation, counting for nothing"
    if doubled:
        checks.append(_failed("credits", "deals credited more than once", "", ", ".join(doubled)))
    elif missing and cancelled_at is not None:
        checks.append(
            _failed(
                "credits", "scored before the cancellation, never credited", "", ", ".join(missing)
            )
        )
    elif missing:
        checks.append(
            AuditCheck("credits", Status.PENDING, f"scored, not yet credited: {', '.join(missing)}")
        )
    else:
        checks.append(_passed("credits", passed))
    checks.append(_standings_check(state, verified_totals, final))
    return AuditReport(
        subject, tuple(checks), deals_verified=deals_verified, events_checked=len(recorded_events)
    )


def _standings_check(
    state: TournamentState,
    verified: dict[str, int],
    final: TournamentCompleted | TournamentCancelled | None,
) -> AuditCheck:
    sums = {player: verified.get(player, 0) for player in state.entrants}
    if dict(state.totals) != sums:
        return _failed(
            "standings", "totals are not the sums of the verified deals", sums, dict(state.totals)
        )
    if final is None:
        return _passed("standings", "running totals equal the sums of the verified deals")
    # Nothing is credited after a cancellation, so the sums at the end are those at it; a
    # tournament cancelled before its start ranks its registered players (all at 0).
    which = "the cancellation's" if isinstance(final, TournamentCancelled) else "the final"
    players = state.entrants or state.registered
    ranked = rank_players(
        players,
        {player: sums.get(player, 0) for player in players},
        state.deals_won,
        state.deals_played,
        state.tie_break,
    )
    expected = [(item.player_id, item.total, item.place) for item in ranked]
    found = list(zip(final.players, final.totals, final.places, strict=False))
    if expected == found and len(final.players) == len(final.totals) == len(final.places):
        shared = len({item.place for item in ranked}) < len(ranked)
        note = "; equal totals share places" if shared else ""
        detail = f"{which} standings follow from the verified deals{note}"
        return _passed("standings", detail.removeprefix("the "))
    return _failed("standings", f"{which} standings do not rank the verified sums", expected, found)
