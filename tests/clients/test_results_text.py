"""A scored deal and the standings as one seat's player reads them (``results_text``), and whom the
table waits for (``waiting``): pure text from messages, no server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sapsam_client.card_style import CardStyle
from sapsam_client.prompts import Terminal
from sapsam_client.results_text import (
    deal_lines,
    final_lines,
    pair_lines,
    row_against,
    seat_labels,
    seat_lines,
    standings_line,
)
from sapsam_client.table_view import WaitingStatus
from sapsam_client.waiting import awaited, duration, waiting_text
from sapsam_proto.v1 import table_event_pb2, table_pb2

T = "tables/7f0e4c1a-0000-4000-8000-000000000001"
WON, LOST, TIE = (
    table_pb2.ROW_OUTCOME_FIRST_SEAT_WON,
    table_pb2.ROW_OUTCOME_SECOND_SEAT_WON,
    table_pb2.ROW_OUTCOME_TIE,
)


def seat(position: int) -> str:
    return f"{T}/seats/{position}"


def arrangement(front: str, middle: str, back: str) -> table_pb2.Arrangement:
    return table_pb2.Arrangement(front=front.split(), middle=middle.split(), back=back.split())


LABELS = {seat(0): "Ann", seat(1): "Bob", seat(2): "Cy"}
ANN = arrangement("Kc Kd 3h", "9s 8s 7s 6s 2s", "Tc Td Th 3s 3c")
BOB = arrangement("Jc Jd 2h", "Ah Kh 9h 5h 2h", "Qc Qd 4c 4d 5c")
CY = arrangement("Ks Kh Ac", "Jh Js 7c 7d 6d", "Ad Ks As 8c 8d")  # fouls: front beats middle


def result() -> table_pb2.DealResult:
    return table_pb2.DealResult(
        deal_number=2,
        scored=True,
        seats=[
            table_pb2.DealSeatResult(seat=seat(0), arrangement=ANN, score_delta=3, series_total=4),
            table_pb2.DealSeatResult(seat=seat(1), arrangement=BOB, score_delta=0, series_total=1),
            table_pb2.DealSeatResult(
                seat=seat(2),
                arrangement=CY,
                foul=True,
                foul_reason="ROWS_OUT_OF_ORDER",
                score_delta=-3,
                series_total=-5,
            ),
        ],
        pairs=[
            table_pb2.PairResult(
                first_seat=seat(0),
                second_seat=seat(1),
                front=WON,
                middle=LOST,
                back=WON,
                first_seat_delta=1,
            ),
            table_pb2.PairResult(
                first_seat=seat(0),
                second_seat=seat(2),
                front=WON,
                middle=WON,
                back=WON,
                first_seat_delta=3,
            ),
            table_pb2.PairResult(
                first_seat=seat(1),
                second_seat=seat(2),
                front=WON,
                middle=WON,
                back=WON,
                first_seat_delta=3,
            ),
        ],
    )


def test_a_deal_from_the_first_seat() -> None:
    lines = deal_lines(result(), seat(0), LABELS, series_length=4)
    assert lines == [
        "== deal 2 of 4: the reveal ==",
        "*seat 0 you: +3 points, total +4",
        "    Kd Kc 3h | 9s 8s 7s 6s 2s | Th Td Tc 3s 3c",
        "    pair of kings; nine-high flush; tens full of threes",
        " seat 1 Bob: +0 points, total +1",
        "    Jd Jc 2h | Ah Kh 9h 5h 2h | Qd Qc 5c 4d 4c",
        "    pair of jacks; ace-high flush; two pair, queens and fours",
        " seat 2 Cy: -3 points, total -5, FOUL (rows out of order)",
        "    Ac Ks Kh | Js Jh 7d 7c 6d | As Ad Ks 8d 8c",
        "    pair of kings; two pair, jacks and sevens; two pair, aces and eights",
        "you v Bob (seat 1): won 2, lost 1, tied 0: +1 point",
        "  front: your pair of kings beat Bob's pair of jacks",
        "  middle: Bob's ace-high flush beat your nine-high flush",
        "  back: your tens full of threes beat Bob's two pair, queens and fours",
        "you v Cy (seat 2): won 3, lost 0, tied 0: +3 points",
        "  front: Cy fouled, your pair of kings (kicker 3) wins",
        "  middle: Cy fouled, your nine-high flush wins",
        "  back: Cy fouled, your tens full of threes wins",
        "standings after deal 2: 1 you +4, 2 Bob +1, 3 Cy -5",
    ]
    assert all(len(line) <= 79 for line in lines)


def test_the_same_deal_from_the_second_seat_is_its_mirror() -> None:
    lines = pair_lines(result(), seat(1), LABELS)
    assert lines[:4] == [
        "you v Ann (seat 0): won 1, lost 2, tied 0: -1 point",
        "  front: Ann's pair of kings beat your pair of jacks",
        "  middle: your ace-high flush beat Ann's nine-high flush",
        "  back: Ann's tens full of threes beat your two pair, queens and fours",
    ]
    assert lines[4] == "you v Cy (seat 2): won 3, lost 0, tied 0: +3 points"
    # A seat without a name, or whose label already has its number, is not numbered twice.
    unnamed = pair_lines(result(), seat(1), {seat(0): "Ann (seat 0)"})
    assert unnamed[0].startswith("you v Ann (seat 0): ")
    assert unnamed[4].startswith("you v seat 2: ")
    # From the fouled seat.
    assert pair_lines(result(), seat(2), LABELS)[1] == (
        "  front: you fouled, Ann's pair of kings (kicker 3) wins"
    )


def test_rows_against_each_other() -> None:
    kings, jacks = ("Kc", "Kd", "3h"), ("Jc", "Jd", "2h")
    assert row_against("front", kings, ("Ks", "Kh", "3c"), "tie", (False, False), "Bob") == (
        "front: a tie, both pair of kings"
    )
    assert row_against("front", kings, jacks, "tie", (False, False), "Bob") == (
        "front: a tie, your pair of kings and Bob's pair of jacks"
    )
    assert row_against("back", kings, jacks, "tie", (True, True), "Bob") == (
        "back: both fouled, no one wins it"
    )
    assert row_against("middle", None, jacks, "lost", (True, False), "Bob") == (
        "middle: your rows were not revealed, Bob wins it"
    )
    assert row_against("middle", kings, None, "won", (False, True), "Bob") == (
        "middle: Bob's rows were not revealed, you win it"
    )
    assert row_against("front", kings, jacks, "", (False, False), "Bob") == "front: not scored"


def test_a_seat_without_rows_and_long_lines_wrap() -> None:
    timed_out = result()
    ghost = timed_out.seats[2]
    ghost.ClearField("arrangement")
    ghost.foul_reason = "MISSED_DEADLINE"
    ghost.timed_out_stage = table_pb2.TIMEOUT_STAGE_ARRANGING
    ghost.timeout_consequence = table_pb2.TIMEOUT_CONSEQUENCE_FOUL
    labels = {**LABELS, seat(1): "Bartholomew-Long"}
    lines = deal_lines(timed_out, seat(0), labels)
    assert " seat 2 Cy: -3 points, total -5, FOUL (missed the arranging deadline)" in lines
    assert "    (no rows revealed)" in lines
    assert "  front: Cy's rows were not revealed, you win it" in lines
    assert all(len(line) <= 79 for line in lines)
    assert any(line.startswith("      ") for line in lines)  # a wrapped line, indented


def test_a_fouled_row_repeating_a_card_is_shown_without_a_name() -> None:
    broken = result()
    cy = broken.seats[2]
    cy.foul_reason = "NOT_DEALT_CARDS"
    del cy.arrangement.front[:]
    cy.arrangement.front.extend(["Ac", "Ac", "Kh"])
    lines = deal_lines(broken, seat(0), LABELS)
    named = "no hand (a card repeated); two pair, jacks and sevens; two pair, aces and eights"
    assert named in " ".join(line.strip() for line in lines)  # wrapped at 79 columns
    assert "  front: Cy fouled, your pair of kings wins" in lines


def test_fouls_and_timeouts_in_words() -> None:
    def seat_with(**fields: object) -> str:
        found = table_pb2.DealSeatResult(seat=seat(1), arrangement=BOB, **fields)  # type: ignore[arg-type]
        return seat_lines(found, seat(0), LABELS, CardStyle())[0]

    assert seat_with(foul=True, foul_reason="WRONG_ROW_SIZE").endswith(
        "FOUL (a row of the wrong size)"
    )
    assert seat_with(foul=True, foul_reason="NOT_DEALT_CARDS").endswith(
        "FOUL (cards not dealt to the seat)"
    )
    assert seat_with(foul=True, foul_reason="SOMETHING_NEW").endswith("FOUL (something new)")
    assert seat_with(
        foul=True, foul_reason="MISSED_DEADLINE", timed_out_stage=table_pb2.TIMEOUT_STAGE_REVEALING
    ).endswith("FOUL (missed the reveal deadline)")
    assert seat_with(
        timed_out_stage=table_pb2.TIMEOUT_STAGE_ARRANGING,
        timeout_consequence=table_pb2.TIMEOUT_CONSEQUENCE_SOLVER,
    ).endswith("total +0, out of time: the solver's rows played")


def test_cards_in_colour() -> None:
    lines = deal_lines(result(), seat(0), LABELS, CardStyle(symbols=True, colour=True))
    red = "\x1b[31m{}\x1b[0m".format
    assert lines[2] == (
        f"    {red('K♦')} K♣ {red('3♥')} | 9♠ 8♠ 7♠ 6♠ 2♠ | {red('T♥')} {red('T♦')} T♣ 3♠ 3♣"
    )


def test_labels_and_standings() -> None:
    seats = [
        table_pb2.Seat(name=seat(0), display_name="Ann"),
        table_pb2.Seat(name=seat(1), display_name="bot"),
        table_pb2.Seat(name=seat(2), display_name="bot"),
        table_pb2.Seat(name=seat(3)),
    ]
    labels = seat_labels(seats)
    assert labels == {
        seat(0): "Ann",
        seat(1): "bot (seat 1)",
        seat(2): "bot (seat 2)",
        seat(3): "seat 3",
    }
    totals = [(seat(0), 2), (seat(1), 2), (seat(2), -1), (seat(3), -3)]
    assert standings_line(totals, seat(2), labels, "standings") == [
        "standings: 1= Ann +2, 1= bot (seat 1) +2, 3 you -1, 4 seat 3 -3"
    ]
    completed = table_event_pb2.SeriesCompleted(
        deals_played=4,
        standings=[
            table_pb2.Standing(seat=seat(1), total=2, place=1),
            table_pb2.Standing(seat=seat(0), total=2, place=1),
            table_pb2.Standing(seat=seat(2), total=-1, place=3),
        ],
    )
    assert final_lines(completed, seat(0), labels) == [
        "== final standings after 4 deals ==",
        "  1= seat 0 Ann                 +2  (you)",
        "  1= seat 1 bot (seat 1)        +2",
        "  3  seat 2 bot (seat 2)        -1",
    ]


# -- whom the table waits for -------------------------------------------------------------------

NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)


def table(phase: int, *seats: table_pb2.Seat, **fields: object) -> table_pb2.Table:
    made = table_pb2.Table(name=T, phase=phase, seats=seats, **fields)  # type: ignore[arg-type]
    return made


def seats(**flags: tuple[int, ...]) -> list[table_pb2.Seat]:
    """Four seats with players; ``flags`` names, per flag, the seats that have it."""
    made = []
    for position in range(4):
        entry = table_pb2.Seat(name=seat(position), position=position, player="players/p")
        for flag, positions in flags.items():
            setattr(entry, flag, position in positions)
        made.append(entry)
    return made


@pytest.mark.parametrize(
    ("phase", "flags", "fields", "expected"),
    [
        (table_pb2.TABLE_PHASE_AWAITING_DEALER, {}, {}, "seat 0 to draw the first dealer by lot"),
        (
            table_pb2.TABLE_PHASE_BETWEEN_DEALS,
            {},
            {"dealer_seat": seat(2), "deal_number": 1},
            "Cy (seat 2) to start deal 2",
        ),
        (
            table_pb2.TABLE_PHASE_AWAITING_CUT,
            {"entropy_contributed": (2,)},
            {"cutter_seat": seat(2)},
            "seat 0 and Bob (seat 1) to add entropy; Cy (seat 2) to cut the deck",
        ),
        (table_pb2.TABLE_PHASE_DEALING, {}, {}, "the server to deal"),
        (
            table_pb2.TABLE_PHASE_AWAITING_SEED,
            {},
            {},
            "the server to reveal the seed and score the deal",
        ),
        (
            table_pb2.TABLE_PHASE_ARRANGING,
            {"committed": (0, 2), "confirmed": (0,), "timed_out": (3,)},
            {},
            "Bob (seat 1) to arrange; Cy (seat 2) to confirm",
        ),
        (
            table_pb2.TABLE_PHASE_REVEALING,
            {"revealed": (2,)},
            {},
            "seat 0 and Bob (seat 1) to reveal",
        ),
    ],
)
def test_whom_the_table_waits_for_in_every_phase(
    phase: int, flags: dict[str, tuple[int, ...]], fields: dict[str, object], expected: str
) -> None:
    labels = {seat(1): "Bob", seat(2): "Cy"}
    # Seen from seat 3, never named itself: its own moves are made at once.
    current = table(phase, *seats(**flags), **fields)
    text = waiting_text(current, seat(3), labels, NOW, NOW - timedelta(seconds=65))
    assert text == f"waiting for {expected}: 1 min 05 s so far (no time limit)"


def test_the_reader_is_never_awaited_and_a_deadline_counts_down() -> None:
    current = table(table_pb2.TABLE_PHASE_REVEALING, *seats(revealed=(1, 2, 3)))
    assert awaited(current, seat(0)) == ()
    assert waiting_text(current, seat(0), {}, NOW, NOW) is None
    current = table(table_pb2.TABLE_PHASE_REVEALING, *seats(revealed=(0, 2)))
    current.deadline_time.FromDatetime(NOW + timedelta(seconds=25))
    assert waiting_text(current, seat(0), {}, NOW, NOW) == (
        "waiting for seat 1 and seat 3 to reveal: 25 s left"
    )
    assert waiting_text(current, seat(0), {}, NOW + timedelta(seconds=27), NOW) == (
        "waiting for seat 1 and seat 3 to reveal: the time ran out 2 s ago"
    )
    seating = table(
        table_pb2.TABLE_PHASE_SEATING,
        table_pb2.Seat(name=seat(0), player="players/a"),
        table_pb2.Seat(name=seat(1)),
        table_pb2.Seat(name=seat(2)),
    )
    assert waiting_text(seating, seat(0), {}, NOW, NOW) == (
        "waiting for 2 more players to sit down (no time limit)"
    )
    done = table(table_pb2.TABLE_PHASE_SERIES_COMPLETE, *seats())
    assert waiting_text(done, seat(0), {}, NOW, NOW) is None


def test_durations() -> None:
    assert [duration(s) for s in (-1, 0, 59.9, 60, 3599, 3600, 7380)] == [
        "0 s",
        "0 s",
        "59 s",
        "1 min 00 s",
        "59 min 59 s",
        "1 h 00 min",
        "2 h 03 min",
    ]


def test_the_status_is_said_when_the_wait_changes_and_not_while_the_reader_arranges() -> None:
    said: list[str] = []
    terminal = Terminal(input, said.append)
    clock = [NOW]
    status = WaitingStatus(terminal, seat(0), clock=lambda: clock[0])
    seating = table(
        table_pb2.TABLE_PHASE_SEATING,
        table_pb2.Seat(name=seat(0), player="players/a"),
        table_pb2.Seat(name=seat(1)),
    )
    status.update(seating, {})
    status.update(seating, {})  # the same wait: said once
    assert said == ["waiting for 1 more player to sit down (no time limit)"]
    # The reader has rows to arrange: no status (the prompt comes).
    status.update(table(table_pb2.TABLE_PHASE_ARRANGING, *seats()), {})
    assert status.text() is None and len(said) == 1
    arranging = table(table_pb2.TABLE_PHASE_ARRANGING, *seats(confirmed=(0, 2, 3)))
    status.update(arranging, {seat(1): "Bob"})
    assert said[1:] == ["waiting for Bob (seat 1) to arrange (no time limit)"]
    clock[0] = NOW + timedelta(seconds=30)
    assert status.text() == "waiting for Bob (seat 1) to arrange: 30 s so far (no time limit)"
    status.pause()
    assert status.text() is None
