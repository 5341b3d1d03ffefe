"""Tournament bots: players that play every round of a tournament over gRPC, with the client SDK.

Each bot is a registered player with its own token. It registers for the tournament, then waits for
rounds to be seated (``GetTournament``); for each round it finds its seat in the round's tables and
plays that table's series with ``sapsam_client``'s ``Seat.play_series`` — the same moves as
``sapsam-bot`` (draw, start, entropy, cut, commit, confirm, reveal when it falls to the seat); at
an open-face tournament's table it plays the round's set with the SDK's open-face solver bot
(``sapsam_client.open_face_bot``), whatever its strategy. It waits out a paused tournament (the
next deal starts once it resumes), stops playing a table whose seat was given to another player
(its player forfeited and was re-seated), and stops when the tournament is complete or cancelled.
``sapsam tournament bot`` runs them; so do ``make demo-tournament`` and the tournament API tests.
It needs the client package (``clients/sapsam_client``), whose
``sapsam_client.tournament_play.follow_tournament`` is the one way a player's seat is followed from
round to round (``sapsam-bot --tournament`` uses it too).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc

from sapsam_proto.v1 import (
    tournament_service_pb2,
    tournament_service_pb2_grpc,
)


@dataclass
class TournamentBot:
    """One bot: its player, its token, and what it played."""

    display_name: str
    player: str
    token: str
    strategy: str = "solver"
    tables_played: list[str] = field(default_factory=list)
    error: BaseException | None = None

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The bot's call metadata."""
        return (("authorization", f"Bearer {self.token}"),)


def register_bots(target: str, count: int, prefix: str = "bot") -> list[TournamentBot]:
    """Register ``count`` new players on the server at ``target``."""
    from sapsam_client import connect

    bots = []
    for index in range(count):
        client = connect(target)
        strategy = "solver" if index % 2 == 0 else "random"
        registration = client.register(f"{prefix} {index:02} ({strategy})")
        bots.append(
            TournamentBot(
                registration.display_name, registration.player, registration.token, strategy
            )
        )
        client.close()
    return bots


def enter(channel: grpc.Channel, bot: TournamentBot, tournament: str) -> int:
    """Register the bot in the tournament; returns the tournament's version after it."""
    stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)
    response = stub.RegisterTournamentPlayer(
        tournament_service_pb2.RegisterTournamentPlayerRequest(
            request_id=str(uuid.uuid4()), tournament=tournament
        ),
        metadata=bot.metadata(),
        timeout=30,
    )
    return int(response.version)


def play_tournament(
    target: str,
    bot: TournamentBot,
    tournament: str,
    seed: int,
    should_stop: Callable[[], bool] = lambda: False,
    on_round: Callable[[TournamentBot, int, str], None] | None = None,
) -> None:
    """Play every round the bot is seated in until the tournament is complete or cancelled:
    each round it finds its player's seat (re-seated players included) and plays that table's
    series; ``on_round(bot, round, seat)`` is told as it sits down."""
    from sapsam_client import connect
    from sapsam_client.bot import arranger_for
    from sapsam_client.tournament_play import follow_tournament

    def sat_down(number: int, seat: str) -> None:
        if on_round is not None:
            on_round(bot, number, seat)

    client = connect(target, token=bot.token)
    try:
        follow_tournament(
            client,
            tournament,
            bot.player,
            arranger_for(bot.strategy, seed),
            should_stop=should_stop,
            on_round=sat_down,
            tables=bot.tables_played,
            seed=seed,
        )
    finally:
        client.close()


def run_bots(
    target: str,
    bots: list[TournamentBot],
    tournament: str,
    on_round: Callable[[TournamentBot, int, str], None] | None = None,
) -> list[threading.Thread]:
    """Start one thread per bot playing the tournament; join them to wait for the end."""
    threads = []
    for index, bot in enumerate(bots):

        def run(bot: TournamentBot = bot, seed: int = index) -> None:
            try:
                play_tournament(target, bot, tournament, seed, on_round=on_round)
            except BaseException as error:  # reported by the caller, never lost
                bot.error = error

        thread = threading.Thread(target=run, name=f"tournament-bot-{index}", daemon=True)
        thread.start()
        threads.append(thread)
    return threads


def wait_for(threads: list[threading.Thread], bots: list[TournamentBot], timeout: float) -> None:
    """Wait for every bot; raises the first bot's error, or ``TimeoutError``."""
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            played = ", ".join(f"{bot.display_name}: {len(bot.tables_played)}" for bot in bots)
            raise TimeoutError(f"the bots did not finish the tournament in time ({played})")
    for bot in bots:
        if bot.error is not None:
            raise RuntimeError(f"{bot.display_name} failed: {bot.error!r}") from bot.error
