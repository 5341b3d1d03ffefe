"""ListRuleSets' presets: every rule set CreateTable takes by name, each with its description and
every parameter, built once (they are constants; a response copies what it is given).

The closed game's come first, in ``sapsam.rules.presets``' order (the default, ``pagat``,
first), then open face's and Pineapple's (``sapsam.rules.open_face.parameters``), whose
parameters are in ``RuleSetPreset.open_face_rule_set``: a set has as many deals as the table's
seats, so their ``series_length`` is 0 here."""

from __future__ import annotations

from typing import Final

from sapsam.api.common_messages import preset_messages
from sapsam.api.open_face_messages import open_face_rule_set_message
from sapsam.rules.open_face.presets import (
    OPEN_FACE_PRESET_DESCRIPTIONS,
    OPEN_FACE_PRESETS,
    PINEAPPLE_PRESET_DESCRIPTIONS,
    PINEAPPLE_PRESETS,
)
from sapsam_proto.v1 import rule_set_pb2

__all__ = ["ALL_PRESETS", "PRESET_NAMES", "open_face_preset_messages"]


def open_face_preset_messages() -> list[rule_set_pb2.RuleSetPreset]:
    """Open face's and Pineapple's presets as ListRuleSets returns them."""
    descriptions = {**OPEN_FACE_PRESET_DESCRIPTIONS, **PINEAPPLE_PRESET_DESCRIPTIONS}
    return [
        rule_set_pb2.RuleSetPreset(
            name=name,
            description=descriptions[name],
            open_face_rule_set=open_face_rule_set_message(rules, 0),
        )
        for name, rules in {**OPEN_FACE_PRESETS, **PINEAPPLE_PRESETS}.items()
    ]


ALL_PRESETS: Final = (*preset_messages(), *open_face_preset_messages())
"""Every preset, in ListRuleSets' order."""
PRESET_NAMES: Final = [entry.name for entry in ALL_PRESETS]
"""Their names, in that order (a page token is the name of the next page's first)."""
