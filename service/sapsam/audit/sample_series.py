"""Whole series made by the pure domain, with no database: sample data for the audit.

``series_events`` plays a table the way the service would (fresh seeds, the cut, the deal record,
the solver's arrangements committed, confirmed and revealed, the seed revealed, scoring) through
``decide``/``evolve``; ``recorded_stream`` adds versions, metadata and the hash chain exactly as
the store records them. Used by the audit's pure tests and by bench/audit.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from typing import Any, Final

from sapsam import fairness
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
)
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import Event
from sapsam.domain.table import INITIAL_STATE, TableState, decide, evolve
from sapsam.log.chain import GENESIS_HASH, canonical_event_bytes, chain_hash
from sapsam.log.records import RecordedEvent
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.solver import solve

PLAYERS: Final = ("ann", "bob", "cid", "dee")
NOW_MS: Final = 1_800_000_000_000


def series_events(
    table_id: uuid.UUID, seat_count: int, deals: int, rule_set: RuleSet = DEFAULT_RULE_SET
) -> list[Event]:
    """A whole series (or its first ``deals`` deals) decided by the domain, as the service would
    record it."""
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
            seat_count=seat_count,
            lot_commitment=fairness.lot_commitment(table_id, lot_seed),
            created_by="operator",
        )
    )
    for seat in range(seat_count):
        run(SeatPlayer(player_id=PLAYERS[seat], seat=seat))
    run(ChooseDealer(lot_seed=lot_seed))
    for number in range(1, deals + 1):
        seed = fairness.new_seed()
        run(StartDeal(seed_commitment=fairness.seed_commitment(table_id, number, seed)))
        deal = state.deal
        assert deal is not None
        cutter = PLAYERS[fairness.cutter_for(deal.dealer, seat_count)]
        position = 1 + (7 * number) % 51
        run(CutDeck(player_id=cutter, position=position))
        record = fairness.deal_record(
            seed, deal.contributions, table_id, number, position, deal.dealer, seat_count
        )
        run(DealCards(deal_record=record, now_ms=NOW_MS))
        hands = fairness.hands_for_deal(
            seed, deal.contributions, table_id, number, position, deal.dealer, seat_count
        )
        chosen = []
        for seat, hand in enumerate(hands):
            arrangement = solve(hand, rule_set)
            nonce = fairness.new_seed()[:16]
            chosen.append((arrangement, nonce))
            commitment = fairness.arrangement_commitment(table_id, number, seat, arrangement, nonce)
            run(CommitArrangement(player_id=PLAYERS[seat], commitment=commitment))
            run(ConfirmArrangement(player_id=PLAYERS[seat], now_ms=NOW_MS))
        for seat, (arrangement, nonce) in enumerate(chosen):
            run(RevealArrangement(PLAYERS[seat], arrangement, nonce, dealt=hands[seat]))
        run(RevealSeed(seed=seed))
    return events


SAMPLE_METADATA: Final = {
    "actor": "sample",
    "recorded_at": "2026-01-01T00:00:00Z",
    "request_id": "sample",
}
"""The metadata every sample event carries (one dict, shared: nothing changes it)."""


def chained(
    stream_id: str,
    encoded: Iterable[tuple[str, int, dict[str, Any]]],
    *,
    metadata: dict[str, Any] = SAMPLE_METADATA,
    position: Callable[[int], int] = lambda version: version,
) -> list[RecordedEvent]:
    """Encoded events ``(type, schema_version, data)`` as the store records them in
    ``stream_id`` from version 1: ``metadata`` on each, the hash chain from the genesis, the
    global position ``position(version)`` (the version itself unless given)."""
    previous = GENESIS_HASH
    recorded: list[RecordedEvent] = []
    for version, (type_name, schema_version, data) in enumerate(encoded, start=1):
        previous = chain_hash(
            previous,
            canonical_event_bytes(stream_id, version, type_name, schema_version, data, metadata),
        )
        recorded.append(
            RecordedEvent(
                position(version),
                stream_id,
                version,
                type_name,
                schema_version,
                data,
                metadata,
                previous,
            )
        )
    return recorded


def recorded_stream(
    seat_count: int, deals: int = 8, table_id: uuid.UUID | None = None
) -> list[RecordedEvent]:
    """A table's stream as the store would record it, made without a database."""
    table_id = table_id or uuid.uuid4()
    events = series_events(table_id, seat_count, deals)
    return chained(f"table-{table_id}", map(DEFAULT_CODEC.encode, events))
