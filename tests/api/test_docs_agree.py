"""docs/api.md, docs/events.md and the proto comments say what the server does.

- docs/api.md names every service the proto package defines, with its methods;
- docs/events.md lists every table event with all its fields, and the watch stream gives every
  event type a payload (SeriesStarted arrived with none);
- ``DealSeatResult.foul_reason`` is the documented stable code, for a reveal's foul and for a
  missed deadline alike (it was words for the latter);
- ``sapsam demo --database-url`` says it uses that database (it claimed a temporary embedded one;
  tests/clients/test_demo.py runs the whole demo);
- every ``sapsam.…`` module (and name in it) and every repository path that README and docs/ name
  exists, so a move (``sapsam.store.tables`` to ``sapsam.app.tables``, ``store/migrations`` to
  ``migrations/``) cannot leave a stale pointer behind;
- docs/api.md's "Running a server" names every ``sapsam serve`` flag, and no other.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import re
from pathlib import Path

from api_client import OPERATOR_TOKEN, Watcher
from scenarios import World

from sapsam.cli import demo_command, serve_command
from sapsam.cli.demo_command import describe_demo_database
from sapsam.domain import events
from sapsam.domain.table_views import MISSED_DEADLINE_FOUL
from sapsam.rules.arrangement import FoulReason
from sapsam_proto.v1 import (
    audit_service_pb2,
    operator_service_pb2,
    player_service_pb2,
    table_event_pb2,
    table_pb2,
    table_service_pb2,
    tournament_service_pb2,
    transparency_service_pb2,
)

REPOSITORY = Path(__file__).resolve().parents[2]
API_GUIDE = (REPOSITORY / "docs" / "api.md").read_text(encoding="utf-8")
EVENTS_GUIDE = (REPOSITORY / "docs" / "events.md").read_text(encoding="utf-8")
SERVICE_FILES = (
    player_service_pb2,
    table_service_pb2,
    audit_service_pb2,
    tournament_service_pb2,
    transparency_service_pb2,
    operator_service_pb2,
)


DOCUMENTS = (REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").glob("*.md")))
# Dotted names that start with "sapsam." but are no Python module: the API's packages, the
# ErrorInfo domain, the health detail of the stuck tables, the call log's logger.
NOT_MODULES = (
    "sapsam.v1",
    "sapsam.bench.v1",
    "sapsam.dev",
    "sapsam.tables.stuck",
    "sapsam.api.calls",
)
SOURCE_PACKAGES = ("api", "app", "audit", "cli", "domain", "fairness", "log", "rules", "store")
TOP_FOLDERS = ("service", "clients", "tests", "bench", "proto", "migrations", "torture", "docs")


def _snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# -- pure: the guides against the code ----------------------------------------------------------


def test_the_api_guide_names_every_service_with_its_methods() -> None:
    defined = {
        service.full_name: [method.name for method in service.methods]
        for module in SERVICE_FILES
        for service in module.DESCRIPTOR.services_by_name.values()
    }
    listed = {}
    for service, methods in re.findall(r"^\| `(sapsam\.v1\.\w+)` \| ([^|]+) \|", API_GUIDE, re.M):
        listed[service] = re.findall(r"`(\w+)`", methods)
    assert listed == defined
    count = {2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six"}[len(defined)]
    assert f"this page is the guide around them. {count} services:" in API_GUIDE
    health = API_GUIDE.split("standard gRPC health checking", 1)[1].split("server reflection")[0]
    assert set(re.findall(r"`(sapsam\.v1\.\w+)`", health)) == set(defined)


def _documented_events() -> dict[str, str]:
    rows = {}
    for line in EVENTS_GUIDE.splitlines():
        found = re.match(r"\| \d+ \| `(\w+)`[^|]*\| (.*?) \| .* \|$", line)
        if found:
            rows[found.group(1)] = found.group(2)
    return rows


def test_the_event_catalogue_lists_every_event_with_every_field() -> None:
    documented = _documented_events()
    assert sorted(documented) == sorted(event.TYPE for event in events.EVENT_TYPES)
    for event in events.EVENT_TYPES:
        named = set(re.findall(r"`(\w+)`", documented[event.TYPE]))
        fields = {field.name for field in dataclasses.fields(event)}
        assert fields <= named, f"{event.TYPE}: {sorted(fields - named)} undocumented"


def test_every_table_event_has_a_watch_payload() -> None:
    payloads = {
        field.name: field.message_type.name
        for field in table_event_pb2.TableEvent.DESCRIPTOR.oneofs_by_name["payload"].fields
    }
    for event in events.EVENT_TYPES:
        assert payloads.get(_snake_case(event.TYPE)) == event.TYPE, event.TYPE


def test_the_foul_reason_codes_are_the_documented_ones() -> None:
    codes = {reason.value for reason in FoulReason} | {MISSED_DEADLINE_FOUL}
    comment = table_pb2.DealSeatResult.DESCRIPTOR.fields_by_name["foul_reason"]
    proto = (REPOSITORY / "proto" / "sapsam" / "v1" / "table.proto").read_text(encoding="utf-8")
    above = proto.split(f"  string {comment.name} = {comment.number};", 1)[0]
    proto_comment = above.rsplit("bool foul = 8;", 1)[1]
    assert set(re.findall(r'"([A-Z_]+)"', proto_comment)) == codes
    guide = API_GUIDE.split("`foul_reason` why", 1)[1].split(".\n", 1)[0]
    assert set(re.findall(r"`([A-Z_]+)`", guide)) == codes
    revealed = _documented_events()["ArrangementRevealed"].split("`foul_reason`", 1)[1]
    assert set(re.findall(r"`([A-Z_]+)`", revealed)) == {reason.value for reason in FoulReason}


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a module, or a module followed by names defined in it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def test_every_module_the_docs_name_exists() -> None:
    stale = set()
    for document in DOCUMENTS:
        for dotted in re.findall(r"\bsapsam(?:\.\w+)+", document.read_text(encoding="utf-8")):
            if not dotted.startswith(NOT_MODULES) and not _resolves(dotted):
                stale.add(f"{document.name}: {dotted}")
    assert not stale, sorted(stale)


def test_every_path_the_docs_name_exists() -> None:
    # A path from the repository's root (service/sapsam/app/tables.py, migrations/versions/) or
    # from the package's (store/sql/tables.sql, cli/bootstrap.py); globs are not checked.
    prefixes = "|".join(f"{folder}/" for folder in (*TOP_FOLDERS, *SOURCE_PACKAGES))
    pattern = re.compile(rf"(?<![\w/.-])((?:{prefixes})[\w./-]*\w)(?![\w*])")
    stale = set()
    checked = 0
    for document in DOCUMENTS:
        for path in pattern.findall(document.read_text(encoding="utf-8")):
            checked += 1
            places = (REPOSITORY / path, REPOSITORY / "service" / "sapsam" / path)
            if not any(place.exists() for place in places):
                stale.add(f"{document.name}: {path}")
    assert checked > 50
    assert not stale, sorted(stale)


def test_the_api_guide_names_every_serve_flag() -> None:
    subparsers = argparse.ArgumentParser(prog="sapsam").add_subparsers()
    serve_command.register(subparsers)
    flags = {
        option
        for action in subparsers.choices["serve"]._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }
    running = API_GUIDE.split("## Running a server", 1)[1].split("\n\n## ", 1)[0]
    # Every flag is in the section (the database's in its prose, the rest in its table), and the
    # table lists no flag that serve does not have.
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", running))
    first_cells = re.findall(r"^\| (`--.*?) \|", running, re.M)
    table = {flag for cell in first_cells for flag in re.findall(r"--[a-z][a-z-]*", cell)}
    assert flags - named == set()
    assert table - flags == set()


# -- over gRPC: one server for the module --------------------------------------------------------


def test_foul_reason_is_a_code_for_a_bad_reveal_and_for_a_missed_deadline(world: World) -> None:
    seated, deal, chosen = world.timed_out_while_arranging(fouled=True)
    first, late = seated.players
    world.reveal(first, chosen)
    result = world.table_call(
        "GetDealResult", table_service_pb2.GetDealResultRequest(name=deal), OPERATOR_TOKEN
    ).result
    by_seat = {seat.seat: seat for seat in result.seats}
    assert (by_seat[first.seat].foul, by_seat[first.seat].foul_reason) == (
        True,
        FoulReason.ROWS_OUT_OF_ORDER.value,
    )
    assert (by_seat[late.seat].foul, by_seat[late.seat].foul_reason) == (True, "MISSED_DEADLINE")
    assert by_seat[late.seat].timed_out_stage == table_pb2.TIMEOUT_STAGE_ARRANGING


def test_series_started_arrives_with_its_payload(world: World) -> None:
    seated = world.seated(series_length=1, after_series=table_service_pb2.AFTER_SERIES_NEW_SERIES)
    world.played(seated)
    watcher = Watcher(world.api, seated.table, OPERATOR_TOKEN)
    try:
        watcher.wait_for(
            lambda: any(m.event.type == "SeriesStarted" for m in watcher.messages), timeout=60
        )
    finally:
        watcher.cancel()
    types = [message.event.type for message in watcher.messages]
    assert types[-3:] == ["DealScored", "SeriesCompleted", "SeriesStarted"]
    started = watcher.messages[-1].event
    assert started.WhichOneof("payload") == "series_started"
    assert (started.series_started.series_number, started.series_started.first_deal_number) == (
        2,
        2,
    )
    # Every event of the stream carries its payload.
    assert all(message.event.WhichOneof("payload") for message in watcher.messages)


# -- sapsam demo ---------------------------------------------------------------------------------


def test_demo_says_which_database_it_plays_on() -> None:
    # The line the demo starts with (it said "embedded PostgreSQL in a temporary folder" also
    # when it played on --database-url); the URL itself is never printed (it may hold a password).
    given = describe_demo_database("postgresql://ann:secret@db.example/games")
    assert "--database-url" in given and "embedded" not in given and "temporary" not in given
    assert "secret" not in given and "db.example" not in given
    assert "embedded" in describe_demo_database(None)
    assert "temporary" in describe_demo_database(None)
    subparsers = argparse.ArgumentParser(prog="sapsam").add_subparsers()
    demo_command.register(subparsers)
    help_text = " ".join(subparsers.choices["demo"].format_help().split())
    assert "the table played stays in it" in help_text
    assert "database keeps the table" in help_text
