"""Naturals over gRPC (docs/rules.md §2.9, docs/fairness.md §21): every seat declares before it
commits, the declarations stay hidden until the seed, a false declaration is a foul, bad input
writes nothing and carries ErrorInfo. On a real server over a socket, with a real database.

The server draws the seeds, so these deals hold whatever naturals chance deals; the real naturals
and their scores are tested on chosen seeds in tests/domain/test_table_naturals.py.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from api_client import Player, Watcher, bearer, error_reason
from scenarios import Chosen, Seated, World

from sapsam import fairness
from sapsam.audit import verify_export
from sapsam.domain.events import ArrangementRevealed, DealScored, NaturalDeclared
from sapsam.fairness.natural_commitments import declaration_commitment
from sapsam.rules.naturals import naturals_held
from sapsam.rules.presets import preset
from sapsam.rules.solver import solve
from sapsam_proto.v1 import (
    audit_service_pb2,
    audit_service_pb2_grpc,
    rule_set_pb2,
    table_event_pb2,
    table_service_pb2,
)

NATURALS = preset("pagat").with_changes(naturals="classic")


def audit_stub(world: World) -> audit_service_pb2_grpc.AuditServiceStub:
    return world.audit


def naturals_table(world: World, naturals: int = rule_set_pb2.NATURALS_TABLE_CLASSIC) -> Seated:
    """A two-seat pagat table with ``naturals``, both seats taken, the dealer drawn."""
    creator = world.player("creator")
    request = table_service_pb2.CreateTableRequest(
        request_id=str(uuid.uuid4()),
        seat_count=2,
        series_length=1,
        rule_set_preset="pagat",
        rule_set_overrides=rule_set_pb2.RuleSet(naturals=naturals),  # type: ignore[arg-type]
    )
    table = world.table_call("CreateTable", request, creator.token).table.name
    players = []
    for index in range(2):
        player = world.player(f"player {index}")
        player.seat = world.table_call(
            "JoinTable",
            table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=table),
            player.token,
        ).seat
        players.append(player)
    world.table_call(
        "ChooseDealer",
        table_service_pb2.ChooseDealerRequest(request_id=str(uuid.uuid4()), table=table),
        players[0].token,
    )
    return Seated(table, players)


def declare_request(
    seated: Seated, deal: str, player: Player, natural: str, nonce: bytes
) -> table_service_pb2.DeclareNaturalRequest:
    commitment = declaration_commitment(
        seated.table_id,
        int(deal.rsplit("/", 1)[1]),
        player.position,
        player.name.removeprefix("players/"),
        natural,
        nonce,
    )
    return table_service_pb2.DeclareNaturalRequest(
        request_id=str(uuid.uuid4()), seat=player.seat, commitment=commitment
    )


def commit_and_confirm(world: World, seated: Seated, deal: str, player: Player) -> Chosen:
    chosen = Chosen(solve(world.hand(player), NATURALS), os.urandom(16))
    commitment = fairness.arrangement_commitment(
        seated.table_id,
        int(deal.rsplit("/", 1)[1]),
        player.position,
        chosen.arrangement,
        chosen.nonce,
    )
    world.table_call(
        "CommitArrangement",
        table_service_pb2.CommitArrangementRequest(
            request_id=str(uuid.uuid4()), seat=player.seat, commitment=commitment, confirm=True
        ),
        player.token,
    )
    return chosen


def reveal_request(
    player: Player, chosen: Chosen, natural: str, nonce: bytes
) -> table_service_pb2.RevealArrangementRequest:
    return table_service_pb2.RevealArrangementRequest(
        request_id=str(uuid.uuid4()),
        seat=player.seat,
        arrangement=chosen.rows(),
        nonce=chosen.nonce,
        natural=natural,
        natural_nonce=nonce,
    )


def refused(world: World, attempt: Callable[[], Any], code: grpc.StatusCode, reason: str) -> Any:
    """The call fails with ``code`` and ErrorInfo ``reason``, and the log is unchanged."""
    before = world.event_count()
    with pytest.raises(grpc.RpcError) as caught:
        attempt()
    found_code, found_reason, _, bad_request = error_reason(caught.value)
    assert (found_code, found_reason) == (code, reason), caught.value.details()
    assert caught.value.details()  # a message a person can read
    assert world.event_count() == before
    return bad_request


def test_a_deal_where_each_seat_declares(world: World) -> None:
    seated = naturals_table(world)
    deal = world.dealt(seated)
    first, second = seated.players
    first_nonce, second_nonce = os.urandom(16), os.urandom(16)
    # The first seat declares a dragon whatever it holds (a dragon is one hand in about 1,600):
    # unless its cards do hold one, that is a false declaration, a foul.
    first_holds_dragon = any(
        hand.natural.value == "dragon" for hand in naturals_held(NATURALS, world.hand(first))
    )
    world.table_call(
        "DeclareNatural", declare_request(seated, deal, first, "dragon", first_nonce), first.token
    )
    world.table_call(
        "DeclareNatural", declare_request(seated, deal, second, "none", second_nonce), second.token
    )
    chosen = {
        player.seat: commit_and_confirm(world, seated, deal, player) for player in (first, second)
    }

    # Hidden until the seed: the watch stream shows hashes and who opened, never what.
    watcher = Watcher(world.api, seated.table, second.token)
    world.table_call(
        "RevealArrangement",
        reveal_request(first, chosen[first.seat], "dragon", first_nonce),
        first.token,
    )
    watcher.wait_for(
        lambda: any(m.event.WhichOneof("payload") == "natural_revealed" for m in watcher.messages)
    )
    payloads = [m.event.WhichOneof("payload") for m in watcher.messages]
    assert payloads.count("natural_declared") == 2 and "seed_revealed" not in payloads
    seen = b"".join(m.SerializeToString() for m in watcher.messages)
    assert b"dragon" not in seen and first_nonce not in seen
    watcher.cancel()
    result = world.table_call(
        "GetDealResult", table_service_pb2.GetDealResultRequest(name=deal), second.token
    ).result
    assert not result.seed and not any(seat.nonce for seat in result.seats)
    assert [seat.natural for seat in result.seats] == ["", ""]  # hidden until the seed

    world.table_call(
        "RevealArrangement",
        reveal_request(second, chosen[second.seat], "none", second_nonce),
        second.token,
    )
    result = world.table_call(
        "GetDealResult", table_service_pb2.GetDealResultRequest(name=deal), second.token
    ).result
    by_seat = {seat.seat: seat.natural for seat in result.seats}
    assert (by_seat[first.seat], by_seat[second.seat]) == ("dragon", "none")
    logged = world.api.logged_events(seated.table)
    declared = [event for event in logged if isinstance(event, NaturalDeclared)]
    assert sorted(event.seat for event in declared) == [0, 1]
    revealed = {e.seat: e for e in logged if isinstance(e, ArrangementRevealed)}
    scored = next(event for event in logged if isinstance(event, DealScored))
    # The deal exports and verifies with the package alone (declarations opened, the dragon's
    # verdict and the scores recomputed); a declaration changed in the file is caught.
    export = (
        audit_stub(world)
        .ExportDeal(
            audit_service_pb2.ExportDealRequest(request_id=str(uuid.uuid4()), name=deal),
            metadata=bearer(second.token),
        )
        .export
    )
    report = verify_export(export.splitlines())
    assert report.ok, report.failed_names()
    names = {check.name for check in report.checks}
    assert {"declaration[0]", "declaration[1]", "fouls", "scores"} <= names
    forged = [
        line.replace('"natural":"dragon"', '"natural":"none"')
        if '"NaturalRevealed"' in line
        else line
        for line in export.splitlines()
    ]
    assert forged != export.splitlines()
    assert not verify_export(forged).ok
    if not first_holds_dragon:
        assert (revealed[first.position].foul, revealed[first.position].foul_reason) == (
            True,
            "FALSE_NATURAL",
        )
        assert scored.fouls[first.position] is True
    else:  # pragma: no cover - one deal in about 1,600
        assert scored.totals[first.position] == 13


def test_watchers_see_declarations_as_hashes_only(world: World) -> None:
    seated = naturals_table(world)
    deal = world.dealt(seated)
    for player in seated.players:
        world.table_call(
            "DeclareNatural",
            declare_request(seated, deal, player, "three_flushes", os.urandom(16)),
            player.token,
        )
    events = world.api.logged_events(seated.table)
    assert all(
        set(event.to_data()) == {"deal_number", "seat", "commitment", "player_key", "signature"}
        for event in events
        if isinstance(event, NaturalDeclared)
    )
    assert set(table_event_pb2.NaturalDeclared.DESCRIPTOR.fields_by_name.keys()) == {
        "deal",
        "seat",
        "commitment",
    }
    assert set(table_event_pb2.NaturalRevealed.DESCRIPTOR.fields_by_name.keys()) == {"deal", "seat"}


def test_bad_input_writes_nothing_and_says_why(world: World) -> None:
    plain = world.seated()
    plain_deal = world.dealt(plain)
    player = plain.players[0]
    refused(
        world,
        lambda: world.table_call(
            "DeclareNatural",
            declare_request(plain, plain_deal, player, "none", os.urandom(16)),
            player.token,
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NATURALS_NOT_PLAYED",
    )

    seated = naturals_table(world)
    deal = world.dealt(seated)
    first, second = seated.players
    arrangement = solve(world.hand(first), NATURALS)
    commitment = fairness.arrangement_commitment(
        seated.table_id, int(deal.rsplit("/", 1)[1]), first.position, arrangement, os.urandom(16)
    )
    refused(
        world,
        lambda: world.table_call(
            "CommitArrangement",
            table_service_pb2.CommitArrangementRequest(
                request_id=str(uuid.uuid4()), seat=first.seat, commitment=commitment
            ),
            first.token,
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "DECLARATION_REQUIRED",
    )
    short = declare_request(seated, deal, first, "none", os.urandom(16))
    short.commitment = short.commitment[:31]
    bad_request = refused(
        world,
        lambda: world.table_call("DeclareNatural", short, first.token),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_COMMITMENT",
    )
    assert bad_request is not None
    assert [v.field for v in bad_request.field_violations] == ["commitment"]

    nonces = {first.seat: os.urandom(16), second.seat: os.urandom(16)}
    for player in (first, second):
        world.table_call(
            "DeclareNatural",
            declare_request(seated, deal, player, "none", nonces[player.seat]),
            player.token,
        )
    again = declare_request(seated, deal, first, "dragon", os.urandom(16))
    refused(
        world,
        lambda: world.table_call("DeclareNatural", again, first.token),
        grpc.StatusCode.FAILED_PRECONDITION,
        "ALREADY_DECLARED",
    )
    chosen = {
        player.seat: commit_and_confirm(world, seated, deal, player) for player in (first, second)
    }
    mismatch = reveal_request(first, chosen[first.seat], "six_pairs", nonces[first.seat])
    refused(
        world,
        lambda: world.table_call("RevealArrangement", mismatch, first.token),
        grpc.StatusCode.FAILED_PRECONDITION,
        "DECLARATION_MISMATCH",
    )
    missing = reveal_request(first, chosen[first.seat], "", b"")
    refused(
        world,
        lambda: world.table_call("RevealArrangement", missing, first.token),
        grpc.StatusCode.FAILED_PRECONDITION,
        "DECLARATION_REQUIRED",
    )
    unknown = reveal_request(first, chosen[first.seat], "Dragon", nonces[first.seat])
    bad_request = refused(
        world,
        lambda: world.table_call("RevealArrangement", unknown, first.token),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
    )
    assert [v.field for v in bad_request.field_violations] == ["natural"]
    # The right opening goes through.
    world.table_call(
        "RevealArrangement",
        reveal_request(first, chosen[first.seat], "none", nonces[first.seat]),
        first.token,
    )
