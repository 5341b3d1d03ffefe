"""A player in a tournament: its seat followed from round to round (``sapsam-bot --tournament``,
``sapsam tournament bot``), and the tournament's turns told in words (``sapsam-play``).

:func:`follow_tournament` reads the tournament (``GetTournament``) until its player is seated in a
round it has not played, plays that seat's series with :meth:`Seat.play_series` (at an open-face
table, the round's set with the SDK's open-face solver bot, ``sapsam_client.open_face_bot``), and
goes on with the next round, until the tournament is complete or cancelled. It waits out a round's
table not opened yet, an open-face seat not given yet, and a pause (``StartDeal`` refused
``TOURNAMENT_PAUSED`` until the operator resumes), and leaves a table whose seat the operator gave
to another player (the player forfeited and was re-seated).

:class:`TournamentNotices` says what changed since it last looked: "the tournament is paused
(since 14:02:11 UTC: fire drill); waiting for the operator to resume", that it resumed, that it
was cancelled, that the player forfeited. :func:`tell_changes` reads it every
:data:`NOTICE_SECONDS` from a thread of its own; a paused tournament says nothing on its tables'
streams, but its tables start no deal, so :func:`told_before_deals` reads it again, at once, when a
deal starts after a pause: the resume is said before the deal's first line and its cards, not
under the row prompt seconds later. A table does not say which tournament seated it, so
:func:`tournament_of_table` looks for it among the newest tournaments (at most
:data:`SCAN_LIMIT`).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from sapsam_client.client import Client, table_name
from sapsam_client.errors import SapsamError
from sapsam_client.seat import Arranger, CommitmentKeeper, EventHandler, SeatReplacedError
from sapsam_proto.v1 import table_event_pb2, table_pb2, tournament_pb2

POLL_SECONDS: Final = 0.1
"""How often a follower reads the tournament while no round of its player is seated."""
PAUSED_SECONDS: Final = 0.5
"""How often a follower tries a paused tournament's table again, or reads a paused tournament
for its next round."""
NOTICE_SECONDS: Final = 2.0
"""How often a player's tournament is read for a pause, a resume, a cancellation, a forfeit."""
SCAN_LIMIT: Final = 200
"""Most tournaments read (newest first) to find the one a table belongs to."""
FINISHED: Final = frozenset(
    {tournament_pb2.TOURNAMENT_STATUS_COMPLETE, tournament_pb2.TOURNAMENT_STATUS_CANCELLED}
)
WAITED_REASONS: Final = frozenset({"TABLE_NOT_FOUND", "TOURNAMENT_PAUSED"})
"""Refusals a follower waits out: a round's tables are opened just after the round is seated,
and a paused tournament's tables start no deal until the operator resumes it."""


def seat_in_round(round_message: tournament_pb2.TournamentRound, player: str) -> str | None:
    """The seat (``tables/{table}/seats/{n}``) ``player`` holds in the round, if any."""
    for table in round_message.tables:
        for seat, holder in enumerate(table.players):
            if holder == player:
                return f"{table.table}/seats/{seat}"
    return None


def play_when_ready(
    client: Client,
    seat_name: str,
    arranger: Arranger,
    should_stop: Callable[[], bool] = lambda: False,
    on_event: EventHandler | None = None,
    keeper: CommitmentKeeper | None = None,
    *,
    player: str | None = None,
    seed: int = 0,
) -> bool:
    """Play the seat's series, waiting out a table not opened yet and a pause (each try on a
    fresh seat, so the refused move is made again). False when the seat was given to another
    player (the player forfeited and was re-seated): the table is left. An open-face table's
    set is played by :func:`play_open_face_set` (``player``'s, the seat's holder when None;
    ``seed`` seeds its solver; ``arranger`` and ``on_event`` are not used there)."""
    while True:
        try:
            view = client.get_table(table_name(seat_name))
            if view.HasField("open_face_rule_set"):
                return play_open_face_set(
                    client, view, seat_name, player, seed, should_stop, keeper
                )
            client.seat(seat_name, keeper).play_series(arranger, on_event=on_event)
            return True
        except SeatReplacedError:
            return False
        except SapsamError as error:
            if error.reason not in WAITED_REASONS or should_stop():
                raise
            pause = PAUSED_SECONDS if error.reason == "TOURNAMENT_PAUSED" else POLL_SECONDS
            time.sleep(pause)


def play_open_face_set(
    client: Client,
    view: table_pb2.Table,
    seat_name: str,
    player: str | None,
    seed: int,
    should_stop: Callable[[], bool] = lambda: False,
    keeper: CommitmentKeeper | None = None,
) -> bool:
    """Play an open-face table's set (one tournament round) at ``seat_name`` with the SDK's
    open-face bot until the set is over; a pause is waited out (its ``StartDeal`` refused, it
    tries again every :data:`PAUSED_SECONDS`). A seat not given yet (the round is listed before
    the service opens its tables and seats them, one seat after another) is waited for. False
    when the seat is, or becomes, another player's (re-seated): the table is left."""
    from sapsam_client.open_face_bot import OpenFaceBot

    def holder(table: table_pb2.Table) -> str:
        return next((entry.player for entry in table.seats if entry.name == seat_name), "")

    class TournamentSeatBot(OpenFaceBot):
        """The open-face bot, slower to try a paused tournament's table again: its refused
        ``StartDeal`` (``TOURNAMENT_PAUSED``) waits :data:`PAUSED_SECONDS`, not the bot's
        poll (a pause may last hours)."""

        def _step(self, table: table_pb2.Table) -> bool:
            try:
                return super()._step(table)
            except SapsamError as error:
                if error.reason != "TOURNAMENT_PAUSED":
                    raise
                self.stop.wait(PAUSED_SECONDS)
                return True

    while not holder(view) and not should_stop():
        # The round is listed before its tables' seats are given (the results process seats
        # them): a seat not given yet is waited for, not left (the set would wait for it).
        time.sleep(POLL_SECONDS)
        view = client.get_table(view.name)
    mine = player if player is not None else holder(view)
    if holder(view) != mine:
        return False
    bot = TournamentSeatBot(client, view.name, seat_name, mine.removeprefix("players/"), seed=seed)
    if keeper is not None:
        bot.keeper = keeper

    def watch() -> None:  # stop the bot when the tournament stops it or the seat changes hands
        while not bot.stop.wait(PAUSED_SECONDS):
            if should_stop():
                bot.stop.set()
                return
            try:
                if holder(client.get_table(view.name)) != mine:
                    bot.stop.set()
                    return
            except SapsamError:
                continue

    watcher = threading.Thread(target=watch, name="open-face-seat-watch", daemon=True)
    watcher.start()
    try:
        bot.play()
    finally:
        finished = not bot.stop.is_set()
        bot.stop.set()
    return finished and holder(client.get_table(view.name)) == mine


def follow_tournament(
    client: Client,
    tournament: str,
    player: str,
    arranger: Arranger,
    *,
    should_stop: Callable[[], bool] = lambda: False,
    on_round: Callable[[int, str], None] | None = None,
    on_event: EventHandler | None = None,
    tables: list[str] | None = None,
    keeper: CommitmentKeeper | None = None,
    seed: int = 0,
) -> list[str]:
    """Play every round ``player`` (``players/{id}``, the client's own) is seated in, until the
    tournament is complete or cancelled; ``on_round(round, seat)`` is told as it sits down;
    ``keeper`` keeps open commitments across a restart; ``seed`` seeds the open-face bot's
    solver at an open-face table. Returns the tables played to the end
    (``tables``, appended to as each is, if given)."""
    played_rounds: set[int] = set()
    tables = [] if tables is None else tables
    while not should_stop():
        view = client.get_tournament(tournament)
        waiting = True
        for round_message in view.seated_rounds:
            if round_message.round in played_rounds:
                continue
            played_rounds.add(round_message.round)
            seat = seat_in_round(round_message, player)
            if seat is None:
                continue
            waiting = False
            if on_round is not None:
                on_round(round_message.round, seat)
            if play_when_ready(
                client, seat, arranger, should_stop, on_event, keeper, player=player, seed=seed
            ):
                tables.append(table_name(seat))
        if view.status in FINISHED:
            break
        if waiting:
            paused = view.status == tournament_pb2.TOURNAMENT_STATUS_PAUSED
            time.sleep(PAUSED_SECONDS if paused else POLL_SECONDS)  # a pause may last hours
    return tables


def tournament_of_table(client: Client, table: str) -> str | None:
    """The tournament that seated ``table`` (``tournaments/{id}``), among the newest
    :data:`SCAN_LIMIT`; None for a table of no tournament."""
    name = table_name(table)
    for tournament in itertools.islice(client.list_tournaments(), SCAN_LIMIT):
        for round_message in tournament.seated_rounds:
            if any(item.table == name for item in round_message.tables):
                return tournament.name
    return None


def _clock(timestamp: object) -> str:
    moment = timestamp.ToDatetime()  # type: ignore[attr-defined]
    return f"{moment:%H:%M:%S} UTC"


@dataclass
class TournamentNotices:
    """What changed in a player's tournament since it was last read, in words."""

    tournament: str
    player: str
    _status: int | None = None
    _paused_at: str | None = None
    _forfeited: bool = False
    # The notices thread and the play loop both tell (:meth:`tell`): one at a time, so each
    # change is said once and in the order it happened.
    _telling: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def paused(self) -> bool:
        """Whether the tournament was paused when last read."""
        return self._paused_at is not None

    def tell(self, client: Client, say: Callable[[str], None]) -> None:
        """Read the tournament and say what changed since it was last read. A failed read says
        nothing (the play loop reports a server out of reach)."""
        with self._telling:
            try:
                lines = self.check(client)
            except SapsamError:
                return
            for line in lines:
                say(line)

    def check(self, client: Client) -> list[str]:
        """Read the tournament; the lines to say about what changed (none the first time for
        a tournament simply running)."""
        return self.changes(client.get_tournament(self.tournament))

    def changes(self, view: tournament_pb2.Tournament) -> list[str]:
        """The lines for ``view`` against what was seen before (pure)."""
        lines: list[str] = []
        status = view.status
        paused = status == tournament_pb2.TOURNAMENT_STATUS_PAUSED
        pause = f"{_clock(view.pause_time)}" if paused and view.HasField("pause_time") else None
        if paused and pause != self._paused_at:
            reason = f": {view.status_reason}" if view.status_reason else ""
            lines.append(
                f"the tournament is paused (since {pause}{reason}); waiting for the operator"
                " to resume"
            )
        elif (
            self._paused_at is not None
            and not paused
            and status != tournament_pb2.TOURNAMENT_STATUS_CANCELLED
        ):
            lines.append("the tournament resumed: play goes on")
        if status == tournament_pb2.TOURNAMENT_STATUS_CANCELLED and status != self._status:
            reason = f" ({view.status_reason})" if view.status_reason else ""
            lines.append(
                f"the tournament was cancelled{reason}: its standings as they stood are final,"
                " and no deal played from now on counts"
            )
        if self.player in view.forfeited_players and not self._forfeited:
            self._forfeited = True
            lines.append(
                "you are out of the tournament (forfeited): you sit in no later round; your seat"
                " at this table stays yours until the operator gives it to another player"
            )
        self._status, self._paused_at = status, pause
        return lines


def tell_changes(
    client: Client,
    notices: TournamentNotices,
    say: Callable[[str], None],
    every: float = NOTICE_SECONDS,
) -> threading.Event:
    """Say what changes in the tournament now and then every ``every`` seconds, from a thread
    of its own, until the event returned is set. A failed read is skipped (the play loop
    reports a server out of reach)."""
    stop = threading.Event()

    def run() -> None:
        while True:
            notices.tell(client, say)
            if stop.wait(every):
                return

    threading.Thread(target=run, name="tournament-notices", daemon=True).start()
    return stop


def told_before_deals(
    client: Client,
    notices: TournamentNotices,
    say: Callable[[str], None],
    on_event: EventHandler | None = None,
) -> EventHandler:
    """``on_event``, with the tournament read first (and its changes said) when a deal starts
    while the notices last saw it paused. A paused tournament's tables start no deal, so that
    deal's start means the operator resumed it: said now, before the deal is shown, rather than
    at the notices thread's next read, by when the person may already be at the row prompt
    (and the notice, printed under it, hides it)."""

    def handle(event: table_event_pb2.TableEvent) -> None:
        if event.WhichOneof("payload") == "deal_started" and notices.paused:
            notices.tell(client, say)
        if on_event is not None:
            on_event(event)

    return handle
