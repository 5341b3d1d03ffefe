"""The game's calls through the TableService servicer in one process, without gRPC: the CPU each
costs the server's own code (servicer, ``app/``, the store's Python, the commit group, the
receipt), by method.

``bench/service.py`` measures a whole server on a socket, where grpc's own cost per call and
everything else on a shared machine move its figures by ±20 % between runs. This driver leaves
grpc out and plays one call at a time, so what it reads (``time.process_time`` around each call:
everything the process ran meanwhile, the commit group's batch of this one append and the
background loops included) is the code a change touches. Two trees compare best run side by side
at the same moment (each its own process and cluster, so a burst of other work lands on both),
a few times over::

    for run in 1 2 3; do
        for tree in "$BASE" "$CHANGE"; do
            PYTHONPATH=$tree/service:$tree/clients/sapsam_proto/src:bench \\
                python bench/task_cpu_probe/write_path.py --seconds 20 > $tree.$run.json &
        done
        wait
    done

The services are the ones ``sapsam serve`` builds (``build_services``, receipts signed with a
fresh key), on a private PostgreSQL cluster (fsync on) as the other benchmarks use; the caller is
set as the auth interceptor sets it. Each deal is bench/service.py's 24 calls: start, four
entropies, the table, the cut, four hands, four commitments, four confirmations, four reveals
(rows taken in the dealt order: some deals foul, as in play), the result. One JSON object:
µs of CPU per call by method, and per call over the deal's mix.

Instructions instead of time, which load does not move: ``--deals N --callgrind-window`` plays
exactly N deals after the warm-up and has callgrind count only them (a two-line helper compiled
with ``cc`` at start, its client requests around the deals), under::

    valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no \\
        python bench/task_cpu_probe/write_path.py --tables 1 --deals 20 --callgrind-window

("Collected" over N is a deal's instructions: the servicer, ``app/``, the store's Python, the
commit group, the checkpointer and the other background loops, the driver's own requests.)
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

from _postgres import benchmark_database

from sapsam import fairness
from sapsam.api import auth
from sapsam.cli.bootstrap import build_services
from sapsam.keys import ServerKeys
from sapsam.log.signed_note import NoteSigner
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import parse_cards
from sapsam_proto.v1 import player_service_pb2, table_pb2, table_service_pb2

SEATS = 4


class _Context:
    """What the servicer asks of a call's context: no deadline."""

    def time_remaining(self) -> float | None:
        return None


def _rows(cards: list[str]) -> Arrangement:
    parsed = parse_cards(cards)
    return Arrangement(parsed[:3], parsed[3:8], parsed[8:])


class Driver:
    """Plays deals at one table through the servicer, timing each call."""

    def __init__(self, servicer: Any, players: Any, spent: dict[str, list[float]]) -> None:
        self.servicer = servicer
        self.players = players
        self.spent = spent
        self.context = _Context()

    async def call(self, method: str, request: Any, player: str | None) -> Any:
        caller = auth.Caller(player, is_operator=player is None)
        reset = auth._current_caller.set(caller)  # as the auth interceptor sets it
        began = time.process_time()
        try:
            handler: Callable[[Any, Any], Awaitable[Any]] = getattr(self.servicer, method)
            return await handler(request, self.context)
        finally:
            self.spent[method].append(time.process_time() - began)
            auth._current_caller.reset(reset)

    async def registered_player(self, index: int) -> str:
        """A registered player's id (as players are, with a display name)."""
        registered = await self.players.RegisterPlayer(
            player_service_pb2.RegisterPlayerRequest(
                request_id=str(uuid.uuid4()), display_name=f"Bench {index}"
            ),
            self.context,
        )
        return str(registered.player.name.split("/", 1)[1])

    async def seated_table(self) -> tuple[str, list[str], list[str]]:
        created = await self.call(
            "CreateTable",
            table_service_pb2.CreateTableRequest(
                request_id=str(uuid.uuid4()),
                rule_set_preset="pagat",
                seat_count=SEATS,
                after_series=table_service_pb2.AFTER_SERIES_NEW_SERIES,
            ),
            None,
        )
        table = created.table.name
        players = [await self.registered_player(index) for index in range(SEATS)]
        seats = []
        for player in players:
            joined = await self.call(
                "JoinTable",
                table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=table),
                player,
            )
            seats.append(joined.seat)
        await self.call(
            "ChooseDealer",
            table_service_pb2.ChooseDealerRequest(request_id=str(uuid.uuid4()), table=table),
            None,
        )
        return table, players, seats

    async def deal(self, table: str, players: list[str], seats: list[str]) -> None:
        started = await self.call(
            "StartDeal",
            table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table),
            None,
        )
        for player, seat in zip(players, seats, strict=True):
            await self.call(
                "ContributeEntropy",
                table_service_pb2.ContributeEntropyRequest(
                    request_id=str(uuid.uuid4()), seat=seat, entropy=os.urandom(16)
                ),
                player,
            )
        state = await self.call("GetTable", table_service_pb2.GetTableRequest(name=table), None)
        dealer = int(state.table.dealer_seat.rsplit("/", 1)[1])
        cutter = fairness.cutter_for(dealer, SEATS)
        await self.call(
            "CutDeck",
            table_service_pb2.CutDeckRequest(
                request_id=str(uuid.uuid4()), seat=seats[cutter], position=17
            ),
            players[cutter],
        )
        deal_number = int(started.deal.rsplit("/", 1)[1])
        table_id = uuid.UUID(table.split("/")[1])
        nonce = os.urandom(16)
        chosen = []
        for index, (player, seat) in enumerate(zip(players, seats, strict=True)):
            hand = await self.call(
                "GetMyHand", table_service_pb2.GetMyHandRequest(seat=seat), player
            )
            rows = _rows(list(hand.cards))
            chosen.append(rows)
            commitment = fairness.arrangement_commitment(table_id, deal_number, index, rows, nonce)
            await self.call(
                "CommitArrangement",
                table_service_pb2.CommitArrangementRequest(
                    request_id=str(uuid.uuid4()), seat=seat, commitment=commitment
                ),
                player,
            )
        for player, seat in zip(players, seats, strict=True):
            await self.call(
                "ConfirmArrangement",
                table_service_pb2.ConfirmArrangementRequest(
                    request_id=str(uuid.uuid4()), seat=seat
                ),
                player,
            )
        for player, seat, rows in zip(players, seats, chosen, strict=True):
            await self.call(
                "RevealArrangement",
                table_service_pb2.RevealArrangementRequest(
                    request_id=str(uuid.uuid4()),
                    seat=seat,
                    arrangement=table_pb2.Arrangement(
                        front=[str(card) for card in rows.front],
                        middle=[str(card) for card in rows.middle],
                        back=[str(card) for card in rows.back],
                    ),
                    nonce=nonce,
                ),
                player,
            )
        await self.call(
            "GetDealResult", table_service_pb2.GetDealResultRequest(name=started.deal), None
        )


_CALLGRIND_WINDOW = """#include <valgrind/callgrind.h>
void window_open(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_TOGGLE_COLLECT; }
void window_close(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS_AT("deals"); }
"""


def _callgrind_window(folder: str) -> Any:
    """The helper whose ``window_open``/``window_close`` make callgrind count what is between
    (no-ops outside valgrind); needs ``cc`` and valgrind's headers."""
    source = os.path.join(folder, "window.c")
    library = os.path.join(folder, "window.so")
    with open(source, "w") as written:
        written.write(_CALLGRIND_WINDOW)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", library, source], check=True)
    return ctypes.CDLL(library)


async def _run(
    database_url: str, seconds: float, tables: int, deals_wanted: int | None, window: Any
) -> dict[str, Any]:
    keys = ServerKeys(NoteSigner.generate("sapsam.bench/write-path"), (), "generated")
    services = build_services(database_url, server_keys=keys)
    await services.open()
    spent: dict[str, list[float]] = defaultdict(list)
    try:
        driver = Driver(services.table_service, services.player_service, spent)
        seated = [await driver.seated_table() for _ in range(tables)]
        for table in seated:  # every table dealt once before anything is counted
            await driver.deal(*table)
        spent.clear()
        deals = 0
        if window is not None:
            window.window_open()
        until = time.monotonic() + seconds
        while deals < deals_wanted if deals_wanted is not None else time.monotonic() < until:
            for table in seated:
                await driver.deal(*table)
                deals += 1
        if window is not None:
            window.window_close()
    finally:
        await services.on_stop()
        await services.close()
    calls = sum(len(times) for times in spent.values())
    total = sum(sum(times) for times in spent.values())
    return {
        "deals": deals,
        "calls": calls,
        "cpu_us_per_call": round(total / calls * 1e6, 1),
        "cpu_us_per_call_by_method": {
            method: round(sum(times) / len(times) * 1e6, 1)
            for method, times in sorted(spent.items())
        },
        "median_us_by_method": {
            method: round(statistics.median(times) * 1e6, 1)
            for method, times in sorted(spent.items())
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument(
        "--deals", type=int, default=None, help="play this many deals (a multiple of --tables)"
    )
    parser.add_argument(
        "--callgrind-window", action="store_true", help="count only the deals (under callgrind)"
    )
    parser.add_argument("--database-url", default=None)
    arguments = parser.parse_args()
    load_before = os.getloadavg()[0]
    with (
        benchmark_database(arguments.database_url, "write_path") as database,
        tempfile.TemporaryDirectory() as folder,
    ):
        window = _callgrind_window(folder) if arguments.callgrind_window else None
        figures = asyncio.run(
            _run(database.url, arguments.seconds, arguments.tables, arguments.deals, window)
        )
    figures["load_average_1m"] = {"before": load_before, "after": os.getloadavg()[0]}
    figures["tree"] = os.path.dirname(os.path.dirname(os.path.abspath(auth.__file__)))
    json.dump(figures, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
