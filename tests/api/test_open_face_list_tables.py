"""ListTables' status filter on open-face tables (issue #18): a table's status comes from its
family's stage of its phase (``sapsam.domain.family.TableStage``, through the family seam), and
the filter lists the phase names of every family's stage, so an open-face table is listed
``OPEN`` while seats are free, ``PLAYING`` from a full table through its deals (a street being
placed included), ``COMPLETED`` once its set is over; never under another status."""

from __future__ import annotations

import uuid

from open_face_game import Played, open_face_table, play_move, play_set, start_and_cut, table_of
from scenarios import World

from sapsam.api.table_requests import STATUS_PHASES
from sapsam.domain.families import FAMILIES, PHASES_BY_STAGE
from sapsam.domain.family import TableStage
from sapsam_proto.v1 import table_pb2, table_service_pb2

STATUSES = (
    table_pb2.TABLE_STATUS_OPEN,
    table_pb2.TABLE_STATUS_PLAYING,
    table_pb2.TABLE_STATUS_COMPLETED,
)


def _listed_under(world: World, token: str, name: str) -> list[int]:
    """The statuses whose ListTables (every page) lists table ``name``."""
    found = []
    for status in STATUSES:
        names: list[str] = []
        page_token = ""
        while True:
            request = table_service_pb2.ListTablesRequest(
                page_size=100, page_token=page_token, status=status
            )
            page = world.table_call("ListTables", request, token)
            names += [table.name for table in page.tables]
            page_token = page.next_page_token
            if not page_token:
                break
        if name in names:
            found.append(status)
    return found


def _check(world: World, token: str, name: str, status: int) -> None:
    table = world.table_call("GetTable", table_service_pb2.GetTableRequest(name=name), token).table
    assert table.status == status
    assert _listed_under(world, token, name) == [status]


def test_every_familys_phase_has_one_stage_and_the_filter_lists_them_all() -> None:
    every = {str(phase) for family in FAMILIES.values() for phase in family.phases}
    listed = [phase for phases in STATUS_PHASES.values() for phase in phases]
    assert sorted(listed) == sorted(every)  # each name under exactly one status
    assert "PLAYING" in PHASES_BY_STAGE[TableStage.PLAYING]  # open face's own


def test_open_face_tables_are_listed_by_status_through_their_set(world: World) -> None:
    creator = world.player("lister")
    request = table_service_pb2.CreateTableRequest(
        request_id=str(uuid.uuid4()), rule_set_preset="ofc_turbo", seat_count=2
    )
    waiting = world.table_call("CreateTable", request, creator.token).table
    _check(world, creator.token, waiting.name, table_pb2.TABLE_STATUS_OPEN)
    seated = open_face_table(world, 2)
    _check(world, creator.token, seated.table, table_pb2.TABLE_STATUS_PLAYING)
    start_and_cut(world, seated)
    played = Played()
    play_move(world, seated, played)  # a street being placed: open face's own phase
    assert table_of(world, seated).phase == table_pb2.TABLE_PHASE_PLAYING
    _check(world, creator.token, seated.table, table_pb2.TABLE_STATUS_PLAYING)
    while play_move(world, seated, played):
        pass
    play_set(world, seated, played)
    _check(world, creator.token, seated.table, table_pb2.TABLE_STATUS_COMPLETED)
