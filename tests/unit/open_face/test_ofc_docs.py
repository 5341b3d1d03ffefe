"""docs/rules.md §8 names every open-face parameter, value and preset the code defines."""

from __future__ import annotations

import dataclasses
from enum import StrEnum
from pathlib import Path

from sapsam.rules.open_face.automatic import AutomaticReason
from sapsam.rules.open_face.parameters import (
    OPEN_FACE_ROYALTY_TABLES,
    AutomaticMoves,
    FantasylandCards,
    FantasylandReentry,
    FinnishTwo,
    LowballOrder,
    MiddleRow,
    OpenFaceRules,
    OpenFaceTimeoutPolicy,
)
from sapsam.rules.open_face.presets import OPEN_FACE_PRESETS, PINEAPPLE_PRESETS

PAGE = (Path(__file__).resolve().parents[3] / "docs" / "rules.md").read_text(encoding="utf-8")
SECTION = PAGE[PAGE.index("## 8. Open-face") :]


def test_every_parameter_value_and_preset_is_on_the_page() -> None:
    enums: list[type[StrEnum]] = [
        FantasylandCards,
        FantasylandReentry,
        OpenFaceTimeoutPolicy,
        AutomaticMoves,
        AutomaticReason,
        MiddleRow,
        LowballOrder,
        FinnishTwo,
    ]
    names = [field.name for field in dataclasses.fields(OpenFaceRules)]
    names += [member.value for enum in enums for member in enum if member.value != "timeout"]
    names += [*OPEN_FACE_PRESETS, *PINEAPPLE_PRESETS, *OPEN_FACE_ROYALTY_TABLES]
    missing = [name for name in names if f"`{name}`" not in SECTION]
    assert not missing, f"docs/rules.md §8 does not name {missing}"


def test_the_parameter_table_lists_every_field_once() -> None:
    table = SECTION[SECTION.index("### 8.9") :]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    listed = [name.strip(" `") for row in rows for name in row.split("|")[1].split(",")]
    fields = [field.name for field in dataclasses.fields(OpenFaceRules)]
    assert sorted(name for name in listed if name in fields) == sorted(fields)
