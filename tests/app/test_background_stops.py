"""A server's background loops stop at once when asked (issue #14 item 8): not after their pause.

The loops are the ones the composition root runs beside the RPCs (``sapsam.cli.bootstrap``): the
deadline sweeper, the serving heartbeat, the results follower (waiting on its LISTEN connection),
the transparency checkpointer and the retired-token check, with their real steps on a real
database. Each pauses a second or more between steps (the checkpointer a minute here); a stop that
waited out a pause or a poll interval would take that long, far over the bound.
"""

from __future__ import annotations

import asyncio
import time

from sapsam.cli.bootstrap import build_services
from sapsam.keys import ServerKeys
from sapsam.log.signed_note import NoteSigner
from sapsam.store.serving import BEAT_SECONDS

STOP_BOUND_SECONDS = 0.2
"""How long stopping every loop may take: a few wake-ups on the event loop, no pause, no poll."""
SETTLE_SECONDS = 0.5
"""Time for each loop to run its first step and start waiting (well inside its pause)."""
KEYS = ServerKeys(NoteSigner.from_seed("sapsam/test", bytes(32)), (), "tests")

assert SETTLE_SECONDS + STOP_BOUND_SECONDS < BEAT_SECONDS  # a waited-out pause would show


async def test_every_background_loop_stops_within_the_bound(database_url: str) -> None:
    services = build_services(database_url, server_keys=KEYS, checkpoint_seconds=60.0)
    await services.open()  # the results follower, checkpointer and token check start here
    try:
        services.on_serving()  # the heartbeat and the deadline sweeper
        await asyncio.sleep(SETTLE_SECONDS)
        started = time.monotonic()
        await services.on_stop()
        stopped_in = time.monotonic() - started
    finally:
        await services.close()
    assert stopped_in < STOP_BOUND_SECONDS, f"the loops took {stopped_in:.3f} s to stop"
