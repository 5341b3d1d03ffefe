"""The named royalty tables (sapsam.rules.royalty_tables) against the sources' own tables.

003 (American column / Russian column): «Caseta inferioară („Înapoi”) Strada: +2; Flush: +4; Full
House: +6; Patru de un fel: +8; Chinta de culoare: +10; Chinta regală: +15» (Russian back) and
«Patru de un fel: +10; Chinta Chinta: +15, Chinta Regală: +25. Aceeași schemă funcționează pe
caseta din mijloc, doar punctele sunt înmulțite cu două.» (American back; the middle doubled).
001: «флеш-рояль: 25, стрит-флеш: 15, каре: 10, фулл хаус: 6, флеш: 4, стрит:2 […] за тройку
(сет) дается 2 очка […] любая пара от 66 до АА: 1 – 9 очков […] любая тройка от 222 до ААА: 10 –
22 очка».
"""

from collections.abc import Mapping

import pytest

from sapsam.rules.cards import parse_cards
from sapsam.rules.hands import evaluate
from sapsam.rules.royalty_tables import (
    AMERICAN,
    FOUR_PLAYER,
    ROYALTY_KEYS,
    ROYALTY_TABLES,
    RUSSIAN,
    RoyaltyTableError,
    check_amounts,
    royalty_amount,
    royalty_keys,
    royalty_table,
)


def amount(table_amounts: Mapping[str, int], row: int, cards: str) -> int:
    return royalty_amount(table_amounts, row, evaluate(parse_cards(cards)))


BACKS = {
    "Ts Jh Qd Kc Ac": ("straight", 2, 2),
    "2h 7h 9h Jh Kh": ("flush", 4, 4),
    "9c 9d 9h 4s 4d": ("full house", 6, 6),
    "8c 8d 8h 8s 2c": ("quads", 10, 8),
    "5s 6s 7s 8s 9s": ("straight flush", 15, 10),
    "As 2s 3s 4s 5s": ("the wheel's straight flush", 15, 10),
    "Ts Js Qs Ks As": ("royal flush", 25, 15),
    "7c 7d 7h Kc 2d": ("trips: nothing in the back", 0, 0),
}


@pytest.mark.parametrize("cards", BACKS)
def test_back_and_middle_follow_both_columns(cards: str) -> None:
    _, american, russian = BACKS[cards]
    assert amount(AMERICAN.amounts, 2, cards) == american
    assert amount(RUSSIAN.amounts, 2, cards) == russian
    # The middle pays twice the back, except trips: 2 in the middle.
    trips = 2 if cards.startswith("7c 7d 7h") else None
    assert amount(AMERICAN.amounts, 1, cards) == (trips or 2 * american)
    assert amount(RUSSIAN.amounts, 1, cards) == (trips or 2 * russian)


@pytest.mark.parametrize(
    ("front", "units"),
    [
        ("5c 5d Ah", 0),  # below 66
        ("6c 6d 2h", 1),
        ("Qc Qd 2h", 7),
        ("Ac Ad Kh", 9),
        ("2c 2d 2h", 10),
        ("Tc Td Th", 18),
        ("Ac Ad Ah", 22),
        ("Ac Kd Qh", 0),  # no straight or flush in a front
    ],
)
def test_front_is_graded_by_rank(front: str, units: int) -> None:
    assert amount(AMERICAN.amounts, 0, front) == units
    assert amount(RUSSIAN.amounts, 0, front) == units


def test_the_most_specific_key_wins_and_falls_back() -> None:
    assert royalty_keys(0, evaluate(parse_cards("Qc Qd 2h"))) == ("front_pair_Q", "front_pair")
    assert royalty_keys(2, evaluate(parse_cards("Ts Js Qs Ks As"))) == (
        "back_royal_flush",
        "back_straight_flush",
    )
    # 004 has no royal key: a royal flush is paid as a straight flush, trips of any rank alike.
    assert amount(FOUR_PLAYER.amounts, 2, "Ts Js Qs Ks As") == 5
    assert amount(FOUR_PLAYER.amounts, 0, "2c 2d 2h") == 3
    assert amount({"front_three_of_a_kind": 3, "front_three_of_a_kind_A": 7}, 0, "Ac Ad Ah") == 7
    assert amount(FOUR_PLAYER.amounts, 0, "Ac Ad Kh") == 0


def test_overrides_change_one_amount() -> None:
    changed = AMERICAN.with_amounts({"middle_three_of_a_kind": 0, "front_pair_Q": 12})
    assert changed["middle_three_of_a_kind"] == 0  # 003: "some tables 0"
    assert changed["front_pair_Q"] == 12
    assert changed["front_pair_K"] == AMERICAN.amounts["front_pair_K"] == 8
    assert AMERICAN.amounts["front_pair_Q"] == 7  # the named table is unchanged


def test_the_003_example_amounts() -> None:
    # 003: A's back quads earn 10, B's back flush 4 (American): 6 + 10 - 4 = 12 once scooped.
    quads = amount(AMERICAN.amounts, 2, "8c 8d 8h 8s 2c")
    flush = amount(AMERICAN.amounts, 2, "2h 7h 9h Jh Kh")
    assert (quads, flush) == (10, 4)
    assert 6 + quads - flush == 12


def test_every_table_holds_known_keys_only() -> None:
    for name, table in ROYALTY_TABLES.items():
        assert royalty_table(name) is table
        assert set(table.amounts) <= ROYALTY_KEYS
        assert table.description and table.sources


@pytest.mark.parametrize(
    ("amounts", "message"),
    [
        ({"back_pair": 1}, "unknown royalty key"),
        ({"front_pair_Z": 1}, "unknown royalty key"),
        ({"back_flush": -1}, "non-negative"),
        ({"back_flush": True}, "non-negative"),
        ({"back_flush": 1.5}, "non-negative"),
    ],
)
def test_bad_amounts_are_refused_by_name(amounts: dict[str, object], message: str) -> None:
    with pytest.raises(RoyaltyTableError, match=message):
        check_amounts(amounts)


def test_maximum_and_unknown_table() -> None:
    with pytest.raises(RoyaltyTableError, match=r"0\.\.1000"):
        check_amounts({"back_flush": 1001}, maximum=1000)
    with pytest.raises(RoyaltyTableError, match="known tables: american"):
        royalty_table("klingon")
