"""From domain values to API messages, the parts every view shares: rule sets (both ways),
timestamps, timeout stages and consequences, and who created a table."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final

from google.protobuf.timestamp_pb2 import Timestamp

from sapsam.api import resources
from sapsam.api.api_error import ApiError
from sapsam.rules.naturals import NATURAL_FIELDS, NaturalsTable, SixPairsCounting
from sapsam.rules.presets import (
    DEFAULT_RULE_SET,
    PRESET_ALIASES,
    PRESET_DESCRIPTIONS,
    PRESET_SURRENDER_SECONDS,
    PRESETS,
    preset,
)
from sapsam.rules.royalties import ROYALTY_FIELDS, BrokenHands, RoyaltyLimit, RoyaltyPayment
from sapsam.rules.ruleset import (
    MajorityRule,
    RowOrder,
    RuleSet,
    RuleSetError,
    ScoringMethod,
    SurrenderRule,
    TimeoutPolicy,
)
from sapsam_proto.v1 import rule_set_pb2, table_pb2

OPERATOR_ACTOR: Final = "operator"

_SCORING_TO_WIRE: Final = {
    ScoringMethod.PER_ROW: rule_set_pb2.SCORING_METHOD_PER_ROW,
    ScoringMethod.TWO_FOUR: rule_set_pb2.SCORING_METHOD_TWO_FOUR,
    ScoringMethod.ONE_SIX: rule_set_pb2.SCORING_METHOD_ONE_SIX,
    ScoringMethod.PER_ROW_SCOOP_BONUS: rule_set_pb2.SCORING_METHOD_PER_ROW_SCOOP_BONUS,
}
_SCORING_FROM_WIRE: Final = {wire: method for method, wire in _SCORING_TO_WIRE.items()}
_POLICY_TO_WIRE: Final = {
    TimeoutPolicy.FOUL: rule_set_pb2.TIMEOUT_POLICY_FOUL,
    TimeoutPolicy.SOLVER: rule_set_pb2.TIMEOUT_POLICY_SOLVER,
}
_POLICY_FROM_WIRE: Final = {wire: policy for policy, wire in _POLICY_TO_WIRE.items()}
_MAJORITY_TO_WIRE: Final = {
    MajorityRule.TWO_ROWS_WON: rule_set_pb2.MAJORITY_RULE_TWO_ROWS_WON,
    MajorityRule.MORE_ROWS_WON: rule_set_pb2.MAJORITY_RULE_MORE_ROWS_WON,
}
_MAJORITY_FROM_WIRE: Final = {wire: rule for rule, wire in _MAJORITY_TO_WIRE.items()}
_ROW_ORDER_TO_WIRE: Final = {
    RowOrder.NON_DECREASING: rule_set_pb2.ROW_ORDER_NON_DECREASING,
    RowOrder.STRICTLY_INCREASING: rule_set_pb2.ROW_ORDER_STRICTLY_INCREASING,
}
_ROW_ORDER_FROM_WIRE: Final = {wire: order for order, wire in _ROW_ORDER_TO_WIRE.items()}
_ROYALTIES_TO_WIRE: Final = {
    RoyaltyPayment.NONE: rule_set_pb2.ROYALTY_PAYMENT_NONE,
    RoyaltyPayment.WON_ROW: rule_set_pb2.ROYALTY_PAYMENT_WON_ROW,
    RoyaltyPayment.HELD_ROW: rule_set_pb2.ROYALTY_PAYMENT_HELD_ROW,
}
_ROYALTIES_FROM_WIRE: Final = {wire: method for method, wire in _ROYALTIES_TO_WIRE.items()}
_ROYALTY_LIMIT_TO_WIRE: Final = {
    RoyaltyLimit.EVERY_ROW: rule_set_pb2.ROYALTY_LIMIT_EVERY_ROW,
    RoyaltyLimit.LARGEST_ONLY: rule_set_pb2.ROYALTY_LIMIT_LARGEST_ONLY,
}
_ROYALTY_LIMIT_FROM_WIRE: Final = {wire: limit for limit, wire in _ROYALTY_LIMIT_TO_WIRE.items()}
_NATURALS_TO_WIRE: Final = {
    NaturalsTable.NONE: rule_set_pb2.NATURALS_TABLE_NONE,
    NaturalsTable.CLASSIC: rule_set_pb2.NATURALS_TABLE_CLASSIC,
    NaturalsTable.EXTENDED: rule_set_pb2.NATURALS_TABLE_EXTENDED,
}
_NATURALS_FROM_WIRE: Final = {wire: table for table, wire in _NATURALS_TO_WIRE.items()}
_SIX_PAIRS_TO_WIRE: Final = {
    SixPairsCounting.ANY_GROUP: rule_set_pb2.SIX_PAIRS_COUNTING_ANY_GROUP,
    SixPairsCounting.DISTINCT_RANKS: rule_set_pb2.SIX_PAIRS_COUNTING_DISTINCT_RANKS,
}
_SIX_PAIRS_FROM_WIRE: Final = {wire: counting for counting, wire in _SIX_PAIRS_TO_WIRE.items()}
_SURRENDER_TO_WIRE: Final = {
    SurrenderRule.OFF: rule_set_pb2.SURRENDER_RULE_OFF,
    SurrenderRule.PAY_PLAYERS: rule_set_pb2.SURRENDER_RULE_PAY_PLAYERS,
    SurrenderRule.PAY_LEGAL_HANDS: rule_set_pb2.SURRENDER_RULE_PAY_LEGAL_HANDS,
}
_SURRENDER_FROM_WIRE: Final = {wire: rule for rule, wire in _SURRENDER_TO_WIRE.items()}
_BROKEN_HANDS_TO_WIRE: Final = {
    BrokenHands.NOT_CLAIMED: rule_set_pb2.BROKEN_HANDS_NOT_CLAIMED,
    BrokenHands.CLAIMED: rule_set_pb2.BROKEN_HANDS_CLAIMED,
}
_BROKEN_HANDS_FROM_WIRE: Final = {wire: rule for rule, wire in _BROKEN_HANDS_TO_WIRE.items()}
_MAPS: Final = ("royalty_amounts", "pair_units")
"""The rule set's map fields: a request's entries are merged into the base's."""
STAGE_TO_WIRE: Final = {
    "arranging": table_pb2.TIMEOUT_STAGE_ARRANGING,
    "announcing": table_pb2.TIMEOUT_STAGE_ANNOUNCING,
    "revealing": table_pb2.TIMEOUT_STAGE_REVEALING,
    # Open face's stages (sapsam.domain.open_face.deal_deadlines): in DeadlinesExtended only.
    "placing": table_pb2.TIMEOUT_STAGE_PLACING,
    "fantasyland": table_pb2.TIMEOUT_STAGE_FANTASYLAND,
    "discarding": table_pb2.TIMEOUT_STAGE_DISCARDING,
}
CONSEQUENCE_TO_WIRE: Final = {
    "foul": table_pb2.TIMEOUT_CONSEQUENCE_FOUL,
    "solver": table_pb2.TIMEOUT_CONSEQUENCE_SOLVER,
}


# -- rule sets --------------------------------------------------------------------------------


def rule_set_message(rule_set: RuleSet) -> rule_set_pb2.RuleSet:
    """Every field of a rule set, on the wire."""
    message = rule_set_pb2.RuleSet(
        name=rule_set.name,
        rules_version=rule_set.rules_version,
        scoring_method=_SCORING_TO_WIRE[rule_set.scoring],
        row_unit=rule_set.row_unit,
        scoop_bonus=rule_set.scoop_bonus,
        one_six_two_of_three=rule_set.one_six_two_of_three,
        one_six_scoop=rule_set.one_six_scoop,
        min_seats=rule_set.min_seats,
        max_seats=rule_set.max_seats,
        series_length=rule_set.series_length,
        arrange_timeout_policy=_POLICY_TO_WIRE[rule_set.arrange_timeout_policy],
        majority=_MAJORITY_TO_WIRE[rule_set.majority],
        row_order=_ROW_ORDER_TO_WIRE[rule_set.row_order],
        royalties=_ROYALTIES_TO_WIRE[rule_set.royalties],
        royalty_limit=_ROYALTY_LIMIT_TO_WIRE[rule_set.royalty_limit],
        **{name: getattr(rule_set, name) for name in ROYALTY_FIELDS},
        naturals=_NATURALS_TO_WIRE[rule_set.naturals],
        **{name: getattr(rule_set, name) for name in NATURAL_FIELDS.values()},
        natural_six_pairs_counting=_SIX_PAIRS_TO_WIRE[rule_set.natural_six_pairs_counting],
        surrender=_SURRENDER_TO_WIRE[rule_set.surrender],
        surrender_price=rule_set.surrender_price,
        royalty_amounts=dict(rule_set.royalty_amounts),
        royalty_broken_hands=_BROKEN_HANDS_TO_WIRE[rule_set.royalty_broken_hands],
        pair_units=dict(rule_set.pair_units),
    )
    if rule_set.surrender_seconds is not None:
        message.surrender_seconds = rule_set.surrender_seconds
    if rule_set.arrange_seconds is not None:
        message.arrange_seconds = rule_set.arrange_seconds
    if rule_set.reveal_seconds is not None:
        message.reveal_seconds = rule_set.reveal_seconds
    return message


def preset_messages() -> list[rule_set_pb2.RuleSetPreset]:
    """Every preset as ListRuleSets returns it: name, description, rule set, older names."""
    return [
        rule_set_pb2.RuleSetPreset(
            name=name,
            description=PRESET_DESCRIPTIONS[name],
            rule_set=rule_set_message(rule_set),
            aliases=[alias for alias, target in PRESET_ALIASES.items() if target == name],
        )
        for name, rule_set in PRESETS.items()
    ]


_OPTIONAL_INTEGERS: Final = (
    "row_unit",
    "scoop_bonus",
    "one_six_two_of_three",
    "one_six_scoop",
    "min_seats",
    "max_seats",
    "series_length",
    "arrange_seconds",
    "reveal_seconds",
    # sapsam.rules.royalties.ROYALTY_FIELDS, spelled out: HasField takes the literal names.
    "royalty_front_three_of_a_kind",
    "royalty_middle_three_of_a_kind",
    "royalty_middle_full_house",
    "royalty_middle_four_of_a_kind",
    "royalty_middle_straight_flush",
    "royalty_back_four_of_a_kind",
    "royalty_back_straight_flush",
    # sapsam.rules.naturals.NATURAL_FIELDS, likewise.
    "natural_six_pairs",
    "natural_three_straights",
    "natural_three_flushes",
    "natural_dragon",
    "surrender_price",
    "surrender_seconds",
)


def _rule_set_error(error: RuleSetError, field_prefix: str) -> ApiError:
    text = str(error)
    key = next((name for name in (*_MAPS, *_OPTIONAL_INTEGERS) if f"'{name}'" in text), None)
    return ApiError("BAD_RULE_SET", text, field=f"{field_prefix}.{key}" if key else field_prefix)


def rule_set_from_message(
    message: rule_set_pb2.RuleSet,
    base: RuleSet = DEFAULT_RULE_SET,
    field: str = "rule_set",
    default_name: str = "custom",
) -> RuleSet:
    """A rule set from a request: unset fields take ``base``'s values (by default the ``pagat``
    preset's, deadlines included); a deadline set to 0 means none. Errors name ``field``."""
    values: dict[str, Any] = base.to_dict()
    values["name"] = message.name or default_name
    enums = (
        ("scoring_method", "scoring", "scoring method", _SCORING_FROM_WIRE),
        ("arrange_timeout_policy", "arrange_timeout_policy", "timeout policy", _POLICY_FROM_WIRE),
        ("majority", "majority", "majority rule", _MAJORITY_FROM_WIRE),
        ("row_order", "row_order", "row order", _ROW_ORDER_FROM_WIRE),
        ("royalties", "royalties", "royalty payment", _ROYALTIES_FROM_WIRE),
        ("royalty_limit", "royalty_limit", "royalty limit", _ROYALTY_LIMIT_FROM_WIRE),
        ("naturals", "naturals", "naturals table", _NATURALS_FROM_WIRE),
        (
            "natural_six_pairs_counting",
            "natural_six_pairs_counting",
            "six pairs counting",
            _SIX_PAIRS_FROM_WIRE,
        ),
        ("surrender", "surrender", "surrender rule", _SURRENDER_FROM_WIRE),
        ("royalty_broken_hands", "royalty_broken_hands", "broken hands", _BROKEN_HANDS_FROM_WIRE),
    )
    for wire_name, key, what, from_wire in enums:
        wire_value = getattr(message, wire_name)
        if wire_value != 0:  # 0 is every enum's UNSPECIFIED: keep the base's value
            value = from_wire.get(wire_value)
            if value is None:
                raise ApiError("BAD_RULE_SET", f"unknown {what}", field=f"{field}.{wire_name}")
            values[key] = value.value
    for name in _OPTIONAL_INTEGERS:
        if message.HasField(name):
            values[name] = getattr(message, name)
    for name in _MAPS:
        entries = getattr(message, name)
        if entries:
            values[name] = {**values.get(name, {}), **entries}
    # 0: explicitly no deadline (the response then warns).
    if message.HasField("arrange_seconds") and message.arrange_seconds == 0:
        values["arrange_seconds"] = None
    if message.HasField("reveal_seconds") and message.reveal_seconds == 0:
        values["reveal_seconds"] = None
    if message.HasField("surrender_seconds") and message.surrender_seconds == 0:
        values["surrender_seconds"] = None
    elif (
        not message.HasField("surrender_seconds")
        and values.get("surrender", SurrenderRule.OFF.value) != SurrenderRule.OFF.value
        and values.get("surrender_seconds") is None
    ):
        # Surrender turned on without a deadline of its own: the turns get the presets' one.
        values["surrender_seconds"] = PRESET_SURRENDER_SECONDS
    try:
        rule_set = RuleSet.from_dict(values)
        rule_set.check_limits()  # a new table's: every number within its documented maximum
    except RuleSetError as error:
        raise _rule_set_error(error, field) from None
    return rule_set


def rule_set_for_request(
    preset_name: str | None,
    message: rule_set_pb2.RuleSet | None,
    series_length: int | None,
    overrides: rule_set_pb2.RuleSet | None = None,
) -> RuleSet:
    """The rule set a CreateTable request asks for (preset, full rules or the default), with
    ``overrides`` applied to the preset (or the default)."""
    if message is not None:
        if overrides is not None:
            raise ApiError(
                "BAD_RULE_SET",
                "rule_set_overrides change a preset; a full rule_set takes none (set its fields)",
                field="rule_set_overrides",
            )
        rule_set = rule_set_from_message(message)
    else:
        rule_set = DEFAULT_RULE_SET
        if preset_name:
            try:
                rule_set = preset(preset_name)
            except RuleSetError as error:
                raise ApiError("BAD_RULE_SET", str(error), field="rule_set_preset") from None
        if overrides is not None:
            rule_set = rule_set_from_message(
                overrides, rule_set, "rule_set_overrides", f"{rule_set.name}-custom"
            )
    if series_length is not None:
        try:
            rule_set = rule_set.with_changes(series_length=series_length)
        except RuleSetError as error:
            raise ApiError("BAD_SERIES_LENGTH", str(error), field="series_length") from None
    return rule_set


# -- times --------------------------------------------------------------------------------------


def timestamp_from_ms(milliseconds: int) -> Timestamp:
    """A protobuf timestamp for Unix milliseconds."""
    stamp = Timestamp()
    stamp.FromMilliseconds(milliseconds)
    return stamp


_RECORDED_AT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
"""The form the store writes ``recorded_at`` in (``sapsam.store.append_parts.recorded_at_now``)."""


def timestamp_from_text(text: str) -> Timestamp:
    """A protobuf timestamp for the store's ``recorded_at`` (ISO 8601, UTC).

    The store's own form is parsed by ``datetime.fromisoformat`` (about 9 us against 90 for
    protobuf's ``FromJsonString``, which goes through ``strptime``; every event sent to a
    stream carries one); any other text by ``FromJsonString``."""
    if _RECORDED_AT.fullmatch(text):
        moment = datetime.fromisoformat(text)
        whole = moment.replace(microsecond=0).timestamp()
        return Timestamp(seconds=int(whole), nanos=moment.microsecond * 1000)
    stamp = Timestamp()
    if text:
        stamp.FromJsonString(text)
    return stamp


def creator_name(created_by: str) -> str:
    """``players/{player}`` for a player creator, empty for the operator."""
    return "" if created_by == OPERATOR_ACTOR else resources.player_name(created_by)


def timeout_stage(stage: str) -> table_pb2.TimeoutStage.ValueType:
    """A recorded timeout stage (``arranging``, ``revealing``) on the wire."""
    return STAGE_TO_WIRE.get(stage, table_pb2.TIMEOUT_STAGE_UNSPECIFIED)


def surrender_choice(surrendered: bool | None) -> table_pb2.SurrenderChoice.ValueType:
    """A seat's announcement on the wire (``None``: not announced)."""
    if surrendered is None:
        return table_pb2.SURRENDER_CHOICE_UNSPECIFIED
    return table_pb2.SURRENDER_CHOICE_SURRENDER if surrendered else table_pb2.SURRENDER_CHOICE_PLAY


def timeout_consequence(consequence: str) -> table_pb2.TimeoutConsequence.ValueType:
    """A recorded timeout consequence (``foul``, ``solver``) on the wire."""
    return CONSEQUENCE_TO_WIRE.get(consequence, table_pb2.TIMEOUT_CONSEQUENCE_UNSPECIFIED)
