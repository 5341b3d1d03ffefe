"""What each caller sees of a table and a deal, phase by phase, decided in the domain (no I/O).

One three-seat deal is played through ``decide``/``evolve``; at each phase the views for the
player in seat 0, the player in seat 1, the operator and a spectator (a player without a seat
here) must show exactly the hands, commitments, nonces and rows the rules allow
(sapsam.domain.table_views): a hand to its own seat once dealt, rows and nonces and every hand to
everyone once the seed is in the log, commitments to everyone as soon as they are made.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from test_table import NONCE, PLAYERS, TABLE_ID, Table, ready_table

from sapsam.domain.commands import ConfirmArrangement, RevealArrangement, RevealSeed
from sapsam.domain.deal_facts import gather_deal
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.table_views import (
    OPERATOR,
    SPECTATOR,
    Viewer,
    deal_view_for,
    dealt_cards_by_player,
    dealt_cards_for,
    own_hand_seat,
    table_view_for,
)
from sapsam.rules.cards import Card
from sapsam.rules.solver import solve

SEATS = 3
VIEWERS: dict[str, Callable[[Table], Viewer]] = {
    "seat 0's player": lambda table: Viewer.of(table.state, PLAYERS[0]),
    "seat 1's player": lambda table: Viewer.of(table.state, PLAYERS[1]),
    "the operator": lambda table: Viewer.of(table.state, None, operator=True),
    "a spectator": lambda table: Viewer.of(table.state, "someone-without-a-seat"),
}
OWN_SEAT = {
    "seat 0's player": {0},
    "seat 1's player": {1},
    "the operator": set(),
    "a spectator": set(),
}
EVERY_SEAT = set(range(SEATS))


def _phases() -> list[tuple[str, Table]]:
    """Snapshots of one deal: (phase name, the table at that moment)."""
    snapshots: list[tuple[str, Table]] = []

    def snap(name: str, table: Table) -> None:
        copy = Table.__new__(Table)
        copy.state, copy.events, copy.seed = table.state, list(table.events), table.seed
        snapshots.append((name, copy))

    table = ready_table(SEATS)
    table.start_deal()
    snap("awaiting the cut", table)
    table.cut(17)
    snap("arranging, nothing committed", table)
    hands = table.hands()
    chosen = [solve(hand) for hand in hands]
    table.commit(0, chosen[0])
    snap("arranging, seat 0 committed", table)
    for seat in range(1, SEATS):
        table.commit(seat, chosen[seat])
    for seat in range(SEATS):
        table.run(ConfirmArrangement(player_id=PLAYERS[seat], now_ms=1))
    table.run(
        RevealArrangement(player_id=PLAYERS[0], arrangement=chosen[0], nonce=NONCE, dealt=hands[0])
    )
    snap("revealing, seat 0 revealed", table)
    for seat in range(1, SEATS):
        table.run(
            RevealArrangement(
                player_id=PLAYERS[seat], arrangement=chosen[seat], nonce=NONCE, dealt=hands[seat]
            )
        )
    snap("awaiting the seed", table)
    table.run(RevealSeed(seed=table.seed))
    snap("seed revealed and scored", table)
    return snapshots


PHASES = _phases()
DEALT = {name: name != "awaiting the cut" for name, _ in PHASES}
SEED_OUT = {name: name == "seed revealed and scored" for name, _ in PHASES}
COMMITTED = {
    "awaiting the cut": set(),
    "arranging, nothing committed": set(),
    "arranging, seat 0 committed": {0},
}


def _secret_hands(table: Table) -> tuple[tuple[Card, ...], ...] | None:
    """The hands the application computes from the secret seed, once the cards are dealt."""
    deal = table.state.deal
    assert deal is not None
    return table.hands() if deal.dealt else None


@pytest.mark.parametrize("viewer_name", sorted(VIEWERS))
@pytest.mark.parametrize(("phase", "table"), PHASES, ids=[name for name, _ in PHASES])
def test_the_table_view_shows_a_hand_to_its_own_seat_then_to_all(
    phase: str, table: Table, viewer_name: str
) -> None:
    viewer = VIEWERS[viewer_name](table)
    hands = _secret_hands(table)
    view = table_view_for(table.state, viewer, hands)
    shown = {seat.seat for seat in view.seats if seat.hand is not None}
    if SEED_OUT[phase]:
        assert shown == EVERY_SEAT
    elif DEALT[phase]:
        assert shown == OWN_SEAT[viewer_name]
    else:
        assert shown == set()
    for seat in view.seats:
        if seat.hand is not None:
            assert hands is not None and seat.hand == hands[seat.seat]
    # Without hands from the application, no view shows one, whoever asks.
    assert all(seat.hand is None for seat in table_view_for(table.state, viewer).seats)


@pytest.mark.parametrize("viewer_name", sorted(VIEWERS))
@pytest.mark.parametrize(("phase", "table"), PHASES, ids=[name for name, _ in PHASES])
def test_the_deal_view_shows_commitments_at_once_and_rows_and_nonces_after_the_seed(
    phase: str, table: Table, viewer_name: str
) -> None:
    viewer = VIEWERS[viewer_name](table)
    facts = gather_deal(table.events, 1)
    assert facts is not None
    view = deal_view_for(TABLE_ID, SEATS, facts, viewer, _secret_hands(table))
    committed = {seat.seat for seat in view.seats if seat.commitment}
    assert committed == COMMITTED.get(phase, EVERY_SEAT)
    with_nonce = {seat.seat for seat in view.seats if seat.nonce is not None}
    with_rows = {seat.seat for seat in view.seats if seat.arrangement is not None}
    with_hand = {seat.seat for seat in view.seats if seat.hand is not None}
    if SEED_OUT[phase]:
        assert with_nonce == with_rows == with_hand == EVERY_SEAT
        assert view.seed == table.seed
        assert all(seat.nonce == NONCE for seat in view.seats)
    else:
        # A reveal is in the log before the seed, but nobody sees its rows or nonce until then.
        assert with_nonce == with_rows == set()
        assert view.seed is None
        assert with_hand == (OWN_SEAT[viewer_name] if DEALT[phase] else set())


def test_the_operator_and_a_spectator_are_the_same_viewer_kind_without_a_seat() -> None:
    table = ready_table(SEATS)
    assert Viewer.of(table.state, None, operator=True) == OPERATOR
    assert Viewer.of(table.state, "nobody-here") == SPECTATOR
    assert Viewer.of(table.state, PLAYERS[2]) == Viewer(seat=2)


def test_my_hand_is_mine_once_dealt_and_nobody_elses() -> None:
    _, before_cut = PHASES[0]
    with pytest.raises(DomainError) as early:
        own_hand_seat(before_cut.state, Viewer.of(before_cut.state, PLAYERS[0]))
    assert early.value.reason is Reason.WRONG_PHASE
    _, dealt = PHASES[1]
    assert own_hand_seat(dealt.state, Viewer.of(dealt.state, PLAYERS[1])) == 1
    for outsider in (OPERATOR, SPECTATOR):
        with pytest.raises(DomainError) as refused:
            own_hand_seat(dealt.state, outsider)
        assert refused.value.reason is Reason.NOT_SEATED


@pytest.mark.parametrize("viewer_name", sorted(VIEWERS))
def test_cards_dealt_shows_each_holder_its_own_cards_and_nobody_else_any(
    viewer_name: str,
) -> None:
    _, dealt = PHASES[1]
    hands = _secret_hands(dealt)
    assert hands is not None
    viewer = VIEWERS[viewer_name](dealt)
    shown = dealt_cards_for(dealt.state, viewer, hands)
    own = OWN_SEAT[viewer_name]
    if own:
        (seat,) = own
        assert shown == tuple(sorted(hands[seat]))
    else:
        assert shown is None
    # Without the hands (the seed unknown), nobody is shown any.
    assert dealt_cards_for(dealt.state, viewer, None) is None


def test_cards_dealt_variants_are_the_seated_players_only() -> None:
    _, dealt = PHASES[1]
    hands = _secret_hands(dealt)
    assert hands is not None
    by_player = dealt_cards_by_player(dealt.state, hands)
    assert by_player == {PLAYERS[seat]: tuple(sorted(hands[seat])) for seat in range(SEATS)}
    _, before_cut = PHASES[0]
    assert dealt_cards_by_player(before_cut.state, hands) == {}
