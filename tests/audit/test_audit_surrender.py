"""The audit of a deal with surrender (docs/rules.md §2.8): the honest deal verifies offline;
a forged announcing order, an announcement out of turn, a missed turn recorded as a surrender, the
announcements dropped, and a forged price or payment each fail a named check, although the forger
re-chains the stream (so the chain holds and the deal's own checks must catch it).

Pure: the deal is decided by the domain and recorded as the store would.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from sapsam import fairness
from sapsam.audit import Requester, read_export, select_deal, verify_export, write_lines
from sapsam.audit.deal_account import pair_items
from sapsam.audit.deal_account_facts import accounts
from sapsam.audit.replay import replay
from sapsam.audit.replay_rendering import render_frame
from sapsam.audit.sample_series import chained
from sapsam.domain.commands import (
    AnnounceSurrender,
    ChooseDealer,
    CommitArrangement,
    ConfirmArrangement,
    CreateTable,
    CutDeck,
    DealCards,
    RevealArrangement,
    RevealSeed,
    SeatPlayer,
    StartDeal,
)
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.table import INITIAL_STATE, decide, evolve
from sapsam.domain.table_surrender import announcing_order
from sapsam.log.records import RecordedEvent
from sapsam.rules.ruleset import RuleSet, SurrenderRule
from sapsam.rules.solver import solve

PLAYERS = ("ann", "bob", "cid")
TABLE_ID = uuid.UUID(int=0x5022)
NOW_MS = 1_800_000_000_000
RULES = RuleSet(surrender=SurrenderRule.PAY_PLAYERS, surrender_seconds=20, arrange_seconds=60)
Json = dict[str, Any]


def _deal() -> list[Json]:
    """One deal at a 3-seat table with surrender: the first seat in turn surrenders, the other
    two play; every seat reveals. The events as (type, schema_version, data) dicts."""
    state = INITIAL_STATE
    events: list[Json] = []

    def run(command: object) -> None:
        nonlocal state
        for event in decide(state, command):
            state = evolve(state, event)
            type_name, schema_version, data = DEFAULT_CODEC.encode(event)
            events.append({"type": type_name, "schema_version": schema_version, "data": data})

    lot_seed = bytes(range(32))
    run(
        CreateTable(
            table_id=TABLE_ID,
            rule_set=RULES,
            seat_count=3,
            lot_commitment=fairness.lot_commitment(TABLE_ID, lot_seed),
            created_by="operator",
        )
    )
    for seat, player in enumerate(PLAYERS):
        run(SeatPlayer(player_id=player, seat=seat))
    run(ChooseDealer(lot_seed=lot_seed))
    seed = bytes(range(1, 33))
    run(StartDeal(seed_commitment=fairness.seed_commitment(TABLE_ID, 1, seed)))
    deal = state.deal
    assert deal is not None
    run(CutDeck(player_id=PLAYERS[fairness.cutter_for(deal.dealer, 3)], position=17))
    arguments = (seed, deal.contributions, TABLE_ID, 1, 17, deal.dealer, 3)
    run(DealCards(deal_record=fairness.deal_record(*arguments), now_ms=NOW_MS))
    hands = fairness.hands_for_deal(*arguments)
    chosen = [(solve(hand, RULES), bytes([seat + 1]) * 16) for seat, hand in enumerate(hands)]
    for seat, (arrangement, nonce) in enumerate(chosen):
        commitment = fairness.arrangement_commitment(TABLE_ID, 1, seat, arrangement, nonce)
        run(CommitArrangement(player_id=PLAYERS[seat], commitment=commitment))
        run(ConfirmArrangement(player_id=PLAYERS[seat], now_ms=NOW_MS))
    for turn, seat in enumerate(announcing_order(deal.dealer, 3)):
        run(AnnounceSurrender(PLAYERS[seat], surrender=turn == 0, now_ms=NOW_MS + turn))
    for seat, (arrangement, nonce) in enumerate(chosen):
        run(RevealArrangement(PLAYERS[seat], arrangement, nonce, dealt=hands[seat]))
    run(RevealSeed(seed=seed))
    return events


def _recorded(events: list[Json]) -> list[RecordedEvent]:
    """The events chained as the store records them (a forger re-chains the same way)."""
    encoded = ((event["type"], event["schema_version"], event["data"]) for event in events)
    return chained(f"table-{TABLE_ID}", encoded)


def _verify(events: list[Json]) -> Any:
    return verify_export(write_lines(select_deal(_recorded(events), 1, Requester.operator())))


def _of(events: list[Json], type_name: str) -> list[Json]:
    return [event["data"] for event in events if event["type"] == type_name]


def _forged(events: list[Json], edit: Callable[[list[Json]], None]) -> list[Json]:
    forged = copy.deepcopy(events)
    edit(forged)
    return forged


@pytest.fixture(scope="module")
def honest() -> list[Json]:
    return _deal()


def test_the_honest_deal_verifies_and_its_account_names_the_surrender(honest: list[Json]) -> None:
    report = _verify(honest)
    assert report.ok, report.failed_names()
    opened = _of(honest, "AnnouncementsOpened")[0]
    first = opened["order"][0]
    scored = _of(honest, "DealScored")[0]
    assert scored["totals"][first] == -4  # 2 units to each of the two players
    rule_set, (account,) = accounts(
        [DEFAULT_CODEC.decode(e["type"], e["schema_version"], e["data"]) for e in honest]
    )
    assert rule_set is not None and account.score.totals == tuple(scored["totals"])
    pair = next(pair for pair in account.score.pairs if first in (pair.seat_a, pair.seat_b))
    (item,) = pair_items(account, pair, rule_set, PLAYERS)
    assert "surrendered and pays" in item.text and item.points == pair.delta


def test_a_forged_announcing_order_fails_the_sequence(honest: list[Json]) -> None:
    def edit(events: list[Json]) -> None:
        opened = _of(events, "AnnouncementsOpened")[0]
        opened["order"] = list(reversed(opened["order"]))
        # The announcements follow the forged order, so only the order itself is wrong.
        for data, seat in zip(_of(events, "SurrenderAnnounced"), opened["order"], strict=True):
            data["seat"] = seat

    report = _verify(_forged(honest, edit))
    assert "sequence" in report.failed_names()
    assert "clockwise from the dealer's left" in report.named("sequence", 1).detail


def test_an_announcement_out_of_turn_fails_the_sequence(honest: list[Json]) -> None:
    def edit(events: list[Json]) -> None:
        first, second, _ = _of(events, "SurrenderAnnounced")
        first["seat"], second["seat"] = second["seat"], first["seat"]

    report = _verify(_forged(honest, edit))
    assert "sequence" in report.failed_names()
    assert "turn" in report.named("sequence", 1).detail


def test_a_missed_turn_recorded_as_a_surrender_fails_the_sequence(honest: list[Json]) -> None:
    def edit(events: list[Json]) -> None:
        _of(events, "SurrenderAnnounced")[0]["timed_out"] = True  # and it still surrenders

    report = _verify(_forged(honest, edit))
    assert report.failed_names() == ("sequence",)
    assert "plays" in report.named("sequence", 1).detail


def test_announcements_dropped_at_a_surrender_table_fail_the_sequence(honest: list[Json]) -> None:
    def edit(events: list[Json]) -> None:
        events[:] = [
            e for e in events if e["type"] not in ("AnnouncementsOpened", "SurrenderAnnounced")
        ]

    report = _verify(_forged(honest, edit))
    assert "sequence" in report.failed_names()


def test_a_forged_price_fails_the_scores(honest: list[Json]) -> None:
    def edit(events: list[Json]) -> None:
        _of(events, "TableCreated")[0]["rule_set"]["surrender_price"] = 3

    report = _verify(_forged(honest, edit))
    assert "scores" in report.failed_names()


def test_a_forged_surrender_payment_fails_the_scores(honest: list[Json]) -> None:
    def edit(events: list[Json]) -> None:
        scored = _of(events, "DealScored")[0]
        first = _of(events, "AnnouncementsOpened")[0]["order"][0]
        pair = next(p for p in scored["pairs"] if first in (p["seat_a"], p["seat_b"]))
        # The surrendered seat pays one unit less to this player; the totals follow.
        sign = 1 if pair["seat_a"] == first else -1
        pair["delta"] += sign
        scored["totals"][pair["seat_a"]] += sign
        scored["totals"][pair["seat_b"]] -= sign
        scored["series_totals"] = list(scored["totals"])

    report = _verify(_forged(honest, edit))
    assert "scores" in report.failed_names()


def test_the_replay_tells_the_announcements(honest: list[Json]) -> None:
    frames = replay(
        read_export(write_lines(select_deal(_recorded(honest), 1, Requester.operator())))
    )
    text = "\n".join(render_frame(frame) for frame in frames)
    first, second, last = _of(honest, "AnnouncementsOpened")[0]["order"]
    turns = f"seat {first}, seat {second}, seat {last}"
    assert f"the seats announce play or surrender in turn ({turns})" in text
    assert f"seat {first} surrenders" in text and f"seat {second} plays" in text
    assert "confirmed, surrenders" in text
