"""sapsam-play's ``hint``: the solver's suggestion for the table's own rules, shown on request and
never taken unless the person takes it; and the rule set on the wire read back for the solver."""

from __future__ import annotations

import random

import pytest

from sapsam.api.common_messages import rule_set_message
from sapsam.rules.presets import PRESETS
from sapsam.rules.ruleset import MajorityRule, RowOrder, RuleSet
from sapsam_client.arranging import HINT_TITLE, arrange
from sapsam_client.client import Hand
from sapsam_client.commitment import Rows, card_text
from sapsam_client.prompts import Terminal
from sapsam_client.rules import (
    foul_detail,
    random_legal_rows,
    rules_rule_set,
    solver_arranger,
    solver_rows,
)
from sapsam_proto.v1 import rule_set_pb2, table_pb2

# Rules version 1's solver (random_rows) breaks the full house for a straight behind; from version
# 2 (played_rows) the full house stays behind and the straight goes in the middle.
CARDS = tuple(["2c", "2h", "2s", "3c", "4h", "5c", "5s", "Td", "Js", "Qd", "Ks", "Ad", "As"])
VERSION_1 = RuleSet(
    rules_version=1, majority=MajorityRule.MORE_ROWS_WON, row_order=RowOrder.NON_DECREASING
)
VERSION_1_FRONT = "As 5c 5s"
LATEST_FRONT = "As 4h 3c"


def _play(rule_set: RuleSet, typed: list[str]) -> tuple[object, list[str]]:
    answers = iter(typed)
    said: list[str] = []
    terminal = Terminal(lambda question: next(answers), said.append)
    table = table_pb2.Table(rule_set=rule_set_message(rule_set))
    hand = Hand(deal="tables/t1/deals/1", cards=CARDS)
    return arrange(terminal, hand, table, 0), said


def _row_sets(rows: object) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(getattr(rows, name)) for name in ("front", "middle", "back"))


def _hint_rows(said: list[str]) -> list[str]:
    start = said.index(HINT_TITLE)
    return said[start + 1 : start + 4]


@pytest.mark.parametrize(
    ("rule_set", "front"), [(PRESETS["pagat"], LATEST_FRONT), (VERSION_1, VERSION_1_FRONT)]
)
def test_hint_shows_the_tables_suggestion_and_the_rows_typed_are_what_is_returned(
    rule_set: RuleSet, front: str
) -> None:
    # hint at the first prompt, then the person's own rows (version 1's when they differ from
    # the suggestion), confirmed: what arrange returns (what would be committed) is what was typed.
    mine_front, mine_middle = (
        (VERSION_1_FRONT, "4h 3c 2c 2h 2s")
        if front == LATEST_FRONT
        else ("As 4h 3c", "Ad Ks Qd Js Td")
    )
    rows, said = _play(rule_set, ["hint", mine_front, mine_middle, "y"])
    assert set(_hint_rows(said)[0].split()[1:4]) == set(front.split())
    assert set(rows.front) == set(mine_front.split())  # type: ignore[attr-defined]
    assert set(rows.middle) == set(mine_middle.split())  # type: ignore[attr-defined]
    assert _row_sets(rows) != _row_sets(solver_rows(CARDS, rule_set_message(rule_set)))


def test_the_suggestion_is_shown_only_when_asked_for() -> None:
    rows, said = _play(PRESETS["pagat"], ["As 4h 3c", "Ad Ks Qd Js Td", "y"])
    assert HINT_TITLE not in said and not any(line.startswith("Suggested") for line in said)
    assert any("hint shows the solver's suggestion" in line for line in said)
    assert set(rows.front) == {"As", "4h", "3c"}  # type: ignore[attr-defined]
    _, helped = _play(PRESETS["pagat"], ["?", "s", "y"])
    assert HINT_TITLE not in helped  # ? lists hint, and shows no suggestion either
    assert any(line.strip().startswith("hint  show the solver's suggestion") for line in helped)


def test_hint_changes_nothing_until_the_suggestion_is_taken() -> None:
    rows, said = _play(PRESETS["pagat"], ["hint", "hint", "s", "y"])
    assert said.count(HINT_TITLE) == 2
    assert _row_sets(rows) == _row_sets(solver_rows(CARDS, rule_set_message(PRESETS["pagat"])))
    # The prompt after each hint still asks for the front: nothing was set.
    assert "Your rows:" not in said[: said.index(HINT_TITLE, said.index(HINT_TITLE) + 1)]


@pytest.mark.parametrize("rule_set", [*PRESETS.values(), VERSION_1], ids=lambda r: r.name)
def test_the_rule_set_on_the_wire_reads_back_as_the_solver_needs_it(rule_set: RuleSet) -> None:
    read = rules_rule_set(rule_set_message(rule_set))
    assert isinstance(read, RuleSet)
    for key in ("rules_version", "scoring", "majority", "row_order", "row_unit", "scoop_bonus"):
        assert getattr(read, key) == getattr(rule_set, key), key
    assert (read.one_six_two_of_three, read.one_six_scoop) == (
        rule_set.one_six_two_of_three,
        rule_set.one_six_scoop,
    )
    # Every field the scoring reads, royalties and stakes included, crosses the wire.
    unread = {"name", "min_seats", "max_seats", "series_length", "arrange_seconds"}
    unread |= {"reveal_seconds", "arrange_timeout_policy", "surrender_seconds"}
    on_the_wire = {field.name for field in rule_set_pb2.RuleSet.DESCRIPTOR.fields} | {"scoring"}
    scored = {
        key: value
        for key, value in rule_set.to_dict().items()
        if key not in unread and key in on_the_wire
    }
    assert {key: read.to_dict()[key] for key in scored} == scored


def test_royalty_tables_and_stakes_cross_the_wire() -> None:
    rule_set = PRESETS["closed_american"].with_changes(
        pair_units={"0-1": 100}, royalty_broken_hands="claimed"
    )
    read = rules_rule_set(rule_set_message(rule_set))
    assert isinstance(read, RuleSet)
    assert read.royalty_amounts == rule_set.royalty_amounts
    assert read.royalty_amounts["front_pair_Q"] == 7
    assert read.pair_units == {"0-1": 100}
    assert read.royalty_broken_hands == "claimed"


# The middle and the back are straights to the nine: equal, legal under the base game's order,
# a foul under 004's strict one (each row must beat the one before it).
EQUAL_ROWS = Rows.of(
    ["2c", "2d", "3h"], ["5c", "6d", "7h", "8s", "9c"], ["5d", "6h", "7s", "8c", "9d"]
)


def test_the_foul_check_follows_the_tables_row_order() -> None:
    cards = EQUAL_ROWS.cards
    assert foul_detail(EQUAL_ROWS, cards) == ""
    assert foul_detail(EQUAL_ROWS, cards, rule_set_message(PRESETS["pagat"])) == ""
    strict = foul_detail(EQUAL_ROWS, cards, rule_set_message(PRESETS["four_player"]))
    assert "does not beat back" in strict
    rng = random.Random(4)
    for _ in range(20):
        deal = tuple(card_text(card) for card in rng.sample(range(52), 13))
        rows = random_legal_rows(deal, rng, rule_set_message(PRESETS["four_player"]))
        assert foul_detail(rows, deal, rule_set_message(PRESETS["four_player"])) == ""


def test_a_rules_version_the_installed_rules_lack_reads_as_the_latest() -> None:
    message = rule_set_message(PRESETS["four_player"])
    message.rules_version = 99
    read = rules_rule_set(message)
    assert isinstance(read, RuleSet)
    assert read.row_order is RowOrder.STRICTLY_INCREASING


def test_the_solver_arranger_plays_the_tables_rules() -> None:
    table = table_pb2.Table(rule_set=rule_set_message(VERSION_1))
    rows = solver_arranger(Hand(deal="tables/t1/deals/1", cards=CARDS), table)
    assert set(rows.front) == set(VERSION_1_FRONT.split())
    assert rule_set_pb2.RuleSet().rules_version == 0  # an empty message: the latest rules
    assert set(solver_rows(CARDS, rule_set_pb2.RuleSet()).front) == set(LATEST_FRONT.split())
