"""docs/rules.md and docs/rules-examples.json, held to the rules engine.

Every example of the JSON file is recomputed with ``sapsam.rules`` (and through ``sapsam score``'s
reader, the command-line contract the page points to); the tables of docs/rules.md (categories,
foul checks, rule-set fields, presets, every pair outcome, the worked examples) are read back and
compared with the code and the file; and every name ``sapsam.rules.ruleset`` defines must appear
on the page, so the spec cannot fall behind the code. A second reading of the page (``spec_*``
below), which shares nothing with ``sapsam``, reaches every documented result too, as a verifier
written elsewhere from the page alone would.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest
from spec_rules_reading import (
    ROWS,
    SPEC_CATEGORIES,
    spec_foul,
    spec_key,
    spec_places,
    spec_units,
)

from sapsam.cli.rules_commands import score_document
from sapsam.rules.arrangement import Arrangement, FoulReason, check_arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.hands import Category, evaluate
from sapsam.rules.naturals import NATURAL_FIELDS, Natural, NaturalsTable, SixPairsCounting
from sapsam.rules.presets import PRESET_ALIASES, PRESETS
from sapsam.rules.royalties import ROYALTY_FIELDS, BrokenHands, RoyaltyLimit, RoyaltyPayment
from sapsam.rules.royalty_tables import ROYALTY_TABLES
from sapsam.rules.ruleset import (
    MAX_BONUS_UNITS,
    MAX_DEADLINE_SECONDS,
    MAX_NAME_LENGTH,
    MAX_ROW_UNIT,
    MAX_SEATS,
    MAX_SERIES_LENGTH,
    MIN_SEATS,
    RULES_VERSION,
    MajorityRule,
    RowOrder,
    RuleSet,
    ScoringMethod,
    SurrenderRule,
    TimeoutPolicy,
)
from sapsam.rules.scoring import score_deal, series_totals, settle, standings

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE = (DOCS / "rules.md").read_text(encoding="utf-8")
EXAMPLES: dict[str, Any] = json.loads((DOCS / "rules-examples.json").read_text(encoding="utf-8"))
DEALS: dict[str, dict[str, Any]] = {deal["id"]: deal for deal in EXAMPLES["deals"]}

Table = list[list[str]]


# ---------------------------------------------------------------------------------------------
# Reading the page


def section(heading_start: str) -> str:
    """The page's text under the one heading starting with ``heading_start`` (``"### 2.1"``),
    up to the next heading of the same or a higher level."""
    level = heading_start.split(" ", 1)[0]
    lines = PAGE.splitlines()
    starts = [
        index
        for index, line in enumerate(lines)
        if line == heading_start or line.startswith(f"{heading_start} ")
    ]
    assert len(starts) == 1, f"docs/rules.md needs exactly one heading {heading_start!r}"
    body: list[str] = []
    for line in lines[starts[0] + 1 :]:
        marks = line.split(" ", 1)[0]
        if set(marks) == {"#"} and len(marks) <= len(level):
            break
        body.append(line)
    return "\n".join(body)


def tables(text: str) -> list[Table]:
    """Every Markdown table in ``text``: rows of stripped cells, the header row first."""
    found: list[Table] = []
    current: Table = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not all(set(cell) <= set("-: ") for cell in cells):  # not the |---| line
                current.append(cells)
        elif current:
            found.append(current)
            current = []
    return found


def table_headed(text: str, first_header: str) -> Table:
    matching = [table for table in tables(text) if table[0][0] == first_header]
    assert len(matching) == 1, f"expected one table headed {first_header!r}"
    return matching[0]


def number(cell: str) -> int:
    """``+3``, ``0``, ``−6`` (a minus sign or a hyphen), or such a number before a colon."""
    return int(cell.split(":", 1)[0].strip().replace("−", "-").replace("+", ""))


def quoted(cell: str) -> list[str]:
    """What the cell holds in backticks."""
    return re.findall(r"`([^`]*)`", cell)


def deal_section(deal_id: str) -> str:
    headings = [
        line for line in PAGE.splitlines() if line.startswith("### 7.") and f"`{deal_id}`" in line
    ]
    assert len(headings) == 1, f"docs/rules.md §7 needs one heading naming `{deal_id}`"
    return section(headings[0])


# ---------------------------------------------------------------------------------------------
# Names and tables of the page against sapsam.rules


def test_every_name_the_rule_set_defines_is_on_the_page() -> None:
    names = (
        [field.name for field in dataclasses.fields(RuleSet)]
        + [method.value for method in ScoringMethod]
        + [policy.value for policy in TimeoutPolicy]
        + [rule.value for rule in MajorityRule]
        + [order.value for order in RowOrder]
        + [payment.value for payment in RoyaltyPayment]
        + [limit.value for limit in RoyaltyLimit]
        + [claim.value for claim in BrokenHands]
        + list(ROYALTY_TABLES)
        + [rule.value for rule in SurrenderRule]
        + [natural.value for natural in Natural]
        + [table.value for table in NaturalsTable]
        + [counting.value for counting in SixPairsCounting]
        + list(PRESETS)
        + list(PRESET_ALIASES)
        + [reason.value for reason in FoulReason]
    )
    missing = [name for name in names if f"`{name}`" not in PAGE]
    assert not missing, f"docs/rules.md does not mention {missing}"


def _default_text(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, StrEnum):
        return f"`{value.value}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, Mapping):
        return json.dumps(dict(value))
    return str(value)


RANGES: dict[str, list[str]] = {
    "name": [f"1 to {MAX_NAME_LENGTH} printable characters"],
    "rules_version": [f"{RULES_VERSION} (a new table's; 1 to {RULES_VERSION - 1} are read for"],
    "scoring": [f"`{method.value}`" for method in ScoringMethod],
    "row_unit": [f"1 to {MAX_ROW_UNIT:,}"],
    "scoop_bonus": [f"0 to {MAX_BONUS_UNITS:,}"],
    "one_six_two_of_three": [f"0 to {MAX_BONUS_UNITS:,}"],
    "one_six_scoop": [f"0 to {MAX_BONUS_UNITS:,}"],
    "min_seats": [f"{MIN_SEATS} to {MAX_SEATS}"],
    "max_seats": [f"{MIN_SEATS} to {MAX_SEATS}"],
    "series_length": [f"1 to {MAX_SERIES_LENGTH:,}"],
    "arrange_seconds": [f"1 to {MAX_DEADLINE_SECONDS:,}", "null"],
    "reveal_seconds": [f"1 to {MAX_DEADLINE_SECONDS:,}", "null"],
    "arrange_timeout_policy": [f"`{policy.value}`" for policy in TimeoutPolicy],
    "majority": [f"`{rule.value}`" for rule in MajorityRule],
    "row_order": [f"`{order.value}`" for order in RowOrder],
    "royalties": [f"`{payment.value}`" for payment in RoyaltyPayment],
    "royalty_limit": [f"`{limit.value}`" for limit in RoyaltyLimit],
    **{name: [f"0 to {MAX_BONUS_UNITS:,}"] for name in ROYALTY_FIELDS},
    "royalty_amounts": [f"royalty key: 0 to {MAX_BONUS_UNITS:,}"],
    "royalty_broken_hands": [f"`{claim.value}`" for claim in BrokenHands],
    "pair_units": [f"1 to {MAX_ROW_UNIT:,}"],
    "surrender": [f"`{rule.value}`" for rule in SurrenderRule],
    "surrender_price": [f"0 to {MAX_BONUS_UNITS:,}"],
    "surrender_seconds": [f"1 to {MAX_DEADLINE_SECONDS:,}", "null"],
    "naturals": [f"`{table.value}`" for table in NaturalsTable],
    **{name: [f"0 to {MAX_BONUS_UNITS:,}"] for name in NATURAL_FIELDS.values()},
    "natural_six_pairs_counting": [f"`{counting.value}`" for counting in SixPairsCounting],
}


def test_the_parameter_table_gives_every_field_its_default_and_range() -> None:
    rows = table_headed(section("### 2.1"), "field")[1:]
    by_field = {quoted(row[0])[0]: row for row in rows}
    fields = dataclasses.fields(RuleSet)
    assert list(by_field) == [field.name for field in fields]
    defaults = RuleSet()
    assert set(RANGES) == set(by_field), "a new field needs its range in RANGES (and the page)"
    for name, (_, default, allowed, _) in by_field.items():
        assert default.startswith(_default_text(getattr(defaults, name))), name
        for text in RANGES[name]:
            assert text in allowed, f"{name}: {text!r} not in {allowed!r}"


def test_the_preset_table_matches_the_presets() -> None:
    rows = table_headed(section("### 2.2"), "preset")[1:]
    assert [quoted(row[0])[0] for row in rows] == list(PRESETS)
    for row in rows:
        preset = PRESETS[quoted(row[0])[0]]
        assert quoted(row[1]) == [preset.scoring.value]
        assert preset.name == quoted(row[0])[0]
        changed = {
            field.name
            for field in dataclasses.fields(RuleSet)
            if field.name != "name"
            and getattr(preset, field.name) != getattr(RuleSet(), field.name)
        }
        assert changed <= {"scoring"} | set(quoted(row[2])), f"{preset.name} changes {changed}"


def test_the_outcome_table_is_what_settle_pays() -> None:
    table = table_headed(section("### 2.4"), "W")
    methods = [ScoringMethod(quoted(cell)[0]) for cell in table[0][3:]]
    assert sorted(methods) == sorted(ScoringMethod)
    seen = set()
    for row in table[1:]:
        won, lost, tied = (int(cell) for cell in row[:3])
        assert won + lost + tied == 3
        rows = (1,) * won + (-1,) * lost + (0,) * tied
        seen.add((won, lost))
        for method, cell in zip(methods, row[3:], strict=True):
            assert settle(RuleSet(scoring=method), rows) == number(cell), (method, rows)
    assert len(seen) == 10, "every split of three rows into won, lost and tied"


def test_the_category_table_names_and_numbers_every_category() -> None:
    rows = table_headed(section("### 1.3"), "category (name in the examples file)")[1:]
    assert len(rows) == len(Category)
    for row in rows:
        name = quoted(row[0])[0]
        category = Category[name.upper()]
        assert int(row[1]) == category.value
        assert evaluate(parse_cards(quoted(row[2])[0])).category is category, row
    assert [Category[quoted(row[0])[0].upper()] for row in rows] == sorted(Category, reverse=True)


def test_the_foul_checks_are_listed_in_the_order_the_code_runs_them() -> None:
    rows = table_headed(section("### 1.5"), "order")[1:]
    assert [quoted(row[2])[0] for row in rows] == [reason.value for reason in FoulReason]


# ---------------------------------------------------------------------------------------------
# The examples file against sapsam.rules


def rule_set(overrides: dict[str, Any]) -> RuleSet:
    result = RuleSet.from_dict(overrides)
    result.check_limits()  # every example is a rule set a new table may have
    return result


def arrangement(seat: dict[str, str]) -> Arrangement:
    return Arrangement.parse(seat["front"], seat["middle"], seat["back"])


@pytest.mark.parametrize("example", EXAMPLES["row_values"], ids=lambda e: e["cards"])
def test_row_values(example: dict[str, str]) -> None:
    assert evaluate(parse_cards(example["cards"])).category.name.lower() == example["category"]


@pytest.mark.parametrize("example", EXAMPLES["row_comparisons"], ids=lambda e: e["note"])
def test_row_comparisons(example: dict[str, Any]) -> None:
    first = evaluate(parse_cards(example["first"]))
    second = evaluate(parse_cards(example["second"]))
    assert (first > second) - (first < second) == example["result"]


@pytest.mark.parametrize("example", EXAMPLES["arrangements"], ids=lambda e: e["note"])
def test_foul_checks(example: dict[str, Any]) -> None:
    dealt = parse_cards(example["dealt"], count=13) if "dealt" in example else None
    # Arrangement.parse refuses a card repeated inside one row only, as the API does.
    check = check_arrangement(arrangement(example), dealt)
    assert check.foul is example["foul"]
    assert (None if check.reason is None else check.reason.value) == example["foul_reason"]


@pytest.mark.parametrize("deal", EXAMPLES["deals"], ids=lambda d: d["id"])
def test_deal(deal: dict[str, Any]) -> None:
    seats = [arrangement(seat) for seat in deal["seats"]]
    cards = [card for seat in seats for card in seat.cards]
    assert all(len(seat.cards) == 13 for seat in seats)
    assert len(set(cards)) == len(cards), "one deck: no card at two seats"
    checks = [check_arrangement(seat) for seat in seats]
    assert [check.foul for check in checks] == deal["fouls"]
    assert [None if c.reason is None else c.reason.value for c in checks] == deal["foul_reasons"]
    assert [
        [value.category.name.lower() for value in check.values or ()] for check in checks
    ] == deal["categories"]
    assert [entry["label"] for entry in deal["scores"]][:4] == [m.value for m in ScoringMethod]
    for entry in deal["scores"]:
        score = score_deal(rule_set(entry["rule_set"]), checks)
        assert [[pair.seat_a, pair.seat_b] for pair in score.pairs] == [
            pair["seats"] for pair in deal["pairs"]
        ]
        assert [list(pair.rows) for pair in score.pairs] == [pair["rows"] for pair in deal["pairs"]]
        assert [pair.delta for pair in score.pairs] == entry["deltas"], entry["label"]
        assert list(score.totals) == entry["totals"], entry["label"]
        # The same deal through `sapsam score`'s reader, as the page tells a reader to run it.
        result = score_document({"rules": entry["rule_set"], "seats": deal["seats"]})
        assert [seat["total"] for seat in result["seats"]] == entry["totals"]
        assert [pair["delta"] for pair in result["pairs"]] == entry["deltas"]
    if "standings" in deal:
        per_row = score_deal(rule_set({}), checks)
        assert [dataclasses.asdict(s) for s in standings(per_row.totals)] == deal["standings"]


@pytest.mark.parametrize("series", EXAMPLES["series"], ids=lambda s: s["id"])
def test_series(series: dict[str, Any]) -> None:
    deals = [DEALS[deal_id] for deal_id in series["deals"]]
    for entry in series["scores"]:
        rules = rule_set(entry["rule_set"])
        scores = [
            score_deal(rules, [check_arrangement(arrangement(seat)) for seat in deal["seats"]])
            for deal in deals
        ]
        totals = series_totals(scores, len(deals[0]["seats"]))
        assert list(totals) == entry["totals"], entry["label"]
        places = {standing.seat: standing.place for standing in standings(totals)}
        assert [places[seat] for seat in range(len(totals))] == entry["places"]


# ---------------------------------------------------------------------------------------------
# The worked examples as the page shows them


@pytest.mark.parametrize("deal", EXAMPLES["deals"], ids=lambda d: d["id"])
def test_the_page_shows_each_deal_as_the_file_holds_it(deal: dict[str, Any]) -> None:
    text = deal_section(deal["id"])
    seat_rows = table_headed(text, "seat")[1:]
    assert len(seat_rows) == len(deal["seats"])
    for number_, (row, seat) in enumerate(zip(seat_rows, deal["seats"], strict=True)):
        assert row[0].split()[0] == str(number_)
        assert [quoted(cell)[0] for cell in row[1:4]] == [seat[name] for name in ROWS]
        reason = deal["foul_reasons"][number_]
        if reason is None:
            assert row[4].startswith("legal"), row
        else:
            assert row[4].startswith(f"foul (`{reason}`"), row
    pair_rows = table_headed(text, "pair")[1:]
    assert [row[0] for row in pair_rows] == [
        f"{pair['seats'][0]}–{pair['seats'][1]}" for pair in deal["pairs"]
    ]
    assert [[number(cell) for cell in row[1:]] for row in pair_rows] == [
        pair["rows"] for pair in deal["pairs"]
    ]
    score_table = table_headed(text, "rule set")
    pair_count, seat_count = len(deal["pairs"]), len(deal["seats"])
    assert score_table[0][1:] == [row[0] for row in pair_rows] + [
        f"seat {seat}" for seat in range(seat_count)
    ]
    shown = {quoted(row[0])[0]: [number(cell) for cell in row[1:]] for row in score_table[1:]}
    assert shown == {entry["label"]: entry["deltas"] + entry["totals"] for entry in deal["scores"]}
    assert all(len(values) == pair_count + seat_count for values in shown.values())


@pytest.mark.parametrize("series", EXAMPLES["series"], ids=lambda s: s["id"])
def test_the_page_shows_each_series_as_the_file_holds_it(series: dict[str, Any]) -> None:
    headings = [line for line in PAGE.splitlines() if f"`{series['id']}`" in line]
    assert len(headings) == 1 and headings[0].startswith("### 7.")
    table = table_headed(section(headings[0]), "rule set")
    shown = {
        quoted(row[0])[0]: ([number(cell) for cell in row[1:-1]], row[-1]) for row in table[1:]
    }
    assert shown == {
        entry["label"]: (entry["totals"], ", ".join(map(str, entry["places"])))
        for entry in series["scores"]
    }
    for deal_id in series["deals"]:
        assert f"`{deal_id}`" in section(headings[0])


# ---------------------------------------------------------------------------------------------
# A second reading: the page's rules written out again with nothing from sapsam (§1.3-§1.7, §2.3)


def spec_score(deal: dict[str, Any], rule_set_: dict[str, Any]) -> tuple[list[Any], list[int]]:
    """§1.5-§1.6: every pair's rows and delta in seat order, and each seat's total."""
    seats = deal["seats"]
    fouls = [spec_foul(seat) is not None for seat in seats]
    pairs: list[Any] = []
    totals = [0] * len(seats)
    for a in range(len(seats)):
        for b in range(a + 1, len(seats)):
            if fouls[a] or fouls[b]:
                rows = [0 if fouls[a] and fouls[b] else -1 if fouls[a] else 1] * 3
            else:
                keys = [(spec_key(seats[a][n]), spec_key(seats[b][n])) for n in ROWS]
                rows = [(mine > theirs) - (mine < theirs) for mine, theirs in keys]
            delta = spec_units(rule_set_, rows)
            pairs.append(({"seats": [a, b], "rows": rows}, delta))
            totals[a] += delta
            totals[b] -= delta
    return pairs, totals


def test_the_page_alone_gives_every_row_value_and_comparison() -> None:
    for example in EXAMPLES["row_values"]:
        assert SPEC_CATEGORIES[spec_key(example["cards"])[0]] == example["category"], example
    for example in EXAMPLES["row_comparisons"]:
        first, second = spec_key(example["first"]), spec_key(example["second"])
        assert (first > second) - (first < second) == example["result"], example
    for example in EXAMPLES["arrangements"]:
        assert spec_foul(example, example.get("dealt")) == example["foul_reason"], example


@pytest.mark.parametrize("deal", EXAMPLES["deals"], ids=lambda d: d["id"])
def test_the_page_alone_gives_every_deal_result(deal: dict[str, Any]) -> None:
    assert [spec_foul(seat) for seat in deal["seats"]] == deal["foul_reasons"]
    for entry in deal["scores"]:
        pairs, totals = spec_score(deal, entry["rule_set"])
        assert [pair for pair, _ in pairs] == deal["pairs"]
        assert [delta for _, delta in pairs] == entry["deltas"], entry["label"]
        assert totals == entry["totals"], entry["label"]
    if "standings" in deal:
        per_row = spec_score(deal, {})[1]
        places = spec_places(per_row)
        assert [places[s["seat"]] for s in deal["standings"]] == [
            s["place"] for s in deal["standings"]
        ]


@pytest.mark.parametrize("series", EXAMPLES["series"], ids=lambda s: s["id"])
def test_the_page_alone_gives_every_series_result(series: dict[str, Any]) -> None:
    for entry in series["scores"]:
        deal_totals = [spec_score(DEALS[d], entry["rule_set"])[1] for d in series["deals"]]
        totals = [sum(column) for column in zip(*deal_totals, strict=True)]
        assert totals == entry["totals"]
        assert spec_places(totals) == entry["places"]
