"""The table service over a real PostgreSQL: deals end to end, refusals, retries, read models."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest

from sapsam import fairness
from sapsam.app.tables import LOT_SECRET_NUMBER, TableService, stream_id_for
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import SeatTimedOut
from sapsam.domain.published import published_deal
from sapsam.domain.table import INITIAL_STATE, TablePhase, fold
from sapsam.log.records import ConcurrencyConflict
from sapsam.rules.arrangement import check_arrangement
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.scoring import score_deal
from sapsam.rules.solver import solve
from sapsam.store import subscriptions
from sapsam.store.deal_secrets import load_deal_seed
from sapsam.store.event_store import EventStore
from sapsam.store.projections import rebuild_projections
from sapsam.store.table_projections import projectors, table_rows_as_json

PLAYERS = ("ann", "bob", "cid", "dee")


@pytest.fixture
async def service(database_url: str) -> AsyncIterator[TableService]:
    store = await EventStore.connect(database_url, projectors=projectors())
    store.prepare()
    try:
        yield TableService(store)
    finally:
        await store.close()


async def event_count(service: TableService) -> int:
    async with service.store.connection() as connection:
        row = await (await connection.execute("SELECT count(*) FROM events")).fetchone()
    assert row is not None
    return int(row[0])


async def seated_table(service: TableService, seat_count: int) -> uuid.UUID:
    created = await service.create_table(DEFAULT_RULE_SET, seat_count, "operator", "create-1")
    for player in PLAYERS[:seat_count]:
        await service.join(created.table_id, player, None, f"join-{player}")
    await service.choose_dealer(created.table_id, PLAYERS[0], "dealer")
    return created.table_id


async def play_deal(service: TableService, table_id: uuid.UUID, number: int) -> None:
    state = (await service.start_deal(table_id, "operator", f"start-{number}")).state
    deal = state.deal
    assert deal is not None
    cutter = state.seats[fairness.cutter_for(deal.dealer, state.seat_count)]
    assert cutter is not None
    await service.cut(table_id, cutter, 7 + number, f"cut-{number}")
    nonce = bytes([number]) * 16
    chosen = {}
    for player in state.seats:
        assert player is not None
        seat, hand = await service.hand_of(table_id, player)
        arrangement = solve(hand)
        chosen[player] = arrangement
        commitment = fairness.arrangement_commitment(table_id, number, seat, arrangement, nonce)
        await service.commit(table_id, player, commitment, f"commit-{number}")
        await service.confirm(table_id, player, f"confirm-{number}")
    for player, arrangement in chosen.items():
        await service.reveal(table_id, player, arrangement, nonce, f"reveal-{number}")


async def test_a_four_seat_deal_through_domain_and_store(service: TableService) -> None:
    table_id = await seated_table(service, 4)
    state = await service.load(table_id)
    assert state.phase is TablePhase.BETWEEN_DEALS and state.first_dealer is not None
    await play_deal(service, table_id, 1)
    state = await service.load(table_id)
    assert state.deals_scored == 1 and state.phase is TablePhase.BETWEEN_DEALS
    recorded = await service.events(table_id)
    events = [service.decode(event) for event in recorded]
    # Replaying the stored events gives the same state.
    assert fold(events, INITIAL_STATE) == state
    # The fair-dealing verifier passes on what the log holds, and scores match the rules engine.
    published = published_deal(events, 1)
    report = fairness.verify_deal(published)
    assert report.ok, [check for check in report.checks if not check.passed]
    hands = fairness.hands_for_deal(
        published.seed,
        published.contributions,
        table_id,
        1,
        published.cut_position,
        published.dealer,
        4,
    )
    expected = score_deal(DEFAULT_RULE_SET, [check_arrangement(solve(h), h) for h in hands])
    assert published.recorded_scores.totals == expected.totals
    # Each secret left the secrets table in the transaction that published it: the deal's seed
    # with SeedRevealed, the lot seed with DealerChosen.
    async with service.store.connection() as connection:
        assert await load_deal_seed(connection, stream_id_for(table_id), 1) is None
        assert await load_deal_seed(connection, stream_id_for(table_id), LOT_SECRET_NUMBER) is None


async def test_refused_commands_write_nothing(service: TableService) -> None:
    table_id = await seated_table(service, 2)
    before = await event_count(service)
    refusals = [
        (lambda: service.cut(table_id, "ann", 5, "r1"), Reason.WRONG_PHASE),
        (lambda: service.commit(table_id, "ann", b"x" * 32, "r2"), Reason.WRONG_PHASE),
        (lambda: service.join(table_id, "zed", None, "r3"), Reason.TABLE_FULL),
        (lambda: service.start_deal(table_id, "zed", "r4"), Reason.NOT_SEATED),
        (lambda: service.hand_of(table_id, "ann"), Reason.WRONG_PHASE),
        (lambda: service.load(uuid.uuid4()), Reason.TABLE_NOT_FOUND),
    ]
    for attempt, reason in refusals:
        with pytest.raises(DomainError) as caught:
            await attempt()
        assert caught.value.reason is reason
        assert await event_count(service) == before


async def test_a_retried_request_appends_nothing_and_answers_the_same(
    service: TableService, database_url: str
) -> None:
    first = await service.create_table(DEFAULT_RULE_SET, 2, "operator", "same-request")
    again = await service.create_table(DEFAULT_RULE_SET, 2, "operator", "same-request")
    assert again.replayed and again.table_id == first.table_id
    assert [e.hash for e in again.events] == [e.hash for e in first.events]
    joined = await service.join(first.table_id, "ann", 1, "join")
    # After a reconnect (a new pool, a new service), the retry is still recognised.
    other_store = await EventStore.connect(database_url, projectors=projectors())
    try:
        retried = await TableService(other_store).join(first.table_id, "ann", 1, "join")
    finally:
        await other_store.close()
    assert retried.replayed
    assert [e.position for e in retried.events] == [e.position for e in joined.events]
    assert await event_count(service) == 2


async def test_read_models_follow_the_log_and_rebuild_identically(
    service: TableService, database_url: str
) -> None:
    table_id = await seated_table(service, 3)
    await play_deal(service, table_id, 1)
    await service.start_deal(table_id, "operator", "start-2")
    with psycopg.connect(database_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT phase, deal_number, deals_scored, version FROM table_state"
        ).fetchone()
        assert row == ("AWAITING_CUT", 2, 1, (await service.load(table_id)).version)
        scores = connection.execute("SELECT count(*), sum(delta) FROM seat_scores").fetchone()
        assert scores == (3, 0)
        live = table_rows_as_json(connection)
        rebuild_projections(connection, projectors())
        assert table_rows_as_json(connection) == live


class FakeClock:
    """A clock the test moves by hand (Unix milliseconds)."""

    def __init__(self) -> None:
        self.now_ms = 1_000_000

    def __call__(self) -> int:
        return self.now_ms


async def test_the_deadline_sweeper_times_out_seats_once_across_processes(
    database_url: str,
) -> None:
    clock = FakeClock()
    rules = dataclasses.replace(DEFAULT_RULE_SET, arrange_seconds=60, reveal_seconds=30)
    stores = [await EventStore.connect(database_url, projectors=projectors()) for _ in range(2)]
    try:
        stores[0].prepare()
        first, second = (TableService(store, clock=clock) for store in stores)
        table_id = (await first.create_table(rules, 2, "operator", "create")).table_id
        await first.join(table_id, "ann", None, "join")
        await first.join(table_id, "bob", None, "join")
        await first.choose_dealer(table_id, "operator", "dealer")
        state = (await first.start_deal(table_id, "operator", "start")).state
        assert state.deal is not None
        cutter = state.seats[fairness.cutter_for(state.deal.dealer, 2)]
        assert cutter is not None
        await first.cut(table_id, cutter, 20, "cut")
        seat, hand = await first.hand_of(table_id, "ann")
        arrangement = solve(hand)
        nonce = b"k" * 16
        await first.commit(
            table_id,
            "ann",
            fairness.arrangement_commitment(table_id, 1, seat, arrangement, nonce),
            "commit",
        )
        await first.confirm(table_id, "ann", "confirm")
        clock.now_ms += 59_999
        assert await first.sweep_deadlines() == 0 and await second.sweep_deadlines() == 0
        clock.now_ms += 1
        # Two processes sweep the same deadline: it is acted on once.
        results = [await first.sweep_deadlines(), await second.sweep_deadlines()]
        assert sorted(results) == [0, 1]
        events = [first.decode(event) for event in await first.events(table_id)]
        timeouts = [event for event in events if isinstance(event, SeatTimedOut)]
        assert [(event.seat, event.stage) for event in timeouts] == [(1 - seat, "arranging")]
        # The reveal deadline: ann does not reveal either; both time out, the deal is scored.
        clock.now_ms += 30_000
        assert await second.sweep_deadlines() == 1
        state = await first.load(table_id)
        assert state.deals_scored == 1 and state.series_totals == (0, 0)
        assert state.phase is TablePhase.BETWEEN_DEALS
    finally:
        for store in stores:
            await store.close()


async def test_a_seed_gone_under_a_command_is_a_lost_race_not_an_error(database_url: str) -> None:
    """The secret read after the log read finds no seed (another process settled the deal and
    forgot it in between): the command is decided again, and with the seed still gone, ends as
    a conflict (ABORTED for the API, retried by clients), never an uncaught error."""
    store = await EventStore.connect(database_url, projectors=projectors())
    try:
        store.prepare()
        first = TableService(store)
        table_id = await seated_table(first, 2)
        state = (await first.start_deal(table_id, "operator", "start")).state
        assert state.deal is not None
        cutter = state.seats[fairness.cutter_for(state.deal.dealer, 2)]
        assert cutter is not None
        async with store.connection() as connection:
            await connection.execute("DELETE FROM deal_secrets")
        fresh = TableService(store)  # no state in memory: decided on the log
        with pytest.raises(ConcurrencyConflict):
            await fresh.cut(table_id, cutter, 9, "cut")
    finally:
        await store.close()


async def test_a_scored_deal_of_a_table_of_no_tournament_wakes_no_results_follower(
    service: TableService, database_url: str
) -> None:
    # The results process follows DealScored to credit tournament deals. A process that started
    # the deal knows the table is in no tournament (the pause check asked once), so its score is
    # sent to no type listener; a process that never asked still wakes it, as before.
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as follower:
        await subscriptions.listen(follower, ["DealScored"])
        table_id = await seated_table(service, 2)
        await play_deal(service, table_id, 1)
        async for _ in follower.notifies(timeout=0.5):
            raise AssertionError("a wake-up for a table of no tournament's score")

        other = await EventStore.connect(database_url, projectors=projectors())
        try:
            await play_deal_ending_elsewhere(service, TableService(other), table_id, 2)
            woken = [n async for n in follower.notifies(timeout=30, stop_after=1)]
        finally:
            await other.close()
        assert [subscriptions.parse_wakeup(n.payload).stream_id for n in woken] == [
            stream_id_for(table_id)
        ]


async def play_deal_ending_elsewhere(
    service: TableService, elsewhere: TableService, table_id: uuid.UUID, number: int
) -> None:
    """A two-seat deal played through ``service`` but for its last reveal, made through
    ``elsewhere`` (another process's service, which never saw the deal start)."""
    state = (await service.start_deal(table_id, "operator", f"start-{number}")).state
    deal = state.deal
    assert deal is not None
    cutter = state.seats[fairness.cutter_for(deal.dealer, state.seat_count)]
    assert cutter is not None
    await service.cut(table_id, cutter, 7 + number, f"cut-{number}")
    nonce = bytes([number]) * 16
    chosen = {}
    for player in state.seats:
        assert player is not None
        seat, hand = await service.hand_of(table_id, player)
        chosen[player] = solve(hand)
        commitment = fairness.arrangement_commitment(table_id, number, seat, chosen[player], nonce)
        await service.commit(table_id, player, commitment, f"commit-{number}")
        await service.confirm(table_id, player, f"confirm-{number}")
    (first, first_rows), (last, last_rows) = chosen.items()
    await service.reveal(table_id, first, first_rows, nonce, f"reveal-{number}")
    await elsewhere.reveal(table_id, last, last_rows, nonce, f"reveal-{number}")
