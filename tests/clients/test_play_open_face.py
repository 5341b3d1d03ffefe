"""``sapsam-play`` at an open-face table (issue #18), against the SDK's solver bot on a real server.

On a pty of 80x24: a two-seat Turbo set (two deals of three streets); the screen shows every
seat's rows as they fill and the person's own cards of each street, ``hint`` shows the solver's
suggestion without placing it, letters place the cards, ``s`` takes the suggestion; each deal's
score and the set's end are shown. In process, with the person's answers scripted: a Fantasyland
earned by placing toward chosen rows (the first deal's seed chosen through the table service's
seed source, as tests/api/test_open_face_fantasyland_api.py does), then set with the suggestion,
kept on disk before its commitment is sent, opened at the end and forgotten; and the SDK's solver
bot (``sapsam_client.open_face_bot``) that keeps such a hand in a ``CommitmentKeeper``: one that
stops right after committing, and a fresh one that opens the hand from the file. The pure helpers
(letters, the board lines, the event lines) below.
"""

from __future__ import annotations

import io
import json
import re
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from pty_child import pty_child
from test_terminal_client import PLAY_ENV, play_command

from sapsam import fairness
from sapsam.api.server import RunningServer, ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam.fairness.fantasyland_deals import earning_seed
from sapsam.rules.open_face.parameters import TURBO_STREETS
from sapsam_client import connect
from sapsam_client.commitment_file import CommitmentFile
from sapsam_client.open_face_bot import OpenFaceBot
from sapsam_client.open_face_play import (
    OpenFacePlayer,
    board_lines,
    event_lines,
    is_open_face,
    placement_from_letters,
)
from sapsam_client.prompts import SessionEndedError, Terminal
from sapsam_client.seat import Seat
from sapsam_client.seat_types import Commitment
from sapsam_client.terminal import build_parser, choose_table
from sapsam_proto.v1 import open_face_pb2, table_event_pb2, table_pb2

T = "tables/7f0e4c1a-0000-4000-8000-000000000003"
CUT = 9
OPERATOR_TOKEN = "operator-token-for-open-face-play-0123456789"


def start_bot(address: str, table: str, position: int, seed: int = 1) -> tuple[Any, list[Any]]:
    """The SDK's solver bot at ``position`` in a thread; its failures listed."""
    client = connect(address)
    player = client.register(f"bot {position}").player
    seat = client.join_table(table, position).name
    bot = OpenFaceBot(client, table, seat, player.removeprefix("players/"), seed=seed)
    failures: list[BaseException] = []

    def run() -> None:
        try:
            bot.play()
        except BaseException as error:
            failures.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return (thread, bot), failures


def test_a_person_plays_an_open_face_set_from_the_terminal(address: str, tmp_path: Path) -> None:
    host = connect(address)
    host.register("host")
    table = host.create_open_face_table(2, preset="ofc_turbo").name
    transcript = io.StringIO()
    command = play_command(address, table, tmp_path / "tokens.json")
    with pty_child(command, PLAY_ENV) as running:
        child = running.terminal
        child.logfile_read = transcript
        child.expect("you sit at seat 0")
        (thread, _bot), failures = start_bot(address, table, 1)
        prompt = r"where do they go \(f/m/b each, hint, s, \?\): "
        child.timeout = 30
        try:
            mine: set[str] = set()
            scored: list[str] = []
            turn = 0
            # Two deals (a third after a Fantasyland); a street the server places for the person
            # (one option left, or a dead hand: automatic moves) asks nothing.
            while True:
                index = child.expect(
                    [
                        r"street (\d): your cards to place((?: +\d\) [2-9TJQKA][cdhs])+)\r\n",
                        r"deal (\d) scored:\r\n  ",
                        r"front \(3 cards; hint, s, \?\): ",  # a Fantasyland hand to set
                        "the set is over:",
                    ]
                )
                if index == 3:
                    break
                if index == 1:
                    scored.append(child.match.group(1))
                    continue
                if index == 2:
                    child.sendline("s")
                    continue
                street = int(child.match.group(1))
                dealt = re.findall(r"[2-9TJQKA][cdhs]", child.match.group(2))
                assert len(dealt) == (5 if street == 1 else 4)
                mine.update(dealt)
                child.expect(prompt)
                screen = transcript.getvalue().rsplit("your cards to place", 1)[0]
                # Every seat's rows as they fill: the bot's line shows the cards it placed.
                seat_lines = re.findall(
                    r"  (bot 1 \(seat 1\)|you \(seat 0\)) +([^\r\n]+)\r\n", screen
                )
                assert {name for name, _ in seat_lines[-2:]} == {"bot 1 (seat 1)", "you (seat 0)"}
                if turn == 0:
                    child.sendline("?")
                    child.expect("one letter per card")
                    child.expect(prompt)
                    child.sendline("bbbbbbb")
                    child.expect(r"give 5 letters")
                    child.expect(prompt)
                    child.sendline("hint")
                    child.expect(r"suggested: ([fmb]{5})  \(")
                    letters = child.match.group(1)
                    child.expect(prompt)
                    child.sendline(letters)  # typed: the suggestion's letters
                else:
                    child.sendline("s")
                turn += 1
            assert scored[:2] == ["1", "2"] and turn >= 2
            child.expect(r"1\. ")
            child.expect("thanks for playing")
        except (pexpect.EOF, pexpect.TIMEOUT) as error:  # the screen says what went wrong
            raise AssertionError(transcript.getvalue()) from error
        assert running.exit_code() == 0
        thread.join(30)
        assert failures == []
        text = transcript.getvalue()
        assert "bot 1 placed" in text  # the other seat's placements are told as they happen
        assert re.search(r"waiting for bot 1 to place street \d", text)  # whom the table waits for
    # Before deal 1's score no card shows but the person's own and those the bot placed.
    before = text.split("deal 1 scored:")[0]
    placed = {  # face up: the bot's, and the person's own placed by the server
        card
        for line in re.findall(r"(?:bot 1|you) placed ([^\r\n]+)", before)
        for card in re.findall(r"[2-9TJQKA][cdhs]", line)
    }
    assert set(re.findall(r"\b[2-9TJQKA][cdhs]\b", before)) <= mine | placed
    final = host.get_table(table)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE


# -- a Fantasyland, played by a scripted person ----------------------------------------------


@pytest.fixture
def seeded(database_url: str) -> Iterator[tuple[str, Any]]:
    """A server whose table service is at hand to choose a deal's seed."""
    services = build_services(database_url, pool_size=8)
    tables = services.table_service._tables  # type: ignore[attr-defined]
    running: RunningServer = start_server(
        ServerConfig(listen="127.0.0.1:0", operator_token=OPERATOR_TOKEN, grace_seconds=2),
        services,
    )
    yield f"127.0.0.1:{running.port}", tables
    running.stop()


def _start_first_deal(tables: Any, client: Any, table: str, seed: bytes) -> None:
    """Deal 1 started here from ``seed`` before any seat plays: a StartDeal the bot and the
    player race for can be refused after drawing a seed from the source, so a chosen seed
    handed to the next caller could go to nobody (deal 1 then holds other cards)."""
    tables.deal_seeds = lambda: seed
    try:
        client.start_deal(table)
    finally:
        tables.deal_seeds = fairness.new_seed


def _earning_seed(
    table_id: uuid.UUID, dealer: int, seat: int
) -> tuple[bytes, tuple[tuple[str, ...], ...]]:
    """A first-deal seed under which ``seat`` can set a Fantasyland-earning hand, and its rows
    as the terminal names their cards."""
    seed, rows = earning_seed(
        table_id, dealer, seat, streets=TURBO_STREETS, cut=CUT, label="play fantasyland"
    )
    return seed, tuple(tuple(str(card) for card in row) for row in rows)


class ScriptedPerson:
    """Answers the terminal's questions: each street's cards toward ``rows`` (deal 1), the
    suggestion after that; every line said is kept."""

    def __init__(self, rows: tuple[tuple[str, ...], ...]) -> None:
        self.rows = rows
        self.said: list[str] = []
        self.deal = 0

    def say(self, line: str) -> None:
        self.said.append(line)
        if line.startswith("-- deal "):
            self.deal = int(line.split()[2])

    def ask(self, question: str) -> str:
        self.said.append(question)
        if question.startswith("where do they go") and self.deal == 1:
            shown = next(line for line in reversed(self.said) if "your cards to place" in line)
            cards = re.findall(r"[2-9TJQKA][cdhs]", shown.split("to place", 1)[1])
            return "".join(
                "fmb"[next(i for i in range(3) if card in self.rows[i])] for card in cards
            )
        return "s"


def test_a_fantasyland_is_set_kept_on_disk_committed_and_opened(
    seeded: tuple[str, Any], tmp_path: Path
) -> None:
    address, tables = seeded
    person_client, bot_client = connect(address), connect(address)
    person = person_client.register("Ann").player
    bot_player = bot_client.register("bot").player
    table = person_client.create_open_face_table(2, preset="ofc_turbo")
    seats = [
        person_client.join_table(table.name, 0).name,
        bot_client.join_table(table.name, 1).name,
    ]
    person_client.choose_dealer(table.name)
    drawn = person_client.get_table(table.name)
    dealer = int(drawn.dealer_seat.rsplit("/", 1)[1])
    cutter = fairness.cutter_for(dealer, 2)
    # The person plays the seat that does not cut (the bot cuts where its seed says).
    mine = 1 - cutter
    clients = {0: person_client, 1: bot_client}
    players = {0: person, 1: bot_player}
    seed, rows = _earning_seed(uuid.UUID(table.name.removeprefix("tables/")), dealer, mine)
    bot_seed = next(s for s in range(200) if 1 + (s + 1) % 51 == CUT)  # its cut in deal 1
    bot = OpenFaceBot(
        clients[cutter],
        table.name,
        seats[cutter],
        players[cutter].removeprefix("players/"),
        seed=bot_seed,
    )
    scripted = ScriptedPerson(rows)
    keeper = CommitmentFile(tmp_path / "commitments.json")
    kept_at_commit: list[Any] = []
    player = OpenFacePlayer(
        clients[mine],
        Seat(clients[mine], seats[mine], keeper),
        Terminal(scripted.ask, scripted.say),
        keeper,
        contribute_entropy=False,
    )
    player.on_move = lambda move: (
        kept_at_commit.append(json.loads(keeper.path.read_text())) if move == "committed" else None
    )
    failures: list[BaseException] = []

    def bot_plays() -> None:
        try:
            bot.play()
        except BaseException as error:
            failures.append(error)

    _start_first_deal(tables, person_client, table.name, seed)
    thread = threading.Thread(target=bot_plays, daemon=True)
    thread.start()
    try:
        standings = player.play()
    finally:
        tables.deal_seeds = fairness.new_seed
        bot.stop.set()
    thread.join(30)
    assert failures == []
    said = "\n".join(scripted.said)
    assert re.search(r"Fantasyland: your 1[3-6] cards", said)  # progressive: QQ 14 … AA 16
    assert "your Fantasyland hand is set face down" in said
    assert re.search(r"you opened Fantasyland: ", said), said
    # On disk before the commitment was sent; forgotten once opened.
    # (A Fantasyland may earn another: the set then has a deal more, and a commitment more.)
    assert kept_at_commit and all(len(entry[seats[mine]]) == 1 for entry in kept_at_commit)
    assert json.loads(keeper.path.read_text()) == {}
    assert len(standings) == 2
    final = clients[mine].get_table(table.name)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE


# -- pure helpers ---------------------------------------------------------------------------


def test_letters_place_the_cards_in_order_and_bad_letters_are_told() -> None:
    cards = ["As", "Kd", "7c", "7h", "2s"]
    assert placement_from_letters("bb mm f", cards, (3, 5, 5)) == (
        ("2s",),
        ("7c", "7h"),
        ("As", "Kd"),
    )
    assert placement_from_letters("bbmm", cards, (3, 5, 5)) == (
        "give 5 letters (f, m or b), one for each card, in order"
    )
    assert placement_from_letters("bbmmx", cards, (3, 5, 5)) == (
        "x: use f (front), m (middle) or b (back)"
    )
    assert placement_from_letters("fffff", cards, (3, 5, 5)) == (
        "the front row has room for 3 more, not 5"
    )


def test_the_board_shows_every_seat_empty_places_and_hidden_rows() -> None:
    deal = open_face_pb2.OpenFaceDeal(
        seats=[
            open_face_pb2.OpenFaceSeat(
                seat=f"{T}/seats/0",
                rows=open_face_pb2.OpenFaceRows(front=["Qs"], back=["As", "Ad"]),
            ),
            open_face_pb2.OpenFaceSeat(seat=f"{T}/seats/1", rows_hidden=True),
            open_face_pb2.OpenFaceSeat(
                seat=f"{T}/seats/2", fantasyland=True, committed=True, rows_hidden=True
            ),
        ]
    )
    lines = board_lines(deal, {f"{T}/seats/1": "Bob"}, f"{T}/seats/0")
    assert lines[0].split(None, 3)[3] == "Qs __ __ | __ __ __ __ __ | As Ad __ __ __"
    assert lines[0].startswith("  you (seat 0)")
    assert "Bob (seat 1)" in lines[1] and "hidden until the Fantasyland hand is set" in lines[1]
    assert "seat 2 (seat 2) FL" in lines[2] and "set face down" in lines[2]


def test_events_tell_placements_fantasylands_and_scores() -> None:
    me, bob = f"{T}/seats/0", f"{T}/seats/1"
    labels = {bob: "Bob"}
    placed = table_event_pb2.TableEvent(
        cards_placed=table_event_pb2.CardsPlaced(
            seat=bob, placed=open_face_pb2.OpenFaceRows(front=["2c"], back=["Ks", "Kd"])
        )
    )
    assert event_lines(placed, labels, me) == ["Bob placed front 2c, back Ks Kd"]
    hidden = table_event_pb2.TableEvent(
        cards_placed=table_event_pb2.CardsPlaced(seat=bob, hidden=True)
    )
    assert event_lines(hidden, labels, me) == []
    timed = table_event_pb2.TableEvent(
        fantasyland_timed_out=table_event_pb2.FantasylandTimedOut(seat=bob)
    )
    assert event_lines(timed, labels, me) == ["Bob ran out of time setting the Fantasyland hand"]
    scored = table_event_pb2.TableEvent(
        deal_scored=table_event_pb2.DealScored(
            open_face=table_event_pb2.OpenFaceScore(
                deal=f"{T}/deals/2",
                seats=[
                    table_event_pb2.OpenFaceSeatScore(seat=me, score_delta=7, series_total=3),
                    table_event_pb2.OpenFaceSeatScore(
                        seat=bob, dead=True, score_delta=-7, series_total=-3
                    ),
                ],
            )
        )
    )
    lines = event_lines(scored, labels, me)
    assert lines[0] == "deal 2 scored:"
    assert lines[1].endswith("+7 (total +3)") and lines[2].endswith("DEAD  -7 (total -3)")


# -- the SDK's bot keeps a Fantasyland hand on disk until it is opened -----------------------


class EndAtFantasyland(ScriptedPerson):
    """The scripted person, who leaves (Ctrl-D) when asked to set a Fantasyland hand."""

    def ask(self, question: str) -> str:
        if question.startswith("front ("):
            raise SessionEndedError()
        return super().ask(question)


class StopAfterSaving:
    """A keeper that stops ``bot`` once it has kept a setting (the bot still sends the commitment
    it is making, then its loop ends: a bot that dies between committing and opening)."""

    def __init__(self, keeper: CommitmentFile) -> None:
        self.keeper = keeper
        self.bot: OpenFaceBot | None = None

    def load(self, seat: str) -> dict[int, Commitment]:
        return self.keeper.load(seat)

    def save(self, seat: str, committed: Commitment) -> None:
        self.keeper.save(seat, committed)
        assert self.bot is not None
        self.bot.stop.set()

    def forget(self, seat: str, deal: int) -> None:
        self.keeper.forget(seat, deal)

    def load_declarations(self, seat: str) -> dict[int, tuple[str, bytes]]:
        return {}

    def save_declaration(self, seat: str, deal: int, declaration: str, nonce: bytes) -> None:
        raise AssertionError("open face declares nothing")


def test_a_bot_restarted_after_committing_opens_the_fantasyland_it_kept(
    seeded: tuple[str, Any], tmp_path: Path
) -> None:
    address, tables = seeded
    person_client, bot_client = connect(address), connect(address)
    person = person_client.register("Ann").player.removeprefix("players/")
    bot_player = bot_client.register("bot").player.removeprefix("players/")
    table = person_client.create_open_face_table(2, preset="ofc_turbo").name
    seats = [person_client.join_table(table, 0).name, bot_client.join_table(table, 1).name]
    person_client.choose_dealer(table)
    dealer = int(person_client.get_table(table).dealer_seat.rsplit("/", 1)[1])
    cutter = fairness.cutter_for(dealer, 2)
    mine = 1 - cutter
    clients, players = {0: person_client, 1: bot_client}, {0: person, 1: bot_player}
    seed, rows = _earning_seed(uuid.UUID(table.removeprefix("tables/")), dealer, mine)
    bot_seed = next(s for s in range(200) if 1 + (s + 1) % 51 == CUT)
    other = OpenFaceBot(clients[cutter], table, seats[cutter], players[cutter], seed=bot_seed)
    failures: list[BaseException] = []

    def other_plays() -> None:
        try:
            other.play()
        except BaseException as error:
            failures.append(error)

    _start_first_deal(tables, person_client, table, seed)
    thread = threading.Thread(target=other_plays, daemon=True)
    thread.start()
    try:
        # Deal 1: the scripted person earns the Fantasyland, and leaves when asked to set it.
        person_seat = Seat(clients[mine], seats[mine])
        scripted = EndAtFantasyland(rows)
        player = OpenFacePlayer(
            clients[mine],
            person_seat,
            Terminal(scripted.ask, scripted.say),
            contribute_entropy=False,
        )
        with pytest.raises(SessionEndedError):
            player.play()
        # A bot takes the seat up, keeps its setting on disk, commits, and dies.
        path = tmp_path / "bot-commitments.json"
        stopping = StopAfterSaving(CommitmentFile(path))
        first = OpenFaceBot(
            clients[mine], table, seats[mine], players[mine], seed=3, keeper=stopping
        )
        stopping.bot = first
        first.play()
        committed = clients[mine].get_table(table).open_face.seats[mine]
        assert committed.fantasyland and committed.committed and not committed.revealed
        assert len(CommitmentFile(path).load(seats[mine])) == 1
        # Another bot (nothing in memory) opens the hand from the file and plays the set out.
        second = OpenFaceBot(
            clients[mine], table, seats[mine], players[mine], seed=3, keeper=CommitmentFile(path)
        )
        second.play()
    finally:
        tables.deal_seeds = fairness.new_seed
        other.stop.set()
    thread.join(30)
    assert failures == []
    assert clients[mine].get_table(table).phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    events = list(clients[mine].watch(table))
    opened = [e.fantasyland_revealed for e in events if e.HasField("fantasyland_revealed")]
    assert seats[mine] in {revealed.seat for revealed in opened}
    assert not any(e.HasField("fantasyland_timed_out") for e in events)
    assert CommitmentFile(path).load(seats[mine]) == {}


def test_create_with_an_open_face_preset_makes_an_open_face_table(address: str) -> None:
    client = connect(address)
    client.register("Ann")
    said: list[str] = []
    terminal = Terminal(lambda question: "", said.append)
    arguments = build_parser().parse_args(
        ["--create", "--preset", "ofc_turbo", "--seat-count", "3", "--deals", "5"]
    )
    table = client.get_table(choose_table(client, arguments, terminal))
    assert table.open_face_rule_set.name == "ofc_turbo" and table.seat_count == 3
    assert "--deals does not apply to open face (a set has one deal per seat)" in said
    assert is_open_face(table)
