"""Rule sets: presets, strict reading, canonical JSON."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sapsam.rules.presets import (
    DEFAULT_RULE_SET,
    PRESET_ALIASES,
    PRESET_ARRANGE_SECONDS,
    PRESET_DESCRIPTIONS,
    PRESET_REVEAL_SECONDS,
    PRESETS,
    preset,
    resolve_rule_set,
)
from sapsam.rules.ruleset import (
    FIELD_SINCE_VERSION,
    RULES_VERSION,
    MajorityRule,
    RowOrder,
    RuleSet,
    RuleSetError,
    ScoringMethod,
    TimeoutPolicy,
    missing_deadlines,
)


def test_default_is_the_pagat_base_game() -> None:
    assert DEFAULT_RULE_SET is PRESETS["pagat"]
    assert DEFAULT_RULE_SET.scoring is ScoringMethod.PER_ROW
    assert DEFAULT_RULE_SET.row_unit == 1
    assert (DEFAULT_RULE_SET.min_seats, DEFAULT_RULE_SET.max_seats) == (2, 4)
    assert DEFAULT_RULE_SET.series_length == 8
    assert DEFAULT_RULE_SET.arrange_timeout_policy is TimeoutPolicy.FOUL
    assert (DEFAULT_RULE_SET.arrange_seconds, DEFAULT_RULE_SET.reveal_seconds) == (90, 30)
    assert RuleSet().name == "custom"
    # The dataclass keeps no deadlines: a recorded rule set without the keys read as played.
    assert RuleSet().arrange_seconds is None and RuleSet().reveal_seconds is None
    assert RuleSet(name="pagat", arrange_seconds=90, reveal_seconds=30) == DEFAULT_RULE_SET


def test_every_preset_has_deadlines_and_none_warns() -> None:
    for rule_set in PRESETS.values():
        assert rule_set.arrange_seconds == PRESET_ARRANGE_SECONDS
        assert rule_set.reveal_seconds == PRESET_REVEAL_SECONDS
        assert missing_deadlines(rule_set) == ()
    warnings = missing_deadlines(DEFAULT_RULE_SET.with_changes(arrange_seconds=None))
    assert len(warnings) == 1 and "arranging deadline" in warnings[0]
    assert len(missing_deadlines(RuleSet())) == 2


def test_presets_cover_every_scoring_method() -> None:
    assert list(PRESETS) == [
        "pagat",
        "pagat_two_four",
        "pagat_one_six",
        "pagat_one_six_two",
        "pagat_scoop_bonus",
        "four_player",
        "four_player_royalties",
        "four_player_bonus",
        "capsa_susun",
        "capsa_susun_graded",
        "capsa_susun_both_paid",
        "capsa_susun_one_royalty",
        "capsa_susun_broken",
        "capsa_susun_one_six",
        "capsa_susun_scoop_bonus",
        "closed_american",
        "closed_russian",
        "thirteen_waters",
    ]
    assert {rule_set.scoring for rule_set in PRESETS.values()} == set(ScoringMethod)
    assert {rule_set.row_order for rule_set in PRESETS.values()} == set(RowOrder)
    for name, rule_set in PRESETS.items():
        assert rule_set.name == name
        assert rule_set.rules_version == RULES_VERSION
        assert rule_set.majority is MajorityRule.TWO_ROWS_WON
        assert preset(name) is rule_set
        assert PRESET_DESCRIPTIONS[name].endswith(".")
        assert "\n" not in PRESET_DESCRIPTIONS[name]
    assert set(PRESET_DESCRIPTIONS) == set(PRESETS)


def test_version_1_preset_names_are_aliases_of_todays_presets() -> None:
    for alias, name in PRESET_ALIASES.items():
        assert alias not in PRESETS
        assert preset(alias) is PRESETS[name]
        assert resolve_rule_set(alias).name == name


def test_unknown_preset_lists_the_known_names() -> None:
    with pytest.raises(RuleSetError, match=r"'hold_em'.*pagat, pagat_two_four, pagat_one_six"):
        preset("hold_em")


def test_canonical_json_is_sorted_compact_and_round_trips() -> None:
    text = DEFAULT_RULE_SET.to_json()
    assert " " not in text
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert data["scoring"] == "per_row"
    assert data["arrange_seconds"] == 90
    assert json.loads(RuleSet().to_json())["arrange_seconds"] is None
    assert RuleSet.from_json(text) == DEFAULT_RULE_SET
    assert RuleSet.from_json(text).to_json() == text


def test_resolve_accepts_a_name_or_a_full_object() -> None:
    assert resolve_rule_set("pagat_one_six") is PRESETS["pagat_one_six"]
    custom = PRESETS["pagat_two_four"].with_changes(name="high stakes", row_unit=10)
    assert resolve_rule_set(custom.to_dict()) == custom
    with pytest.raises(RuleSetError, match="unknown rule set preset"):
        resolve_rule_set("nope")


def test_missing_keys_take_their_defaults() -> None:
    assert RuleSet.from_dict({"name": "x", "scoring": "one_six"}) == RuleSet(
        name="x", scoring=ScoringMethod.ONE_SIX
    )


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"colour": "red"}, "colour"),
        ({"row_unit": 1.0}, "row_unit"),
        ({"row_unit": 0}, "row_unit"),
        ({"row_unit": True}, "row_unit"),
        ({"row_unit": "1"}, "row_unit"),
        ({"scoring": "per_card"}, "scoring"),
        ({"scoring": 1}, "scoring"),
        ({"arrange_timeout_policy": "ignore"}, "arrange_timeout_policy"),
        ({"min_seats": 1}, "min_seats"),
        ({"max_seats": 5}, "max_seats"),
        ({"min_seats": 4, "max_seats": 3}, "min_seats"),
        ({"series_length": 0}, "series_length"),
        ({"arrange_seconds": 0}, "arrange_seconds"),
        ({"reveal_seconds": 2.5}, "reveal_seconds"),
        ({"scoop_bonus": -1}, "scoop_bonus"),
        ({"name": ""}, "name"),
        ({"name": 7}, "name"),
        ({"rules_version": 99}, "rules_version"),
        ({"majority": "most"}, "majority"),
        ({"rules_version": 1}, "majority"),
        ({"rules_version": 1, "majority": "more_rows_won"}, "majority"),
        ({"row_order": "any"}, "row_order"),
        ({"rules_version": 2}, "row_order"),
        ({"rules_version": 2, "row_order": "non_decreasing"}, "row_order"),
    ],
)
def test_bad_values_are_refused_naming_the_key(changes: dict[str, object], key: str) -> None:
    data = {**DEFAULT_RULE_SET.to_dict(), **changes}
    with pytest.raises(RuleSetError, match=repr(key)):
        RuleSet.from_dict(data)


def test_json_with_floats_or_not_an_object_is_refused() -> None:
    with pytest.raises(RuleSetError, match="integers only"):
        RuleSet.from_json('{"row_unit": 1.5}')
    with pytest.raises(RuleSetError, match="JSON object"):
        RuleSet.from_json("[1, 2]")
    with pytest.raises(RuleSetError, match="not valid JSON"):
        RuleSet.from_json("{")


def test_direct_construction_is_validated_and_accepts_enum_strings() -> None:
    with pytest.raises(RuleSetError, match="'row_unit'"):
        RuleSet(row_unit=-3)
    assert RuleSet(scoring="one_six").scoring is ScoringMethod.ONE_SIX  # type: ignore[arg-type]


rule_sets = st.builds(
    RuleSet,
    name=st.text(
        alphabet=st.characters(categories=("L", "N", "Zs", "P")), min_size=1, max_size=20
    ).filter(lambda text: bool(text.strip()) and text.isprintable()),
    scoring=st.sampled_from(ScoringMethod),
    row_unit=st.integers(1, 10**6),
    scoop_bonus=st.integers(0, 100),
    one_six_two_of_three=st.integers(0, 100),
    one_six_scoop=st.integers(0, 100),
    min_seats=st.just(2),
    max_seats=st.integers(2, 4),
    series_length=st.integers(1, 1000),
    arrange_seconds=st.none() | st.integers(1, 3600),
    reveal_seconds=st.none() | st.integers(1, 3600),
    arrange_timeout_policy=st.sampled_from(TimeoutPolicy),
)


@given(rule_sets)
def test_json_round_trip_is_lossless(rule_set: RuleSet) -> None:
    text = rule_set.to_json()
    again = RuleSet.from_json(text)
    assert again == rule_set
    assert again.to_json() == text
    assert RuleSet.from_dict(rule_set.to_dict()) == rule_set


def test_a_version_1_rule_set_reads_back_to_exactly_what_was_recorded() -> None:
    recorded = {
        "name": "two_four",
        "rules_version": 1,
        "scoring": "two_four",
        "row_unit": 1,
        "scoop_bonus": 1,
        "one_six_two_of_three": 1,
        "one_six_scoop": 6,
        "min_seats": 2,
        "max_seats": 4,
        "series_length": 8,
        "arrange_seconds": 90,
        "reveal_seconds": 30,
        "arrange_timeout_policy": "foul",
    }
    rule_set = RuleSet.from_dict(recorded)
    # Version 1 scored every rule set as more_rows_won; the key it never had stays out.
    assert rule_set.majority is MajorityRule.MORE_ROWS_WON
    assert rule_set.to_dict() == recorded
    assert RuleSet.from_json(rule_set.to_json()) == rule_set
    with pytest.raises(RuleSetError, match=r"'majority'.*version 1 scores only more_rows_won"):
        rule_set.with_changes(majority=MajorityRule.TWO_ROWS_WON)


def test_a_version_2_rule_set_records_majority_and_defaults_to_the_sources_reading() -> None:
    recorded = {**RuleSet().to_dict(), "rules_version": 2}
    for key in [key for key, since in FIELD_SINCE_VERSION.items() if since > 2]:
        recorded.pop(key, None)  # a field absent at its default (surrender) too
    version_2 = RuleSet.from_dict(recorded)
    assert version_2.row_order is RowOrder.NON_DECREASING
    assert version_2.to_dict() == recorded  # read back exactly: no row_order key added
    assert RuleSet().rules_version == RULES_VERSION
    assert RuleSet().to_dict()["majority"] == "two_rows_won"
    assert RuleSet.from_dict({"scoring": "two_four"}).majority is MajorityRule.TWO_ROWS_WON
    chosen = RuleSet.from_dict({"scoring": "two_four", "majority": "more_rows_won"})
    assert chosen.majority is MajorityRule.MORE_ROWS_WON
    assert RuleSet.from_json(chosen.to_json()) == chosen
