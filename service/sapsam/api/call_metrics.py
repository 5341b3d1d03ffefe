"""Counts and latencies of the calls this process served, and its open streams: the per-call
part of the metrics (``sapsam.api.metrics_endpoint`` turns them into Prometheus families when
scraped).

The call log records every call here (``sapsam.api.call_log``), so this is on the hot path and
kept to plain Python on the process's one event loop: a dict look-up by (method, status), a
bisection into the bucket bounds, two additions; no lock, no prometheus_client object per call
(``bench/call_metrics.py`` measures it; docs/operations.md quotes the figure). The buckets are
kept per bucket, not cumulative; the endpoint sums them when it is scraped, on its own thread
(a scrape that runs while a call is recorded may see that call in its count and not yet in its
sum: Prometheus tolerates that).

Label values are bounded: a method path comes from the client (an unknown one is still logged
and answered UNIMPLEMENTED), so past ``MAX_SERIES`` (method, status) pairs new ones are counted
under the method ``"other"``.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Final

BUCKET_BOUNDS: Final = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
"""Upper bounds of the latency buckets, in seconds (the last bucket, +Inf, is implied)."""
MAX_SERIES: Final = 512
OTHER_METHOD: Final = "other"
_SUM: Final = len(BUCKET_BOUNDS) + 1
"""Index of the sum of seconds in a series' list, after its buckets (the last one +Inf)."""


class CallMetrics:
    """Per (method, status): a count per latency bucket and the sum of seconds."""

    __slots__ = ("series",)

    def __init__(self) -> None:
        self.series: dict[tuple[str, str], list[float]] = {}

    def record(self, method: str, status: str, seconds: float) -> None:
        """One call that ended with ``status`` after ``seconds``."""
        series = self.series.get((method, status))
        if series is None:
            series = self._new_series(method, status)
        series[bisect_left(BUCKET_BOUNDS, seconds)] += 1
        series[_SUM] += seconds

    def _new_series(self, method: str, status: str) -> list[float]:
        if len(self.series) >= MAX_SERIES:
            method = OTHER_METHOD
        return self.series.setdefault((method, status), [0] * (_SUM + 1))

    def snapshot(self) -> list[tuple[str, str, list[float], float]]:
        """Per series: method, status, the cumulative bucket counts (+Inf last), the sum."""
        found = []
        for (method, status), series in list(self.series.items()):
            values = list(series)
            cumulative: list[float] = []
            running = 0.0
            for count in values[:_SUM]:
                running += count
                cumulative.append(running)
            found.append((method, status, cumulative, values[_SUM]))
        return found


class OpenStreams:
    """Server streams open now (WatchTable, WatchTournament), per method."""

    __slots__ = ("by_method",)

    def __init__(self) -> None:
        self.by_method: dict[str, int] = {}

    def opened(self, method: str) -> None:
        """A stream began."""
        if method in self.by_method or len(self.by_method) < MAX_SERIES:
            self.by_method[method] = self.by_method.get(method, 0) + 1
        else:
            self.by_method[OTHER_METHOD] = self.by_method.get(OTHER_METHOD, 0) + 1

    def closed(self, method: str) -> None:
        """A stream that ``opened`` counted ended."""
        key = method if method in self.by_method else OTHER_METHOD
        self.by_method[key] = self.by_method.get(key, 0) - 1


CALLS = CallMetrics()
"""This process's calls (one server per process serves them all)."""
STREAMS = OpenStreams()
"""This process's open streams."""
