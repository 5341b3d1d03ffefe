"""Rule sets: every number the scoring and the table read, as one frozen, serialisable value.

A rule set is recorded in a table's first event, so an old deal replays under the rules it was
played with. It therefore holds integers, strings, enums and ``None`` only, and it has one canonical
JSON form (sorted keys, no spaces, no floats) whose bytes are stable across runs and machines.

Money is counted in *units*: ``row_unit`` is the value of one unit, and every other amount
(``scoop_bonus``, the 1-6 points) is a number of units, so a table playing for higher stakes
changes ``row_unit`` only.

The presets, named rule sets with their descriptions, live in ``sapsam.rules.presets``; the
options the fields take (``ScoringMethod`` and the rest) in ``sapsam.rules.rule_options``, which
this module re-exports. The dataclass defaults keep ``None`` deadlines (no deadline), because a
recorded rule set without the keys must read as it was played.

**Rules versions.** A change to how a parameter is scored is a new rules version, and a rule set
records its own (``rules_version``). Version 2 added ``majority`` (docs/rules.md §2.4): version 1
scored every rule set as ``more_rows_won``, which a version-1 rule set therefore has implicitly; it
cannot hold the key, and ``to_dict`` leaves it out, so a recorded version-1 rule set reads back to
exactly the object recorded. Version 3 added ``row_order`` the same way (versions 1 and 2 are
``non_decreasing``), version 4 the royalties (``sapsam.rules.royalties``; earlier versions
pay none), version 5 the naturals (``sapsam.rules.naturals``; earlier versions play none), and
version 6 the royalty table's other amounts (``royalty_amounts``, the named tables of
``sapsam.rules.royalty_tables``), broken hands' royalties (``royalty_broken_hands``), per-pair
stakes (``pair_units``) and the solver's objective ``played_units``, which counts royalties and
the scoring method; version 7 added three straight flushes to the ``extended`` naturals
(``sapsam.rules.naturals.NATURAL_SINCE_VERSION``; no field). New rule sets are of the latest
version, ``RULES_VERSION``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final

from sapsam.quoting import quote_prefix
from sapsam.rules.frozen_map import FrozenMap
from sapsam.rules.naturals import NATURAL_FIELDS, NaturalsTable, SixPairsCounting
from sapsam.rules.royalties import (
    ROYALTY_FIELDS,
    BrokenHands,
    RoyaltyLimit,
    RoyaltyPayment,
    check_royalty_amounts,
)
from sapsam.rules.rule_options import (
    MajorityRule,
    RowOrder,
    ScoringMethod,
    SurrenderRule,
    TimeoutPolicy,
)
from sapsam.rules.stakes import check_pair_units

# Read for every seat judged: a module constant (reading a member off its enum class goes through
# EnumType's __getattr__ hook in Python 3.11, about 900 instructions a read).
_STRICTLY_INCREASING: Final = RowOrder.STRICTLY_INCREASING

RULES_VERSION: Final = 7
"""The rules-engine version of every new rule set; recorded with every rule set."""

SUPPORTED_RULES_VERSIONS: Final = frozenset({1, 2, 3, 4, 5, 6, 7})
"""Versions this code scores: every version a recorded deal may have (docs/rules.md §2.6)."""

MAX_NAME_LENGTH: Final = 64

# The largest value each number of a rule set may take (docs/api.md, "Rule set limits"). They are
# chosen so that money can never overflow anywhere it is counted: the worst a seat can lose in one
# deal is (MAX_SEATS - 1) opponents x (3 + MAX_BONUS_UNITS + 6 x MAX_BONUS_UNITS) units (a scoop
# with the largest bonus, a royalty in each row and three claimed for hands split across rows) x
# MAX_ROW_UNIT (or a pair's unit, at most the same), about 2.1e10, and over a series of
# MAX_SERIES_LENGTH deals about 2.1e14 -- some 43,900 times below int64's 9.2e18 (PostgreSQL
# bigint, every language's 64-bit integer) and below 2^53, so even a JSON reader that holds
# numbers as doubles reads every total exactly. ``rules.scoring`` computes that worst case
# (``worst_series_total``) and a test holds it to the margin.
MAX_ROW_UNIT: Final = 1_000_000
MAX_BONUS_UNITS: Final = 1_000
"""Most units for ``scoop_bonus``, ``one_six_two_of_three``, ``one_six_scoop``, each royalty,
``surrender_price`` and each natural (a surrender or a natural replaces a pair's settlement, so
the bound above holds)."""
MAX_SERIES_LENGTH: Final = 10_000
MAX_DEADLINE_SECONDS: Final = 86_400
"""Most seconds for ``arrange_seconds``, ``reveal_seconds`` and ``surrender_seconds`` (one day)."""
MIN_SEATS: Final = 2
MAX_SEATS: Final = 4
SURRENDER_PRICE: Final = 2
"""The default ``surrender_price`` in units. Source 002 gives no price (docs/rules.md §2.8): 2 is
more than the 1 unit a 2-1 loss costs under ``per_row`` and less than every method's scoop (3 under
``per_row``, 4 under ``two_four`` and the scoop bonus, 6 under ``one_six``)."""


class RuleSetError(ValueError):
    """A rule set is malformed: an unknown key, a value of the wrong type or out of range, or an
    unknown preset name. The message names the key or preset."""


@dataclass(frozen=True)
class RuleSet:
    """Every parameter of a game (docs/rules.md §2.1); defaults are the Pagat base game (§1).

    The default ``name`` is ``"custom"``: a rule set built or read without a name is not mistaken
    for a preset. ``RuleSet()`` scores exactly like the ``pagat`` preset but has no deadlines (the
    defaults are what a recorded rule set without those keys meant); the presets have them.

    Construction validates every field and raises :class:`RuleSetError` naming the bad one.
    """

    name: str = "custom"
    """A short label, e.g. the preset it came from; not interpreted by the rules."""
    rules_version: int = RULES_VERSION
    scoring: ScoringMethod = ScoringMethod.PER_ROW
    row_unit: int = 1
    """The value of one unit; every other amount is counted in units."""
    scoop_bonus: int = 1
    """Extra units for winning all three rows; read only by ``per_row_scoop_bonus``."""
    one_six_two_of_three: int = 1
    """Units for holding the majority (``majority``) without a scoop; read only by ``one_six``."""
    one_six_scoop: int = 6
    """Units for winning all three rows; read only by ``one_six``."""
    min_seats: int = 2
    max_seats: int = 4
    series_length: int = 8
    """Deals in a series (the deal passes to the left after each)."""
    arrange_seconds: int | None = None
    """Seconds each seat has to confirm an arrangement; ``None`` means no deadline."""
    reveal_seconds: int | None = None
    """Seconds each seat has to reveal after all confirmed; ``None`` means no deadline."""
    arrange_timeout_policy: TimeoutPolicy = TimeoutPolicy.FOUL
    majority: MajorityRule = MajorityRule.TWO_ROWS_WON
    """Who earns the majority; read only by ``two_four`` and ``one_six`` (rules version 2 on;
    a version-1 rule set is always ``more_rows_won``)."""
    row_order: RowOrder = RowOrder.NON_DECREASING
    """Whether equal rows are allowed (rules version 3 on; earlier ones always allow them)."""

    royalties: RoyaltyPayment = RoyaltyPayment.NONE
    """How royalties change hands (``sapsam.rules.royalties``; rules version 4 on)."""
    royalty_limit: RoyaltyLimit = RoyaltyLimit.EVERY_ROW
    """Every royalty an opponent owes counts, or only the largest."""
    royalty_front_three_of_a_kind: int = 3
    royalty_middle_three_of_a_kind: int = 0
    royalty_middle_full_house: int = 2
    royalty_middle_four_of_a_kind: int = 4
    royalty_middle_straight_flush: int = 5
    royalty_back_four_of_a_kind: int = 4
    royalty_back_straight_flush: int = 5
    """Royalty amounts in units, read only when ``royalties`` is not ``none`` (004's table; the
    middle trips 0, as some open-face tables have it)."""

    surrender: SurrenderRule = SurrenderRule.OFF
    """Whether seats announce play or surrender, and whom a surrender pays (docs/rules.md §2.8).
    Recorded only when not ``off`` or when a surrender field is not at its default
    (``SURRENDER_FIELDS``): a table without surrender records what it recorded before."""
    surrender_price: int = SURRENDER_PRICE
    """Units a surrendering seat pays each seat it pays; read only when ``surrender`` is on."""
    surrender_seconds: int | None = None
    """Seconds each seat has, from the start of its turn, to announce; ``None`` means no
    deadline. A seat that lets it pass plays (the timeout default, docs/rules.md §2.8)."""
    naturals: NaturalsTable = NaturalsTable.NONE
    """Which naturals a seat may declare (``sapsam.rules.naturals``; rules version 5 on)."""
    natural_six_pairs: int = 3
    natural_three_straights: int = 3
    natural_three_flushes: int = 3
    natural_dragon: int = 13
    """Natural amounts in units (004's), read only when ``naturals`` is not ``none``."""
    natural_six_pairs_counting: SixPairsCounting = SixPairsCounting.ANY_GROUP
    """Whether four of a kind and three of a kind count towards six pairs."""

    royalty_amounts: Mapping[str, int] = FrozenMap()
    """The amounts of every other royalty key (``sapsam.rules.royalty_tables``: back straights
    and flushes, royal flushes, front pairs and trips by rank); a key not held pays 0 (rules
    version 6 on). The seven keys above are their fields' and are refused here."""
    royalty_broken_hands: BrokenHands = BrokenHands.NOT_CLAIMED
    """Whether four of a kind or a straight flush dealt but split across rows still earns its
    royalty (source 002; rules version 6 on)."""
    pair_units: Mapping[str, int] = FrozenMap()
    """Per-pair stakes: the value of one unit between two seats, keyed ``"a-b"`` (seat numbers,
    a < b); a pair not listed plays for ``row_unit`` (source 002; rules version 6 on)."""

    def unit_between(self, seat_a: int, seat_b: int) -> int:
        """The value of one unit between two seats: ``pair_units``' entry, else ``row_unit``."""
        if not self.pair_units:  # the usual rule set: no name to build per pair
            return self.row_unit
        low, high = min(seat_a, seat_b), max(seat_a, seat_b)
        return self.pair_units.get(f"{low}-{high}", self.row_unit)

    @property
    def strict_row_order(self) -> bool:
        """Whether each row must beat the one before it (``check_arrangement``'s argument)."""
        return self.row_order is _STRICTLY_INCREASING

    def __post_init__(self) -> None:
        _validate(self, limits=not _READING_RECORDED.get())

    def check_limits(self) -> None:
        """Raise :class:`RuleSetError` naming the first number above its maximum (see
        ``MAX_ROW_UNIT`` and the rest): what a new table's rule set must satisfy. A rule set read
        with :meth:`from_dict` is checked for everything else only (it may have been recorded
        before the maxima existed, and an old deal replays under the rules it was played with)."""
        _validate(self, limits=True)

    def to_dict(self) -> dict[str, Any]:
        """All fields as plain JSON values (enums as their string values)."""
        result: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            if FIELD_SINCE_VERSION.get(field.name, 1) > self.rules_version:
                continue  # implied by the version; absent from what that version recorded
            value = getattr(self, field.name)
            if (
                field.name in SURRENDER_FIELDS
                and self.surrender is SurrenderRule.OFF
                and value == field.default
            ):
                continue  # a table without surrender records what tables recorded before it
            if isinstance(value, StrEnum):
                value = value.value
            elif isinstance(value, FrozenMap):
                value = dict(value)
            result[field.name] = value
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleSet:
        """Read a rule set from plain values, strictly.

        Unknown keys, values of the wrong type (a float or bool where an integer belongs) and
        values out of range raise :class:`RuleSetError` naming the key. A missing key takes its
        default, so rule sets recorded before a field existed still load with the behaviour they
        had. The maxima of amounts, series length and deadlines are not applied here, for the same
        reason: a new table's rule set is held to them with :meth:`check_limits`.
        """
        if not isinstance(data, Mapping):
            raise RuleSetError(f"a rule set must be a JSON object, got {type(data).__name__}")
        known = {field.name: field for field in dataclasses.fields(cls)}
        unknown = sorted(str(key) for key in data if key not in known)
        if unknown:
            raise RuleSetError(
                f"unknown rule set key {quote_prefix(unknown[0])} "
                f"(known keys: {', '.join(sorted(known))})"
            )
        values: dict[str, Any] = {}
        for key, raw in data.items():
            enum_type = _ENUM_FIELDS.get(key)
            values[key] = raw if enum_type is None else _enum_value(enum_type, key, raw)
        version = values.get("rules_version", RULES_VERSION)
        if isinstance(version, int) and not isinstance(version, bool):
            for key, since in FIELD_SINCE_VERSION.items():
                if version < since:
                    if key in values:
                        raise RuleSetError(
                            f"rule set key {key!r} does not exist in rules version {version} "
                            f"(it was added in version {since})"
                        )
                    values[key] = _BEFORE_THE_FIELD[key]
        reading = _READING_RECORDED.set(True)
        try:
            return cls(**values)
        finally:
            _READING_RECORDED.reset(reading)

    def to_json(self) -> str:
        """Canonical JSON: sorted keys, no white space, UTF-8 text, integers only."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> RuleSet:
        """Read a rule set from JSON (canonical or not); see :meth:`from_dict`."""
        try:
            data = json.loads(text, parse_float=_refuse_float, parse_constant=_refuse_float)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise RuleSetError(f"rule set is not valid JSON: {error}") from None
        if not isinstance(data, dict):
            raise RuleSetError(f"a rule set must be a JSON object, got {type(data).__name__}")
        return cls.from_dict(data)

    def with_changes(self, **changes: Any) -> RuleSet:
        """A copy with some fields replaced (validated like any rule set)."""
        return dataclasses.replace(self, **changes)


_ENUM_FIELDS: Final[Mapping[str, type[StrEnum]]] = MappingProxyType(
    {
        "scoring": ScoringMethod,
        "arrange_timeout_policy": TimeoutPolicy,
        "majority": MajorityRule,
        "row_order": RowOrder,
        "royalties": RoyaltyPayment,
        "royalty_limit": RoyaltyLimit,
        "surrender": SurrenderRule,
        "naturals": NaturalsTable,
        "natural_six_pairs_counting": SixPairsCounting,
        "royalty_broken_hands": BrokenHands,
    }
)

SURRENDER_FIELDS: Final = frozenset({"surrender", "surrender_price", "surrender_seconds"})
"""The surrender's fields (docs/rules.md §2.8). Added without a new rules version: with
``surrender`` off nothing is scored differently, and such a rule set leaves the fields at their
defaults out of ``to_dict``, so every rule set recorded before reads back to exactly itself.
They exist from rules version 4 on."""

FIELD_SINCE_VERSION: Final[Mapping[str, int]] = MappingProxyType(
    {
        "majority": 2,
        "row_order": 3,
        "royalties": 4,
        "royalty_limit": 4,
        **dict.fromkeys(ROYALTY_FIELDS, 4),
        **dict.fromkeys(SURRENDER_FIELDS, 4),
        "naturals": 5,
        "natural_six_pairs_counting": 5,
        **dict.fromkeys(NATURAL_FIELDS.values(), 5),
        "royalty_amounts": 6,
        "royalty_broken_hands": 6,
        "pair_units": 6,
    }
)
"""The rules version that added each field not in version 1 (docs/rules.md §2.6)."""

_BEFORE_THE_FIELD: Final[Mapping[str, Any]] = MappingProxyType(
    {
        "majority": MajorityRule.MORE_ROWS_WON,
        "row_order": RowOrder.NON_DECREASING,
        "royalties": RoyaltyPayment.NONE,
        "royalty_limit": RoyaltyLimit.EVERY_ROW,
        "surrender": SurrenderRule.OFF,
        "surrender_price": SURRENDER_PRICE,
        "surrender_seconds": None,
        "royalty_amounts": FrozenMap(),
        "royalty_broken_hands": BrokenHands.NOT_CLAIMED,
        "pair_units": FrozenMap(),
        # Not read without royalties: the amounts keep the field defaults.
        "naturals": NaturalsTable.NONE,
        "natural_six_pairs_counting": SixPairsCounting.ANY_GROUP,
        # Not read without royalties or naturals: the amounts keep the field defaults.
        **{
            field.name: field.default
            for field in dataclasses.fields(RuleSet)
            if field.name in ROYALTY_FIELDS or field.name in NATURAL_FIELDS.values()
        },
    }
)
"""How every version before a field's scored: the value it implicitly has there."""


def _refuse_float(text: str) -> Any:
    raise RuleSetError(f"rule sets hold integers only, got {text}")


def _enum_value(enum_type: type[StrEnum], key: str, raw: object) -> StrEnum:
    if isinstance(raw, str):
        try:
            return enum_type(raw)
        except ValueError:
            pass
    # The allowed values are joined only for the error (on success they were a quarter of
    # reading a rule set).
    allowed = ", ".join(member.value for member in enum_type)
    raise RuleSetError(f"rule set key {key!r} must be one of {allowed}; got {quote_prefix(raw)}")


def _require_int(key: str, value: object, minimum: int, maximum: int | None = None) -> None:
    # bool is an int subclass in Python but never a sensible count or amount.
    if not isinstance(value, int) or isinstance(value, bool):
        raise RuleSetError(f"rule set key {key!r} must be an integer, got {quote_prefix(value)}")
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        # A short prefix only: a value of thousands of digits is not echoed back whole.
        shown = str(value) if abs(value) < 10**30 else f"an integer of {value.bit_length()} bits"
        raise RuleSetError(f"rule set key {key!r} must be {bounds}, got {shown}")


# Set while from_dict builds a rule set: the maxima are then left to check_limits.
_READING_RECORDED: ContextVar[bool] = ContextVar("sapsam_reading_recorded_rule_set", default=False)


def _validate(rule_set: RuleSet, limits: bool = True) -> None:
    name = rule_set.name
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_LENGTH:
        raise RuleSetError(
            f"rule set key 'name' must be a non-empty string of at most {MAX_NAME_LENGTH} "
            f"characters, got {quote_prefix(name)}"
        )
    if not name.isprintable():
        raise RuleSetError(f"rule set key 'name' must be printable text, got {quote_prefix(name)}")
    _require_int("rules_version", rule_set.rules_version, 1)
    if rule_set.rules_version not in SUPPORTED_RULES_VERSIONS:
        supported = ", ".join(str(version) for version in sorted(SUPPORTED_RULES_VERSIONS))
        raise RuleSetError(
            f"rule set key 'rules_version': version {rule_set.rules_version} is not supported "
            f"(supported: {supported})"
        )
    for key, enum_type in _ENUM_FIELDS.items():
        if not isinstance(getattr(rule_set, key), enum_type):
            # Direct construction with a plain string: accept the value if it is a member.
            object.__setattr__(rule_set, key, _enum_value(enum_type, key, getattr(rule_set, key)))
    for key, since in FIELD_SINCE_VERSION.items():
        implied = _BEFORE_THE_FIELD[key]
        if rule_set.rules_version < since and getattr(rule_set, key) != implied:
            raise RuleSetError(
                f"rule set key {key!r}: rules version {rule_set.rules_version} scores only "
                f"{getattr(implied, 'value', implied)} (other values from version {since})"
            )
    units, bonus = (MAX_ROW_UNIT, MAX_BONUS_UNITS) if limits else (None, None)
    _require_int("row_unit", rule_set.row_unit, 1, units)
    _require_int("scoop_bonus", rule_set.scoop_bonus, 0, bonus)
    _require_int("one_six_two_of_three", rule_set.one_six_two_of_three, 0, bonus)
    _require_int("one_six_scoop", rule_set.one_six_scoop, 0, bonus)
    for key in (*ROYALTY_FIELDS, *NATURAL_FIELDS.values()):
        _require_int(key, getattr(rule_set, key), 0, bonus)
    _require_int("surrender_price", rule_set.surrender_price, 0, bonus)
    try:
        amounts = check_royalty_amounts(rule_set.royalty_amounts, bonus)
        stakes = check_pair_units(rule_set.pair_units, units)
    except ValueError as error:
        raise RuleSetError(str(error)) from None
    object.__setattr__(rule_set, "royalty_amounts", FrozenMap(amounts))
    object.__setattr__(rule_set, "pair_units", FrozenMap(stakes))
    _require_int("min_seats", rule_set.min_seats, MIN_SEATS, MAX_SEATS)
    _require_int("max_seats", rule_set.max_seats, MIN_SEATS, MAX_SEATS)
    if rule_set.min_seats > rule_set.max_seats:
        raise RuleSetError(
            f"rule set key 'min_seats' ({rule_set.min_seats}) exceeds "
            f"'max_seats' ({rule_set.max_seats})"
        )
    _require_int("series_length", rule_set.series_length, 1, MAX_SERIES_LENGTH if limits else None)
    for key in ("arrange_seconds", "reveal_seconds", "surrender_seconds"):
        value = getattr(rule_set, key)
        if value is not None:
            _require_int(key, value, 1, MAX_DEADLINE_SECONDS if limits else None)


def missing_deadlines(rule_set: RuleSet) -> tuple[str, ...]:
    """Warnings for a new table whose rule set lacks a deadline: such a table can wait for an
    absent player forever (until an operator times the seat out). Empty when both are set."""
    warnings = []
    if rule_set.arrange_seconds is None:
        warnings.append(
            "this table has no arranging deadline (arrange_seconds): a player who never confirms"
            " holds up every deal until an operator times the seat out"
        )
    if rule_set.reveal_seconds is None:
        warnings.append(
            "this table has no reveal deadline (reveal_seconds): a player who never reveals"
            " holds up the deal until an operator times the seat out"
        )
    if rule_set.surrender is not SurrenderRule.OFF and rule_set.surrender_seconds is None:
        warnings.append(
            "this table has no announcing deadline (surrender_seconds): a player who never"
            " announces play or surrender holds up the deal until an operator times the seat out"
        )
    return tuple(warnings)


__all__ = [
    "FIELD_SINCE_VERSION",
    "MAX_BONUS_UNITS",
    "MAX_DEADLINE_SECONDS",
    "MAX_NAME_LENGTH",
    "MAX_ROW_UNIT",
    "MAX_SEATS",
    "MAX_SERIES_LENGTH",
    "MIN_SEATS",
    "RULES_VERSION",
    "SUPPORTED_RULES_VERSIONS",
    "SURRENDER_FIELDS",
    "SURRENDER_PRICE",
    "MajorityRule",
    "RowOrder",
    "RuleSet",
    "RuleSetError",
    "ScoringMethod",
    "SurrenderRule",
    "TimeoutPolicy",
    "missing_deadlines",
]
