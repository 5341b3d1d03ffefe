"""The hand on the seat's own stream: WatchTable's CardsDealt carries ``my_cards``, exactly the
cards GetMyHand returns, only on a stream whose caller holds that seat; another seat's holder, a
spectator and the operator see none, live and replayed from version 0 (from the channel's memory,
from a fresh read, and from the part of the history a late watcher reads itself). On a real
server over a socket."""

from __future__ import annotations

from typing import Any

from api_client import OPERATOR_TOKEN, DealSecrets, Player, Watcher, hidden_information_violations
from scenarios import Seated, World

from sapsam.api.watch import RECENT_EVENTS
from sapsam_proto.v1 import operator_service_pb2, operator_service_pb2_grpc, table_service_pb2


def _own_hand(world: World, player: Player) -> list[str]:
    request = table_service_pb2.GetMyHandRequest(seat=player.seat)
    return list(world.table_call("GetMyHand", request, player.token).cards)


def _dealt(watcher: Watcher) -> dict[str, list[str]]:
    """Each CardsDealt the watcher received: the deal's name and the cards it showed."""
    return {
        response.event.cards_dealt.deal: list(response.event.cards_dealt.my_cards)
        for response in watcher.messages
        if response.event.WhichOneof("payload") == "cards_dealt"
    }


def _watchers(world: World, seated: Seated, spectator: Player, after: int = 0) -> dict[str, Any]:
    players = seated.players
    return {
        "first": Watcher(world.api, seated.table, players[0].token, after, players[0].seat),
        "second": Watcher(world.api, seated.table, players[1].token, after, players[1].seat),
        "spectator": Watcher(world.api, seated.table, spectator.token, after),
        "operator": Watcher(world.api, seated.table, OPERATOR_TOKEN, after),
    }


def _check(
    world: World, watchers: dict[str, Watcher], hands: dict[str, dict[str, list[str]]]
) -> None:
    """Every watcher saw every dealt deal; the seats their own cards, the others none."""
    for watcher in watchers.values():
        watcher.wait_for(lambda watcher=watcher: _dealt(watcher).keys() >= hands.keys())  # type: ignore[misc]
    for deal, by_seat in hands.items():
        first, second = by_seat.values()
        assert _dealt(watchers["first"])[deal] == first
        assert _dealt(watchers["second"])[deal] == second
        assert first != second and len(first) == 13
        assert _dealt(watchers["spectator"])[deal] == []
        assert _dealt(watchers["operator"])[deal] == []
    secrets: dict[int, DealSecrets] = {}
    for watcher in watchers.values():
        assert hidden_information_violations(watcher.observations, secrets) == []


def _stop(watchers: dict[str, Watcher]) -> None:
    for watcher in watchers.values():
        watcher.cancel()


def test_each_seat_gets_its_own_hand_live_and_replayed(world: World) -> None:
    seated = world.seated()
    spectator = world.player("spectator")
    live = _watchers(world, seated, spectator)
    deal = world.dealt(seated)
    hands = {deal: {player.seat: _own_hand(world, player) for player in seated.players}}
    _check(world, live, hands)
    # Replayed from version 0 while the live streams are open: from the channel's memory.
    remembered = _watchers(world, seated, spectator)
    _check(world, remembered, hands)
    _stop(live)
    _stop(remembered)
    # Replayed by a channel opened afresh: the log read, the seed still secret.
    fresh = _watchers(world, seated, spectator)
    _check(world, fresh, hands)
    _stop(fresh)


def test_a_replay_of_old_deals_shows_each_seat_its_hands(world: World) -> None:
    seated = world.seated(series_length=4)
    spectator = world.player("spectator")
    hands: dict[str, dict[str, list[str]]] = {}
    for _ in range(3):
        deal, chosen = world.revealing(seated)
        hands[deal] = {player.seat: _own_hand(world, player) for player in seated.players}
        for player in seated.players:
            world.reveal(player, chosen[player.seat])
    deal = world.dealt(seated)  # the current deal's seed is still secret
    hands[deal] = {player.seat: _own_hand(world, player) for player in seated.players}
    logged = world.api.logged_events(seated.table)
    head = len(logged)
    first_dealt = next(i for i, e in enumerate(logged, 1) if type(e).__name__ == "CardsDealt")
    first_seed = next(i for i, e in enumerate(logged, 1) if type(e).__name__ == "SeedRevealed")
    # The first deal is older than what a channel keeps, and its seed is published within what
    # it keeps: a replay reads the deal itself and finds its seed past what it read.
    assert first_dealt <= head - RECENT_EVENTS < first_seed
    # A stream at the head opens the channel; replays from 0 then read the older part.
    at_head = Watcher(world.api, seated.table, spectator.token, after_version=head)
    try:
        replays = _watchers(world, seated, spectator)
        _check(world, replays, hands)
        _stop(replays)
        # From just after the first deal's cards, older than what the channel keeps (so read
        # by the history path): the earlier events are folded for the state only, and every deal
        # dealt in what is sent still shows each seat its own hand.
        later = _watchers(world, seated, spectator, after=first_dealt)
        # (The hidden-information checker needs a stream from its start: checked above.)
        first_deal, *rest = hands
        for watcher in later.values():
            watcher.wait_for(lambda watcher=watcher: _dealt(watcher).keys() >= set(rest))  # type: ignore[misc]
            assert first_deal not in _dealt(watcher)
        for deal in rest:
            first, second = hands[deal].values()
            assert _dealt(later["first"])[deal] == first
            assert _dealt(later["second"])[deal] == second
            assert _dealt(later["spectator"])[deal] == _dealt(later["operator"])[deal] == []
        _stop(later)
    finally:
        at_head.cancel()


def test_a_replay_of_a_voided_deal_shows_each_seat_its_hand(world: World) -> None:
    """A voided deal publishes its seed in ``DealVoided`` (and forgets the secret): a replay,
    by a channel opened afresh, still shows each seat its own cards."""
    seated = world.seated()
    spectator = world.player("spectator")
    deal = world.dealt(seated)
    hands = {deal: {player.seat: _own_hand(world, player) for player in seated.players}}
    stub = operator_service_pb2_grpc.OperatorServiceStub(world.api.channel)
    stub.VoidDeal(
        operator_service_pb2.VoidDealRequest(request_id="void-1", deal=deal, reason="a test"),
        metadata=world.operator,
    )
    replays = _watchers(world, seated, spectator)
    try:
        _check(world, replays, hands)
    finally:
        _stop(replays)


def test_a_seat_given_to_another_player_shows_each_holder_only_its_own_deals(
    world: World,
) -> None:
    """After ReplaceSeat, a replay shows the previous holder its cards of the deals it played
    at the seat, and the new holder only those of the deals dealt to it."""
    seated = world.seated(series_length=2)
    deal, chosen = world.revealing(seated)
    previous = seated.players[1]
    before = _own_hand(world, previous)
    for player in seated.players:
        world.reveal(player, chosen[player.seat])
    newcomer = world.player("newcomer")
    stub = operator_service_pb2_grpc.OperatorServiceStub(world.api.channel)
    stub.ReplaceSeat(
        operator_service_pb2.ReplaceSeatRequest(
            request_id="replace-1", seat=previous.seat, player=newcomer.name
        ),
        metadata=world.operator,
    )
    newcomer.seat = previous.seat
    seated.players[1] = newcomer
    later = world.dealt(seated)
    after = _own_hand(world, newcomer)
    watchers = {
        "previous": Watcher(world.api, seated.table, previous.token),
        "newcomer": Watcher(world.api, seated.table, newcomer.token),
    }
    try:
        for watcher in watchers.values():
            watcher.wait_for(lambda watcher=watcher: {deal, later} <= _dealt(watcher).keys())  # type: ignore[misc]
        assert _dealt(watchers["previous"]) == {deal: before, later: []}
        assert _dealt(watchers["newcomer"]) == {deal: [], later: after}
    finally:
        _stop(watchers)
