"""Play or surrender from the SDK (docs/rules.md §2.8): ``Seat.play_series`` announces on the
seat's turn with its ``announcer``; the bots' announcer surrenders a hopeless hand and plays a
strong one. Against a real server: a series with surrenders completes, zero-sum, every
announcement signed by its player, and every deal verifies from the log and its export (the
players' signatures included)."""

from __future__ import annotations

import threading
import uuid
from types import SimpleNamespace

import psycopg

from sapsam.audit import Requester, verify_export, write_lines
from sapsam.audit import database as audit_database
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import SurrenderAnnounced
from sapsam.domain.published import published_deal
from sapsam.fairness.verify import verify_deal
from sapsam.store.offline_reads import read_stream
from sapsam_client import Seat, connect, table_id
from sapsam_client.commitment import Rows
from sapsam_client.prompts import Terminal
from sapsam_client.rules import solver_arranger
from sapsam_client.seat_types import Commitment, SeriesOutcome, always_play
from sapsam_client.surrender_choice import expected_value_announcer, surrender_cost
from sapsam_client.table_view import TableView
from sapsam_proto.v1 import rule_set_pb2, table_pb2

SURRENDER_RULES = rule_set_pb2.RuleSet(
    name="surrender", surrender=rule_set_pb2.SURRENDER_RULE_PAY_PLAYERS
)


def _table(seat_count: int, price: int = 2) -> table_pb2.Table:
    rules = rule_set_pb2.RuleSet()
    rules.CopyFrom(SURRENDER_RULES)
    rules.surrender_price = price
    rules.row_unit = 1
    return table_pb2.Table(seat_count=seat_count, rule_set=rules)


def _committed(front: str, middle: str, back: str) -> Commitment:
    return Commitment(1, Rows.of(front.split(), middle.split(), back.split()), b"n" * 16, b"")


# No pair, no straight, no flush: 2 3 4 | 5 6 7 8 T (mixed) | 9 J Q K A... kept legal and weak.
HOPELESS = _committed("2c 3d 4h", "5s 6c 7d 8h Tc", "9d Js Qc Kd Ah")
STRONG = _committed("Ac Ad As", "Kc Kd Ks Qc Qd", "2h 3h 4h 5h 6h")


def test_the_bots_announcer_surrenders_a_hopeless_hand_and_plays_a_strong_one() -> None:
    table = _table(4)
    assert surrender_cost(table) == 6  # 2 units to each of three opponents
    announce = expected_value_announcer(seed=7)
    assert announce(HOPELESS, table) is True
    assert announce(STRONG, table) is False
    assert announce(None, table) is False  # without its rows, a seat plays
    # A price nobody would pay: even the hopeless hand plays.
    assert expected_value_announcer(seed=7)(HOPELESS, _table(4, price=1_000)) is False


def test_a_series_with_surrenders_verifies(address: str, database_url: str) -> None:
    creator = connect(address)
    creator.register("creator")
    table = creator.create_table(3, rule_set=SURRENDER_RULES, series_length=3)
    seats: list[Seat] = []
    for index in range(3):
        client = connect(address)
        client.register(f"sdk {index}")
        seats.append(client.join_table(table.name))
    outcomes: list[SeriesOutcome | None] = [None] * 3
    failures: list[BaseException] = []
    announcers = [lambda committed, table: True, always_play, expected_value_announcer(seed=1)]

    def run(index: int) -> None:
        try:
            outcomes[index] = seats[index].play_series(solver_arranger, announcer=announcers[index])
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []
    final = creator.get_table(table.name)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    assert sum(seat.series_total for seat in final.seats) == 0
    with psycopg.connect(database_url) as connection:
        recorded = read_stream(connection, f"table-{table_id(table.name)}")
    events = [DEFAULT_CODEC.decode(r.type, r.schema_version, r.data) for r in recorded]
    said = [event for event in events if isinstance(event, SurrenderAnnounced)]
    assert len(said) == 9  # three seats, three deals
    assert all(event.surrender for event in said if event.seat == seats[0].position)
    # Each player signed its announcements (docs/fairness.md §19), as its commits and reveals.
    assert all(event.player_key and event.signature for event in said)
    stream_table = uuid.UUID(str(table_id(table.name)))
    for number in (1, 2, 3):
        published = published_deal(events, number)
        assert published.surrendered[seats[0].position]
        assert verify_deal(published).ok
        with psycopg.connect(database_url, autocommit=True) as connection:
            export = audit_database.export_deal(
                connection, stream_table, number, Requester.operator()
            )
        report = verify_export(list(write_lines(export)))
        assert report.ok, report.failed_names()
        passed = {check.name for check in report.checks if not check.failed}
        assert {f"player_signature[{seat}]" for seat in range(3)} <= passed


def test_sapsam_play_asks_play_or_surrender_on_the_seats_turn() -> None:
    said: list[str] = []
    answers = iter(["maybe", "y"])

    def ask(question: str) -> str:
        said.append(question)
        return next(answers)

    seat = SimpleNamespace(name="tables/t/seats/1", table="tables/t")
    view = TableView(Terminal(ask, said.append), None, seat)  # type: ignore[arg-type]
    rules = rule_set_pb2.RuleSet(surrender_price=2, row_unit=5)
    table = table_pb2.Table(
        seat_count=3,
        rule_set=rules,
        seats=[
            table_pb2.Seat(
                name="tables/t/seats/0", announcement=table_pb2.SURRENDER_CHOICE_SURRENDER
            ),
            table_pb2.Seat(name="tables/t/seats/1"),
            table_pb2.Seat(name="tables/t/seats/2"),
        ],
    )
    assert view.announcer(HOPELESS, table) is True
    text = "\n".join(said)
    assert "surrenders" in text  # the seat before it said so
    assert "2c 3d 4h | 5s 6c 7d 8h Tc | 9d Js Qc Kd Ah" in text
    assert "Play or surrender? Surrender this hand (you pay 10 to each seat that plays)?" in text
    assert "please answer y (yes) or n (no)" in text  # "maybe" asked again
