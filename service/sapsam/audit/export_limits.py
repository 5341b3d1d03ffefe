"""The limits an audit export is held to before it is parsed (docs/audit.md, "Limits").

Pure, and imports nothing but the standard library. No input may exhaust the parsers: a JSON
parser recurses once per nesting level (a line of 100,000 brackets raised ``RecursionError``), and
Python refuses to convert an integer of more than 4,300 digits (``ValueError``). So each line is
checked before it is parsed (``sapsam.audit.export_reading.read_export`` does), and beyond a limit
the export is refused as a whole with ``ExportLimitError`` (not a finding about the export: there
is nothing to verify), which the CLI reports as one line with exit status 2 and the API as
INVALID_ARGUMENT (``EXPORT_LIMIT_EXCEEDED``) on field ``export``:

- the export: at most :data:`MAX_EXPORT_CHARS` characters;
- a line: at most :data:`MAX_LINE_CHARS` characters (:func:`bounded_lines` stops reading a longer
  line from a file at that point);
- nesting: at most :data:`MAX_NESTING_DEPTH` arrays and objects inside each other, the line's own
  object counting as one (the log's events nest at most 5 deep);
- numbers: at most :data:`MAX_NUMBER_DIGITS` digits in a row (every integer the log holds is a
  64-bit one; longer digit runs inside strings, hashes say, are fine).

Checking costs little: a line with at most :data:`MAX_NESTING_DEPTH` opening brackets and no run of
more than :data:`MAX_NUMBER_DIGITS` digits, which is almost every line, passes on two counts and
one search; only others are scanned outside their strings (:func:`check_line`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import IO, Final

MAX_EXPORT_CHARS: Final = 256 * 1024 * 1024
"""An export holds at most this many characters (256 MiB: some 16,000 deals of four seats)."""

MAX_LINE_CHARS: Final = 1024 * 1024
"""A line holds at most this many characters (1 MiB; the log's longest lines are about 1 KB)."""

MAX_NESTING_DEPTH: Final = 32
"""Arrays and objects nest at most this deep in a line, the line's own object counting as one."""

MAX_NUMBER_DIGITS: Final = 19
"""A number has at most this many digits in a row (a 64-bit integer has at most 19)."""


class ExportLimitError(ValueError):
    """The input is beyond a documented limit of exports: refused unread, not verified.

    Not an ``ExportFormatError``: the verifier reports a malformed export as a failed check, but
    an input beyond the limits is refused as a whole, before anything deep is parsed.
    """


# A run of too many digits anywhere in a line sends it to the careful check. In the line's UTF-8
# bytes each ASCII digit becomes "0", each opening bracket ("[" or "{") becomes "[" and every
# other byte " ": such a run is then a run of "0"s that ``in`` finds (ten times faster than a
# regex, which retries at each digit of a hash; a byte table, five times faster than
# ``str.translate``'s per-character lookups), and the opening brackets are counted in the same
# bytes (one count rather than one per bracket). A non-ASCII character's bytes are all >= 0x80,
# so they never count as digits or brackets.
_DIGITS_AS_ZEROS: Final = bytes(
    0x30 if 0x30 <= byte <= 0x39 else 0x5B if byte in b"[{" else 0x20 for byte in range(256)
)
_LONG_DIGIT_RUN: Final = b"0" * (MAX_NUMBER_DIGITS + 1)


def _has_long_digit_run(text: str) -> bool:
    # surrogatepass: a lone surrogate (an undecodable file read with surrogateescape) is no digit.
    return _LONG_DIGIT_RUN in text.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_ZEROS)


_NOT_A_BRACKET: Final = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}


def check_line(line: str, number: int) -> None:
    """Raise ``ExportLimitError`` if line ``number`` is too long, nests too deep or holds too
    long a number.

    Exact for every line that is JSON as far as it goes, which is as far as any parser gets: with
    escaped backslashes and quotes taken out, the text between quotes is inside strings, and what
    remains is counted. (A parser stops at the first character that is not JSON, before nesting
    any deeper.) Linear in the line's length, in C loops but for one step per bracket.
    """
    if len(line) > MAX_LINE_CHARS and len(line.rstrip("\r\n")) > MAX_LINE_CHARS:
        raise ExportLimitError(
            f"line {number}: longer than {MAX_LINE_CHARS} characters ({len(line)})"
        )
    shapes = line.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_ZEROS)
    opening = shapes.count(b"[")  # "[" and "{" alike
    long_digits = _LONG_DIGIT_RUN in shapes
    if opening <= MAX_NESTING_DEPTH and not long_digits:
        return
    unescaped = line.replace("\\\\", "").replace('\\"', "")
    outside_strings = "".join(unescaped.split('"')[0::2])
    if long_digits and _has_long_digit_run(outside_strings):
        raise ExportLimitError(f"line {number}: a number longer than {MAX_NUMBER_DIGITS} digits")
    if opening > MAX_NESTING_DEPTH:
        brackets = _NOT_A_BRACKET.sub("", outside_strings)
        deepest = max(itertools.accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)
        if deepest > MAX_NESTING_DEPTH:
            raise ExportLimitError(
                f"line {number}: arrays and objects nested deeper than {MAX_NESTING_DEPTH}"
            )


def check_export_size(characters: int) -> None:
    """Raise ``ExportLimitError`` if an export of ``characters`` characters is too large."""
    if characters > MAX_EXPORT_CHARS:
        raise ExportLimitError(
            f"the export is larger than {MAX_EXPORT_CHARS} characters ({characters})"
        )


def bounded_lines(handle: IO[str]) -> Iterator[str]:
    """The lines of a text file, each read no further than one character past the line limit
    (so a file of one endless line is refused after :data:`MAX_LINE_CHARS`, not read whole)."""
    number = 0
    while True:
        line = handle.readline(MAX_LINE_CHARS + 2)  # the line, its newline and one more
        if not line:
            return
        number += 1
        if len(line.rstrip("\r\n")) > MAX_LINE_CHARS:
            raise ExportLimitError(f"line {number}: longer than {MAX_LINE_CHARS} characters")
        yield line
