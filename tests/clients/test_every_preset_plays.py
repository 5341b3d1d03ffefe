"""Every preset playable end to end (issue #17): a short series of each over gRPC, shown and
verified by ``sapsam demo``'s own code (``watch_and_verify``), naturals and surrender exercised
where the preset has them.

``sapsam demo --preset P`` starts a PostgreSQL, a server and four ``sapsam-bot`` processes: some
6 s a preset, too slow for all of them in ``make test`` (tests/clients/test_demo.py runs it for
pagat, four_player_bonus and capsa_susun). Here one server and one database serve every preset,
and the four seats are threads of this process playing the SDK's ``Seat.play_series`` as the
bots do (solver and random-legal rows by turns, the SDK's declarer and announcer); the demo's
watching, printing and verifying code is the one ``sapsam demo`` runs. Deal 1 is steered so
each option is exercised: at a table with naturals the deal's seed is chosen (the table
service's seed source, ``TableRunner.deal_seeds``; the seats contribute no entropy and cut at
``CUT``) so that seat 0 is dealt a natural and declares it, while seat 3 declares a natural its
hand does not hold (a foul, docs/rules.md §2.9); at a table with surrender seat 1 surrenders
(§2.8). Deal 2 is played as the bots play it, from the server's own seed.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from sapsam import fairness
from sapsam.api.server import RunningServer, ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam.cli.demo_command import STRATEGIES, watch_and_verify
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import (
    DealScored,
    Event,
    NaturalDeclared,
    NaturalRevealed,
    SurrenderAnnounced,
)
from sapsam.rules.naturals import Natural, NaturalsTable, naturals_held, playable_naturals
from sapsam.rules.presets import PRESETS
from sapsam.rules.rule_options import SurrenderRule
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.solver_play import best_play
from sapsam.store.offline_reads import read_stream
from sapsam_client import Client, Hand, Seat, connect, table_id
from sapsam_client.rules import naturals_in_hand, random_arranger, solver_arranger
from sapsam_client.seat_types import Announcer, Commitment, Declarer, default_declarer
from sapsam_client.surrender_choice import expected_value_announcer
from sapsam_proto.v1 import table_pb2

OPERATOR_TOKEN = "operator-token-for-the-every-preset-test-0123"
SEATS = 4  # every preset seats four (four_player* only four)
DEALS = 2
SERIES_SECONDS = 60.0
FALSE_DECLARER = 3
SURRENDERING_SEAT = 1
NATURAL_SEAT = 0
CUT = 26


@pytest.fixture(scope="module")
def shared_database(database_factory: Any) -> Iterator[str]:
    """One migrated database for every preset's table (a fresh one each would cost a copy)."""
    name, url = database_factory.create(migrated=True)
    yield url
    database_factory.drop(name)


@pytest.fixture(scope="module")
def shared_server(shared_database: str) -> Iterator[tuple[RunningServer, Any]]:
    """One server, as ``sapsam demo`` starts it, for every preset; and its table service, whose
    seed source a test may set."""
    services = build_services(shared_database, pool_size=8)
    tables = services.table_service._tables  # type: ignore[attr-defined]
    running = start_server(
        ServerConfig(listen="127.0.0.1:0", operator_token=OPERATOR_TOKEN, grace_seconds=2),
        services,
    )
    yield running, tables
    running.stop()


def seed_dealing_a_natural(rule_set: RuleSet, table: str, dealer: int) -> bytes:
    """A first-deal seed under which seat 0's 13 cards (no entropy, cut at ``CUT``) hold a
    natural the SDK's declarer declares, and no other seat's hold one."""
    for attempt in range(2_000):
        seed = hashlib.sha256(f"natural {attempt}".encode()).digest()
        hands = fairness.hands_for_deal(
            seed, (None,) * SEATS, uuid.UUID(str(table_id(table))), 1, CUT, dealer, SEATS
        )
        held = [bool(naturals_held(rule_set, hand)) for hand in hands]
        # Seat 0's natural only (it then collects from every seat), one it would declare.
        declared = (
            held == [True, False, False, False]
            and best_play(list(hands[NATURAL_SEAT]), rule_set).natural is not Natural.NONE
        )
        if declared:
            return seed
    raise AssertionError("no seed in 2,000 deals seat 0 a natural")


def once(seed: bytes) -> Callable[[], bytes]:
    """A seed source giving ``seed`` once, then the system's CSPRNG."""
    given: list[bytes] = [seed]
    return lambda: given.pop() if given else fairness.new_seed()


def false_in_deal_one(position: int, rule_set: RuleSet) -> Declarer:
    """Seat ``position``'s declarer: in deal 1 the weakest natural its hand does not hold (a
    false declaration), after that the SDK's."""

    def declare(hand: Hand, table: table_pb2.Table) -> str:
        if position != FALSE_DECLARER or hand.deal_number != 1:
            return default_declarer(hand, table)
        held = set(naturals_in_hand(hand.cards, table.rule_set))
        return next(n.value for n in playable_naturals(rule_set) if n.value not in held)

    return declare


def surrender_in_deal_one(position: int) -> Announcer:
    """Seat ``position``'s announcer: in deal 1 seat 1 surrenders and seat 3 plays (its false
    declaration is then scored, as a foul, against the seats that play); otherwise the bots'."""
    bots = expected_value_announcer(seed=position)

    def announce(committed: Commitment | None, table: table_pb2.Table) -> bool:
        if table.deal_number == 1 and position in (SURRENDERING_SEAT, FALSE_DECLARER):
            return position == SURRENDERING_SEAT  # seat 3's false natural is scored as a foul
        return bots(committed, table)

    return announce


def seat_players(address: str, table: str) -> list[Seat]:
    """The four seats, named as the demo's bots, each cutting at ``CUT`` when it cuts."""
    seats = []
    for position in range(SEATS):
        strategy = STRATEGIES[position % len(STRATEGIES)]
        client = connect(address)
        client.register(f"{strategy} bot {position}")
        client.cut_deck = functools.partial(client.cut_deck, position=CUT)  # type: ignore[method-assign]
        seats.append(client.join_table(table, position))
    return seats


def play_in_threads(seats: list[Seat], rule_set: RuleSet) -> Callable[[], str | None]:
    """Start the four seats as threads (seeded as the demo's bots); returns what
    ``watch_and_verify`` waits for: ``None`` when every seat played its series, else the error."""
    failures: list[str] = []
    threads = []
    for position, seat in enumerate(seats):
        strategy = STRATEGIES[position % len(STRATEGIES)]
        arranger = solver_arranger if strategy == "solver" else random_arranger(position)

        def run(seat: object = seat, arranger: object = arranger, position: int = position) -> None:
            try:
                seat.play_series(  # type: ignore[attr-defined]
                    arranger,
                    contribute_entropy=False,
                    declarer=false_in_deal_one(position, rule_set),
                    announcer=surrender_in_deal_one(position),
                )
            except BaseException as error:  # reported by wait()
                failures.append(f"seat {position}: {error!r}")

        threads.append(threading.Thread(target=run, daemon=True))
    for thread in threads:
        thread.start()

    def wait() -> str | None:
        for thread in threads:
            thread.join(SERIES_SECONDS)
        if any(thread.is_alive() for thread in threads):
            failures.append("a seat is still playing")
        return "; ".join(failures) or None

    return wait


def logged_events(database_url: str, table: str) -> list[Event]:
    with psycopg.connect(database_url) as connection:
        recorded = read_stream(connection, f"table-{table_id(table)}")
    return [DEFAULT_CODEC.decode(r.type, r.schema_version, r.data) for r in recorded]


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_plays_a_series_over_grpc_and_verifies(
    name: str,
    shared_server: tuple[RunningServer, Any],
    shared_database: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rule_set = PRESETS[name]
    running, tables = shared_server
    address = f"127.0.0.1:{running.port}"
    operator: Client = connect(address, token=OPERATOR_TOKEN)
    table = operator.create_table(SEATS, preset=name, series_length=DEALS).name
    seats = seat_players(address, table)
    dealer = int(operator.choose_dealer(table).rsplit("/", 1)[1])
    if playable_naturals(rule_set):
        tables.deal_seeds = once(seed_dealing_a_natural(rule_set, table, dealer))
    try:
        wait = play_in_threads(seats, rule_set)
        verdict: list[bool] = []
        watching = threading.Thread(
            target=lambda: verdict.append(
                watch_and_verify(operator, shared_database, table, DEALS, wait_for_bots=wait)
            ),
            daemon=True,
        )
        watching.start()
        watching.join(SERIES_SECONDS)
    finally:
        tables.deal_seeds = fairness.new_seed
    output, errors = capsys.readouterr()
    assert verdict == [True], output + errors

    # What sapsam demo prints: each deal, the standings, every deal verified, 80 columns.
    for number in range(1, DEALS + 1):
        assert re.search(rf"^deal {number}  \(dealer seat [0-3]\)$", output, re.MULTILINE)
    assert len(re.findall(r"^  deal \d: ok \(\d+ checks\)$", output, re.MULTILINE)) == DEALS
    assert f"verification: PASSED ({DEALS} of {DEALS} deals verified)" in output
    assert max(len(line) for line in output.splitlines()) <= 80, output

    # From the log: the table was played under the preset, and the steered moves were made.
    events = logged_events(shared_database, table)
    scored = [event for event in events if isinstance(event, DealScored)]
    assert [event.deal_number for event in scored] == list(range(1, DEALS + 1))
    assert all(sum(event.totals) == 0 for event in scored)
    declared = [event for event in events if isinstance(event, NaturalDeclared)]
    opened = {(e.deal_number, e.seat): e.natural for e in events if isinstance(e, NaturalRevealed)}
    if rule_set.naturals is NaturalsTable.NONE:
        assert declared == [] and opened == {}
    else:
        # Every seat declares in every deal; in deal 1 seat 0 declares the natural it was dealt
        # (no foul: it collects from every seat) and seat 3's false natural is its foul.
        assert len(declared) == SEATS * DEALS
        assert len(opened) == SEATS * DEALS
        assert opened[(1, NATURAL_SEAT)] != "none" and not scored[0].fouls[NATURAL_SEAT]
        assert all(pair.delta > 0 for pair in scored[0].pairs if pair.seat_a == NATURAL_SEAT)
        assert opened[(1, FALSE_DECLARER)] != "none"
        assert scored[0].fouls[FALSE_DECLARER]
        assert f"declared {opened[(1, FALSE_DECLARER)].replace('_', ' ')}" in output
    said = [event for event in events if isinstance(event, SurrenderAnnounced)]
    if rule_set.surrender is SurrenderRule.OFF:
        assert said == []
        assert "announced:" not in output
    else:
        # Every seat announces in every deal, in turn; seat 1 surrendered deal 1.
        assert len(said) == SEATS * DEALS
        first = {e.seat: e.surrender for e in said if e.deal_number == 1}
        assert first[SURRENDERING_SEAT] and not first[FALSE_DECLARER]
        assert f"seat {SURRENDERING_SEAT} surrenders" in output
