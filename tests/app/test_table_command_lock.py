"""One command of a table at a time per process: concurrent commands queue, none races.

``TableRunner._execute`` takes the table's lock before deciding, so commands of one table issued
at once in one process are decided one after another on the state the previous one left, in the
order they were issued (``asyncio.Lock`` is first come, first served). Without it they would all
decide on the same version, all but one would lose the append, and with more of them than the
runner's retries some would end in ``ConcurrencyConflict`` (ABORTED to a caller).
"""

from __future__ import annotations

import asyncio

from test_table_service import PLAYERS, event_count
from test_table_service import service as service  # the fixture
from test_table_service_memory import dealt_table

from sapsam.app.tables import CONFLICT_RETRIES, TableService
from sapsam.log.records import ConcurrencyConflict

# More commands at once than a racing runner could settle: each lost race costs a retry, and
# there are only CONFLICT_RETRIES attempts per command.
COMMITS_PER_SEAT = 4
assert len(PLAYERS) * COMMITS_PER_SEAT > 2 * CONFLICT_RETRIES


async def test_concurrent_commands_of_one_table_run_one_at_a_time_in_issue_order(
    service: TableService,
) -> None:
    table_id = await dealt_table(service, service)
    before = (await service.load(table_id)).version
    events_before = await event_count(service)
    # Every seat commits again and again (a commitment may be replaced until confirmed), all
    # issued at once; each commitment names the command (its index) that sent it.
    issued = [
        (player, bytes([index]) * 32)
        for index, player in enumerate(
            player for _ in range(COMMITS_PER_SEAT) for player in PLAYERS
        )
    ]
    outcomes = await asyncio.gather(
        *(
            service.commit(table_id, player, commitment, f"commit-{index}")
            for index, (player, commitment) in enumerate(issued)
        ),
        return_exceptions=True,
    )
    conflicts = [outcome for outcome in outcomes if isinstance(outcome, ConcurrencyConflict)]
    assert not conflicts, f"{len(conflicts)} of {len(issued)} commands lost every race"
    assert all(not isinstance(outcome, BaseException) for outcome in outcomes), outcomes
    # Each decided on the state the previous one left: consecutive versions, in issue order,
    # no retry (a command that lost a race would still end up in order only by chance).
    versions = [outcome.version for outcome in outcomes if not isinstance(outcome, BaseException)]
    assert versions == list(range(before + 1, before + 1 + len(issued)))
    assert await event_count(service) == events_before + len(issued)
    committed = [event.data["commitment"] for event in await service.events(table_id, before + 1)]
    assert committed == [commitment.hex() for _, commitment in issued]
