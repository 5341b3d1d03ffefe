"""``sapsam-play`` at a Pineapple table (issue #19) and open face's countdown (#18's leftover),
over a real gRPC server: a scripted person plays seat 0 against two solver bots. On each street
after the first it is shown the 3 cards to choose from and types one letter a card, ``x`` for the
one it discards; its own discards are shown to it, the others' only as a count and "discarded a
card face down" until the deal's end, when its discards are opened for it (signed) and every
seat's are told. With ``move_seconds`` the person is told how long it has, and the waiting
status counts the other seats' deadline down."""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from google.protobuf.timestamp_pb2 import Timestamp

from sapsam_client import connect
from sapsam_client.commitment_file import CommitmentFile
from sapsam_client.open_face_bot import OpenFaceBot
from sapsam_client.open_face_play import OpenFacePlayer, board_lines, street_from_letters
from sapsam_client.open_face_status import countdown_text, time_left_text
from sapsam_client.prompts import Terminal
from sapsam_client.seat import Seat
from sapsam_proto.v1 import open_face_pb2, table_pb2

T = "tables/7f0e4c1a-0000-4000-8000-000000000019"


class Person:
    """Answers every placement by hint then its own letters (the suggestion's), and keeps what
    was said and every status shown."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.statuses: list[str] = []
        self.suggested: str | None = None

    def say(self, line: str) -> None:
        self.said.append(line)
        found = re.search(r"suggested: ([fmbx]+)  ", line)
        if found:
            self.suggested = found.group(1)

    def ask(self, question: str) -> str:
        self.said.append(question)
        if question.startswith("where do they go"):
            if self.suggested is None:
                return "hint"
            typed, self.suggested = self.suggested, None
            return typed
        return "s"  # a Fantasyland hand: the suggested setting


def test_a_person_plays_a_pineapple_set_with_the_discard_hidden_and_a_countdown(
    address: str, tmp_path: Path
) -> None:
    person_client = connect(address)
    person_client.register("Ann")
    table = person_client.create_open_face_table(3, preset="pineapple", move_seconds=120).name
    mine = person_client.join_table(table, 0).name
    failures: list[BaseException] = []
    bots = []
    for position in (1, 2):
        client = connect(address)
        player = client.register(f"bot {position}").player.removeprefix("players/")
        seat = client.join_table(table, position).name
        bots.append(OpenFaceBot(client, table, seat, player, seed=position))

    def run(bot: OpenFaceBot) -> None:
        try:
            bot.play()
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=run, args=(bot,), daemon=True) for bot in bots]
    for thread in threads:
        thread.start()
    person = Person()
    keeper = CommitmentFile(tmp_path / "commitments.json")
    terminal = Terminal(person.ask, person.say)
    terminal.status = person.statuses.append  # type: ignore[method-assign]
    player = OpenFacePlayer(
        person_client,
        Seat(person_client, mine, keeper),
        terminal,
        keeper,
        contribute_entropy=False,
    )
    try:
        standings = player.play()
    finally:
        for bot in bots:
            bot.stop.set()
    for thread in threads:
        thread.join(30)
    assert failures == []
    assert len(standings) == 3
    said = "\n".join(person.said)
    # The 3 cards to choose from, and what to do with them.
    streets = re.findall(r"street ([2-5]): your cards to place((?: +\d\) \S\S)+)", said)
    assert streets and all(len(cards.split(")")) - 1 == 3 for _, cards in streets)
    assert "  place 2, discard 1 (x)" in said
    assert re.search(r"suggested: [fmb]*x[fmb]*  \(.*; discard \S\S\)", said)
    assert re.search(r"you discarded \S\S \(only its hash is sent\)", said)
    assert re.search(r"your discards so far \(only you see them\): \S\S", said)
    # The others' discards: only that a card went, until they open them at the deal's end.
    assert re.search(r"bot 1 discarded a card face down", said)
    assert re.search(r"\(\d discarded\)", said)
    assert re.search(r"you opened the discards: (\S\S ?){4}", said), said
    assert re.search(r"bot 2 opened the discards: (\S\S ?){4}", said)
    # Before deal 1's openings no line names a card a bot discarded in it.
    first_open = said.index("opened the discards")
    opened = re.findall(r"bot \d opened the discards: ((?:\S\S ?){4})", said)
    thrown = {card for line in opened[:2] for card in line.split()}
    before = said[:first_open]
    assert not thrown & set(re.findall(r"\b[2-9TJQKA][cdhs]\b", before)), thrown
    # The countdown: the person is told its time; the status counts the others' down.
    assert re.search(r"you have (\d+ min )?\d+ s \(then the server moves for you\)", said)
    assert any(
        re.search(r"waiting for bot \d .*: (\d+ min )?\d+ s left$", text)
        for text in person.statuses
    ), person.statuses
    # Its discards were kept on disk (beside its commitments) and forgotten once opened.
    assert keeper.load_discards(mine) == {}
    final = person_client.get_table(table)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE


def test_letters_with_a_discard_and_the_board_hides_others_discards() -> None:
    cards = ["As", "Kd", "7c"]
    assert street_from_letters("bxm", cards, (3, 5, 5), 1) == (((), ("7c",), ("As",)), ("Kd",))
    assert street_from_letters("bbm", cards, (3, 5, 5), 1) == "discard exactly 1 card (x)"
    assert street_from_letters("bbz", cards, (3, 5, 5), 1) == (
        "z: use f (front), m (middle) or b (back), x (discard)"
    )
    deal = open_face_pb2.OpenFaceDeal(
        seats=[
            open_face_pb2.OpenFaceSeat(seat=f"{T}/seats/0", discards_made=2),
            open_face_pb2.OpenFaceSeat(seat=f"{T}/seats/1", discards_made=4, discards=["2c"]),
        ]
    )
    lines = board_lines(deal, {}, f"{T}/seats/0")
    assert lines[0].endswith("(2 discarded)") and lines[1].endswith("discarded 2c")


def test_the_countdown_words() -> None:
    now = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
    assert countdown_text("Bob (seat 1) to place street 2", now + timedelta(seconds=25), now) == (
        "waiting for Bob (seat 1) to place street 2: 25 s left"
    )
    assert countdown_text("Bob", now - timedelta(seconds=3), now) == (
        "waiting for Bob: the time ran out 3 s ago"
    )
    assert countdown_text("Bob", None, now) == "waiting for Bob (no time limit)"
    deal = open_face_pb2.OpenFaceDeal()
    assert time_left_text(deal, now) == ""
    stamp = Timestamp()
    stamp.FromDatetime((now + timedelta(seconds=40)).replace(tzinfo=None))
    deal.deadline_time.CopyFrom(stamp)
    assert time_left_text(deal, now) == "you have 40 s (then the server moves for you)"
