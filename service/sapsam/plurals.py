"""Counted nouns in what people read: ``1 deal``, ``3 deals``, ``seats 1, 2`` — never ``deal(s)``.

Imports nothing of sapsam, so every layer may use it: the offline verifier's checks (``fairness``,
``audit``) as much as the command line (``sapsam.cli.wording`` hands it on).
"""

from __future__ import annotations

from collections.abc import Iterable


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``"1 deal"``, ``"3 deals"``, ``"0 deals"``; ``nouns`` when the plural is not ``noun + s``."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def numbered(noun: str, items: Iterable[object], nouns: str | None = None) -> str:
    """The noun then the items it names: ``"seat 2"``, ``"seats 0, 1"`` (``nouns`` as in
    :func:`plural`)."""
    listed = [str(item) for item in items]
    return f"{noun if len(listed) == 1 else (nouns or noun + 's')} {', '.join(listed)}"
