"""A Connect client made of the standard library's ``http.client``: what a browser sends
(connectrpc.com/docs/protocol), written out by hand so the tests hold the server to the
protocol, not to the server library's own client."""

from __future__ import annotations

import base64
import http.client
import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from google.protobuf.message import Message
from google.rpc import error_details_pb2  # type: ignore[import-untyped]

MessageT = TypeVar("MessageT", bound=Message)
END_STREAM = 0x02


@dataclass
class ConnectCallError(Exception):
    """A call's error: the Connect code, its message, and the ErrorInfo reason it carries."""

    http_status: int
    code: str
    message: str
    reason: str
    info: Any

    @classmethod
    def from_json(cls, http_status: int, error: dict[str, Any]) -> ConnectCallError:
        info = None
        for detail in error.get("details", []):
            if detail["type"] == "google.rpc.ErrorInfo":
                value = detail["value"]
                info = error_details_pb2.ErrorInfo.FromString(
                    base64.b64decode(value + "=" * (-len(value) % 4))
                )
        return cls(
            http_status,
            error["code"],
            error.get("message", ""),
            info.reason if info is not None else "",
            info,
        )


def _headers(content_type: str, token: str) -> dict[str, str]:
    headers = {"Content-Type": content_type, "Connect-Protocol-Version": "1"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def unary(
    port: int, path: str, request: Message, response_type: type[MessageT], token: str = ""
) -> MessageT:
    """A Connect unary call with a binary body (``application/proto``)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            "POST", path, request.SerializeToString(), _headers("application/proto", token)
        )
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            assert response.getheader("Content-Type") == "application/json", body
            raise ConnectCallError.from_json(response.status, json.loads(body))
        assert response.getheader("Content-Type") == "application/proto"
        return response_type.FromString(body)
    finally:
        connection.close()


def unary_json(port: int, path: str, request: dict[str, Any], token: str = "") -> Any:
    """A Connect unary call with a JSON body (``application/json``, connect-web's default)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            "POST", path, json.dumps(request).encode(), _headers("application/json", token)
        )
        response = connection.getresponse()
        body = json.loads(response.read())
        if response.status != 200:
            raise ConnectCallError.from_json(response.status, body)
        return body
    finally:
        connection.close()


def server_stream(
    port: int, path: str, request: Message, response_type: type[MessageT], token: str = ""
) -> Iterator[MessageT]:
    """A Connect server stream (``application/connect+proto``): each message as it arrives;
    an error in the end-of-stream message is raised as :class:`ConnectCallError`. Closing the
    iterator closes the connection (the browser leaving the page)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        payload = request.SerializeToString()
        connection.request(
            "POST",
            path,
            struct.pack(">BI", 0, len(payload)) + payload,
            _headers("application/connect+proto", token),
        )
        response = connection.getresponse()
        assert response.status == 200, response.read()
        assert response.getheader("Content-Type") == "application/connect+proto"
        while True:
            prefix = response.read(5)
            assert len(prefix) == 5, "the stream ended without its end-of-stream message"
            flags, length = struct.unpack(">BI", prefix)
            data = response.read(length)
            if flags & END_STREAM:
                end = json.loads(data)
                if "error" in end:
                    raise ConnectCallError.from_json(200, end["error"])
                return
            yield response_type.FromString(data)
    finally:
        connection.close()
