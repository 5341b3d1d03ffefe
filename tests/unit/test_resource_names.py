"""Resource names have one spelling each: a lowercase hyphenated UUID, ASCII decimal numbers
without leading zeros. Every other spelling is BAD_RESOURCE_NAME, quoting a short prefix only."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from sapsam.api import resources
from sapsam.api.api_error import ApiError

ID = uuid.UUID("0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0")
TEXT = str(ID)
UPPER = TEXT.upper()
BARE = ID.hex  # 32 hex digits, no hyphens

Parser = Callable[[str], object]


def table(value: str) -> object:
    return resources.parse_table(value, "table")


def seat(value: str) -> object:
    return resources.parse_seat(value, "seat")


def deal(value: str) -> object:
    return resources.parse_deal(value, "name")


def player(value: str) -> object:
    return resources.parse_player(value, "name")


def tournament(value: str) -> object:
    return resources.parse_tournament(value, "tournament")


VALID: list[tuple[Parser, str, object]] = [
    (table, f"tables/{TEXT}", ID),
    (seat, f"tables/{TEXT}/seats/0", resources.SeatName(ID, 0)),
    (seat, f"tables/{TEXT}/seats/3", resources.SeatName(ID, 3)),
    (seat, f"tables/{TEXT}/seats/999", resources.SeatName(ID, 999)),
    (deal, f"tables/{TEXT}/deals/1", resources.DealName(ID, 1)),
    (deal, f"tables/{TEXT}/deals/10", resources.DealName(ID, 10)),
    (deal, f"tables/{TEXT}/deals/999999", resources.DealName(ID, 999999)),
    (player, f"players/{TEXT}", ID),
    (tournament, f"tournaments/{TEXT}", ID),
    (table, "tables/00000000-0000-0000-0000-000000000000", uuid.UUID(int=0)),
]

INVALID: list[tuple[Parser, str]] = [
    (table, f"tables/{UPPER}"),
    (table, f"tables/{TEXT[:9]}{TEXT[9:].upper()}"),
    (table, f"tables/{BARE}"),
    (table, f"tables/{{{TEXT}}}"),
    (table, f"tables/urn:uuid:{TEXT}"),
    (table, f"tables/{TEXT}\n"),
    (table, f"tables/{TEXT} "),
    (table, f" tables/{TEXT}"),
    (table, f"tables/{TEXT}/"),
    (table, f"Tables/{TEXT}"),
    (table, f"tables/{TEXT[:8]}{TEXT[9:]}-"),  # a hyphen moved
    (table, "tables/" + TEXT.replace("-", "\N{NON-BREAKING HYPHEN}")),
    (table, "tables/" + TEXT.replace("0", "\N{FULLWIDTH DIGIT ZERO}")),
    (table, "tables/"),
    (seat, f"tables/{TEXT}/seats/00"),
    (seat, f"tables/{TEXT}/seats/01"),
    (seat, f"tables/{TEXT}/seats/\N{ARABIC-INDIC DIGIT ONE}"),
    (seat, f"tables/{TEXT}/seats/\N{FULLWIDTH DIGIT ONE}"),
    (seat, f"tables/{TEXT}/seats/1000"),
    (seat, f"tables/{TEXT}/seats/-1"),
    (seat, f"tables/{TEXT}/seats/+1"),
    (seat, f"tables/{TEXT}/seats/1\n"),
    (seat, f"tables/{UPPER}/seats/0"),
    (seat, f"tables/{BARE}/seats/0"),
    (deal, f"tables/{TEXT}/deals/01"),
    (deal, f"tables/{TEXT}/deals/0"),
    (deal, f"tables/{TEXT}/deals/\N{ARABIC-INDIC DIGIT ONE}"),
    (deal, f"tables/{TEXT}/deals/\N{FULLWIDTH DIGIT ONE}"),
    (deal, f"tables/{TEXT}/deals/\N{DEVANAGARI DIGIT ONE}"),
    (deal, f"tables/{TEXT}/deals/1000000"),
    (deal, f"tables/{TEXT}/deals/1_0"),
    (deal, f"tables/{UPPER}/deals/1"),
    (deal, f"tables/{{{TEXT}}}/deals/1"),
    (player, f"players/{UPPER}"),
    (player, f"players/{BARE}"),
    (player, f"players/{{{TEXT}}}"),
    (player, f"players/urn:uuid:{TEXT}"),
    (tournament, f"tournaments/{UPPER}"),
    (tournament, f"tournaments/{BARE}"),
    (tournament, f"tournaments/{BARE[:8]}----{BARE[8:]}"),
    (tournament, f"tournaments/{{{TEXT}}}"),
    (tournament, f"tournaments/urn:uuid:{TEXT}"),
]


@pytest.mark.parametrize(("parse", "name", "expected"), VALID)
def test_the_canonical_spelling_is_accepted(parse: Parser, name: str, expected: object) -> None:
    assert parse(name) == expected


@pytest.mark.parametrize(("parse", "name"), INVALID)
def test_every_other_spelling_is_a_bad_resource_name(parse: Parser, name: str) -> None:
    with pytest.raises(ApiError) as refused:
        parse(name)
    assert refused.value.reason == "BAD_RESOURCE_NAME"
    assert refused.value.field


@pytest.mark.parametrize("parse", [table, seat, deal, player, tournament])
def test_an_empty_name_is_a_missing_field(parse: Parser) -> None:
    with pytest.raises(ApiError) as refused:
        parse("")
    assert refused.value.reason == "MISSING_FIELD"


@pytest.mark.parametrize("parse", [table, seat, deal, player, tournament])
def test_a_huge_name_is_quoted_by_a_short_prefix_only(parse: Parser) -> None:
    with pytest.raises(ApiError) as refused:
        parse("tables/" + "x" * 1_000_000)
    assert len(refused.value.message) < 300
    assert "1000007 characters" in refused.value.message


def test_names_the_server_writes_parse_back_to_the_same_resource() -> None:
    assert table(resources.table_name(ID)) == ID
    assert seat(resources.seat_name(ID, 2)) == resources.SeatName(ID, 2)
    assert deal(resources.deal_name(ID, 7)) == resources.DealName(ID, 7)
    assert player(resources.player_name(TEXT)) == ID
