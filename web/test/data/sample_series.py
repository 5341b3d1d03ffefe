"""A whole short series decided by sapsam's domain, for the page's tests (make_exports.py): three
seats, `series_length` 3, surrender on (`pay_players`), deal 2 voided after the cut (deal 3 passes
to the left as ever, docs/events.md), so the series completes after deal 4 (a void does not count).
Seat 1 surrenders in deal 3. Chained as the store records events (no database)."""

from __future__ import annotations

import dataclasses
import uuid

from sapsam import fairness
from sapsam.audit.sample_series import NOW_MS, PLAYERS, chained
from sapsam.domain.commands import (
    AnnounceSurrender,
    ChooseDealer,
    CommitArrangement,
    ConfirmArrangement,
    CreateTable,
    CutDeck,
    DealCards,
    DeclareNatural,
    RevealArrangement,
    RevealSeed,
    SeatPlayer,
    StartDeal,
    VoidDeal,
)
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import Event
from sapsam.domain.table import INITIAL_STATE, TableState, decide, evolve
from sapsam.fairness.natural_commitments import declaration_commitment
from sapsam.log.records import RecordedEvent
from sapsam.rules.naturals import NaturalsTable
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.rule_options import SurrenderRule
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.solver import solve

SEATS = 3
RULE_SET = dataclasses.replace(
    DEFAULT_RULE_SET, series_length=3, surrender=SurrenderRule.PAY_PLAYERS, surrender_seconds=20
)


def series_with_void(
    table_id: uuid.UUID, rule_set: RuleSet = RULE_SET, deals: int = 4
) -> list[RecordedEvent]:
    """The series (deal 2 voided); under a rule set with naturals every seat declares `none`
    before it commits and opens the declaration with its rows (docs/fairness.md §21)."""
    naturals = rule_set.naturals is not NaturalsTable.NONE
    state: TableState = INITIAL_STATE
    events: list[Event] = []

    def run(command: object) -> None:
        nonlocal state
        for event in decide(state, command):
            state = evolve(state, event)
            events.append(event)

    lot_seed = fairness.new_seed()
    run(
        CreateTable(
            table_id=table_id,
            rule_set=rule_set,
            seat_count=SEATS,
            lot_commitment=fairness.lot_commitment(table_id, lot_seed),
            created_by="operator",
        )
    )
    for seat in range(SEATS):
        run(SeatPlayer(player_id=PLAYERS[seat], seat=seat))
    run(ChooseDealer(lot_seed=lot_seed))
    for number in range(1, deals + 1):
        seed = fairness.new_seed()
        run(StartDeal(seed_commitment=fairness.seed_commitment(table_id, number, seed)))
        deal = state.deal
        assert deal is not None
        position = 1 + (7 * number) % 51
        run(CutDeck(player_id=PLAYERS[fairness.cutter_for(deal.dealer, SEATS)], position=position))
        args = (seed, deal.contributions, table_id, number, position, deal.dealer, SEATS)
        run(DealCards(deal_record=fairness.deal_record(*args), now_ms=NOW_MS))
        if number == 2:
            run(VoidDeal(reason="a sample void", seed=seed))
            continue
        hands = fairness.hands_for_deal(*args)
        chosen = []
        for seat, hand in enumerate(hands):
            arrangement = solve(hand, rule_set)
            nonce = fairness.new_seed()[:16]
            chosen.append((arrangement, nonce))
            if naturals:
                declared = declaration_commitment(
                    table_id, number, seat, PLAYERS[seat], "none", nonce
                )
                run(DeclareNatural(player_id=PLAYERS[seat], commitment=declared))
            commitment = fairness.arrangement_commitment(table_id, number, seat, arrangement, nonce)
            run(CommitArrangement(player_id=PLAYERS[seat], commitment=commitment))
            run(ConfirmArrangement(player_id=PLAYERS[seat], now_ms=NOW_MS))
        for k in range(1, SEATS + 1):  # clockwise from the dealer's left, the dealer last
            seat = (deal.dealer + k) % SEATS
            surrender = number == 3 and seat == 1
            run(AnnounceSurrender(PLAYERS[seat], surrender=surrender, now_ms=NOW_MS))
        for seat, (arrangement, nonce) in enumerate(chosen):
            opened = {"natural": "none", "natural_nonce": nonce} if naturals else {}
            run(RevealArrangement(PLAYERS[seat], arrangement, nonce, dealt=hands[seat], **opened))
        run(RevealSeed(seed=seed))
    return chained(f"table-{table_id}", map(DEFAULT_CODEC.encode, events))
