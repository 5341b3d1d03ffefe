"""A tournament bot that reaches its open-face table before its seat is given plays it.

The round is listed (``GetTournament.seated_rounds``) before the service has opened its tables
and given their seats, one by one (``ensure_round_tables``, run by StartTournament for round 1 and
by the results process after: create, join seat 0, join seat 1, draw the dealer). A bot that read
its table in between saw its seat empty and left the table as if it had been given to another
player: ``follow_tournament`` had marked the round played, so the bot went on waiting for the
next round while the set waited for its seat forever (``sapsam tournament demo --preset
ofc_turbo`` hung, round 1 or 2, about one run in a few under load, until 51337ff). No server
here: a client whose table answers in the order ``ensure_round_tables`` seats it, and the
open-face bot's play replaced by a record of who played.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sapsam_client import tournament_play
from sapsam_client.errors import SapsamError
from sapsam_client.open_face_bot import OpenFaceBot
from sapsam_client.tournament_play import follow_tournament, play_open_face_set
from sapsam_proto.v1 import open_face_pb2, table_pb2, tournament_pb2

TABLE = "tables/b3516eee-258a-554b-a8d4-93b5bc9eb742"
ANN, BOB = "players/ann", "players/bob"


def _table(*holders: str) -> table_pb2.Table:
    """The table as ``GetTable`` shows it with ``holders`` seated (``""``: a seat not given)."""
    return table_pb2.Table(
        name=TABLE,
        seats=[
            table_pb2.Seat(name=f"{TABLE}/seats/{index}", position=index, player=holder)
            for index, holder in enumerate(holders)
        ],
        open_face_rule_set=open_face_pb2.OpenFaceRuleSet(name="ofc_turbo"),
    )


class SeatingClient:
    """A client whose table is opened and seated as ``ensure_round_tables`` does it: not found,
    then open with no seat given, then seat 0 given, then both; it stays seated after."""

    def __init__(self) -> None:
        self._views: Iterator[table_pb2.Table | None] = iter(
            [None, _table("", ""), _table(ANN, ""), _table(ANN, ""), _table(ANN, BOB)]
        )
        self._last = _table(ANN, BOB)
        self.reads = 0

    def get_table(self, name: str) -> table_pb2.Table:
        assert name == TABLE
        self.reads += 1
        view = next(self._views, self._last)
        if view is None:
            raise SapsamError("NOT_FOUND", "TABLE_NOT_FOUND", "no such table")
        return view

    def get_tournament(self, name: str) -> tournament_pb2.Tournament:
        # Listed, and complete: the follower plays the round, then stops.
        seated = tournament_pb2.TournamentRound(
            round=1, tables=[tournament_pb2.TournamentTable(table=TABLE, players=[ANN, BOB])]
        )
        return tournament_pb2.Tournament(
            name=name, status=tournament_pb2.TOURNAMENT_STATUS_COMPLETE, seated_rounds=[seated]
        )


@pytest.fixture
def played(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The seats the open-face bot played (seat, player id), its play returning at once as at
    the set's end."""
    seats: list[tuple[str, str]] = []

    def play(bot: OpenFaceBot) -> None:
        seats.append((bot.seat, bot.player_id))

    monkeypatch.setattr(OpenFaceBot, "play", play)
    monkeypatch.setattr(tournament_play, "POLL_SECONDS", 0.01)
    return seats


def test_a_seat_not_given_yet_is_waited_for_then_played(played: list[tuple[str, str]]) -> None:
    client = SeatingClient()
    with pytest.raises(SapsamError):
        client.get_table(TABLE)  # not opened yet (play_when_ready waits that out)
    view = client.get_table(TABLE)
    seat = f"{TABLE}/seats/1"
    assert play_open_face_set(client, view, seat, BOB, seed=3)  # type: ignore[arg-type]
    assert played == [(seat, "bob")]


def test_the_follower_plays_the_round_whose_seat_it_found_empty(
    played: list[tuple[str, str]],
) -> None:
    client = SeatingClient()
    tables = follow_tournament(
        client,  # type: ignore[arg-type]
        "tournaments/t",
        BOB,
        arranger=lambda *_: None,  # type: ignore[arg-type]
    )
    assert played == [(f"{TABLE}/seats/1", "bob")]
    assert tables == [TABLE]
    assert client.reads >= 5  # it read the table until its seat was given


def test_a_seat_given_to_another_player_is_still_left(played: list[tuple[str, str]]) -> None:
    # The wait is for a seat not given yet: one given to someone else (a re-seat) is left.
    client = SeatingClient()
    assert not play_open_face_set(client, _table(ANN, ANN), f"{TABLE}/seats/1", BOB, seed=0)  # type: ignore[arg-type]
    assert played == []
