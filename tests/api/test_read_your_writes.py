"""Reads served from a process's memory never lag a write acknowledged elsewhere.

Two `sapsam serve` processes on one database, each remembering the table (issue #14, item 6:
GetTable, GetMyHand and GetDealResult answered from memory when the copy is current). Players
are split across them; after every acknowledged write, through either process, GetTable through
*both* must show at least the version that write returned: the other process's copy was made
before the write, so only the write stamp (``sapsam.store.write_stamps``) tells it to read the
log. The deal itself reads hands and the result across processes too.
"""

from __future__ import annotations

from typing import Any

from api_client import Api, bearer
from google.protobuf.message import Message
from test_two_processes import ServerProcess, two_servers  # noqa: F401 - the fixture

from sapsam.rules.presets import preset
from sapsam_proto.v1 import table_service_pb2

READS = frozenset({"GetTable", "GetMyHand", "GetDealResult", "RegisterPlayer", "GetPlayer"})


class CheckedApi(Api):
    """An Api that, after each acknowledged table write, reads the table through every peer."""

    table = ""
    peers: tuple[Api, ...] = ()
    checks = 0
    lagging: list[tuple[str, int, int]]

    def call(self, method: str, request: Message, token: str, observer: str = "") -> Any:
        response = super().call(method, request, token, observer)
        acknowledged = getattr(response, "version", 0)
        if self.table and method not in READS and isinstance(acknowledged, int) and acknowledged:
            for peer in self.peers:
                seen = peer.tables.GetTable(
                    table_service_pb2.GetTableRequest(name=self.table), metadata=bearer(token)
                ).table.version
                self.checks += 1
                if seen < acknowledged:
                    self.lagging.append((method, acknowledged, seen))
        return response


def test_reads_on_either_process_see_every_acknowledged_write(
    two_servers: tuple[ServerProcess, ServerProcess],  # noqa: F811 - the fixture
    database_url: str,
) -> None:
    first, second = two_servers
    api = CheckedApi(first.channel, database_url)
    api.lagging = []
    other = Api(second.channel, database_url)
    table, players = api.seated_table(4, "pagat", series_length=2)
    for player in players[1::2]:
        api.routes[player.token] = other
    api.table = table
    api.peers = (api, other)
    # Both processes remember the table now.
    for peer in api.peers:
        peer.tables.GetTable(
            table_service_pb2.GetTableRequest(name=table), metadata=bearer(players[0].token)
        )

    for deal_index in range(2):
        api.play_deal(table, players, preset("pagat"), deal_index=deal_index)

    assert api.checks > 40
    assert api.lagging == []
