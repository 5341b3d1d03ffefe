"""A scored deal and the final standings as one seat's player reads them: pure, no I/O.

Every seat's rows are shown with each row named ("pair of kings"); then, from the reader's own
seat, each row against each other seat ("front: your pair of kings beat Bob's pair of jacks"),
won or lost, and the points; then the running totals and standings by display name. The lines
fit 80 columns (longer ones wrap with an indent).
"""

from __future__ import annotations

import textwrap
from collections.abc import Collection, Mapping, Sequence
from typing import Final

from sapsam_client.card_style import PLAIN, CardStyle, cards_shown
from sapsam_client.client import seat_position
from sapsam_client.hand_names import names_apart, row_name
from sapsam_proto.v1 import table_event_pb2, table_pb2

WIDTH: Final = 79
NAME_WIDTH: Final = 16
ROWS: Final = ("front", "middle", "back")


def seat_labels(seats: Sequence[table_pb2.Seat]) -> dict[str, str]:
    """What to call each seat: its player's display name (shortened); the seat number when the
    seat has no name, and the name with the seat number when two seats share it (bots started
    together, say)."""
    names = {seat.name: seat.display_name.strip()[:NAME_WIDTH] for seat in seats}
    labels = {}
    for seat, name in names.items():
        shared = list(names.values()).count(name) > 1
        if not name:
            labels[seat] = f"seat {seat_position(seat)}"
        elif shared:
            labels[seat] = f"{name} (seat {seat_position(seat)})"
        else:
            labels[seat] = name
    return labels


def label(labels: Mapping[str, str], seat: str) -> str:
    """A seat's label, or its number when unknown."""
    return labels.get(seat) or f"seat {seat_position(seat)}"


def _wrap(text: str, indent: str, hanging: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=hanging) or [indent]


def _rows(seat: table_pb2.DealSeatResult) -> tuple[tuple[str, ...], ...] | None:
    rows = seat.arrangement
    found = tuple(tuple(row) for row in (rows.front, rows.middle, rows.back))
    return found if all(len(row) in (3, 5) for row in found) else None


def _name(row: tuple[str, ...]) -> str:
    """A row's name; a fouled row that repeats a card has none."""
    try:
        return row_name(row)
    except ValueError:
        return "no hand (a card repeated)"


def _points(delta: int) -> str:
    return f"{delta:+d} point" + ("" if abs(delta) == 1 else "s")


FOUL_WORDS: Final = {
    "WRONG_ROW_SIZE": "a row of the wrong size",
    "NOT_DEALT_CARDS": "cards not dealt to the seat",
    "ROWS_OUT_OF_ORDER": "rows out of order",
    "FALSE_NATURAL": "a natural declared that the cards do not hold",
}
STAGE_WORDS: Final = {
    table_pb2.TIMEOUT_STAGE_ARRANGING: "missed the arranging deadline",
    table_pb2.TIMEOUT_STAGE_REVEALING: "missed the reveal deadline",
}


FORCED_WORDS: Final = {
    table_pb2.TIMEOUT_STAGE_ARRANGING: "timed out by the operator while arranging",
    table_pb2.TIMEOUT_STAGE_REVEALING: "timed out by the operator before revealing",
}


def foul_words(seat: table_pb2.DealSeatResult, forced: bool = False) -> str:
    """Why a seat fouled, in words (the result carries a code: ``DealSeatResult.foul_reason``);
    ``forced``: the operator timed the seat out (``SeatTimedOut.by_operator``), it missed no
    deadline."""
    if seat.foul_reason == "MISSED_DEADLINE" or (seat.timed_out_stage and not seat.foul_reason):
        if forced:
            return FORCED_WORDS.get(seat.timed_out_stage, "timed out by the operator")
        return STAGE_WORDS.get(seat.timed_out_stage, "missed a deadline")
    return FOUL_WORDS.get(seat.foul_reason, seat.foul_reason.lower().replace("_", " ") or "foul")


def seat_lines(
    seat: table_pb2.DealSeatResult,
    me: str,
    labels: Mapping[str, str],
    style: CardStyle,
    forced: Collection[str] = (),
) -> list[str]:
    """A seat's rows with their names, its points for the deal and its running total
    (``forced``: the seats the operator timed out in this deal)."""
    who = "you" if seat.seat == me else label(labels, seat.seat)
    foul = ""
    if seat.foul:
        foul = f", FOUL ({foul_words(seat, seat.seat in forced)})"
    elif seat.timed_out_stage:
        out = "timed out by the operator" if seat.seat in forced else "out of time"
        foul = f", {out}: the solver's rows played"
    if seat.natural and seat.natural != "none":
        foul += f", declared {seat.natural.replace('_', ' ')}"
    heading = (
        f"{'*' if seat.seat == me else ' '}seat {seat_position(seat.seat)} {who}: "
        f"{_points(seat.score_delta)}, total {seat.series_total:+d}{foul}"
    )
    lines = _wrap(heading, "", "    ")
    rows = _rows(seat)
    if rows is None:
        return [*lines, "    (no rows revealed)"]
    lines.append("    " + " | ".join(cards_shown(row, style) for row in rows))
    named = "; ".join(_name(row) for row in rows)
    return lines + _wrap(named, "    ", "    ")


def row_against(
    row: str,
    mine: tuple[str, ...] | None,
    theirs: tuple[str, ...] | None,
    outcome: str,
    fouls: tuple[bool, bool],
    them: str,
) -> str:
    """One row from the reader's side: ``outcome`` is ``"won"``, ``"lost"``, ``"tie"`` or ``""``
    (not scored); ``fouls`` is (mine, theirs)."""
    if fouls == (True, True):
        return f"{row}: both fouled, no one wins it"
    if mine is None or theirs is None:
        missing = "your rows were" if mine is None else f"{them}'s rows were"
        verdict = {"won": ", you win it", "lost": f", {them} wins it", "tie": ", a tie"}
        return f"{row}: {missing} not revealed{verdict.get(outcome, '')}"
    try:
        my_name, their_name = names_apart(mine, theirs)
    except ValueError:  # a fouled row repeating a card has no value
        my_name, their_name = _name(mine), _name(theirs)
    if fouls[1] and outcome == "won":
        return f"{row}: {them} fouled, your {my_name} wins"
    if fouls[0] and outcome == "lost":
        return f"{row}: you fouled, {them}'s {their_name} wins"
    if outcome == "won":
        return f"{row}: your {my_name} beat {them}'s {their_name}"
    if outcome == "lost":
        return f"{row}: {them}'s {their_name} beat your {my_name}"
    if outcome == "tie" and my_name == their_name:
        return f"{row}: a tie, both {my_name}"
    if outcome == "tie":
        return f"{row}: a tie, your {my_name} and {them}'s {their_name}"
    return f"{row}: not scored"


def pair_lines(result: table_pb2.DealResult, me: str, labels: Mapping[str, str]) -> list[str]:
    """Each other seat against the reader's: rows won and lost, each row named, the points."""
    seats = {seat.seat: seat for seat in result.seats}
    mine = seats.get(me)
    if mine is None:
        return []
    lines = []
    for pair in result.pairs:
        if me not in (pair.first_seat, pair.second_seat):
            continue
        first = pair.first_seat == me
        other = pair.second_seat if first else pair.first_seat
        them = label(labels, other)
        theirs = seats.get(other, table_pb2.DealSeatResult(seat=other))
        outcomes = [_from_my_side(row, first) for row in (pair.front, pair.middle, pair.back)]
        delta = pair.first_seat_delta if first else -pair.first_seat_delta
        won, lost = outcomes.count("won"), outcomes.count("lost")
        tied = 3 - won - lost
        number = f"seat {seat_position(other)}"
        against = them if number in them else f"{them} ({number})"
        lines.append(f"you v {against}: won {won}, lost {lost}, tied {tied}: {_points(delta)}")
        for row, outcome in zip(ROWS, outcomes, strict=True):
            mine_row = _row(mine, row)
            their_row = _row(theirs, row)
            text = row_against(row, mine_row, their_row, outcome, (mine.foul, theirs.foul), them)
            lines.extend(_wrap(text, "  ", "      "))
    return lines


def _row(seat: table_pb2.DealSeatResult, row: str) -> tuple[str, ...] | None:
    rows = _rows(seat)
    return None if rows is None else rows[ROWS.index(row)]


def _from_my_side(outcome: int, first: bool) -> str:
    if outcome == table_pb2.ROW_OUTCOME_TIE:
        return "tie"
    if outcome == table_pb2.ROW_OUTCOME_FIRST_SEAT_WON:
        return "won" if first else "lost"
    if outcome == table_pb2.ROW_OUTCOME_SECOND_SEAT_WON:
        return "lost" if first else "won"
    return ""


def standings_line(
    totals: Sequence[tuple[str, int]], me: str, labels: Mapping[str, str], title: str
) -> list[str]:
    """``title: 1 Ann +4, 2= you -1, 2= Bob -1 …``: places shared when totals are equal."""
    ordered = sorted(totals, key=lambda item: (-item[1], seat_position(item[0])))
    parts = []
    for seat, total in ordered:
        place = 1 + sum(1 for _, other in ordered if other > total)
        shared = "=" if sum(1 for _, other in ordered if other == total) > 1 else ""
        who = "you" if seat == me else label(labels, seat)
        parts.append(f"{place}{shared} {who} {total:+d}")
    return _wrap(f"{title}: " + ", ".join(parts), "", "  ")


def deal_lines(
    result: table_pb2.DealResult,
    me: str,
    labels: Mapping[str, str],
    style: CardStyle = PLAIN,
    series_length: int = 0,
    standing_labels: Mapping[str, str] | None = None,
    forced: Collection[str] = (),
) -> list[str]:
    """A scored deal from ``me``'s seat: every seat's rows named, each row against each other
    seat, the points and the standings after it (the seats named by ``standing_labels`` there,
    when given: ``standing_label`` for a seat that changed hands). ``forced``: the seats the
    operator timed out in this deal (they missed no deadline)."""
    of = f" of {series_length}" if series_length else ""
    lines = [f"== deal {result.deal_number}{of}: the reveal =="]
    for seat in result.seats:
        lines.extend(seat_lines(seat, me, labels, style, forced))
    lines.extend(pair_lines(result, me, labels))
    totals = [(seat.seat, seat.series_total) for seat in result.seats]
    title = f"standings after deal {result.deal_number}"
    lines.extend(standings_line(totals, me, standing_labels or labels, title))
    return lines


def final_lines(
    completed: table_event_pb2.SeriesCompleted, me: str, labels: Mapping[str, str]
) -> list[str]:
    """The final table: places (shared when totals are equal), names, totals."""
    places = [standing.place for standing in completed.standings]
    played = f"{completed.deals_played} deal" + ("" if completed.deals_played == 1 else "s")
    lines = [f"== final standings after {played} =="]
    for standing in sorted(completed.standings, key=lambda s: (s.place, s.seat)):
        shared = "=" if places.count(standing.place) > 1 else " "
        you = "  (you)" if standing.seat == me else ""
        lines.append(
            f"  {standing.place}{shared} seat {seat_position(standing.seat)} "
            f"{label(labels, standing.seat):<{NAME_WIDTH}} {standing.total:+5d}{you}"
        )
    return lines


def timed_out_line(who: str, timed_out: table_event_pb2.SeatTimedOut) -> str:
    """A seat timed out (``SeatTimedOut``), ``who`` its player ("you" for the reader): out of
    time, or timed out by the operator (``by_operator``), who may do so before the deadline."""
    position = seat_position(timed_out.seat)
    if not timed_out.by_operator:
        return f"{who} (seat {position}) ran out of time"
    revealing = timed_out.stage == table_pb2.TIMEOUT_STAGE_REVEALING
    if who == "you":
        when = "before you revealed" if revealing else "while you were arranging"
        return f"the operator timed you out (seat {position}) {when}"
    when = "before it revealed" if revealing else "while arranging"
    return f"the operator timed {who} (seat {position}) out {when}"


def voided_lines(voided: table_event_pb2.DealVoided) -> list[str]:
    """A deal the operator voided (``DealVoided``): its number and the operator's reason."""
    number = int(voided.deal.rsplit("/", 1)[-1])
    return _wrap(
        f"the operator voided deal {number}: {voided.reason} (no points change; the deal does"
        " not count towards the series)",
        "",
        "  ",
    )


def replaced_line(seat: str, name: str, previous: str = "", last_deal: int = 0) -> str:
    """A seat the operator gave to another player (``SeatReplaced``), by its new player's
    ``name`` ("you" for the reader); with the ``previous`` player's name and the ``last_deal``
    they played, what becomes of the seat's series total: it carries on (a series total is the
    seat's: the rules score seats, and the standings rank seats)."""
    line = f"seat {seat_position(seat)} is now played by {name}"
    if not previous:
        return line
    until = f" until deal {last_deal}" if last_deal else ""
    return (
        f"{line} ({previous} played it{until}); the seat's series total carries on: a series"
        " total is the seat's, not the player's"
    )


def replaced_lines(seat: str, name: str, previous: str, last_deal: int) -> list[str]:
    """``replaced_line`` in lines of at most 79 characters."""
    return _wrap(replaced_line(seat, name, previous, last_deal), "", "  ")


def standing_label(name: str, seat: str, previous: str, last_deal: int) -> str:
    """How the standings name a seat that changed hands: its player now, and whose points its
    total holds too (``Carol (seat 1, Bob until deal 2)``)."""
    until = f" until deal {last_deal}" if last_deal else " before"
    return f"{name} (seat {seat_position(seat)}, {previous}{until})"


def seat_lost_line(seat: str, name: str) -> str:
    """The reader's last line when the operator gave its seat to ``name``."""
    return (
        f"the operator gave your seat (seat {seat_position(seat)}) to {name}:"
        " you no longer play at this table"
    )


def deal_started_line(number: int, series_length: int, voided: int) -> str:
    """A deal's start; after ``voided`` deals the operator voided, the deals that count."""
    if not voided:
        total = f" of {series_length}" if series_length else ""
        return f"-- deal {number}{total} started --"
    counting = f"{number - voided} of {series_length}" if series_length else f"{number - voided}"
    return f"-- deal {number} started ({counting} that count; {voided} voided) --"
