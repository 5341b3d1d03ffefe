"""HAProxy in front of the ``sapsam serve`` replicas: the configuration, as text.

- The frontend speaks HTTP/2 in clear (``proto h2``): gRPC clients connect with prior knowledge.
- Each replica is reached over HTTP/2 too (``proto h2``), so HAProxy balances every call (an
  HTTP/2 stream), not every connection: one client channel spreads over all replicas.
- Health: HAProxy 2.6 (Debian 12's) cannot send a gRPC health check's request body, so it asks
  each replica's ``GET /ready`` on the metrics port over HTTP/1.1 (``check-proto h1``), which
  answers what the replica's gRPC health service answers for ``sapsam.v1.TableService``
  (``sapsam.api.metrics_endpoint``): 503 from the first moment of a graceful stop, so a replica
  being stopped is drained before it refuses calls.
- Retries: a call that could not reach a replica, or got no answer at all (a replica killed with
  the call in flight), is sent again to another (``retry-on conn-failure empty-response``,
  ``option redispatch``). Every mutating call carries a ``request_id``, so a call the dead
  replica did commit is answered from ``processed_requests``, not done twice. What HAProxy cannot
  retry (an answer cut off halfway, a stream) the client retries: UNAVAILABLE is retryable.
- Browsers (``http_listen_port``): a second frontend in HTTP/1.1 passes Connect and gRPC-web
  calls to each replica's ``--http`` port (``SAPSAM_HTTP``), to the replica with the fewest
  connections, checked by the same ``/ready``; the page's origin is HAProxy's.
- No timeout ends a call or a WatchTable stream (``timeout server``/``client`` of an hour;
  the gRPC keepalive pings of client and server keep idle connections open).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

CHECK_INTERVAL_MS: Final = 500
"""How often HAProxy asks each replica's /ready (two failures mark it down)."""


@dataclass(frozen=True)
class Backend:
    """One replica: its name, gRPC port and metrics port (all on 127.0.0.1)."""

    name: str
    grpc_port: int
    metrics_port: int
    http_port: int | None = None
    """Its Connect port (``SAPSAM_HTTP``), for the browsers' frontend."""


def haproxy_config(
    listen_port: int,
    backends: list[Backend],
    stats_socket: str | None = None,
    http_listen_port: int | None = None,
) -> str:
    """The whole configuration: the gRPC frontend on 127.0.0.1:``listen_port``, the replicas;
    with ``http_listen_port``, the browsers' frontend there and each replica's ``http_port``."""
    if not backends:
        raise ValueError("HAProxy needs at least one replica behind it")
    if http_listen_port is not None and any(b.http_port is None for b in backends):
        raise ValueError("the browsers' frontend needs every replica's HTTP port")
    stats = f"    stats socket {stats_socket} mode 600 level admin\n" if stats_socket else ""
    servers = "".join(
        f"    server {backend.name} 127.0.0.1:{backend.grpc_port} proto h2"
        f" check check-proto h1 port {backend.metrics_port}\n"
        for backend in backends
    )
    http = "" if http_listen_port is None else _http_sections(http_listen_port, backends)
    return f"""# Made by cluster/haproxy.py (make cluster): HAProxy 2.6 before the replicas.
global
    maxconn 4096
{stats}
defaults
    mode http
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    timeout client-fin 5s
    timeout server-fin 5s
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response

frontend grpc
    bind 127.0.0.1:{listen_port} proto h2
    default_backend sapsam

backend sapsam
    balance roundrobin
    option httpchk GET /ready
    http-check expect status 200
    default-server inter {CHECK_INTERVAL_MS} fall 2 rise 1
{servers}{http}"""


def _http_sections(http_listen_port: int, backends: list[Backend]) -> str:
    servers = "".join(
        f"    server {backend.name} 127.0.0.1:{backend.http_port}"
        f" check port {backend.metrics_port}\n"
        for backend in backends
    )
    return f"""
frontend http
    bind 127.0.0.1:{http_listen_port}
    default_backend sapsam_http

backend sapsam_http
    balance leastconn
    option httpchk GET /ready
    http-check expect status 200
    default-server inter {CHECK_INTERVAL_MS} fall 2 rise 1
{servers}"""
