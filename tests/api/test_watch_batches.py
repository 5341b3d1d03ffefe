"""WatchTable with ``batch_events``: the same events as one by one, in the same order, each seat
shown its own cards only on its own stream, but several events a message: live, the events of one
write together (DeckCut with CardsDealt; the last reveal with the seed, the score and the series'
end), and a replay in runs of at most 64. On a real server over a socket."""

from __future__ import annotations

from api_client import OPERATOR_TOKEN, Watcher, hidden_information_violations
from scenarios import Seated, World

from sapsam.api.watch import BATCH_EVENTS, RECENT_EVENTS


def _watchers(world: World, seated: Seated, batch: bool, after: int = 0) -> dict[str, Watcher]:
    first, second = seated.players
    spectator = world.player("spectator")
    return {
        "first": Watcher(world.api, seated.table, first.token, after, first.seat, batch=batch),
        "second": Watcher(world.api, seated.table, second.token, after, second.seat, batch=batch),
        "spectator": Watcher(world.api, seated.table, spectator.token, after, batch=batch),
        "operator": Watcher(world.api, seated.table, OPERATOR_TOKEN, after, batch=batch),
    }


def _received(watcher: Watcher) -> list[bytes]:
    return [response.event.SerializeToString() for response in watcher.messages]


def _types(watcher: Watcher, versions: list[int]) -> list[str]:
    by_version = {response.event.version: response.event.type for response in watcher.messages}
    return [by_version[version] for version in versions]


def _my_cards(watcher: Watcher) -> list[list[str]]:
    return [
        list(response.event.cards_dealt.my_cards)
        for response in watcher.messages
        if response.event.WhichOneof("payload") == "cards_dealt"
    ]


def _reached(watcher: Watcher, version: int) -> bool:
    return bool(watcher.messages) and watcher.messages[-1].event.version >= version


def _same_events(one_by_one: dict[str, Watcher], batched: dict[str, Watcher], head: int) -> None:
    """Each batched watcher received, up to ``head``, byte for byte what its one-by-one twin
    did; nothing it may not see; and no stream ended with an error."""
    for name, batched_watcher in batched.items():
        single = one_by_one[name]
        for watcher in (single, batched_watcher):
            watcher.wait_for(lambda watcher=watcher: _reached(watcher, head))  # type: ignore[misc]
            assert watcher.error is None, watcher.error
        assert _received(batched_watcher) == _received(single), name
        assert hidden_information_violations(batched_watcher.observations, {}) == []


def test_live_batches_are_one_message_per_write_with_the_same_events(world: World) -> None:
    seated = world.seated()
    one_by_one = _watchers(world, seated, batch=False)
    batched = _watchers(world, seated, batch=True)
    try:
        # Every stream is live (has the history) before the deal starts.
        head = len(world.api.logged_events(seated.table))
        for watcher in [*one_by_one.values(), *batched.values()]:
            watcher.wait_for(lambda watcher=watcher: len(watcher.messages) >= head)  # type: ignore[misc]
        first_live = len(batched["spectator"].batches)
        world.played(seated)
        head = len(world.api.logged_events(seated.table))
        _same_events(one_by_one, batched, head)
        # The seats' own cards, on their own streams only (as one by one: compared above).
        first, second = _my_cards(batched["first"]), _my_cards(batched["second"])
        assert len(first) == len(second) == 1 and len(first[0]) == len(second[0]) == 13
        assert first != second
        assert _my_cards(batched["spectator"]) == _my_cards(batched["operator"]) == [[]]
        # One message per write: the cut deals; the last confirmation opens the reveals; the
        # last reveal publishes the seed, scores the deal and ends the series (and the stream).
        live = [
            _types(batched["spectator"], versions)
            for versions in batched["spectator"].batches[first_live:]
        ]
        assert ["DeckCut", "CardsDealt"] in live
        assert ["SeatConfirmed", "RevealsOpened"] in live
        assert live[-1] == ["ArrangementRevealed", "SeedRevealed", "DealScored", "SeriesCompleted"]
        assert live.count(["ArrangementCommitted"]) == 2  # the World commits, then confirms
        assert sum(len(types) for types in live) == head - sum(
            len(versions) for versions in batched["spectator"].batches[:first_live]
        )
        assert len(live) < sum(len(types) for types in live)
    finally:
        for watcher in [*one_by_one.values(), *batched.values()]:
            watcher.cancel()


def test_a_batched_replay_sends_the_history_in_runs_of_at_most_64(world: World) -> None:
    seated = world.seated(series_length=8)
    for _ in range(6):
        world.played(seated)
    world.dealt(seated)  # the current deal's seed is still secret: its cards stay hidden
    head = len(world.api.logged_events(seated.table))
    assert head > BATCH_EVENTS > RECENT_EVENTS  # the history takes runs, from the log and memory
    # A fresh channel (nobody watches), then again while those streams hold it open (the part
    # older than the channel keeps read by each watcher itself), then from the middle.
    for after in (0, 0, 5):
        one_by_one = _watchers(world, seated, batch=False, after=after)
        batched = _watchers(world, seated, batch=True, after=after)
        try:
            _same_events(one_by_one, batched, head)
            for watcher in batched.values():
                assert all(1 <= len(versions) <= BATCH_EVENTS for versions in watcher.batches)
                assert len(watcher.batches) < head - after
                sent = [version for versions in watcher.batches for version in versions]
                assert sent == list(range(after + 1, head + 1))
            assert len(_my_cards(batched["first"])) == 7
            assert all(len(cards) == 13 for cards in _my_cards(batched["first"]))
            assert _my_cards(batched["spectator"])[-1] == []
        finally:
            for watcher in [*one_by_one.values(), *batched.values()]:
                watcher.cancel()


def test_a_batched_stream_ends_with_the_series(world: World) -> None:
    """At a table that closes after its series, the batch holding SeriesCompleted is the last
    message, and the stream ends on its own."""
    seated = world.seated(series_length=1, after_series=1)
    watcher = Watcher(world.api, seated.table, seated.players[0].token, batch=True)
    world.played(seated)
    watcher.wait()
    assert watcher.messages[-1].event.WhichOneof("payload") == "series_completed"
    assert watcher.error is None
    replay = Watcher(world.api, seated.table, seated.players[0].token, batch=True)
    replay.wait()
    assert _received(replay) == _received(watcher)
