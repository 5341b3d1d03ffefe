"""The quick paths of fair dealing's encodings held to the checked ones they stand beside.

``encode_rows`` reads rows held as tuples in one pass and ``deal_seed_fields`` encodes plain
values without the checks' calls, and ``hand_record_message`` a table's seat with its prefix made
once; anything else goes through the checks. Both paths must give
the same bytes for every input, and the same error (type and message) for every refused one.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sapsam.fairness.commitments import _encode_checked_rows, encode_rows
from sapsam.fairness.deal import _TAG_HAND_RECORD_PREFIX, hand_record_message
from sapsam.fairness.encoding import (
    deal_seed_fields,
    length_prefixed,
    require_deal_number,
    require_seed,
    require_table_id,
    u8,
)
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import DECK


@dataclass(frozen=True)
class _Rows:
    front: Any
    middle: Any
    back: Any


def _outcome(make: Callable[[], bytes]) -> tuple[str, str]:
    try:
        return ("bytes", make().hex())
    except Exception as error:  # the error itself is the outcome compared
        return (type(error).__name__, str(error))


# Card-like values, mostly in range, some not (a 52, a negative, a big one, a string, None).
_VALUES = st.one_of(
    st.integers(0, 51),
    st.sampled_from(DECK),
    st.sampled_from([52, 255, 256, -1, "2c", None, 1.0]),
)
_ROW = st.lists(_VALUES, max_size=8)


@given(_ROW, _ROW, _ROW, st.sampled_from([tuple, list]))
def test_rows_encode_as_the_row_by_row_checks_encode_them(
    front: list[Any], middle: list[Any], back: list[Any], kind: Callable[[list[Any]], Any]
) -> None:
    rows = _Rows(kind(front), kind(middle), kind(back))
    assert _outcome(lambda: encode_rows(rows)) == _outcome(
        lambda: _encode_checked_rows(front, middle, back)
    )


@given(st.permutations(range(52)), st.integers(0, 13), st.integers(0, 13), st.integers(0, 26))
def test_rows_of_cards_encode_as_checked(
    deck: list[int], front: int, middle: int, back: int
) -> None:
    cards = [DECK[index] for index in deck]
    rows = (cards[:front], cards[front : front + middle], cards[front + middle :][:back])
    arrangement = Arrangement.of(*rows)
    assert encode_rows(arrangement) == _encode_checked_rows(*rows)


def _checked_fields(table_id: Any, deal_number: Any, seed: Any) -> bytes:
    return (
        require_table_id(table_id)
        + require_deal_number(deal_number)
        + length_prefixed(require_seed(seed))
    )


class _Uuid(uuid.UUID):
    pass


_TABLE = uuid.UUID("5a9c7e3e-1f2b-4c8d-9e0f-112233445566")


@given(
    st.sampled_from([_TABLE, _Uuid(int=_TABLE.int), str(_TABLE), None]),
    st.one_of(
        st.integers(-2, 2**64 + 1),
        st.sampled_from([0, 2**64 - 1, 2**64, True, False, 1.0, "1", None]),
    ),
    st.one_of(
        st.binary(min_size=30, max_size=34),
        st.sampled_from([bytearray(32), bytes(32), memoryview(bytes(32)), "x" * 32, None]),
    ),
)
def test_deal_seed_fields_encode_and_refuse_as_the_checks_do(
    table_id: Any, deal_number: Any, seed: Any
) -> None:
    assert _outcome(lambda: deal_seed_fields(table_id, deal_number, seed)) == _outcome(
        lambda: _checked_fields(table_id, deal_number, seed)
    )


@pytest.mark.parametrize("seat", [-1, 0, 1, 2, 3, 4, 5, 255, 256, True, False])
@pytest.mark.parametrize("cards", [b"", bytes(range(13)), bytearray(range(13)), bytes(range(52))])
def test_hand_record_messages_are_built_as_their_formula_says(seat: Any, cards: Any) -> None:
    """``hand_record_message`` takes a prefix made once for a table's seats and card bytes;
    anything else is encoded field by field, with the same bytes or error."""
    assert _outcome(lambda: hand_record_message(seat, cards)) == _outcome(
        lambda: _TAG_HAND_RECORD_PREFIX + u8(seat) + length_prefixed(cards)
    )
