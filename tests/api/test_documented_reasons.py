"""Every error reason docs/api.md documents is real: listed in the one table, and reachable.

- the proto enum ``sapsam.v1.ErrorReason`` (what clients share), docs/api.md's reason list and
  ``STATUS_BY_REASON`` (what the server sends) name the same reasons, the guide and the table with
  the same status, and every reason the domain can refuse a command with is among them;
- every reason a client can cause is provoked here by a real call over gRPC (one server for the
  module), which must fail with the documented status and the reason in its ErrorInfo, carry a
  field violation when it is INVALID_ARGUMENT, and record nothing;
- the rest are listed by name: reasons only the server's own commands can produce, each with why
  no client can, and reasons provoked by another test file, which must exist and name it.

A reason nobody provokes or justifies fails the partition test: add it to one of the tables
(``PROVOKERS`` through ``@provokes``, ``SERVER_ONLY`` or ``COVERED_ELSEWHERE``).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from api_client import OPERATOR_TOKEN, bearer, error_reason
from google.protobuf.timestamp_pb2 import Timestamp
from scenarios import World, cup_request

from sapsam.api import errors
from sapsam.domain.errors import Reason
from sapsam_proto.v1 import (
    audit_service_pb2,
    errors_pb2,
    player_service_pb2,
    table_pb2,
    table_service_pb2,
    tournament_service_pb2,
)

REPOSITORY = Path(__file__).resolve().parents[2]
GUIDE = REPOSITORY / "docs" / "api.md"
FAR_FUTURE = Timestamp(seconds=4_102_444_800)

Attempt = Callable[[], object]
"""The one call that must fail; whatever it needs was set up before it is returned."""

PROVOKERS: dict[str, Callable[[World], Attempt]] = {}


def provokes(reason: str) -> Callable[[Callable[[World], Attempt]], Callable[[World], Attempt]]:
    """Register a function that sets up a state and returns the call that provokes ``reason``."""

    def register(setup: Callable[[World], Attempt]) -> Callable[[World], Attempt]:
        assert reason not in PROVOKERS, reason
        PROVOKERS[reason] = setup
        return setup

    return register


SERVER_ONLY: dict[str, str] = {
    "TABLE_EXISTS": "CreateTable draws the table's UUID on the server; no request names one",
    "TABLE_NOT_CREATED": "every table call loads the table first and answers TABLE_NOT_FOUND",
    "NOTHING_TIMED_OUT": "only the deadline sweeper issues timeouts; no RPC times a seat out",
    "TOURNAMENT_EXISTS": "CreateTournament draws the tournament's UUID on the server",
    "ROUND_NOT_COMPLETE": "only the results process seats a next round, when a round ends",
    "NOT_A_TOURNAMENT_TABLE": "only the results process credits deals, from tournament tables",
    "ALREADY_CREDITED": "only the results process credits deals, each once by its checkpoint",
    "BAD_SEED": "seeds are drawn by the server; no request carries one",
    "SEED_MISMATCH": "seeds are drawn and kept by the server, matching their commitments",
    "INTERNAL": "a server fault; nothing a client sends causes it (tests/api/test_no_internal_*)",
}
"""Reasons no client call can produce, and why (see the comments in sapsam.api.errors)."""

COVERED_ELSEWHERE: dict[str, str] = {
    # The operator's control of running tournaments (pause, resume, cancel, forfeit, re-seat).
    "TOURNAMENT_COMPLETE": "tests/tournament/test_tournament_control_api.py",
    "TOURNAMENT_PAUSED": "tests/tournament/test_tournament_control_api.py",
    "TOURNAMENT_NOT_PAUSED": "tests/tournament/test_tournament_control_api.py",
    "TOURNAMENT_CANCELLED": "tests/tournament/test_tournament_control_api.py",
    "PLAYER_FORFEITED": "tests/tournament/test_tournament_control_api.py",
    # A table whose rule set has surrender (docs/rules.md §2.8), and one without.
    "SURRENDER_OFF": "tests/api/test_surrender_api.py",
    "ALREADY_ANNOUNCED": "tests/api/test_surrender_api.py",
    # Open face (issue #18): a move of one game family at a table of another.
    "WRONG_GAME": "tests/app/test_open_face_service.py",
    # The database cut off under a running server.
    "DATABASE_UNAVAILABLE": "tests/api/test_database_outage.py",
    # A server started with --token-ttl-days and a token older than that.
    "TOKEN_EXPIRED": "tests/api/test_authentication.py",
    # A server stopping (SIGTERM) with calls in flight.
    "SERVER_STOPPING": "tests/api/test_graceful_stop.py",
    # A server started with low per-caller limits, then flooded.
    "RATE_LIMITED": "tests/api/test_limits.py",
    "TOO_MANY_REGISTRATIONS": "tests/api/test_limits.py",
    "TOO_MANY_STREAMS": "tests/api/test_limits.py",
    # A server with one solver process held still (SIGSTOP), then asked again, or killed.
    "SUGGESTIONS_BUSY": "tests/api/test_suggestion_solvers.py",
    "SOLVER_UNAVAILABLE": "tests/api/test_suggestion_solvers.py",
    # A player registering its ninth key (eight registrations first).
    "PLAYER_KEY_LIMIT": "tests/api/test_player_keys.py",
    # A table whose rule set plays naturals (the helpers here seat pagat tables).
    "NATURALS_NOT_PLAYED": "tests/api/test_naturals_api.py",
    "DECLARATION_REQUIRED": "tests/api/test_naturals_api.py",
    "ALREADY_DECLARED": "tests/api/test_naturals_api.py",
    "DECLARATION_MISMATCH": "tests/api/test_naturals_api.py",
    # A player with a registered key, mid-deal: an unsigned or badly signed move.
    "SIGNATURE_REQUIRED": "tests/api/test_signed_moves.py",
    "BAD_SIGNATURE": "tests/api/test_signed_moves.py",
    # A WatchTable whose client stalls while the table moves on (a small per-watcher buffer).
    "STREAM_BEHIND": "tests/api/test_many_streams.py",
    # A watched table whose next event cannot be read (an event of a type nobody knows).
    "STREAM_UNAVAILABLE": "tests/api/test_watch_edges.py",
    # VerifyDeal with hostile exports (deep nesting, huge integers), next to the 1 MB inputs.
    "EXPORT_LIMIT_EXCEEDED": "tests/api/test_input_limits.py",
    # The transparency log's questions, on a server with checkpoints.
    "BAD_TREE_SIZE": "tests/api/test_transparency_api.py",
    "BAD_LEAF_INDEX": "tests/api/test_transparency_api.py",
    "TREE_SIZE_NOT_CHECKPOINTED": "tests/api/test_transparency_api.py",
    "CHECKPOINT_NOT_FOUND": "tests/api/test_transparency_api.py",
    "LEAF_NOT_FOUND": "tests/api/test_transparency_api.py",
    # Witnesses' cosignatures, on a server whose operator lists witnesses.
    "BAD_COSIGNATURE": "tests/api/test_transparency_witness.py",
    "WITNESS_NOT_ACCEPTED": "tests/api/test_transparency_witness.py",
    "TOO_MANY_COSIGNATURES": "tests/api/test_transparency_witness.py",
    # A server whose role may not read the tree, or whose tree lost a subtree.
    "TRANSPARENCY_UNAVAILABLE": "tests/api/test_transparency_unavailable.py",
}
"""Reasons another test file provokes over a real server, because they need a server configured
or treated differently from this module's (each file must exist and name the reason)."""


def documented_reasons() -> dict[str, str]:
    """docs/api.md's reason list: reason -> status name."""
    section = GUIDE.read_text(encoding="utf-8").split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].startswith("`"):
            for reason in cells[1].replace("`", "").split(","):
                assert reason.strip() not in rows, f"{reason.strip()} is documented twice"
                rows[reason.strip()] = cells[0]
    return rows


def server_only_in_the_guide() -> set[str]:
    """The reasons docs/api.md marks as the server's own (server-internal, results process)."""
    section = GUIDE.read_text(encoding="utf-8").split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    marked = set()
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        own = cells[0] == "INTERNAL" or cells[-1].startswith(("(server-internal", "(results"))
        if len(cells) == 3 and cells[1].startswith("`") and own:
            marked.update(reason.strip() for reason in cells[1].replace("`", "").split(","))
    return marked


# -- the tables agree ---------------------------------------------------------------------------


def test_the_guide_and_the_error_table_list_the_same_reasons_and_statuses() -> None:
    documented = documented_reasons()
    table = {reason: code.name for reason, code in errors.STATUS_BY_REASON.items()}
    assert sorted(set(documented) - set(table)) == [], "documented, not in STATUS_BY_REASON"
    assert sorted(set(table) - set(documented)) == [], "in STATUS_BY_REASON, not in docs/api.md"
    assert documented == table


def enum_reasons() -> set[str]:
    """The proto enum's reasons, as ErrorInfo spells them (the value name less its prefix)."""
    names = set(errors_pb2.ErrorReason.keys()) - {"ERROR_REASON_UNSPECIFIED"}
    assert all(name.startswith("ERROR_REASON_") for name in names)
    return {name.removeprefix("ERROR_REASON_") for name in names}


def test_the_proto_enum_the_guide_and_the_error_table_name_the_same_reasons() -> None:
    enum = enum_reasons()
    assert sorted(enum - set(documented_reasons())) == [], "in the enum, not in docs/api.md"
    assert sorted(set(documented_reasons()) - enum) == [], "in docs/api.md, not in the enum"
    assert sorted(enum - set(errors.STATUS_BY_REASON)) == [], "in the enum, not in the table"
    assert sorted(set(errors.STATUS_BY_REASON) - enum) == [], "in the table, not in the enum"
    assert enum == errors.WIRE_REASONS


def test_every_domain_reason_is_in_the_proto_enum() -> None:
    assert sorted({reason.value for reason in Reason} - enum_reasons()) == []


# How the server's code spells a reason outside the domain's Reason enum: the API's own errors,
# the export's access errors, and the reason constants of the stop gate and the limits.
_REASON_IN_CODE = re.compile(
    r'(?:ApiError|build_status|ExportAccessError|NothingToExportError)\(\s*"([A-Z][A-Z_]+)"'
    r'|_REASON(?:: Final)? = "([A-Z][A-Z_]+)"'
)


def test_every_reason_the_servers_code_names_is_in_the_proto_enum() -> None:
    named: dict[str, str] = {}
    for path in sorted((REPOSITORY / "service" / "sapsam").rglob("*.py")):
        for match in _REASON_IN_CODE.finditer(path.read_text(encoding="utf-8")):
            reason = next(group for group in match.groups() if group)
            named.setdefault(reason, str(path.relative_to(REPOSITORY)))
    assert len(named) > 30, "the pattern no longer finds the API's reasons"
    assert {reason: where for reason, where in named.items() if reason not in enum_reasons()} == {}


def test_an_enum_value_names_its_reason_and_keeps_its_number() -> None:
    # Numbers are the enum's wire identity: pinned for a few, so a reordering fails here.
    assert errors.reason_name(errors_pb2.ERROR_REASON_INVALID_ARGUMENT) == "INVALID_ARGUMENT"
    assert errors_pb2.ERROR_REASON_INVALID_ARGUMENT == 1
    assert errors.reason_name(errors_pb2.ERROR_REASON_TABLE_NOT_FOUND) == "TABLE_NOT_FOUND"
    assert errors_pb2.ERROR_REASON_TABLE_NOT_FOUND == 38
    assert errors_pb2.ERROR_REASON_INTERNAL == 71


def test_every_reason_is_provoked_here_or_justified() -> None:
    groups = [set(PROVOKERS), set(SERVER_ONLY), set(COVERED_ELSEWHERE)]
    listed = set().union(*groups)
    assert sum(len(group) for group in groups) == len(listed), "a reason is listed twice"
    unaccounted = sorted(set(errors.STATUS_BY_REASON) - listed)
    assert unaccounted == [], "provoke these here, or say why a client cannot cause them"
    assert sorted(listed - set(errors.STATUS_BY_REASON)) == []


def test_the_server_only_reasons_are_the_ones_the_guide_marks_as_such() -> None:
    assert set(SERVER_ONLY) == server_only_in_the_guide()


@pytest.mark.parametrize("reason", sorted(COVERED_ELSEWHERE))
def test_a_reason_covered_elsewhere_is_provoked_there(reason: str) -> None:
    test_file = REPOSITORY / COVERED_ELSEWHERE[reason]
    assert test_file.is_file(), f"{test_file} does not exist"
    assert f'"{reason}"' in test_file.read_text(encoding="utf-8")


# -- the provokers: input ------------------------------------------------------------------------


def _create(world: World, **fields: Any) -> Attempt:
    creator = world.player()
    request = table_service_pb2.CreateTableRequest(request_id=str(uuid.uuid4()), **fields)
    return lambda: world.table_call("CreateTable", request, creator.token)


@provokes("INVALID_ARGUMENT")
def _unknown_after_series(world: World) -> Attempt:
    return _create(world, seat_count=2, after_series=99)


@provokes("BAD_SEAT_COUNT")
def _nine_seats(world: World) -> Attempt:
    return _create(world, seat_count=9)


@provokes("BAD_RULE_SET")
def _unknown_preset(world: World) -> Attempt:
    return _create(world, seat_count=2, rule_set_preset="no-such-preset")


@provokes("BAD_SERIES_LENGTH")
def _no_deals(world: World) -> Attempt:
    return _create(world, seat_count=2, series_length=0)


@provokes("BAD_REQUEST_ID")
def _long_request_id(world: World) -> Attempt:
    creator = world.player()
    request = table_service_pb2.CreateTableRequest(request_id="r" * 65, seat_count=2)
    return lambda: world.table_call("CreateTable", request, creator.token)


@provokes("MISSING_FIELD")
def _no_name(world: World) -> Attempt:
    reader = world.player()
    return lambda: world.table_call("GetTable", table_service_pb2.GetTableRequest(), reader.token)


@provokes("BAD_RESOURCE_NAME")
def _bad_name(world: World) -> Attempt:
    reader = world.player()
    request = table_service_pb2.GetTableRequest(name="tables/not-a-uuid")
    return lambda: world.table_call("GetTable", request, reader.token)


@provokes("BAD_PAGE_SIZE")
def _page_too_big(world: World) -> Attempt:
    reader = world.player()
    request = table_service_pb2.ListTablesRequest(page_size=101)
    return lambda: world.table_call("ListTables", request, reader.token)


@provokes("BAD_PAGE_TOKEN")
def _forged_page_token(world: World) -> Attempt:
    reader = world.player()
    request = table_service_pb2.ListTablesRequest(page_token="not-a-token-we-issued")
    return lambda: world.table_call("ListTables", request, reader.token)


@provokes("BAD_DISPLAY_NAME")
def _empty_display_name(world: World) -> Attempt:
    request = player_service_pb2.RegisterPlayerRequest(request_id=str(uuid.uuid4()))
    return lambda: world.table_call("RegisterPlayer", request, "")


@provokes("BAD_PLAYER_KEY")
def _short_player_key(world: World) -> Attempt:
    request = player_service_pb2.RegisterPlayerKeyRequest(
        request_id=str(uuid.uuid4()), public_key=b"\x01" * 31, proof=b"\x02" * 64
    )
    return lambda: world.table_call("RegisterPlayerKey", request, world.player().token)


@provokes("UNKNOWN_SEAT")
def _seat_nine(world: World) -> Attempt:
    seated = world.seated()
    request = table_service_pb2.GetMyHandRequest(seat=f"{seated.table}/seats/9")
    return lambda: world.table_call("GetMyHand", request, seated.players[0].token)


@provokes("BAD_ENTROPY")
def _too_much_entropy(world: World) -> Attempt:
    seated = world.seated()
    world.started(seated)
    player = seated.players[0]
    request = table_service_pb2.ContributeEntropyRequest(
        request_id=str(uuid.uuid4()), seat=player.seat, entropy=os.urandom(65)
    )
    return lambda: world.table_call("ContributeEntropy", request, player.token)


@provokes("BAD_CUT_POSITION")
def _cut_at_zero(world: World) -> Attempt:
    seated = world.seated()
    world.started(seated)
    cutter = world.cutter(seated)
    request = table_service_pb2.CutDeckRequest(
        request_id=str(uuid.uuid4()), seat=cutter.seat, position=52
    )
    return lambda: world.table_call("CutDeck", request, cutter.token)


@provokes("BAD_COMMITMENT")
def _short_commitment(world: World) -> Attempt:
    seated = world.seated()
    world.dealt(seated)
    player = seated.players[0]
    request = table_service_pb2.CommitArrangementRequest(
        request_id=str(uuid.uuid4()), seat=player.seat, commitment=b"short"
    )
    return lambda: world.table_call("CommitArrangement", request, player.token)


def _reveal_attempt(world: World, change: Callable[[Any], None]) -> Attempt:
    """A reveal by the first seat of a table waiting for reveals, changed by ``change``."""
    seated = world.seated()
    _, chosen = world.revealing(seated)
    player = seated.players[0]
    request = table_service_pb2.RevealArrangementRequest(
        request_id=str(uuid.uuid4()),
        seat=player.seat,
        arrangement=chosen[player.seat].rows(),
        nonce=chosen[player.seat].nonce,
    )
    change(request)
    return lambda: world.table_call("RevealArrangement", request, player.token)


@provokes("BAD_NONCE")
def _short_nonce(world: World) -> Attempt:
    return _reveal_attempt(world, lambda request: setattr(request, "nonce", b"short"))


@provokes("BAD_CARDS")
def _unreadable_card(world: World) -> Attempt:
    return _reveal_attempt(world, lambda request: request.arrangement.front.__setitem__(0, "Zz"))


@provokes("COMMITMENT_MISMATCH")
def _other_nonce(world: World) -> Attempt:
    return _reveal_attempt(world, lambda request: setattr(request, "nonce", os.urandom(16)))


@provokes("REQUEST_ID_REUSED")
def _same_request_id_on_another_table(world: World) -> Attempt:
    creator, player = world.player(), world.player()
    tables = [
        world.table_call(
            "CreateTable",
            table_service_pb2.CreateTableRequest(request_id=str(uuid.uuid4()), seat_count=2),
            creator.token,
        ).table.name
        for _ in range(2)
    ]
    request_id = str(uuid.uuid4())
    world.table_call(
        "JoinTable",
        table_service_pb2.JoinTableRequest(request_id=request_id, table=tables[0]),
        player.token,
    )
    again = table_service_pb2.JoinTableRequest(request_id=request_id, table=tables[1])
    return lambda: world.table_call("JoinTable", again, player.token)


# -- the provokers: out of phase, out of turn, already done --------------------------------------


@provokes("WRONG_PHASE")
def _cut_before_the_deal(world: World) -> Attempt:
    seated = world.seated()
    player = seated.players[0]
    request = table_service_pb2.CutDeckRequest(
        request_id=str(uuid.uuid4()), seat=player.seat, position=7
    )
    return lambda: world.table_call("CutDeck", request, player.token)


@provokes("NOT_YOUR_TURN")
def _cut_by_the_dealer(world: World) -> Attempt:
    seated = world.seated()
    world.started(seated)
    cutter = world.cutter(seated)
    other = next(player for player in seated.players if player is not cutter)
    request = table_service_pb2.CutDeckRequest(
        request_id=str(uuid.uuid4()), seat=other.seat, position=7
    )
    return lambda: world.table_call("CutDeck", request, other.token)


def _open_table(world: World) -> tuple[str, Any]:
    creator = world.player()
    table = world.table_call(
        "CreateTable",
        table_service_pb2.CreateTableRequest(request_id=str(uuid.uuid4()), seat_count=2),
        creator.token,
    ).table
    return table.name, table


def _join(world: World, table: str, token: str, **fields: Any) -> Attempt:
    request = table_service_pb2.JoinTableRequest(
        request_id=str(uuid.uuid4()), table=table, **fields
    )
    return lambda: world.table_call("JoinTable", request, token)


@provokes("TABLE_FULL")
def _join_a_full_table(world: World) -> Attempt:
    seated = world.seated()
    return _join(world, seated.table, world.player().token)


@provokes("SEAT_TAKEN")
def _join_a_taken_seat(world: World) -> Attempt:
    table, _ = _open_table(world)
    _join(world, table, world.player().token, seat=0)()
    return _join(world, table, world.player().token, seat=0)


@provokes("ALREADY_SEATED")
def _join_twice(world: World) -> Attempt:
    table, _ = _open_table(world)
    player = world.player()
    _join(world, table, player.token)()
    return _join(world, table, player.token)


@provokes("VERSION_MISMATCH")
def _stale_etag(world: World) -> Attempt:
    table, view = _open_table(world)
    return _join(world, table, world.player().token, expected_version=view.version + 5)


@provokes("ALREADY_CONTRIBUTED")
def _contribute_twice(world: World) -> Attempt:
    seated = world.seated()
    world.started(seated)
    player = seated.players[0]

    def contribute() -> object:
        request = table_service_pb2.ContributeEntropyRequest(
            request_id=str(uuid.uuid4()), seat=player.seat, entropy=os.urandom(16)
        )
        return world.table_call("ContributeEntropy", request, player.token)

    contribute()
    return contribute


@provokes("NO_COMMITMENT")
def _confirm_before_committing(world: World) -> Attempt:
    seated = world.seated()
    world.dealt(seated)
    return lambda: world.confirm(seated.players[0])


@provokes("ALREADY_CONFIRMED")
def _commit_after_confirming(world: World) -> Attempt:
    seated = world.seated()
    deal = world.dealt(seated)
    player = seated.players[0]
    world.commit(seated, deal, player)
    world.confirm(player)
    return lambda: world.commit(seated, deal, player)


@provokes("ALREADY_REVEALED")
def _reveal_twice(world: World) -> Attempt:
    seated = world.seated()
    _, chosen = world.revealing(seated)
    player = seated.players[0]
    world.reveal(player, chosen[player.seat])
    return lambda: world.reveal(player, chosen[player.seat])


@provokes("SEAT_TIMED_OUT")
def _reveal_after_missing_the_arranging_deadline(world: World) -> Attempt:
    seated, _, chosen = world.timed_out_while_arranging()
    late = seated.players[1]
    return lambda: world.reveal(late, chosen)


@provokes("WRONG_DEAL")
def _commit_for_a_past_deal(world: World) -> Attempt:
    seated = world.seated(series_length=2)
    world.played(seated)
    deal = world.dealt(seated)
    player = seated.players[0]
    return lambda: world.commit(seated, deal, player, deal_number=1)


@provokes("SERIES_COMPLETE")
def _start_a_deal_after_the_series(world: World) -> Attempt:
    seated = world.seated(series_length=1)
    world.played(seated)
    assert world.phase(seated) == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    return lambda: world.started(seated)


@provokes("CONCURRENCY_CONFLICT")
def _lose_every_race(world: World) -> Attempt:
    # A rival writer that always appends first: every version this table's next append wants is
    # taken (the unique key says so), as when other calls keep winning the race. The trigger
    # touches this table's stream only and is dropped after the call.
    seated = world.seated()
    stream = f"table-{seated.table_id}"
    tag = uuid.uuid4().hex[:12]
    world.execute(
        f"""
        CREATE FUNCTION lose_race_{tag}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.stream_id = '{stream}' THEN
                RAISE unique_violation USING MESSAGE = 'a rival appended first',
                    CONSTRAINT = 'events_stream_version_key';
            END IF;
            RETURN NEW;
        END $$;
        CREATE TRIGGER lose_race_{tag} BEFORE INSERT ON events
            FOR EACH ROW EXECUTE FUNCTION lose_race_{tag}();
        """
    )

    def attempt() -> object:
        try:
            return world.started(seated)
        finally:
            world.execute(
                f"DROP TRIGGER lose_race_{tag} ON events; DROP FUNCTION lose_race_{tag}();"
            )

    return attempt


# -- the provokers: who is calling ---------------------------------------------------------------


@provokes("MISSING_TOKEN")
def _no_token(world: World) -> Attempt:
    table, _ = _open_table(world)
    return lambda: world.table_call("GetTable", table_service_pb2.GetTableRequest(name=table), "")


@provokes("UNKNOWN_TOKEN")
def _unknown_token(world: World) -> Attempt:
    table, _ = _open_table(world)
    request = table_service_pb2.GetTableRequest(name=table)
    return lambda: world.table_call("GetTable", request, "a-token-nobody-was-given")


@provokes("BAD_AUTHORIZATION_HEADER")
def _lowercase_bearer(world: World) -> Attempt:
    player = world.player()
    request = player_service_pb2.GetPlayerRequest(name=player.name)
    metadata = (("authorization", f"bearer {player.token}"),)
    return lambda: world.api.players.GetPlayer(request, metadata=metadata)


@provokes("TOKEN_REVOKED")
def _rotated_away_token(world: World) -> Attempt:
    player = world.player()
    world.api.players.RotateToken(
        player_service_pb2.RotateTokenRequest(request_id=str(uuid.uuid4())),
        metadata=bearer(player.token),
    )
    request = player_service_pb2.GetPlayerRequest(name=player.name)
    return lambda: world.api.players.GetPlayer(request, metadata=bearer(player.token))


@provokes("TOKEN_ALREADY_ISSUED")
def _register_twice(world: World) -> Attempt:
    request = player_service_pb2.RegisterPlayerRequest(
        request_id=str(uuid.uuid4()), display_name="twice"
    )
    world.table_call("RegisterPlayer", request, "")
    return lambda: world.table_call("RegisterPlayer", request, "")


@provokes("NOT_SEATED")
def _start_a_deal_unseated(world: World) -> Attempt:
    seated = world.seated()
    stranger = world.player()
    request = table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=seated.table)
    return lambda: world.table_call("StartDeal", request, stranger.token)


@provokes("NOT_YOUR_SEAT")
def _read_another_seats_hand(world: World) -> Attempt:
    seated = world.seated()
    world.dealt(seated)
    first, second = seated.players
    request = table_service_pb2.GetMyHandRequest(seat=second.seat)
    return lambda: world.table_call("GetMyHand", request, first.token)


@provokes("PLAYERS_ONLY")
def _operator_sits_down(world: World) -> Attempt:
    table, _ = _open_table(world)
    return _join(world, table, OPERATOR_TOKEN)


@provokes("DEAL_NOT_FINISHED")
def _export_a_running_deal(world: World) -> Attempt:
    seated = world.seated()
    deal = world.started(seated)
    request = audit_service_pb2.ExportDealRequest(name=deal)
    return lambda: world.audit.ExportDeal(request, metadata=bearer(seated.players[0].token))


# -- the provokers: what does not exist ----------------------------------------------------------


@provokes("TABLE_NOT_FOUND")
def _no_such_table(world: World) -> Attempt:
    request = table_service_pb2.GetTableRequest(name=f"tables/{uuid.uuid4()}")
    return lambda: world.table_call("GetTable", request, OPERATOR_TOKEN)


@provokes("DEAL_NOT_FOUND")
def _no_such_deal(world: World) -> Attempt:
    table, _ = _open_table(world)
    request = table_service_pb2.GetDealResultRequest(name=f"{table}/deals/3")
    return lambda: world.table_call("GetDealResult", request, OPERATOR_TOKEN)


@provokes("PLAYER_NOT_FOUND")
def _no_such_player(world: World) -> Attempt:
    request = player_service_pb2.GetPlayerRequest(name=f"players/{uuid.uuid4()}")
    return lambda: world.table_call("GetPlayer", request, OPERATOR_TOKEN)


# -- the provokers: tournaments ------------------------------------------------------------------


def _tournament(world: World, **changes: Any) -> str:
    changes.setdefault("max_entrants", 8)
    request = cup_request("Reasons cup", **changes)
    return str(world.tournaments.CreateTournament(request, metadata=world.operator).tournament.name)


def _enter(world: World, tournament: str, token: str) -> Attempt:
    request = tournament_service_pb2.RegisterTournamentPlayerRequest(
        request_id=str(uuid.uuid4()), tournament=tournament
    )
    return lambda: world.tournaments.RegisterTournamentPlayer(request, metadata=bearer(token))


def _leave(world: World, tournament: str, token: str) -> Attempt:
    request = tournament_service_pb2.UnregisterTournamentPlayerRequest(
        request_id=str(uuid.uuid4()), tournament=tournament
    )
    return lambda: world.tournaments.UnregisterTournamentPlayer(request, metadata=bearer(token))


def _start(world: World, tournament: str) -> Attempt:
    request = tournament_service_pb2.StartTournamentRequest(
        request_id=str(uuid.uuid4()), tournament=tournament
    )
    return lambda: world.tournaments.StartTournament(request, metadata=world.operator)


def _started_tournament(world: World) -> tuple[str, list[str]]:
    tournament = _tournament(world)
    tokens = [world.player().token for _ in range(2)]
    for token in tokens:
        _enter(world, tournament, token)()
    _start(world, tournament)()
    return tournament, tokens


@provokes("OPERATOR_ONLY")
def _player_creates_a_tournament(world: World) -> Attempt:
    player = world.player()
    request = tournament_service_pb2.CreateTournamentRequest(
        request_id=str(uuid.uuid4()),
        display_name="Mine",
        seats_per_table=2,
        rounds=1,
        deals_per_round=1,
        registration_close_time=FAR_FUTURE,
        max_entrants=8,
    )
    return lambda: world.tournaments.CreateTournament(request, metadata=bearer(player.token))


@provokes("TOURNAMENT_NOT_FOUND")
def _no_such_tournament(world: World) -> Attempt:
    request = tournament_service_pb2.GetTournamentRequest(name=f"tournaments/{uuid.uuid4()}")
    return lambda: world.tournaments.GetTournament(request, metadata=world.operator)


@provokes("ALREADY_REGISTERED")
def _enter_twice(world: World) -> Attempt:
    tournament, token = _tournament(world), world.player().token
    _enter(world, tournament, token)()
    return _enter(world, tournament, token)


@provokes("REGISTRATION_NOT_OPEN")
def _enter_before_the_window(world: World) -> Attempt:
    opens = Timestamp(seconds=FAR_FUTURE.seconds - 86_400)
    tournament = _tournament(world, registration_open_time=opens)
    return _enter(world, tournament, world.player().token)


@provokes("REGISTRATION_CLOSED")
def _enter_after_the_start(world: World) -> Attempt:
    tournament, _ = _started_tournament(world)
    return _enter(world, tournament, world.player().token)


@provokes("NOT_REGISTERED")
def _leave_unregistered(world: World) -> Attempt:
    return _leave(world, _tournament(world), world.player().token)


@provokes("TOURNAMENT_FULL")
def _enter_a_full_tournament(world: World) -> Attempt:
    tournament = _tournament(world, max_entrants=2)
    for _ in range(2):
        _enter(world, tournament, world.player().token)()
    return _enter(world, tournament, world.player().token)


@provokes("ALREADY_STARTED")
def _start_twice(world: World) -> Attempt:
    tournament, _ = _started_tournament(world)
    return _start(world, tournament)


@provokes("TOO_FEW_PLAYERS")
def _start_empty(world: World) -> Attempt:
    return _start(world, _tournament(world))


@provokes("PLAYER_SEATED")
def _leave_after_the_start(world: World) -> Attempt:
    tournament, tokens = _started_tournament(world)
    return _leave(world, tournament, tokens[0])


# -- reachability: one server for the module (after the provokers, which parametrize it) --------


@pytest.mark.parametrize("reason", sorted(PROVOKERS))
def test_a_client_can_cause(world: World, reason: str) -> None:
    attempt = PROVOKERS[reason](world)
    before = world.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        attempt()
    code, got, _, bad_request = error_reason(raised.value)
    assert (code.name, got) == (documented_reasons()[reason], reason), raised.value.details()
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        assert bad_request is not None and bad_request.field_violations
    assert world.event_count() == before, "a refused call recorded something"
