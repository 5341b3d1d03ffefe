"""Quoting what a caller sent in an error message: a short prefix, never the whole input.

An error message that echoes its input whole lets one bad request of a megabyte make a status too
large for gRPC's metadata (16 KB by default: the client then gets RESOURCE_EXHAUSTED and loses
the reason), fills logs, and reflects the caller's bytes back. Every message that quotes input
quotes it through :func:`quote_prefix`. Imports nothing of sapsam, so every layer may use it.
"""

from __future__ import annotations

import reprlib
from typing import Final

QUOTED_PREFIX_CHARS: Final = 40
"""At most this many characters of an input are quoted in a message."""

# A few items of each container, a few levels deep (so a deeply nested value is no recursion).
_SHORTENER: Final = reprlib.Repr()
_SHORTENER.maxlevel = 3
_SHORTENER.maxstring = QUOTED_PREFIX_CHARS
_SHORTENER.maxother = QUOTED_PREFIX_CHARS
_SHORTENER.maxlong = QUOTED_PREFIX_CHARS


def quote_prefix(value: object, limit: int = QUOTED_PREFIX_CHARS) -> str:
    """``repr`` of ``value`` if it is short, else of its first ``limit`` characters plus
    ``...`` and its length, as ``'abc'... (1048576 characters)``.

    Anything else is quoted by ``reprlib`` (a few items of each container, a few levels deep),
    cut to ``limit`` characters the same way; a huge integer by its size.
    """
    if isinstance(value, str | bytes):
        if len(value) <= limit:
            return repr(value)
        unit = "characters" if isinstance(value, str) else "bytes"
        return f"{value[:limit]!r}... ({len(value)} {unit})"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        # repr of a huge int is slow (and refused past 4300 digits): name its size instead.
        return f"an integer of {value.bit_length()} bits"
    text = _SHORTENER.repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"
