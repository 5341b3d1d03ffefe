"""Card notation, errors and the canonical deck."""

from typing import Any

import pytest

from sapsam.rules.cards import (
    DECK,
    Card,
    CardError,
    _parse_tokens,
    by_strength,
    canonical_order,
    card_texts,
    format_cards,
    parse_cards,
)


def test_deck_is_52_distinct_cards_in_index_order() -> None:
    assert len(DECK) == 52
    assert list(DECK) == list(range(52))
    assert format_cards(DECK[:5]) == "2c 2d 2h 2s 3c"
    assert str(DECK[-1]) == "As"


def test_card_texts_are_each_cards_str_in_the_order_given() -> None:
    cards = [DECK[51], DECK[0], DECK[17], DECK[17], DECK[34]]
    assert card_texts(cards) == [str(card) for card in cards] == ["As", "2c", "6d", "6d", "Th"]
    assert card_texts([]) == []
    assert card_texts(range(52)) == [str(card) for card in DECK]
    with pytest.raises(IndexError):
        card_texts([52])


def test_every_card_round_trips_through_its_notation() -> None:
    for card in DECK:
        assert Card.parse(str(card)) == card
        assert Card.parse(card.symbol) == card
        assert Card.of(card.rank, card.suit) == card


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("As", "As"),
        ("as", "As"),
        ("AS", "As"),
        ("10h", "Th"),
        ("tD", "Td"),
        ("Q♠", "Qs"),
        ("2♣", "2c"),
        ("K♥️", "Kh"),
        ("9♦", "9d"),
    ],
)
def test_accepted_spellings(token: str, expected: str) -> None:
    assert str(Card.parse(token)) == expected


def test_parse_cards_reads_a_row() -> None:
    cards = parse_cards("As Kd Tc 9h 2s")
    assert format_cards(cards) == "As Kd Tc 9h 2s"
    assert parse_cards("As,Kd, 10c") == parse_cards(["As", "Kd", "Tc"])


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("As Xd", "'Xd' at position 2"),
        ("As K", "'K' at position 2"),
        ("As Kx", "unknown suit 'x'"),
        ("As 1s", "unknown rank '1'"),
        ("As Kd As", "duplicate card 'As' at position 3 (already given at position 1)"),
    ],
)
def test_errors_name_token_and_position(text: str, fragment: str) -> None:
    with pytest.raises(CardError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        parse_cards(text)


def test_wrong_count_is_an_error() -> None:
    with pytest.raises(CardError, match="expected 13 cards, got 12"):
        parse_cards(" ".join(str(card) for card in DECK[:12]), count=13)


def test_card_index_out_of_range() -> None:
    with pytest.raises(CardError):
        Card(52)


def test_orders() -> None:
    cards = parse_cards("2s Ah 2c Kd")
    assert format_cards(canonical_order(cards)) == "2c 2s Kd Ah"
    assert format_cards(by_strength(cards)) == "Ah Kd 2c 2s"


PRINTED_AND_OTHER_ROWS = [
    ("As", "Kd", "2c"),  # printed forms: the quick path
    ("Tc", "Jc", "Qc", "Kc", "Ac"),
    (),
    ["2s"],
    "As Kd 2c",  # a string, split first
    ("10h", "as", "K♠"),  # other notations: read token by token
    ("As", "As"),  # a repeat
    ("As", "Kd", "As"),
    ("Zz",),  # no such card
    ("As", ""),
    ("As", 7),  # not a token
    ("As", ["Kd"]),  # not hashable
]


@pytest.mark.parametrize("row", PRINTED_AND_OTHER_ROWS)
@pytest.mark.parametrize("count", [None, 2, 3])
def test_the_quick_path_reads_as_token_by_token_reading_does(row: Any, count: int | None) -> None:
    tokens = row.replace(",", " ").split() if isinstance(row, str) else list(row)
    try:
        expected = _parse_tokens(tokens, count)
    except Exception as error:
        with pytest.raises(type(error)) as raised:
            parse_cards(row, count)
        assert str(raised.value) == str(error)
    else:
        parsed = parse_cards(row, count)
        assert parsed == expected
        assert all(type(card) is Card for card in parsed)


def test_every_card_reads_back_from_its_printed_form_by_the_quick_path() -> None:
    assert parse_cards([str(card) for card in DECK]) == DECK
