"""Plays whole deals and series through the real ``TableService``: sample data for the audit's
tests, benchmarks and demonstrations. Every seat plays the solver's arrangement, commits to it with
a fresh nonce, confirms and reveals, exactly as a client would over the API. Commitments are of
scheme 2 (binding the player id, docs/fairness.md §12.1), as the SDK's, unless ``scheme=1`` is
asked for. With ``signing_keys`` (Ed25519 private keys by player id) each player signs its
commit and reveal (docs/fairness.md §19), passing its public key as its only registered key.
A seat named in ``fouls`` sets rows out of order instead (a foul), so that a test can choose a
deal's outcome: every other seat wins all three rows against it.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Collection, Mapping
from typing import Any

from sapsam import fairness
from sapsam.app.tables import TableService
from sapsam.domain.commands import PlayerSignature
from sapsam.fairness import player_keys
from sapsam.rules.arrangement import Arrangement, FoulReason, check_arrangement
from sapsam.rules.cards import Card
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.solver import solve

PLAYERS = ("ann", "bob", "cid", "dee")


async def seated_table(
    service: TableService,
    seat_count: int,
    rule_set: RuleSet = DEFAULT_RULE_SET,
    players: tuple[str, ...] = PLAYERS,
    request_id: str | None = None,
    after_series: str = "close",
) -> uuid.UUID:
    """A new table with every seat taken and the first dealer drawn by lot; ``after_series``
    (``close`` or ``new_series``) says what follows a completed series."""
    created = await service.create_table(
        rule_set, seat_count, "operator", request_id or f"create-{uuid.uuid4()}", after_series
    )
    for player in players[:seat_count]:
        await service.join(created.table_id, player, None, f"{created.table_id}/join-{player}")
    await service.choose_dealer(created.table_id, "operator", f"{created.table_id}/dealer")
    return created.table_id


async def start_and_deal(service: TableService, table_id: uuid.UUID, number: int) -> None:
    """Start deal ``number`` and have the seat on the dealer's right cut (the cards are dealt)."""
    state = (await service.start_deal(table_id, "operator", f"{table_id}/start-{number}")).state
    deal = state.deal
    assert deal is not None
    cutter = state.seats[fairness.cutter_for(deal.dealer, state.seat_count)]
    assert cutter is not None
    await service.cut(table_id, cutter, 1 + (7 * number) % 51, f"{table_id}/cut-{number}")


async def play_deal(
    service: TableService,
    table_id: uuid.UUID,
    number: int,
    entropy: bool = True,
    scheme: int = 2,
    signing_keys: Mapping[str, Any] | None = None,
    fouls: Collection[str] = (),
) -> None:
    """Play deal ``number`` to its score: optional entropy, cut, commit, confirm, reveal; the
    players in ``fouls`` set their rows out of order."""
    state = (await service.start_deal(table_id, "operator", f"{table_id}/start-{number}")).state
    deal = state.deal
    assert deal is not None
    seats = [player for player in state.seats if player is not None]
    if entropy:
        # The first seat mixes in its own bytes, so the contributions path is exercised too.
        await service.contribute_entropy(
            table_id, seats[0], bytes([number]) * 16, f"{table_id}/entropy-{number}"
        )
    cutter = state.seats[fairness.cutter_for(deal.dealer, state.seat_count)]
    assert cutter is not None
    await service.cut(table_id, cutter, 1 + (7 * number) % 51, f"{table_id}/cut-{number}")
    chosen = {}
    seats_of: dict[str, int] = {}
    for player in seats:
        seat, hand = await service.hand_of(table_id, player)
        if player in fouls:
            arrangement = fouled_out_of_order(hand)
        else:
            arrangement = solve(hand, (await service.load(table_id)).rule_set)
        nonce = fairness.new_seed()[:16]
        chosen[player] = (arrangement, nonce)
        commitment = fairness.arrangement_commitment(
            table_id, number, seat, arrangement, nonce, scheme=scheme, player_id=player
        )
        key = (signing_keys or {}).get(player)
        signed = _signed(
            key, player_keys.commit_message(table_id, number, seat, player, scheme, commitment)
        )
        await service.commit(
            table_id,
            player,
            commitment,
            f"{table_id}/commit-{number}",
            scheme=scheme,
            signature=signed,
            player_keys=() if signed is None else (signed.public_key,),
        )
        await service.confirm(table_id, player, f"{table_id}/confirm-{number}")
        seats_of[player] = seat
    for player, (arrangement, nonce) in chosen.items():
        key = (signing_keys or {}).get(player)
        signed = _signed(
            key,
            player_keys.reveal_message(
                table_id, number, seats_of[player], player, arrangement, nonce
            ),
        )
        await service.reveal(
            table_id,
            player,
            arrangement,
            nonce,
            f"{table_id}/reveal-{number}",
            signature=signed,
            player_keys=() if signed is None else (signed.public_key,),
        )


def fouled_out_of_order(hand: tuple[Card, ...]) -> Arrangement:
    """An arrangement of ``hand`` that fouls because its rows are out of order (the same one
    for the same hand)."""
    shuffler = random.Random(0)
    cards = list(hand)
    while True:
        shuffler.shuffle(cards)
        arrangement = Arrangement(tuple(cards[:3]), tuple(cards[3:8]), tuple(cards[8:]))
        if check_arrangement(arrangement, hand).reason is FoulReason.ROWS_OUT_OF_ORDER:
            return arrangement


def _signed(key: Any, message: bytes) -> PlayerSignature | None:
    """``key``'s signature of ``message`` (an ``Ed25519PrivateKey``), or None without a key."""
    if key is None:
        return None
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return PlayerSignature(public, key.sign(message))


async def play_series(
    service: TableService,
    seat_count: int,
    deals: int | None = None,
    rule_set: RuleSet = DEFAULT_RULE_SET,
    after_series: str = "close",
    scheme: int = 2,
    signing_keys: Mapping[str, Any] | None = None,
) -> uuid.UUID:
    """A new table with ``deals`` deals played (default: the whole series; at a ``new_series``
    table deals go on past the series length into the next series)."""
    table_id = await seated_table(service, seat_count, rule_set, after_series=after_series)
    for number in range(1, (deals or rule_set.series_length) + 1):
        await play_deal(service, table_id, number, scheme=scheme, signing_keys=signing_keys)
    return table_id
