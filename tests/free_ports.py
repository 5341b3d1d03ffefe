"""Ports for servers the tests start in other processes (``sapsam serve --listen``).

A port found free by binding port 0 is one the kernel hands out again to anyone: between that
check and the child's own bind (a process start, seconds on a loaded machine) another test's
in-process server (``127.0.0.1:0``), or a client's connection, could be given it. So the ports
come from below the kernel's ephemeral range, which it never hands out by itself; each pytest-xdist
worker takes its own slice of them, in turn from a random start (no two calls of one process get
the same port, and another session's workers start elsewhere), each checked free by a bind.
"""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

LOWEST_PORT = 20_000
SLICES = 8
"""Slices of the range, one per xdist worker number modulo this."""


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


def _worker_slice() -> range:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    index = int(worker) % SLICES if worker.isdigit() else 0
    # A machine whose ephemeral range starts lower still gets slices of some size (shared with
    # the kernel's picks there, as binding port 0 would be).
    size = (max(_ephemeral_low(), LOWEST_PORT + SLICES * 500) - LOWEST_PORT) // SLICES
    start = LOWEST_PORT + index * size
    return range(start, start + size)


_PORTS = _worker_slice()
_next = random.randrange(len(_PORTS))


def free_port() -> int:
    """A loopback port nothing listens on now, and none the kernel gives out meanwhile."""
    global _next
    for _ in range(len(_PORTS)):
        port = _PORTS[_next % len(_PORTS)]
        _next += 1
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue  # taken: the next one
            return port
    raise AssertionError(f"no free port in {_PORTS}")
