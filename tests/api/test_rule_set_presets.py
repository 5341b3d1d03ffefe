"""ListRuleSets and CreateTable's preset plus overrides, over a real gRPC server."""

from __future__ import annotations

import uuid

import grpc
import pytest
from api_client import Api, error_reason

from sapsam.api.common_messages import rule_set_message
from sapsam.api.open_face_messages import open_face_rule_set_message
from sapsam.rules.open_face.presets import OPEN_FACE_PRESETS, PINEAPPLE_PRESETS
from sapsam.rules.presets import PRESET_DESCRIPTIONS, PRESETS
from sapsam.rules.ruleset import RULES_VERSION
from sapsam_proto.v1 import rule_set_pb2, table_service_pb2


def create(api: Api, token: str, **fields: object) -> table_service_pb2.CreateTableResponse:
    request = table_service_pb2.CreateTableRequest(
        request_id=str(uuid.uuid4()), seat_count=2, **fields
    )
    return api.call("CreateTable", request, token)


def test_list_rule_sets_needs_no_token_and_shows_every_preset_whole(api: Api) -> None:
    listed = api.call("ListRuleSets", table_service_pb2.ListRuleSetsRequest(), "")
    open_face = {**OPEN_FACE_PRESETS, **PINEAPPLE_PRESETS}
    assert [entry.name for entry in listed.presets] == [*PRESETS, *open_face]
    assert listed.presets[0].name == "pagat"
    closed = [entry for entry in listed.presets if entry.name in PRESETS]
    for entry in listed.presets[len(closed) :]:
        # Open face's and Pineapple's, with every parameter (series_length: the table's seats).
        assert not entry.HasField("rule_set") and not entry.aliases
        assert entry.open_face_rule_set == open_face_rule_set_message(open_face[entry.name], 0)
        assert entry.description
    for entry in closed:
        assert not entry.HasField("open_face_rule_set")
        assert entry.description == PRESET_DESCRIPTIONS[entry.name]
        assert entry.rule_set == rule_set_message(PRESETS[entry.name])
        assert entry.rule_set.rules_version == RULES_VERSION
        assert entry.rule_set.majority == rule_set_pb2.MAJORITY_RULE_TWO_ROWS_WON
    aliases = {alias: entry.name for entry in listed.presets for alias in entry.aliases}
    assert aliases == {
        "two_four": "pagat_two_four",
        "one_six": "pagat_one_six",
        "scoop_bonus": "pagat_scoop_bonus",
    }


def test_list_rule_sets_pages_the_presets_built_once(api: Api) -> None:
    # Built once, at import (the presets are constants), and served in pages more than once:
    # every page is a copy, so the full list comes back the same each time.
    from sapsam.api.common_messages import preset_messages
    from sapsam.api.preset_list import ALL_PRESETS, open_face_preset_messages

    every = [*preset_messages(), *open_face_preset_messages()]
    assert list(ALL_PRESETS) == every
    for _twice in range(2):
        paged: list[rule_set_pb2.RuleSetPreset] = []
        token = ""
        while True:
            request = table_service_pb2.ListRuleSetsRequest(page_size=2, page_token=token)
            page = api.call("ListRuleSets", request, "")
            paged.extend(page.presets)
            token = page.next_page_token
            if not token:
                break
        assert paged == every


@pytest.mark.parametrize("name", [*OPEN_FACE_PRESETS, *PINEAPPLE_PRESETS])
def test_a_listed_open_face_preset_creates_the_table_it_shows(api: Api, name: str) -> None:
    """What ListRuleSets shows of an open-face preset is the rule set a table made from it has
    (its series_length aside: the table's seats)."""
    listed = api.call("ListRuleSets", table_service_pb2.ListRuleSetsRequest(), "")
    (entry,) = [preset for preset in listed.presets if preset.name == name]
    created = create(api, api.register("olga").token, rule_set_preset=name)
    shown = created.table.open_face_rule_set
    assert shown.series_length == 2
    shown.series_length = 0
    assert shown == entry.open_face_rule_set


def test_a_preset_with_overrides_and_an_alias(api: Api) -> None:
    token = api.register("ann").token
    overrides = rule_set_pb2.RuleSet(
        row_unit=5, majority=rule_set_pb2.MAJORITY_RULE_MORE_ROWS_WON, arrange_seconds=0
    )
    created = create(api, token, rule_set_preset="pagat_two_four", rule_set_overrides=overrides)
    rules = created.table.rule_set
    assert rules.name == "pagat_two_four-custom"
    assert rules.scoring_method == rule_set_pb2.SCORING_METHOD_TWO_FOUR
    assert (rules.row_unit, rules.majority) == (5, rule_set_pb2.MAJORITY_RULE_MORE_ROWS_WON)
    assert not rules.HasField("arrange_seconds") and rules.reveal_seconds == 30
    assert rules.rules_version == RULES_VERSION
    assert len(created.warnings) == 1  # no arranging deadline, chosen explicitly
    # Overrides without a preset change the default, pagat; a name given is kept.
    strict = rule_set_pb2.ROW_ORDER_STRICTLY_INCREASING
    named = create(
        api,
        token,
        rule_set_overrides=rule_set_pb2.RuleSet(name="mine", row_unit=2, row_order=strict),
    )
    assert (named.table.rule_set.name, named.table.rule_set.row_unit) == ("mine", 2)
    assert named.table.rule_set.row_order == strict
    assert named.table.rule_set.scoring_method == rule_set_pb2.SCORING_METHOD_PER_ROW
    # Rules version 1's name is an alias: the table records today's preset.
    aliased = create(api, token, rule_set_preset="one_six")
    assert aliased.table.rule_set == rule_set_message(PRESETS["pagat_one_six"])


def test_royalty_tables_and_stakes_merge_into_a_preset(api: Api) -> None:
    token = api.register("cid").token
    overrides = rule_set_pb2.RuleSet(
        royalty_amounts={"front_pair_Q": 12},
        royalty_middle_three_of_a_kind=0,  # 003: "some tables 0"; one of the seven fields
        pair_units={"0-1": 100},
        royalty_broken_hands=rule_set_pb2.BROKEN_HANDS_CLAIMED,
    )
    created = create(api, token, rule_set_preset="closed_american", rule_set_overrides=overrides)
    rules = created.table.rule_set
    assert rules.rules_version == RULES_VERSION
    american = PRESETS["closed_american"]
    # The table's amounts are the preset's with the two entries changed, every other kept.
    assert dict(rules.royalty_amounts) == {**american.royalty_amounts, "front_pair_Q": 12}
    assert rules.royalty_middle_three_of_a_kind == 0
    assert dict(rules.pair_units) == {"0-1": 100}
    assert rules.royalty_broken_hands == rule_set_pb2.BROKEN_HANDS_CLAIMED


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        (rule_set_pb2.RuleSet(royalty_amounts={"back_pair": 1}), "royalty_amounts"),
        (rule_set_pb2.RuleSet(royalty_amounts={"back_flush": 1001}), "royalty_amounts"),
        (rule_set_pb2.RuleSet(royalty_amounts={"back_four_of_a_kind": 1}), "royalty_amounts"),
        (rule_set_pb2.RuleSet(pair_units={"0-5": 3}), "pair_units"),
        (rule_set_pb2.RuleSet(pair_units={"0-1": 0}), "pair_units"),
    ],
)
def test_bad_royalty_amounts_and_stakes_name_their_field(
    api: Api, overrides: rule_set_pb2.RuleSet, field: str
) -> None:
    token = api.register("dee").token
    before = api.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        create(api, token, rule_set_preset="capsa_susun", rule_set_overrides=overrides)
    code, reason, _, bad_request = error_reason(raised.value)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_RULE_SET")
    violations = [violation.field for violation in bad_request.field_violations]
    assert violations == [f"rule_set_overrides.{field}"]
    assert api.event_count() == before


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        (
            {
                "rule_set": rule_set_pb2.RuleSet(row_unit=2),
                "rule_set_overrides": rule_set_pb2.RuleSet(row_unit=3),
            },
            "rule_set_overrides",
        ),
        (
            {"rule_set_preset": "pagat", "rule_set_overrides": rule_set_pb2.RuleSet(row_unit=0)},
            "rule_set_overrides.row_unit",
        ),
        (
            {"rule_set_overrides": rule_set_pb2.RuleSet(scoop_bonus=1_001)},
            "rule_set_overrides.scoop_bonus",
        ),
        (
            {"rule_set_overrides": rule_set_pb2.RuleSet(majority=7)},  # type: ignore[arg-type]
            "rule_set_overrides.majority",
        ),
        ({"rule_set": rule_set_pb2.RuleSet(majority=9)}, "rule_set.majority"),  # type: ignore[arg-type]
        ({"rule_set": rule_set_pb2.RuleSet(row_order=5)}, "rule_set.row_order"),  # type: ignore[arg-type]
        (
            {"rule_set_preset": "klondike", "rule_set_overrides": rule_set_pb2.RuleSet()},
            "rule_set_preset",
        ),
    ],
)
def test_bad_rules_are_refused_naming_the_field_and_write_nothing(
    api: Api, fields: dict[str, object], field: str
) -> None:
    token = api.register("bob").token
    before = api.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        create(api, token, **fields)
    code, reason, _, bad_request = error_reason(raised.value)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_RULE_SET")
    assert [violation.field for violation in bad_request.field_violations] == [field]
    assert api.event_count() == before


def test_list_rule_sets_pages_and_refuses_a_bad_page(api: Api) -> None:
    seen: list[str] = []
    token = ""
    while True:
        page = api.call(
            "ListRuleSets", table_service_pb2.ListRuleSetsRequest(page_size=2, page_token=token), ""
        )
        assert len(page.presets) <= 2
        seen += [entry.name for entry in page.presets]
        token = page.next_page_token
        if not token:
            break
    assert seen == [*PRESETS, *OPEN_FACE_PRESETS, *PINEAPPLE_PRESETS]
    for request, reason in (
        (table_service_pb2.ListRuleSetsRequest(page_size=101), "BAD_PAGE_SIZE"),
        (table_service_pb2.ListRuleSetsRequest(page_size=-1), "BAD_PAGE_SIZE"),
        (table_service_pb2.ListRuleSetsRequest(page_token="poker"), "BAD_PAGE_TOKEN"),
    ):
        with pytest.raises(grpc.RpcError) as raised:
            api.call("ListRuleSets", request, "")
        code, got, _, _ = error_reason(raised.value)
        assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
