"""The SDK's declarer (docs/rules.md §2.9): a seat at a table with naturals declares the strongest
natural its hand holds (the bots, the demo), or ``none``; without naturals it declares nothing."""

from __future__ import annotations

from sapsam_client.client import Hand
from sapsam_client.rules import naturals_in_hand, strongest_natural
from sapsam_client.seat_types import default_declarer, plays_naturals
from sapsam_proto.v1 import rule_set_pb2, table_pb2

# Seed 39's seat 3 of tests/domain/test_table_naturals.py: six pairs (four queens count twice).
SIX_PAIRS = ("Qc", "7h", "Qs", "Jc", "7d", "Jh", "6h", "Qd", "6c", "3d", "Qh", "Ks", "3h")
DRAGON = ("Ac", "2d", "3h", "4s", "5c", "6d", "7h", "8s", "9c", "Td", "Jh", "Qs", "Kc")
PLAIN = ("Ac", "Ad", "3h", "4s", "5c", "6d", "7h", "8s", "9c", "Td", "Jh", "Qs", "Kc")


def table(naturals: int) -> table_pb2.Table:
    return table_pb2.Table(rule_set=rule_set_pb2.RuleSet(rules_version=5, naturals=naturals))  # type: ignore[arg-type]


def test_the_strongest_natural_held_is_declared() -> None:
    classic = table(rule_set_pb2.NATURALS_TABLE_CLASSIC)
    assert plays_naturals(classic)
    assert strongest_natural(Hand("tables/t/deals/1", SIX_PAIRS), classic) == "six_pairs"
    # A dragon is also three straights: the dragon, the stronger, is declared.
    assert naturals_in_hand(DRAGON, classic.rule_set) == ("dragon", "three_straights")
    assert default_declarer(Hand("tables/t/deals/1", DRAGON), classic) == "dragon"
    assert default_declarer(Hand("tables/t/deals/1", PLAIN), classic) == "none"


def test_without_naturals_nothing_is_declared() -> None:
    plain = table(rule_set_pb2.NATURALS_TABLE_NONE)
    assert not plays_naturals(plain)
    assert naturals_in_hand(DRAGON, plain.rule_set) == ()
