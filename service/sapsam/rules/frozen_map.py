"""An immutable, hashable mapping: how a rule set holds a table of amounts and stays a value."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar, overload

_Value = TypeVar("_Value")
_Default = TypeVar("_Default")


class FrozenMap(Mapping[str, _Value], Generic[_Value]):
    """A read-only mapping of string keys, equal to any mapping with the same items and hashable
    (so a frozen dataclass holding one stays hashable). Iterates in sorted key order, so what is
    built from it (canonical JSON, messages) does not depend on the order it was given in."""

    __slots__ = ("_items", "_lookup")

    def __init__(self, items: Mapping[str, _Value] | None = None) -> None:
        source = dict(items or {})
        self._items = tuple(sorted(source.items()))
        self._lookup = dict(self._items)

    def __getitem__(self, key: str) -> _Value:
        return self._lookup[key]

    @overload
    def get(self, key: str, /) -> _Value | None: ...

    @overload
    def get(self, key: str, /, default: _Value | _Default) -> _Value | _Default: ...

    def get(self, key: str, /, default: object = None) -> object:
        # The dict's own get: Mapping's raises and catches a KeyError for every key not held,
        # which a rule set's per-pair stakes look-up did for every pair of every deal scored.
        return self._lookup.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._lookup)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __repr__(self) -> str:
        return f"FrozenMap({self._lookup!r})"
