"""Signed receipts: the server's signed statement of what one acknowledged call appended.

A receipt is a signed note (``sapsam.log.signed_note``, C2SP signed-note) whose text is, byte for
byte (docs/transparency.md §9)::

    sapsam receipt v1\\n
    log <origin>\\n                          the log (the server key's name, sapsam/<server>)
    stream <stream id>\\n
    versions <first> <last>\\n               the stream versions the call appended
    request <request id>\\n                  as the events' metadata records it
    time <recorded_at>\\n                    the events' metadata ``recorded_at``, verbatim
    event <version> <position> <type> <hash>\\n   one per event, versions first..last in order

``<position>`` is the event's global position in the log (where the transparency log's leaf
comes from: ``GetInclusionProof`` by position proves it is in a checkpointed tree), ``<hash>``
its 32-byte chained hash in lowercase hex (docs/store.md), integers are ASCII decimal without
leading zeros. The note is signed by the server's Ed25519 key whose name is ``<origin>``.

Everything in it comes from the recorded events, so a retried request id, answered from the
log, gets the same text and (Ed25519 being deterministic) the same signature: the same bytes.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sapsam.frozen import from_fields
from sapsam.log.records import RecordedEvent
from sapsam.log.signed_note import (
    ED25519,
    NoteError,
    NoteSigner,
    OpenedNote,
    VerifierKey,
    check_key_name,
    open_note,
)

HEADER: Final = "sapsam receipt v1"
HASH_SIZE: Final = 32
MAX_INTEGER: Final = 2**63 - 1
MAX_EVENTS: Final = 256
"""More events than this in one receipt make it malformed (a call appends a handful)."""

_DECIMAL: Final = re.compile(r"0|[1-9][0-9]{0,18}")
_WORD: Final = re.compile(r"[^\s\x00-\x1f\x7f]+")
_TYPE: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.]{0,99}")
_HEX_HASH: Final = re.compile(r"[0-9a-f]{64}")
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


class ReceiptError(NoteError):
    """Note text that is not a receipt, or a receipt that does not hold together."""


# Every signed write checks its receipt's words: for ASCII text, str methods decide exactly what
# the patterns decide, without a call into the regex engine.


def _is_word(text: str) -> bool:
    """Whether ``text`` is one word: non-empty, no space, no control character (``_WORD``). In
    ASCII that is 0x21-0x7e only: printable (0x20-0x7e) and no space."""
    if text.isascii():
        return text != "" and text.isprintable() and " " not in text
    return _WORD.fullmatch(text) is not None


def _has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (``_CONTROL``): in ASCII, a character that is
    not printable."""
    if text.isascii():
        return not text.isprintable()
    return _CONTROL.search(text) is not None


KNOWN_TYPES_KEPT: Final = 1024
"""Event type names remembered as well formed (the game's are a few dozen; a receipt read from
elsewhere may name any, so the memory is bounded)."""
_known_types: set[str] = set()


def _is_type_name(name: str) -> bool:
    """Whether ``name`` is an event type name (``_TYPE``); a name seen before is not matched
    again."""
    if name in _known_types:
        return True
    if _TYPE.fullmatch(name) is None:
        return False
    if len(_known_types) < KNOWN_TYPES_KEPT:
        _known_types.add(name)
    return True


@dataclass(frozen=True)
class ReceiptEvent:
    """One appended event as a receipt names it."""

    version: int
    position: int
    type: str
    hash: bytes


@dataclass(frozen=True)
class Receipt:
    """What one call appended: the log, the stream, its events, the request and the time."""

    log: str
    stream: str
    request_id: str
    time: str
    events: tuple[ReceiptEvent, ...]

    def __post_init__(self) -> None:
        try:
            check_key_name(self.log)
        except NoteError as error:
            raise ReceiptError(f"receipt log: {error}") from None
        if not _is_word(self.stream):
            raise ReceiptError(
                "a receipt's stream is one word, without spaces or control characters"
            )
        if not self.request_id or _has_control(self.request_id):
            raise ReceiptError("a receipt's request id is non-empty, without control characters")
        if not _is_word(self.time):
            raise ReceiptError("a receipt's time is one word, without spaces or control characters")
        if not 1 <= len(self.events) <= MAX_EVENTS:
            raise ReceiptError(f"a receipt names 1 to {MAX_EVENTS} events")
        first = self.events[0].version
        previous_position = 0
        for offset, event in enumerate(self.events):
            if event.version != first + offset or not 1 <= event.version <= MAX_INTEGER:
                raise ReceiptError("a receipt's events have consecutive versions from 1 up")
            if not previous_position < event.position <= MAX_INTEGER:
                raise ReceiptError("a receipt's events have increasing positions from 1 up")
            previous_position = event.position
            if not _is_type_name(event.type):
                raise ReceiptError(f"event type {event.type[:40]!r} is not a type name")
            if len(event.hash) != HASH_SIZE:
                raise ReceiptError(f"an event's chained hash has {HASH_SIZE} bytes")

    @property
    def first_version(self) -> int:
        """The first stream version the call appended."""
        return self.events[0].version

    @property
    def last_version(self) -> int:
        """The last stream version the call appended (the stream's version after it)."""
        return self.events[-1].version

    def text(self) -> str:
        """The note text, byte for byte as the module docstring specifies."""
        events = self.events
        # One string per line, joined once (every game write signs one).
        return (
            f"{HEADER}\nlog {self.log}\nstream {self.stream}\n"
            f"versions {self.first_version} {self.last_version}\n"
            f"request {self.request_id}\ntime {self.time}\n"
        ) + "".join([f"event {e.version} {e.position} {e.type} {e.hash.hex()}\n" for e in events])

    @classmethod
    def parse(cls, text: str) -> Receipt:
        """A receipt from note text (ending in a newline); anything else is refused."""
        if not text.endswith("\n"):
            raise ReceiptError("receipt text ends with a newline")
        lines = text[:-1].split("\n")
        if len(lines) < 7 or lines[0] != HEADER:
            raise ReceiptError(f"not a receipt: the first line is {HEADER!r}, then 6 or more")
        log = _field(lines[1], "log")
        stream = _field(lines[2], "stream")
        versions = _field(lines[3], "versions").split(" ")
        request_id = _field(lines[4], "request")
        time = _field(lines[5], "time")
        if len(versions) != 2:
            raise ReceiptError("the versions line is 'versions <first> <last>'")
        first, last = (_integer(value, "version") for value in versions)
        events = tuple(_event(line) for line in lines[6:])
        receipt = cls(log, stream, request_id, time, events)
        if (receipt.first_version, receipt.last_version) != (first, last):
            raise ReceiptError("the versions line does not match the events")
        return receipt


def _field(line: str, name: str) -> str:
    prefix = name + " "
    if not line.startswith(prefix) or len(line) == len(prefix):
        raise ReceiptError(f"expected a '{name} …' line, found {line[:40]!r}")
    return line[len(prefix) :]


def _integer(text: str, what: str) -> int:
    if not _DECIMAL.fullmatch(text) or int(text) > MAX_INTEGER:
        raise ReceiptError(f"{what} {text[:30]!r} is not a decimal number in 0..2^63-1")
    return int(text)


def _event(line: str) -> ReceiptEvent:
    parts = _field(line, "event").split(" ")
    if len(parts) != 4 or not _HEX_HASH.fullmatch(parts[3]):
        raise ReceiptError(
            f"an event line is 'event <version> <position> <type> <hex hash>': {line[:60]!r}"
        )
    return ReceiptEvent(
        _integer(parts[0], "version"),
        _integer(parts[1], "position"),
        parts[2],
        bytes.fromhex(parts[3]),
    )


def receipt_of(log: str, events: Sequence[RecordedEvent]) -> Receipt:
    """The receipt of one append's recorded events (one stream, consecutive versions): request id
    and time from the first event's metadata, as the store recorded them for the whole append."""
    if not events:
        raise ReceiptError("a receipt names at least one event")
    metadata = events[0].metadata
    request_id = metadata.get("request_id")
    recorded_at = metadata.get("recorded_at")
    if not isinstance(request_id, str) or not isinstance(recorded_at, str):
        raise ReceiptError("the events' metadata lacks request_id or recorded_at")
    stream = events[0].stream_id
    # A game write appends one event: no second stream to look for.
    if len(events) > 1 and any(event.stream_id != stream for event in events):
        raise ReceiptError("a receipt covers one stream")
    # Receipt(...) and ReceiptEvent(...) without their frozen __init__'s object.__setattr__ per
    # field (every signed write); Receipt's __post_init__ still checks every field.
    receipt = from_fields(
        Receipt,
        {
            "log": log,
            "stream": stream,
            "request_id": request_id,
            "time": recorded_at,
            "events": tuple(
                [
                    from_fields(
                        ReceiptEvent,
                        {
                            "version": e.version,
                            "position": e.position,
                            "type": e.type,
                            "hash": e.hash,
                        },
                    )
                    for e in events
                ]
            ),
        },
    )
    receipt.__post_init__()
    return receipt


def sign_receipt(receipt: Receipt, signer: NoteSigner) -> str:
    """The signed note of ``receipt``; the key must be the log's own (named as its origin)."""
    if signer.name != receipt.log or signer.signature_type != ED25519:
        raise ReceiptError(f"the key {signer.name!r} does not sign for the log {receipt.log!r}")
    text = receipt.text()
    # sign_note(text, [signer]) without checking the text a second time (on every game call).
    return text + "\n" + signer.sign(text).line()


@dataclass(frozen=True)
class OpenedReceipt:
    """A receipt and the signatures that vouch for it; ``key`` is the log's key that signed."""

    receipt: Receipt
    note: OpenedNote
    key: VerifierKey


def open_receipt(
    message: str | bytes, known_keys: Sequence[VerifierKey], log: str | None = None
) -> OpenedReceipt:
    """Verify a signed receipt: a known Ed25519 key named as the receipt's log signed it (and,
    given ``log``, that is the log the reader asked about). Raises ``NoteError`` (a malformed
    note), ``NoteVerificationError`` (no known key vouches for it, or a signature fails) or
    ``ReceiptError`` (not a receipt, another log, or signed only by some other key)."""
    note = open_note(message, known_keys)
    receipt = Receipt.parse(note.text)
    if log is not None and receipt.log != log:
        raise ReceiptError(f"a receipt of the log {receipt.log!r}, not of {log!r}")
    for entry in note.verified:
        if (
            entry.key.name == receipt.log
            and entry.key.signature_type == ED25519
            and entry.timestamp is None
        ):
            return OpenedReceipt(receipt, note, entry.key)
    raise ReceiptError(f"no known key of the log {receipt.log!r} signed this receipt")
