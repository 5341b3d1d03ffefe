"""Row names as the terminal client says them: every category of both row sizes, the wheel, and
every one of the rules' 7,917 distinct values named apart from its neighbours when detailed."""

from __future__ import annotations

import pytest

from sapsam.rules.hands import FIVE_CARD_VALUES, THREE_CARD_VALUES, Category
from sapsam_client.hand_names import names_apart, row_name, value_name


def cards(text: str) -> list[str]:
    """Cards written as a line (``"As Kd"``)."""
    return text.split()


@pytest.mark.parametrize(
    ("row", "name"),
    [
        ("As Ks Qs Js Ts", "royal flush"),
        ("9h 8h 7h 6h 5h", "nine-high straight flush"),
        ("5d 4d 3d 2d Ad", "five-high straight flush"),
        ("Kc Kd Kh Ks 4c", "four kings"),
        ("Kc Kd Kh 7s 7c", "kings full of sevens"),
        ("6c 6d 6h Ks Kc", "sixes full of kings"),
        ("Ks 9s 7s 4s 2s", "king-high flush"),
        ("Ac Kd Qh Js Tc", "ace-high straight"),
        ("5c 4d 3h 2s Ac", "five-high straight (the wheel)"),
        ("6c 5d 4h 3s 2c", "six-high straight"),
        ("Qc Qd Qh 9s 2c", "three queens"),
        ("Kc Kd 7h 7s 4c", "two pair, kings and sevens"),
        ("Jc Jd 9h 5s 3c", "pair of jacks"),
        ("Ac Jd 9h 5s 3c", "ace high"),
        ("7c 5d 4h 3s 2c", "seven high"),
        # 3-card fronts: three of a kind, pair and high card only.
        ("Qc Qd Qh", "three queens"),
        ("2c 2d Ah", "pair of twos"),
        ("Kc Qd Jh", "king high"),
        ("4c 3d 2h", "four high"),
        ("As 3s 2s", "ace high"),  # three suited cards are no flush, A 2 3 no straight
    ],
)
def test_each_category_has_its_name(row: str, name: str) -> None:
    assert row_name(cards(row)) == name


def test_detailed_names_add_the_kickers() -> None:
    assert row_name(cards("Jc Jd 9h 5s 3c"), detailed=True) == "pair of jacks (kickers 9 5 3)"
    assert row_name(cards("Kc Kd 7h 7s 4c"), detailed=True) == (
        "two pair, kings and sevens (kicker 4)"
    )
    assert row_name(cards("Kc Kd Kh Ks 4c"), detailed=True) == "four kings (kicker 4)"
    assert row_name(cards("Qc Qd Qh"), detailed=True) == "three queens"
    assert row_name(cards("Kc Kd 7h 7s 7c"), detailed=True) == "sevens full of kings"


@pytest.mark.parametrize(("values", "size"), [(FIVE_CARD_VALUES, 5), (THREE_CARD_VALUES, 3)])
def test_every_value_has_a_name_and_a_detailed_name_of_its_own(values: object, size: int) -> None:
    named: dict[str, int] = {}
    for value in values:  # type: ignore[attr-defined]
        assert value.size == size
        short = value_name(value.category, value.ranks)
        detailed = value_name(value.category, value.ranks, detailed=True)
        assert short and detailed.startswith(short) and len(detailed) <= 60
        assert named.setdefault(detailed, value.strength) == value.strength, detailed
    assert len(named) == len(values)  # type: ignore[arg-type]


def test_no_name_is_shared_by_two_categories() -> None:
    categories: dict[str, set[Category]] = {}
    for value in (*FIVE_CARD_VALUES, *THREE_CARD_VALUES):
        name = value_name(value.category, value.ranks)
        categories.setdefault(name, set()).add(value.category)
    assert all(len(found) == 1 for found in categories.values())
    assert len({next(iter(found)) for found in categories.values()}) == len(Category)


def test_names_apart_add_kickers_only_when_the_short_names_tie() -> None:
    assert names_apart(cards("Kc Kd 3h"), cards("Jc Jd 2h")) == ("pair of kings", "pair of jacks")
    assert names_apart(cards("Kc Kd Ah"), cards("Ks Kh Qh")) == (
        "pair of kings (kicker A)",
        "pair of kings (kicker Q)",
    )
    # Equal values (suits never count) keep the short names: it is a tie.
    assert names_apart(cards("Kc Kd Ah"), cards("Ks Kh As")) == ("pair of kings",) * 2
    # A front and a middle with the same short name: the missing kickers are weaker.
    assert names_apart(cards("Qc Qd Kh"), cards("Qs Qh Kd 3c 2c")) == (
        "pair of queens (kicker K)",
        "pair of queens (kickers K 3 2)",
    )


def test_a_malformed_row_has_no_name() -> None:
    with pytest.raises(ValueError):
        row_name(["As", "As", "Kd"])
    with pytest.raises(ValueError):
        row_name(["As", "Kd"])
