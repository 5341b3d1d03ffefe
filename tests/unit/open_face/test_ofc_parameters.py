"""The open-face rule set: validation, presets, and its recorded form."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from sapsam.rules.open_face.parameters import (
    TURBO_STREETS,
    FantasylandCards,
    FantasylandReentry,
    OpenFaceRules,
    OpenFaceRulesError,
    OpenFaceTimeoutPolicy,
)
from sapsam.rules.open_face.presets import (
    OPEN_FACE_PRESET_DESCRIPTIONS,
    OPEN_FACE_PRESETS,
    open_face_preset,
)


def test_the_defaults_are_001s_classic_game() -> None:
    rules = OpenFaceRules()
    assert rules.street_cards == (5, 1, 1, 1, 1, 1, 1, 1, 1)
    assert (rules.two_of_three_points, rules.scoop_points) == (1, 6)
    assert (rules.royalty_table, rules.middle_trips_royalty) == ("american", 2)
    assert rules.fantasyland_entry_rank == "Q"
    assert rules.fantasyland_max_consecutive == 2
    assert rules.timeout_policy is OpenFaceTimeoutPolicy.DEAD_FOR_SET
    # The presets add a reveal deadline for tables without move limits (docs/rules.md §8.7).
    assert OPEN_FACE_PRESETS["ofc_classic"] == dataclasses.replace(
        rules, name="ofc_classic", reveal_seconds=30
    )


def test_turbo_deals_five_four_four() -> None:
    assert open_face_preset("ofc_turbo").street_cards == TURBO_STREETS == (5, 4, 4)


def test_every_preset_is_described_and_round_trips() -> None:
    assert set(OPEN_FACE_PRESET_DESCRIPTIONS) == set(OPEN_FACE_PRESETS)
    for name, rules in OPEN_FACE_PRESETS.items():
        assert rules.name == name
        assert OpenFaceRules.from_dict(rules.to_dict()) == rules


def test_an_unknown_preset_lists_the_known_ones() -> None:
    with pytest.raises(OpenFaceRulesError, match="ofc_classic, ofc_turbo"):
        open_face_preset("chinese_checkers")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"street_cards": (5, 4, 3)}, "deal 13 cards in all, got 12"),
        ({"street_cards": (13, 0)}, "must be in 1..13, got 0"),
        ({"street_cards": ()}, "list of 1 to 13 counts"),
        ({"street_cards": (5, True, 7)}, "must be an integer"),
        ({"min_seats": 1}, "'min_seats' must be in 2..4"),
        ({"max_seats": 5}, "'max_seats' must be in 2..4"),
        ({"min_seats": 4, "max_seats": 3}, "exceeds 'max_seats'"),
        ({"two_of_three_points": 7}, "a scoop must pay at least a 2-1 win"),
        ({"scoop_points": -1}, "'scoop_points' must be in 0..1000"),
        ({"royalty_table": "four_player"}, "'royalty_table' must be one of american, russian"),
        ({"middle_trips_royalty": 1001}, "'middle_trips_royalty' must be in 0..1000"),
        ({"fantasyland_entry_rank": "Z"}, "must be a rank"),
        ({"fantasyland_max_consecutive": 0}, "'fantasyland_max_consecutive' must be in 1..100"),
        ({"fantasyland_reentry": "always"}, "must be one of none, front_trips_back_quads"),
        ({"name": ""}, "'name' must be printable text"),
        # 4 seats of 17 cards would need 68 cards.
        ({"fantasyland_cards": FantasylandCards.PROGRESSIVE}, "at most 3 seats"),
    ],
)
def test_a_bad_value_is_refused_naming_its_key(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(OpenFaceRulesError, match=message):
        OpenFaceRules(**changes)


def test_progressive_fantasyland_fits_three_seats() -> None:
    rules = OpenFaceRules(fantasyland_cards=FantasylandCards.PROGRESSIVE, max_seats=3)
    assert rules.most_fantasyland_cards == 17


def test_from_dict_reads_strings_and_lists_and_refuses_unknown_keys() -> None:
    rules = OpenFaceRules.from_dict(
        {
            "street_cards": [5, 4, 4],
            "fantasyland_reentry": "row_royalty_over_ten",
            "fantasyland_max_consecutive": None,
        }
    )
    assert rules.street_cards == (5, 4, 4)
    assert rules.fantasyland_reentry is FantasylandReentry.ROW_ROYALTY_OVER_TEN
    assert rules.fantasyland_max_consecutive is None
    with pytest.raises(OpenFaceRulesError, match="unknown open-face rule set key 'discards'"):
        OpenFaceRules.from_dict({"discards": 1})
    with pytest.raises(OpenFaceRulesError, match="must be an object"):
        OpenFaceRules.from_dict([])  # type: ignore[arg-type]


def test_the_json_form_is_canonical_and_strict() -> None:
    rules = open_face_preset("ofc_turbo")
    text = rules.to_json()
    assert text.startswith('{"automatic_moves":"forced",') and " " not in text
    assert '"street_cards":[5,4,4]' in text
    assert OpenFaceRules.from_json(text) == rules
    with pytest.raises(OpenFaceRulesError, match=r"integers only, got 6\.0"):
        OpenFaceRules.from_json('{"scoop_points": 6.0}')
    with pytest.raises(OpenFaceRulesError, match="not valid JSON"):
        OpenFaceRules.from_json("{")
    with pytest.raises(OpenFaceRulesError, match="must be an object"):
        OpenFaceRules.from_json("[]")
