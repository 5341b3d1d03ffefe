"""sapsam tournament watch: a running tournament, over gRPC.

watch TOURNAMENT --server HOST:PORT prints where the tournament stands — its status, the round,
the deals credited, and for each table of the round whom it waits for and since when — then
follows it live through WatchTournament: every event as a sentence (a deal credited with each
player's result, a round seated, a pause, a forfeit …), and the tables' picture again whenever it
changes (checked every --refresh-seconds). A table of the round that GetStuckTables counts
as stuck (past its deadline, or waiting longer than --waiting-longer-than), or one played out
whose deals are still not all credited at the next look, is an ALERT line; a paused tournament's
tables are held, not stuck. It ends when the tournament is complete or cancelled (exit 0), or on
Ctrl-C (exit 130); --once prints the picture once and exits. A broken stream is resumed from the
last event. The picture is ``sapsam.cli.tournament_picture``.

watch needs the operator token for the tables' picture (--operator-token, default
SAPSAM_OPERATOR_TOKEN), as sapsam serve was given.
"""

from __future__ import annotations

import argparse
import queue
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, Final

from sapsam.cli.tournament_common import CANNOT_RUN, guarded
from sapsam.cli.tournament_picture import Picture
from sapsam.cli.tournament_server import (
    INTERRUPTED,
    operator_metadata,
    refusal,
    server_options,
    tournament_resource,
)

RECONNECT_SECONDS: Final = 1.0


def add_actions(actions: Any) -> None:
    """Add ``watch`` to the ``tournament`` subcommand."""
    watch = actions.add_parser(
        "watch",
        help="follow a tournament live: progress, whom each table awaits, stuck tables",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    watch.add_argument("tournament", help="the tournament: its id, or tournaments/{id}")
    server_options(watch)
    watch.add_argument(
        "--waiting-longer-than",
        type=int,
        default=300,
        dest="waiting_longer_than",
        metavar="SECONDS",
        help="alert for a table waiting longer than this, even before its deadline (as sapsam"
        " tables stuck --waiting-longer-than; default: 300)",
    )
    # The first spelling, still accepted (scripts use it), hidden: one name for one threshold.
    watch.add_argument(
        "--stuck-after-seconds", type=int, dest="waiting_longer_than", help=argparse.SUPPRESS
    )
    watch.add_argument(
        "--refresh-seconds",
        type=float,
        default=5.0,
        help="how often the tables' picture is checked for changes (default: 5)",
    )
    watch.add_argument("--once", action="store_true", help="print the picture once and exit")
    watch.set_defaults(handler=guarded(_watch))


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

    metadata = operator_metadata(arguments)
    with grpc.insecure_channel(arguments.server) as channel:
        picture = Picture(
            channel,
            tournament_resource(arguments.tournament),
            metadata,
            arguments.waiting_longer_than,
        )
        try:
            shown = picture.read()
        except grpc.RpcError as error:
            raise refusal(error, arguments.server) from None
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
