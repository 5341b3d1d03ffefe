"""Honest and forged histories of one table, each decided by the pure domain, so that every forged
history is internally consistent: its chain recomputed, its cards, commitments, scores, totals and
standings all following from its own events, as a careful forger's rewrite would be (issue #15:
such forgeries pass the offline verifier's every content check).

Seeds and nonces are derived from labels, so the honest history and a forgery agree on everything
their twist does not change: the same table, lot, seeds and nonces. A forgery is made by the
operator, who holds the log: it keeps each event's place (version and position) and only the
content differs.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from sapsam import fairness
from sapsam.audit.sample_series import chained
from sapsam.domain.commands import (
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
    TimeOutSeats,
)
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import Event
from sapsam.domain.table import INITIAL_STATE, TableState, decide, evolve
from sapsam.log.records import RecordedEvent
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.solver import solve

PLAYERS = ("ann", "bob", "cid", "dee")
NOW_MS = 1_800_000_000_000
TABLE_ID = uuid.UUID("5a0a5a0a-0000-4000-8000-000000000015")
RULE_SET = replace(DEFAULT_RULE_SET, reveal_seconds=60)
"""The default rules, with a reveal deadline (so that a seat can time out revealing)."""


def _seed(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


@dataclass(frozen=True)
class Twist:
    """What a forgery changes: the cut of some deals, a seat that times out instead of
    revealing, the players' seats."""

    cuts: dict[int, int] = field(default_factory=dict)
    reveal_timeout: tuple[int, int] | None = None  # (deal, seat)
    players: tuple[str, ...] = PLAYERS


HONEST = Twist()


def history(seat_count: int, deals: int, twist: Twist = HONEST) -> list[Event]:
    """The table's events, decided by the domain, with ``twist`` applied."""
    state: TableState = INITIAL_STATE
    events: list[Event] = []

    def run(command: object) -> None:
        nonlocal state
        for event in decide(state, command):
            state = evolve(state, event)
            events.append(event)

    lot_seed = _seed("lot")
    run(
        CreateTable(
            table_id=TABLE_ID,
            rule_set=RULE_SET,
            seat_count=seat_count,
            lot_commitment=fairness.lot_commitment(TABLE_ID, lot_seed),
            created_by="operator",
        )
    )
    players = twist.players
    for seat in range(seat_count):
        run(SeatPlayer(player_id=players[seat], seat=seat))
    run(ChooseDealer(lot_seed=lot_seed))
    for number in range(1, deals + 1):
        seed = _seed(f"deal {number}")
        run(StartDeal(seed_commitment=fairness.seed_commitment(TABLE_ID, number, seed)))
        deal = state.deal
        assert deal is not None
        position = twist.cuts.get(number, 1 + (7 * number) % 51)
        run(
            CutDeck(
                player_id=players[fairness.cutter_for(deal.dealer, seat_count)], position=position
            )
        )
        arguments = (seed, deal.contributions, TABLE_ID, number, position, deal.dealer, seat_count)
        run(DealCards(deal_record=fairness.deal_record(*arguments), now_ms=NOW_MS))
        hands = fairness.hands_for_deal(*arguments)
        chosen = []
        for seat, hand in enumerate(hands):
            arrangement = solve(hand, RULE_SET)
            nonce = _seed(f"nonce {number} {seat}")[:16]
            chosen.append((arrangement, nonce))
            commitment = fairness.arrangement_commitment(TABLE_ID, number, seat, arrangement, nonce)
            run(CommitArrangement(player_id=players[seat], commitment=commitment))
            run(ConfirmArrangement(player_id=players[seat], now_ms=NOW_MS))
        for seat, (arrangement, nonce) in enumerate(chosen):
            if twist.reveal_timeout == (number, seat):
                continue
            run(RevealArrangement(players[seat], arrangement, nonce, dealt=hands[seat]))
        if twist.reveal_timeout is not None and twist.reveal_timeout[0] == number:
            run(TimeOutSeats(now_ms=NOW_MS + 10**12))
        run(RevealSeed(seed=seed))
    return events


def recorded(
    events: list[Event], positions: Callable[[int], int] = lambda version: version
) -> list[RecordedEvent]:
    """The events as the store records them: versions, metadata, the hash chain."""
    return chained(f"table-{TABLE_ID}", map(DEFAULT_CODEC.encode, events), position=positions)
