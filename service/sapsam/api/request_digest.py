"""The digest of a mutating request as the client sent it: what makes a retry "the same request".

A request id is an idempotency key (as Stripe's are): the same id with the same request is
answered with the first answer, byte for byte; the same id with a different request is refused
(``REQUEST_ID_REUSED``) rather than answered with the result of another request, which would hide
the caller's bug (a client that rebuilds its reveal with a new nonce on retry learns nothing until
the reveal fails). The store keeps the digest with the request id (``processed_requests`` and
``players``, migration 0003) and compares it on every retry.

The digest is SHA-256 over the request message's full type name (each RPC has its own request
type, so it names the method), a newline, and the message's deterministic serialization with
``request_id`` cleared. Fields the client left unset and fields set to their default serialize
alike, as proto3 means them alike.
"""

from __future__ import annotations

import hashlib
from typing import Final

from google.protobuf.message import Message

DIGEST_SIZE: Final = 32
REQUEST_ID_FIELD: Final = "request_id"


def request_digest(request: Message) -> bytes:
    """SHA-256 of the request's type name and its deterministic bytes without its request id."""
    unkeyed = request
    if REQUEST_ID_FIELD in request.DESCRIPTOR.fields_by_name:
        unkeyed = type(request)()
        unkeyed.CopyFrom(request)
        unkeyed.ClearField(REQUEST_ID_FIELD)
    name = request.DESCRIPTOR.full_name.encode("ascii")
    serialized = unkeyed.SerializeToString(deterministic=True)
    return hashlib.sha256(name + b"\n" + serialized).digest()
