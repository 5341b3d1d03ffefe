"""sapsam tournament watch and bot: a running tournament, over gRPC.

watch TOURNAMENT --server HOST:PORT prints where the tournament stands — its status, the round,
the deals credited, and for each table of the round whom it waits for and since when — then
follows it live through WatchTournament: every event as a sentence (a deal credited with each
player's result, a round seated, a pause, a forfeit …), and the tables' picture again whenever it
changes (checked every --refresh-seconds). A table of the round that GetStuckTables counts
as stuck (past its deadline, or waiting longer than --stuck-after-seconds), or one played out
whose deals are still not all credited at the next look, is an ALERT line. It ends when the
tournament is complete or cancelled (exit 0), or on Ctrl-C (exit 130); --once prints the picture
once and exits. A broken stream is resumed from the last event.

bot TOURNAMENT --server HOST:PORT --player players/ID=TOKEN … plays the players it is given
(or --new N new players it registers and enters), each following its player from round to
round until the tournament ends, saying where each sits down.

watch needs the operator token for the tables' picture (--operator-token, default
SAPSAM_OPERATOR_TOKEN), as sapsam serve was given; the bots need their players' tokens.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Final

from sapsam.cli.tournament_common import CANNOT_RUN, CommandError, guarded
from sapsam.cli.wording import plural

DEFAULT_SERVER: Final = "127.0.0.1:50051"
INTERRUPTED: Final = 130
RECONNECT_SECONDS: Final = 1.0


def add_actions(actions: Any) -> None:
    """Add ``watch`` and ``bot`` to the ``tournament`` subcommand."""
    described = argparse.RawDescriptionHelpFormatter
    watch = actions.add_parser(
        "watch",
        help="follow a tournament live: progress, whom each table awaits, stuck tables",
        description=__doc__,
        formatter_class=described,
    )
    watch.add_argument("tournament", help="the tournament: its id, or tournaments/{id}")
    _server_options(watch)
    watch.add_argument(
        "--stuck-after-seconds",
        type=int,
        default=300,
        help="alert for a table waiting longer than this, even before its deadline (default: 300)",
    )
    watch.add_argument(
        "--refresh-seconds",
        type=float,
        default=5.0,
        help="how often the tables' picture is checked for changes (default: 5)",
    )
    watch.add_argument("--once", action="store_true", help="print the picture once and exit")
    watch.set_defaults(handler=guarded(_watch))

    bot = actions.add_parser(
        "bot",
        help="bots that play their players' seats from round to round",
        description=__doc__,
        formatter_class=described,
    )
    bot.add_argument("tournament", help="the tournament: its id, or tournaments/{id}")
    _server_options(bot, operator=False)
    bot.add_argument(
        "--player",
        action="append",
        default=[],
        metavar="players/ID=TOKEN",
        help="play as this player, with its bearer token (repeatable); the player must be entered",
    )
    bot.add_argument(
        "--new",
        type=int,
        default=0,
        help="also register this many new players, enter them (registration must be open) and"
        " play them (default: 0)",
    )
    bot.add_argument(
        "--strategy",
        choices=("solver", "random"),
        default="solver",
        help="how the bots arrange their hands (default: solver)",
    )
    bot.set_defaults(handler=guarded(_bots))


def _server_options(parser: argparse.ArgumentParser, operator: bool = True) -> None:
    parser.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        help=f"the server's host:port (default: {DEFAULT_SERVER})",
    )
    if operator:
        parser.add_argument(
            "--operator-token",
            help="the operator's bearer token (default: SAPSAM_OPERATOR_TOKEN)",
        )


def _name(text: str) -> str:
    return text if text.startswith("tournaments/") else f"tournaments/{text}"


def _operator(arguments: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    token = arguments.operator_token or os.environ.get("SAPSAM_OPERATOR_TOKEN")
    if not token:
        raise CommandError(
            "the operator token is needed: --operator-token or SAPSAM_OPERATOR_TOKEN"
        )
    return (("authorization", f"Bearer {token}"),)


def _refusal(error: Any, server: str) -> CommandError:
    import grpc

    code = error.code()
    if code == grpc.StatusCode.UNAVAILABLE:
        return CommandError(f"cannot reach the server at {server}")
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return CommandError(f"the server refused the operator token: {error.details()}")
    return CommandError(f"{code.name}: {error.details()}")


class Picture:
    """What ``watch`` shows of a tournament, read through the API."""

    def __init__(self, channel: Any, tournament: str, metadata: Any, stuck_after: int) -> None:
        from sapsam_proto.v1 import operator_service_pb2_grpc, tournament_service_pb2_grpc

        self.tournaments = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        self.operator = operator_service_pb2_grpc.OperatorServiceStub(channel)
        self.tournament = tournament
        self.metadata = metadata
        self.stuck_after = stuck_after
        self.names: dict[str, str] = {}
        self.view: Any = None
        self.uncredited: set[str] = set()
        """Tables played out with deals not yet credited at the last look."""

    @property
    def finished(self) -> bool:
        """Whether the tournament read last is complete or cancelled (nothing more will come)."""
        from sapsam_proto.v1 import tournament_pb2

        return self.view is not None and self.view.status in (
            tournament_pb2.TOURNAMENT_STATUS_COMPLETE,
            tournament_pb2.TOURNAMENT_STATUS_CANCELLED,
        )

    def who(self, player: str) -> str:
        """A player's display name (its resource name when it has none)."""
        player = player if player.startswith("players/") else f"players/{player}"
        return self.names.get(player) or player

    def read(self) -> list[str]:
        """The picture now: the status line, then one line per table of the round."""
        from sapsam_proto.v1 import (
            operator_service_pb2,
            tournament_pb2,
            tournament_service_pb2,
        )

        view = self.tournaments.GetTournament(
            tournament_service_pb2.GetTournamentRequest(name=self.tournament),
            metadata=self.metadata,
            timeout=30,
        ).tournament
        self.view = view
        self._read_names()
        status = tournament_pb2.TournamentStatus.Name(view.status).removeprefix(
            "TOURNAMENT_STATUS_"
        )
        lines = [self._status_line(view, status)]
        if not view.seated_rounds:
            return lines
        current = view.seated_rounds[-1]
        ours = {table.table: index for index, table in enumerate(current.tables)}
        awaited = self.operator.GetAwaitedTables(
            operator_service_pb2.GetAwaitedTablesRequest(), metadata=self.metadata, timeout=30
        ).tables
        stuck = self.operator.GetStuckTables(
            operator_service_pb2.GetStuckTablesRequest(
                waiting_longer_than_seconds=self.stuck_after
            ),
            metadata=self.metadata,
            timeout=30,
        ).tables
        stuck_names = {table.table for table in stuck}
        uncredited: set[str] = set()
        by_table = {table.table: table for table in awaited}
        now = time.time()
        for table in current.tables:
            index = ours[table.table]
            credited = f"{table.deals_credited}/{view.deals_per_round}"
            players = ", ".join(self.who(player) for player in table.players)
            head = f"  table {index} {table.table} ({credited} deals credited; {players})"
            state = by_table.get(table.table)
            if state is None:
                behind = table.deals_credited < view.deals_per_round
                if behind and table.table in self.uncredited:
                    # Played out, yet its deals are not all credited two looks running: the
                    # results process is behind or fails on this table.
                    lines.append(
                        f"ALERT {head}: played out, but not every deal is credited (the results"
                        " process is behind or failing: see sapsam tables stuck and the server's"
                        " log)"
                    )
                else:
                    lines.append(f"{head}: done")
                if behind:
                    uncredited.add(table.table)
                continue
            waiting = self._waiting(state, now)
            if view.status == tournament_pb2.TOURNAMENT_STATUS_PAUSED:
                # Its clocks are held on purpose: no deadline runs out, nothing is stuck.
                lines.append(f"{head}: {waiting} (held: the tournament is paused)")
                continue
            alert = "ALERT " if table.table in stuck_names else ""
            lines.append(f"{alert}{head}: {waiting}")
        self.uncredited = uncredited
        return lines

    def _read_names(self) -> None:
        from sapsam_proto.v1 import tournament_service_pb2

        token = ""
        while True:
            page = self.tournaments.GetStandings(
                tournament_service_pb2.GetStandingsRequest(
                    tournament=self.tournament, page_size=100, page_token=token
                ),
                metadata=self.metadata,
                timeout=30,
            )
            for line in page.standings:
                self.names[line.player] = line.display_name
            token = page.next_page_token
            if not token:
                return

    def _status_line(self, view: Any, status: str) -> str:
        current = view.seated_rounds[-1] if view.seated_rounds else None
        credited = sum(table.deals_credited for table in current.tables) if current else 0
        planned = len(current.tables) * view.deals_per_round if current else 0
        line = f"{view.display_name} ({view.name}): {status}"
        if current is not None:
            line += (
                f", round {current.round} of {view.rounds}, {credited} of"
                f" {plural(planned, 'deal')} credited this round,"
                f" {plural(view.rounds_completed, 'round')} complete"
            )
        else:
            line += f", {len(view.players)} registered"
        if view.status_reason:
            line += f" ({view.status_reason})"
        return line

    def _waiting(self, table: Any, now: float) -> str:
        from sapsam_proto.v1 import operator_service_pb2, table_pb2

        phase = table_pb2.TablePhase.Name(table.phase).removeprefix("TABLE_PHASE_").lower()
        since = max(0, int(now - table.waiting_since.ToMilliseconds() / 1000))
        if table.awaiting == operator_service_pb2.AWAITING_SEATS:
            seats = ", ".join(
                f"seat {seat} ({self.who(player) if player else 'free'})"
                for seat, player in zip(table.seats, table.players, strict=True)
            )
            whom = f"waits for {seats}"
        elif table.awaiting == operator_service_pb2.AWAITING_ANYONE:
            whom = "waits for anyone seated to go on"
        else:
            whom = "waits for the server"
        text = f"{phase}, {whom} for {since} s"
        if table.HasField("deadline_time"):
            left = int(table.deadline_time.ToMilliseconds() / 1000 - now)
            text += f"; past its deadline by {-left} s" if left < 0 else f"; deadline in {left} s"
        return text

    def describe(self, event: Any) -> str:
        """One event of the stream as a sentence."""
        data = json.loads(event.data_json)
        stamp = datetime.fromtimestamp(event.record_time.ToMilliseconds() / 1000, UTC)
        return f"{stamp:%H:%M:%S} {self._sentence(event.type, data)}"

    def _sentence(self, kind: str, data: dict[str, Any]) -> str:
        if kind == "DealCredited":
            results = ", ".join(
                f"{self.who(player)} {delta:+d}"
                for player, delta in zip(data["players"], data["deltas"], strict=False)
            )
            return (
                f"round {data['round']}, table {self._index(data['table_id'])}: deal"
                f" {data['deal_number']} credited ({results})"
            )
        simple = {
            "RoundCompleted": f"round {data.get('round')} is complete",
            "TournamentCompleted": "the tournament is complete: the standings are final",
            "TournamentStarted": f"started with {plural(len(data.get('entrants', [])), 'player')}",
            "TournamentPaused": f"paused by the operator: {data.get('reason')}",
            "TournamentResumed": "resumed by the operator",
            "TournamentCancelled": f"cancelled by the operator: {data.get('reason')}",
            "PlayerRegistered": f"{self.who(str(data.get('player_id')))} registered",
            "PlayerUnregistered": f"{self.who(str(data.get('player_id')))} withdrew",
        }
        if kind in simple:
            return simple[kind]
        if kind == "RoundSeated":
            count = plural(len(data["table_ids"]), "table")
            return f"round {data['round']} seated ({data['method']} draw): {count}"
        if kind == "PlayerForfeited":
            return f"{self.who(data['player_id'])} forfeited: {data['reason']}"
        if kind == "SeatReassigned":
            return (
                f"table {self._index(data['table_id'])} seat {data['seat']}:"
                f" {self.who(data['player_id'])} takes over from"
                f" {self.who(data['previous_player_id'])} from deal {data['from_deal']}"
            )
        return kind

    def _index(self, table_id: str) -> str:
        for seated in getattr(self.view, "seated_rounds", []):
            for index, table in enumerate(seated.tables):
                if table.table == f"tables/{table_id}":
                    return str(index)
        return table_id[:8]


def _events(picture: Picture, after: int, out: queue.Queue[Any], stop: threading.Event) -> None:
    """Feed the tournament's events after ``after`` into ``out`` (None at the end), resuming a
    broken stream from the last event received."""
    import grpc

    from sapsam_proto.v1 import tournament_service_pb2

    while not stop.is_set():
        try:
            stream = picture.tournaments.WatchTournament(
                tournament_service_pb2.WatchTournamentRequest(
                    tournament=picture.tournament, after_version=after
                ),
                metadata=picture.metadata,
            )
            for response in stream:
                after = response.event.version
                out.put(response.event)
            out.put(None)
            return
        except grpc.RpcError as error:
            if error.code() not in (
                grpc.StatusCode.UNAVAILABLE,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
            ):
                out.put(error)
                return
            time.sleep(RECONNECT_SECONDS)


def _watch(arguments: argparse.Namespace) -> int:
    import grpc

    metadata = _operator(arguments)
    with grpc.insecure_channel(arguments.server) as channel:
        picture = Picture(
            channel, _name(arguments.tournament), metadata, arguments.stuck_after_seconds
        )
        try:
            shown = picture.read()
        except grpc.RpcError as error:
            raise _refusal(error, arguments.server) from None
        print("\n".join(shown), flush=True)
        if arguments.once or picture.finished:
            return 0
        events: queue.Queue[Any] = queue.Queue()
        stop = threading.Event()
        reader = threading.Thread(
            target=_events, args=(picture, picture.view.version, events, stop), daemon=True
        )
        reader.start()
        try:
            return _follow(picture, events, shown, arguments.refresh_seconds)
        except KeyboardInterrupt:
            return INTERRUPTED
        finally:
            stop.set()


def _follow(picture: Picture, events: queue.Queue[Any], shown: list[str], every: float) -> int:
    import grpc

    while True:
        for item in _drain(events, every):
            if item is None:  # the tournament is over
                print("\n".join(picture.read()), flush=True)
                return 0
            if isinstance(item, grpc.RpcError):
                print(f"sapsam tournament: the stream failed: {item.details()}", file=sys.stderr)
                return CANNOT_RUN
            print(picture.describe(item), flush=True)
        try:
            now = picture.read()
        except grpc.RpcError:
            continue  # the server is restarting: the stream's reader reconnects, so do we
        if now != shown:
            print("\n".join(now), flush=True)
            shown = now


def _drain(events: queue.Queue[Any], wait: float) -> Iterator[Any]:
    """What the stream brought within ``wait`` seconds (the first wait blocks, then no more)."""
    try:
        yield events.get(timeout=wait)
    except queue.Empty:
        return
    while True:
        try:
            yield events.get_nowait()
        except queue.Empty:
            return


def _bots(arguments: argparse.Namespace) -> int:
    import grpc

    from sapsam.cli import tournament_bots

    if arguments.new < 0 or (not arguments.player and not arguments.new):
        raise CommandError("give --player players/ID=TOKEN (repeatable) or --new N (N from 1)")
    tournament = _name(arguments.tournament)
    with grpc.insecure_channel(arguments.server) as channel:
        try:
            bots = [_bot_for(channel, given, arguments.strategy) for given in arguments.player]
            fresh = []
            if arguments.new:
                fresh = tournament_bots.register_bots(arguments.server, arguments.new)
            for bot in fresh:
                tournament_bots.enter(channel, bot, tournament)
                print(f"{bot.display_name} ({bot.player}) entered", flush=True)
        except grpc.RpcError as error:
            raise _refusal(error, arguments.server) from None
    bots += fresh

    def sat_down(bot: tournament_bots.TournamentBot, round_number: int, seat: str) -> None:
        print(f"{bot.display_name}: round {round_number}, {seat}", flush=True)

    threads = tournament_bots.run_bots(arguments.server, bots, tournament, on_round=sat_down)
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(1.0)
    except KeyboardInterrupt:
        return INTERRUPTED
    failed = [bot for bot in bots if bot.error is not None]
    for bot in failed:
        print(f"sapsam tournament: {bot.display_name} stopped: {bot.error}", file=sys.stderr)
    played = sum(len(bot.tables_played) for bot in bots)
    print(f"the tournament is over: {plural(len(bots), 'bot')} played {plural(played, 'table')}")
    return CANNOT_RUN if failed else 0


def _bot_for(channel: Any, given: str, strategy: str) -> Any:
    """A bot for ``players/ID=TOKEN``, named as the player is."""
    from sapsam.cli import tournament_bots
    from sapsam_proto.v1 import player_service_pb2, player_service_pb2_grpc

    player, separator, token = given.partition("=")
    if not separator or not token:
        raise CommandError(f"--player {given!r}: give players/ID=TOKEN")
    player = player if player.startswith("players/") else f"players/{player}"
    profile = player_service_pb2_grpc.PlayerServiceStub(channel).GetPlayer(
        player_service_pb2.GetPlayerRequest(name=player),
        metadata=(("authorization", f"Bearer {token}"),),
        timeout=30,
    )
    return tournament_bots.TournamentBot(profile.player.display_name, player, token, strategy)
