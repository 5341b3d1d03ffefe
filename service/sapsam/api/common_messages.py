"""From domain values to API messages, the parts every view shares: rule sets (both ways),
timestamps, timeout stages and consequences, and who created a table."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final

from google.protobuf.timestamp_pb2 import Timestamp

from sapsam.api import resources
from sapsam.api.api_error import ApiError
from sapsam.rules.ruleset import (
    DEFAULT_RULE_SET,
    RuleSet,
    RuleSetError,
    ScoringMethod,
    TimeoutPolicy,
    preset,
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
STAGE_TO_WIRE: Final = {
    "arranging": table_pb2.TIMEOUT_STAGE_ARRANGING,
    "revealing": table_pb2.TIMEOUT_STAGE_REVEALING,
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
    )
    if rule_set.arrange_seconds is not None:
        message.arrange_seconds = rule_set.arrange_seconds
    if rule_set.reveal_seconds is not None:
        message.reveal_seconds = rule_set.reveal_seconds
    return message


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
)


def _rule_set_error(error: RuleSetError, field_prefix: str) -> ApiError:
    text = str(error)
    key = next((name for name in _OPTIONAL_INTEGERS if f"'{name}'" in text), None)
    return ApiError("BAD_RULE_SET", text, field=f"{field_prefix}.{key}" if key else field_prefix)


def rule_set_from_message(message: rule_set_pb2.RuleSet) -> RuleSet:
    """A rule set from a request: unset fields take the base game's values (the ``pagat``
    preset's, deadlines included); a deadline set to 0 means none."""
    values: dict[str, Any] = DEFAULT_RULE_SET.to_dict()
    values["name"] = message.name or "custom"
    if message.scoring_method != rule_set_pb2.SCORING_METHOD_UNSPECIFIED:
        method = _SCORING_FROM_WIRE.get(message.scoring_method)
        if method is None:
            raise ApiError(
                "BAD_RULE_SET", "unknown scoring method", field="rule_set.scoring_method"
            )
        values["scoring"] = method.value
    if message.arrange_timeout_policy != rule_set_pb2.TIMEOUT_POLICY_UNSPECIFIED:
        policy = _POLICY_FROM_WIRE.get(message.arrange_timeout_policy)
        if policy is None:
            raise ApiError(
                "BAD_RULE_SET", "unknown timeout policy", field="rule_set.arrange_timeout_policy"
            )
        values["arrange_timeout_policy"] = policy.value
    for name in _OPTIONAL_INTEGERS:
        if message.HasField(name):
            values[name] = getattr(message, name)
    # 0: explicitly no deadline (the response then warns).
    if message.HasField("arrange_seconds") and message.arrange_seconds == 0:
        values["arrange_seconds"] = None
    if message.HasField("reveal_seconds") and message.reveal_seconds == 0:
        values["reveal_seconds"] = None
    try:
        rule_set = RuleSet.from_dict(values)
        rule_set.check_limits()  # a new table's: every number within its documented maximum
    except RuleSetError as error:
        raise _rule_set_error(error, "rule_set") from None
    return rule_set


def rule_set_for_request(
    preset_name: str | None, message: rule_set_pb2.RuleSet | None, series_length: int | None
) -> RuleSet:
    """The rule set a CreateTable request asks for (preset, full rules or the default)."""
    if message is not None:
        rule_set = rule_set_from_message(message)
    elif preset_name:
        try:
            rule_set = preset(preset_name)
        except RuleSetError as error:
            raise ApiError("BAD_RULE_SET", str(error), field="rule_set_preset") from None
    else:
        rule_set = DEFAULT_RULE_SET
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
"""The form the store writes ``recorded_at`` in (``sapsam.store.appends.recorded_at_now``)."""


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


def timeout_consequence(consequence: str) -> table_pb2.TimeoutConsequence.ValueType:
    """A recorded timeout consequence (``foul``, ``solver``) on the wire."""
    return CONSEQUENCE_TO_WIRE.get(consequence, table_pb2.TIMEOUT_CONSEQUENCE_UNSPECIFIED)
