"""The SDK channel's keepalive: grpc channel options that ``connect`` sets.

While a call is open (a ``watch`` stream above all, which may carry nothing for minutes between
two moves), the client pings the server after 30 s without traffic and gives the connection up if
the ping is not answered within 10 s; the stream then breaks as ``UNAVAILABLE`` and ``watch``
resumes it from the last version received. So a connection that a NAT or proxy dropped without a
word is noticed in about 40 s instead of never, and the pings keep such middleboxes from
dropping it at all. With no call open the client does not ping (an idle channel reconnects on its
next call, which is retried as usual), so thousands of idle clients cost the server nothing.

The server allows this: it accepts a client's pings as often as every 10 s, with or without calls
(``sapsam.api.server.KEEPALIVE_OPTIONS``, docs/api.md "Keepalive"); a client pinging more often
than the server allows would be sent GOAWAY ("too_many_pings"). Pass these options to your own
channel (``grpc.secure_channel(target, credentials, options=KEEPALIVE_OPTIONS)``) to get the same.
"""

from __future__ import annotations

from typing import Final

KEEPALIVE_OPTIONS: Final[tuple[tuple[str, int], ...]] = (
    ("grpc.keepalive_time_ms", 30_000),  # ping after 30 s without traffic, while a call is open
    ("grpc.keepalive_timeout_ms", 10_000),  # and give the connection up if no answer in 10 s
    ("grpc.keepalive_permit_without_calls", 0),  # no pings on an idle channel
    # grpc stops pinging after 2 pings with no data frame in between by default: a quiet watch
    # stream would lose its keepalive after a minute. 0: no such limit.
    ("grpc.http2.max_pings_without_data", 0),
)
"""The channel options of the SDK's keepalive (see the module docstring)."""
