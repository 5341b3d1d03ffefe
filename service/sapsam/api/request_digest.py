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

import functools
import hashlib
from typing import Final

from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message

DIGEST_SIZE: Final = 32
REQUEST_ID_FIELD: Final = "request_id"


def request_digest(request: Message) -> bytes:
    """SHA-256 of the request's type name and its deterministic bytes without its request id.

    The request id is cleared for the serialization and put back, rather than the request copied
    (every write digests its request): ``request_id`` is a plain proto3 string, so an empty one
    and a cleared one are the same, and nothing else runs on the request in between."""
    prefix = _prefix(request.DESCRIPTOR)
    request_id = getattr(request, REQUEST_ID_FIELD) if prefix[1] else ""
    if request_id:
        request.ClearField(REQUEST_ID_FIELD)
        try:
            serialized = request.SerializeToString(deterministic=True)
        finally:
            setattr(request, REQUEST_ID_FIELD, request_id)
    else:
        serialized = request.SerializeToString(deterministic=True)
    return hashlib.sha256(prefix[0] + serialized).digest()


@functools.cache
def _prefix(descriptor: Descriptor) -> tuple[bytes, bool]:
    """A request type's name and newline, and whether it has a request id (once per type)."""
    field = descriptor.fields_by_name.get(REQUEST_ID_FIELD)
    if field is not None and field.has_presence:  # pragma: no cover - no such request today
        raise TypeError(f"{descriptor.full_name}.{REQUEST_ID_FIELD} must be a plain string")
    return descriptor.full_name.encode("ascii") + b"\n", field is not None
