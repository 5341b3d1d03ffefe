"""A client that floods a connection with HTTP/2 PINGs is sent GOAWAY (ENHANCE_YOUR_CALM, "too
many pings") after grpc's default two strikes, rather than served for as long as it likes."""

from __future__ import annotations

import socket
import struct
import time

from sapsam.api.server import RunningServer

_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_SETTINGS, _PING, _GOAWAY = 0x4, 0x6, 0x7
_ACK = 0x1
_ENHANCE_YOUR_CALM = 0xB


def _frame(kind: int, flags: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + b"\0\0\0\0" + payload


def _read_exactly(connection: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def _goaway_code(connection: socket.socket, deadline: float) -> int | None:
    """The error code of the GOAWAY the server sends before ``deadline`` (None: none)."""
    while time.monotonic() < deadline:
        connection.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            header = _read_exactly(connection, 9)
            payload = _read_exactly(connection, int.from_bytes(header[:3], "big"))
        except (TimeoutError, ConnectionError):
            return None
        if header[3] == _GOAWAY:
            return int.from_bytes(payload[4:8], "big")
        if header[3] == _SETTINGS and not header[4] & _ACK:
            connection.sendall(_frame(_SETTINGS, _ACK))
    return None


def test_a_ping_flood_is_sent_goaway(server: RunningServer) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as connection:
        # One write: the server reads all of it before it answers GOAWAY and closes.
        pings = b"".join(_frame(_PING, 0, number.to_bytes(8, "big")) for number in range(6))
        connection.sendall(_PREFACE + _frame(_SETTINGS, 0) + pings)
        assert _goaway_code(connection, time.monotonic() + 5) == _ENHANCE_YOUR_CALM
