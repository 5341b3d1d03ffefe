"""Hypothesis strategies for JSON-like values, shared by the tests that hold a fast JSON path
(msgspec's parser, orjson's encoder) to Python's json, the reference."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st


def texts(odd_characters: Sequence[str], max_size: int) -> st.SearchStrategy[str]:
    """Strings of any code points, surrogates included, with ``odd_characters`` drawn often."""
    characters = st.one_of(
        st.sampled_from(list(odd_characters)), st.characters(exclude_categories=())
    )
    return st.lists(characters, max_size=max_size).map("".join)


def json_values(
    scalars: st.SearchStrategy[Any],
    keys: st.SearchStrategy[str],
    max_size: int,
    max_leaves: int,
) -> st.SearchStrategy[Any]:
    """``scalars`` nested in lists and in dicts keyed by ``keys``."""
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=max_size),
            st.dictionaries(keys, children, max_size=max_size),
        ),
        max_leaves=max_leaves,
    )
