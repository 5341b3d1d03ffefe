"""The SDK's pauses between attempts: capped exponential back-off with full jitter, and a
server's RetryInfo delay waited for, spread by up to 20 %; the channel's keepalive is one the
server allows."""

from __future__ import annotations

import random
import statistics

import pytest

from sapsam_client.backoff import (
    MAX_BACKOFF_SECONDS,
    RETRY_INFO_SPREAD,
    retry_pause,
)
from sapsam_client.keepalive import KEEPALIVE_OPTIONS


def test_the_ceiling_doubles_per_attempt_up_to_the_cap() -> None:
    almost_one = 1.0 - 1e-12
    ceilings = [retry_pause(attempt, uniform=lambda: almost_one) for attempt in range(8)]
    assert ceilings == pytest.approx([0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0])
    assert retry_pause(10_000, uniform=lambda: almost_one) == pytest.approx(MAX_BACKOFF_SECONDS)
    assert retry_pause(3, uniform=lambda: 0.0) == 0.0  # full jitter: from nothing


def test_pauses_are_spread_over_the_whole_range() -> None:
    draw = random.Random(14).random
    pauses = [retry_pause(3, backoff=0.2, uniform=draw) for _ in range(2_000)]
    assert all(0.0 <= pause < 1.6 for pause in pauses)
    # Uniform over [0, 1.6): no two clients in step, the mean near the middle.
    assert min(pauses) < 0.05 and max(pauses) > 1.55
    assert statistics.mean(pauses) == pytest.approx(0.8, abs=0.05)
    assert len(set(pauses)) == len(pauses)


def test_a_retry_info_delay_is_waited_for_and_spread() -> None:
    draw = random.Random(7).random
    pauses = [retry_pause(0, 2.0, uniform=draw) for _ in range(1_000)]
    assert all(2.0 <= pause <= 2.0 * (1 + RETRY_INFO_SPREAD) for pause in pauses)
    assert max(pauses) - min(pauses) > 0.35  # callers told the same delay come back apart
    assert retry_pause(5, 0.5, uniform=lambda: 0.0) == 0.5  # the attempt does not matter


def test_the_keepalive_pings_only_while_a_call_is_open_and_no_faster_than_30_s() -> None:
    options = dict(KEEPALIVE_OPTIONS)
    assert options["grpc.keepalive_time_ms"] == 30_000
    assert options["grpc.keepalive_timeout_ms"] < options["grpc.keepalive_time_ms"]
    assert options["grpc.keepalive_permit_without_calls"] == 0
    assert options["grpc.http2.max_pings_without_data"] == 0  # a quiet stream keeps pinging


def test_the_server_allows_the_sdk_keepalive() -> None:
    # Skipped only where the server package is absent (the SDK alone): a server that stopped
    # setting its keepalive must fail here, not skip.
    server = pytest.importorskip("sapsam.api.server")
    server_options = dict(server.KEEPALIVE_OPTIONS)
    # A client pinging more often than the server allows is sent GOAWAY (too_many_pings).
    client = dict(KEEPALIVE_OPTIONS)
    allowed = server_options["grpc.http2.min_ping_interval_without_data_ms"]
    assert client["grpc.keepalive_time_ms"] >= allowed


def test_a_server_out_of_reach_is_tried_for_a_time_not_a_number_of_attempts() -> None:
    from sapsam_client.backoff import keep_trying

    # Within the attempts, anything retryable is tried again.
    assert keep_trying(False, 0, 5, failing_since=0.0, now=999.0, reconnect_seconds=60)
    # Past them, only a server out of reach, and only within the reconnect window.
    assert not keep_trying(False, 4, 5, failing_since=0.0, now=1.0, reconnect_seconds=60)
    assert keep_trying(True, 400, 5, failing_since=0.0, now=59.9, reconnect_seconds=60)
    assert not keep_trying(True, 400, 5, failing_since=0.0, now=60.0, reconnect_seconds=60)


def test_the_channel_reconnects_within_the_longest_pause() -> None:
    from sapsam_client.backoff import RECONNECT_OPTIONS

    options = dict(RECONNECT_OPTIONS)
    assert options["grpc.max_reconnect_backoff_ms"] == MAX_BACKOFF_SECONDS * 1000
    assert options["grpc.initial_reconnect_backoff_ms"] <= options["grpc.max_reconnect_backoff_ms"]
