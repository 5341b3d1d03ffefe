"""The hash chain that makes each stream of the log tamper-evident.

Definition (also in docs/store.md, so a verifier can be written in any language)::

    hash(1) = SHA-256(GENESIS_HASH || canonical_event_bytes(event 1))
    hash(n) = SHA-256(hash(n - 1) || canonical_event_bytes(event n))

where ``GENESIS_HASH`` is 32 zero bytes and ``canonical_event_bytes`` is the UTF-8 encoding of the
canonical JSON of the object
``{"data", "metadata", "schema_version", "stream", "type", "version"}``: keys sorted, no
whitespace (separators ``,`` and ``:``), non-ASCII characters written as themselves, integers
only (a float is refused). The global position is not hashed: it is assigned by the
database, and the chain is per stream so a stream can be exported and verified on its own.

Pure: no database imports, so the audit and the offline verifier reuse it as is.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sapsam.store.records import JsonObject, JsonValue, RecordedEvent

GENESIS_HASH = bytes(32)


class CanonicalJsonError(ValueError):
    """A value that has no canonical JSON form here (a float, a non-string key, NaN …)."""


def _check_canonical(value: object, where: str) -> None:
    """Refuse what would not survive a jsonb round trip byte for byte."""
    if value is None or isinstance(value, bool | int | str):
        if isinstance(value, str) and "\x00" in value:
            raise CanonicalJsonError(f"{where}: NUL characters cannot be stored in jsonb")
        return
    if isinstance(value, float):
        raise CanonicalJsonError(f"{where}: floats are not allowed in events (got {value!r})")
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalJsonError(f"{where}: object keys must be strings (got {key!r})")
            _check_canonical(item, f"{where}.{key}")
        return
    if isinstance(value, Sequence):
        for index, item in enumerate(value):
            _check_canonical(item, f"{where}[{index}]")
        return
    raise CanonicalJsonError(f"{where}: {type(value).__name__} is not JSON")


def canonical_json(value: JsonValue) -> bytes:
    """The canonical JSON bytes of a value: sorted keys, no spaces, UTF-8, no floats."""
    _check_canonical(value, "$")
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def canonical_event_bytes(
    stream_id: str,
    version: int,
    event_type: str,
    schema_version: int,
    data: JsonObject,
    metadata: JsonObject,
) -> bytes:
    """The bytes of one event that the chain hashes (see the module docstring)."""
    return canonical_json(
        {
            "data": data,
            "metadata": metadata,
            "schema_version": schema_version,
            "stream": stream_id,
            "type": event_type,
            "version": version,
        }
    )


def chain_hash(previous_hash: bytes, event_bytes: bytes) -> bytes:
    """The hash of an event given the previous event's hash and its canonical bytes."""
    return hashlib.sha256(previous_hash + event_bytes).digest()


def event_hash(previous_hash: bytes, event: RecordedEvent) -> bytes:
    """Recompute the hash a recorded event should carry."""
    return chain_hash(
        previous_hash,
        canonical_event_bytes(
            event.stream_id,
            event.version,
            event.type,
            event.schema_version,
            event.data,
            event.metadata,
        ),
    )


@dataclass(frozen=True)
class ChainProblem:
    """One place where a stream's chain does not hold."""

    version: int
    position: int
    reason: str


@dataclass(frozen=True)
class ChainReport:
    """The outcome of checking one stream's chain.

    ``intact`` is True when every event's hash matches and the versions run on without a gap.
    ``problems`` lists each break in order; the first one is where tampering (or loss) begins.
    """

    stream_id: str
    events_checked: int
    last_hash: bytes
    problems: tuple[ChainProblem, ...]

    @property
    def intact(self) -> bool:
        """True when the chain holds over every event checked."""
        return not self.problems

    @property
    def first_broken_version(self) -> int | None:
        """The version of the first event that fails the check, if any."""
        return self.problems[0].version if self.problems else None


def verify_stream_chain(
    events: Sequence[RecordedEvent],
    previous_hash: bytes = GENESIS_HASH,
    previous_version: int = 0,
) -> ChainReport:
    """Check that ``events`` (one stream, in version order) form an unbroken hash chain.

    By default the events must start at version 1; pass the hash and version of the event before
    the first one to check a tail of a stream. Each stored hash is compared with the hash recomputed
    from the event's content and the previous *stored* hash, so an edited event is reported at its
    own version, and a re-hashed edit (hash updated to match) breaks the link to the next event.
    """
    problems: list[ChainProblem] = []
    stream_id = events[0].stream_id if events else ""
    expected_previous = previous_hash
    expected_version = previous_version + 1
    for event in events:
        if event.stream_id != stream_id:
            problems.append(
                ChainProblem(
                    event.version, event.position, f"belongs to stream {event.stream_id!r}"
                )
            )
        if event.version != expected_version:
            problems.append(
                ChainProblem(
                    event.version,
                    event.position,
                    f"version {event.version} where {expected_version} was expected",
                )
            )
        try:
            recomputed = event_hash(expected_previous, event)
        except CanonicalJsonError as error:
            problems.append(ChainProblem(event.version, event.position, f"not canonical: {error}"))
        else:
            if recomputed != event.hash:
                problems.append(
                    ChainProblem(
                        event.version,
                        event.position,
                        "hash does not match the event's content and the previous hash",
                    )
                )
        expected_previous = event.hash
        expected_version = event.version + 1
    return ChainReport(
        stream_id=stream_id,
        events_checked=len(events),
        last_hash=expected_previous,
        problems=tuple(problems),
    )
