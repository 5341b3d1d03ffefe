"""The limiter's buckets, told the time by the test: no clock, no waiting."""

from __future__ import annotations

import pytest

from sapsam.api.limits import KeyedBuckets, StreamCounter, TokenBucket, peer_address


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_admits_its_burst_then_says_how_long_to_wait() -> None:
    bucket = TokenBucket(rate=2.0, burst=3, now=0.0)
    assert [bucket.take(0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take(0.0) == pytest.approx(0.5)  # one token per 0.5 s
    assert bucket.take(0.25) == pytest.approx(0.25)  # half a token is back; nothing taken
    assert bucket.take(0.5) == 0.0


def test_a_bucket_refills_to_its_burst_and_no_further() -> None:
    bucket = TokenBucket(rate=10.0, burst=2, now=0.0)
    bucket.take(0.0)
    bucket.take(0.0)
    assert [bucket.take(1000.0) for _ in range(2)] == [0.0, 0.0]
    assert bucket.take(1000.0) > 0


def test_time_going_backwards_adds_nothing() -> None:
    bucket = TokenBucket(rate=1.0, burst=1, now=10.0)
    bucket.take(10.0)
    assert bucket.take(5.0) == pytest.approx(1.0)


def test_a_sustained_rate_is_held() -> None:
    bucket = TokenBucket(rate=50.0, burst=100, now=0.0)
    admitted = sum(bucket.take(step / 1000) == 0.0 for step in range(10_000))  # 10 s, 1 kHz
    assert admitted == pytest.approx(100 + 50 * 10, abs=2)


@pytest.mark.parametrize(("rate", "burst"), [(0.0, 1), (-1.0, 1), (1.0, 0)])
def test_a_bucket_needs_a_rate_and_a_burst(rate: float, burst: int) -> None:
    with pytest.raises(ValueError):
        TokenBucket(rate, burst, 0.0)


def test_keyed_buckets_limit_each_key_alone() -> None:
    clock = FakeClock()
    buckets = KeyedBuckets(rate=1.0, burst=2, clock=clock)
    assert [buckets.take("ann") for _ in range(3)][-1] == pytest.approx(1.0)
    assert buckets.take("bob") == 0.0  # another caller is unaffected
    clock.now += 1.0
    assert buckets.take("ann") == 0.0


def test_keyed_buckets_forget_the_least_recently_used_beyond_their_size() -> None:
    clock = FakeClock()
    buckets = KeyedBuckets(rate=1.0, burst=1, clock=clock, max_keys=2)
    buckets.take("a")
    buckets.take("b")
    buckets.take("a")  # "a" is used again: "b" is now the oldest
    buckets.take("c")
    assert buckets.take("a") > 0  # still remembered, still empty
    assert buckets.take("b") == 0.0  # forgotten, so full again


def test_stream_counter_counts_per_key() -> None:
    streams = StreamCounter(limit=2)
    assert streams.open("ann") and streams.open("ann")
    assert not streams.open("ann")
    assert streams.open("bob")
    streams.close("ann")
    assert streams.count("ann") == 1
    assert streams.open("ann")


@pytest.mark.parametrize(
    ("peer", "address"),
    [
        ("ipv4:127.0.0.1:51234", "ipv4:127.0.0.1"),
        ("ipv6:[::1]:51234", "ipv6:[::]/64"),  # an IPv6 host by its /64
        ("ipv6:[2001:db8:1:2:a:b:c:d]:443", "ipv6:[2001:db8:1:2::]/64"),
        ("ipv6:[2001:db8:1:2:ffff::1]:443", "ipv6:[2001:db8:1:2::]/64"),
        ("unix:/tmp/socket", "unix:/tmp/socket"),
    ],
)
def test_the_peer_address_drops_the_port(peer: str, address: str) -> None:
    assert peer_address(peer) == address
