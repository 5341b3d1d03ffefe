"""Hand values, foul checks and arrangers, from the optional ``rules`` extra.

The SDK needs no rules: the server judges every hand. A client that wants to show a row's value,
warn before a foul or suggest rows uses the pure rules code of the ``sapsam`` distribution
(``sapsam.rules``: no I/O, no database), installed with ``pip install 'sapsam-client[rules]'``.
It is imported only when one of these functions is called, with a clear message when absent.
"""

from __future__ import annotations

import dataclasses
import importlib
import random
from types import ModuleType
from typing import Any, Final

from sapsam_client.client import Hand
from sapsam_client.commitment import Rows, card_index, card_text, row_problem
from sapsam_client.seat_types import Arranger
from sapsam_proto.v1 import rule_set_pb2, table_pb2

INSTALL_HINT: Final = (
    "hand values, foul checks and the solver need the rules extra: "
    "pip install 'sapsam-client[rules]' (it installs the sapsam distribution's pure rules code)"
)
RANDOM_TRIES: Final = 500


class RulesUnavailableError(ImportError):
    """``sapsam.rules`` is not installed."""


def rules_module(name: str) -> ModuleType:
    """``sapsam.rules.<name>``, or :class:`RulesUnavailableError` with the install hint."""
    try:
        return importlib.import_module(f"sapsam.rules.{name}")
    except ImportError as error:
        raise RulesUnavailableError(INSTALL_HINT) from error


def rules_available() -> bool:
    """Whether the rules extra is installed."""
    try:
        rules_module("arrangement")
    except RulesUnavailableError:
        return False
    return True


def _arrangement(rows: Rows) -> object:
    arrangement = rules_module("arrangement")
    return arrangement.Arrangement.of(
        [card_index(card) for card in rows.front],
        [card_index(card) for card in rows.middle],
        [card_index(card) for card in rows.back],
    )


def rows_check(rows: Rows) -> object:
    """The rules' verdict on ``rows`` (``sapsam.rules.arrangement.check_arrangement``): what the
    scoring compares."""
    return rules_module("arrangement").check_arrangement(_arrangement(rows))


def _rows(arrangement: object) -> Rows:
    return Rows.of(
        (str(card) for card in arrangement.front),  # type: ignore[attr-defined]
        (str(card) for card in arrangement.middle),  # type: ignore[attr-defined]
        (str(card) for card in arrangement.back),  # type: ignore[attr-defined]
    )


def row_values(rows: Rows) -> tuple[str, str, str] | None:
    """Each row's value in words (front, middle, back), or None when the rows are malformed."""
    if row_problem(rows, rows.cards):
        return None
    check = rules_module("arrangement").check_arrangement(_arrangement(rows))
    if check.values is None:
        return None
    front, middle, back = check.values
    return (front.describe(), middle.describe(), back.describe())


def foul_detail(
    rows: Rows, dealt: tuple[str, ...], rule_set: rule_set_pb2.RuleSet | None = None
) -> str:
    """Why these rows would be scored as a foul with this hand at a table of ``rule_set`` (its
    row order: under ``ROW_ORDER_STRICTLY_INCREASING`` a middle equal to the back fouls); ``""``
    when they are legal. Without a rule set, the base game's order (equal rows allowed)."""
    problem = row_problem(rows, dealt)
    if problem:
        return problem
    arrangement = rules_module("arrangement")
    strict = rule_set is not None and (
        rule_set.row_order == rule_set_pb2.ROW_ORDER_STRICTLY_INCREASING
    )
    check = arrangement.check_arrangement(
        _arrangement(rows), [card_index(card) for card in dealt], strict_order=strict
    )
    return str(check.detail) if check.foul else ""


def solver_rows(cards: tuple[str, ...], rule_set: rule_set_pb2.RuleSet | None = None) -> Rows:
    """The solver's suggestion for 13 cards under a table's rule set (the latest version's
    defaults without one): never a foul. At a table of the latest rules version it is the
    solver's default objective, which reads the row order, the royalties, their limit and broken
    hands' claims; at a table of an earlier version, the rows that version's timeout policy sets
    (its objective, ``objective_for``), as a player of that table would see them set."""
    solver = rules_module("solver")
    indices = [card_index(card) for card in cards]
    rules: Any = rules_module("ruleset").RuleSet() if rule_set is None else rules_rule_set(rule_set)
    latest = rules.rules_version == rules_module("ruleset").RULES_VERSION
    goal = solver.DEFAULT_OBJECTIVE if latest else solver.objective_for(rules)
    return _rows(solver.solve(indices, rules, goal))


def best_declaration(hand: Hand, table: table_pb2.Table) -> str:
    """A declarer (``Seat.play_series``'s ``declarer``; the SDK's default): the natural the hand
    holds when declaring it pays at least what the solver's rows are expected to under the
    table's rule set (``sapsam.rules.solver_play.best_play``), else ``none``."""
    if not naturals_in_hand(hand.cards, table.rule_set):
        return "none"
    play = rules_module("solver_play").best_play(
        [card_index(card) for card in hand.cards], rules_rule_set(table.rule_set)
    )
    return str(play.natural.value)


_NOT_SCORED: Final = frozenset(
    {
        "name",
        "min_seats",
        "max_seats",
        "series_length",
        "arrange_seconds",
        "reveal_seconds",
        "arrange_timeout_policy",
        "surrender_seconds",
    }
)
"""Wire fields the solver and the foul check do not read."""
_RENAMED: Final = {"scoring_method": "scoring"}
"""Wire names that differ from ``sapsam.rules.ruleset.RuleSet``'s."""


def rules_rule_set(message: rule_set_pb2.RuleSet) -> object:
    """The ``sapsam.rules`` rule set that scores like a table's rule set on the wire (what the
    solver reads: version, method, amounts, majority, row order, royalties; not seats or
    deadlines). Every scoring field is carried, so a field added to the wire and to the rules
    needs nothing here; a field the installed rules do not know is dropped, then the version if
    they do not know it, and their latest defaults are the last resort."""
    ruleset = rules_module("ruleset")
    version = message.rules_version
    since = ruleset.FIELD_SINCE_VERSION
    values: dict[str, object] = {"rules_version": version}
    known = {field.name for field in dataclasses.fields(ruleset.RuleSet)}
    for field, value in message.ListFields():  # the fields set: an unset one keeps its default
        key = _RENAMED.get(field.name, field.name)
        if key not in known or field.name in _NOT_SCORED or since.get(key, 1) > version:
            continue
        if field.message_type is not None:  # a map: royalty_amounts, pair_units
            values[key] = dict(value)
        elif field.enum_type is not None:
            member = field.enum_type.values_by_number.get(value)
            if member is not None:
                prefix = field.enum_type.values_by_number[0].name.removesuffix("UNSPECIFIED")
                values[key] = member.name.removeprefix(prefix).lower()
        else:
            values[key] = value
    values["rules_version"] = version
    for attempt in (
        values,
        {key: value for key, value in values.items() if key != "rules_version"},
    ):
        try:
            return ruleset.RuleSet.from_dict(attempt)
        except ValueError:  # RuleSetError: a key, version or value these rules do not have
            continue
    return ruleset.RuleSet()


def naturals_in_hand(cards: tuple[str, ...], rule_set: rule_set_pb2.RuleSet) -> tuple[str, ...]:
    """The naturals 13 cards hold under a table's rule set, strongest first (names, as
    ``DeclareNatural`` takes them); empty without naturals or without the rules extra."""
    if not rules_available():
        return ()
    naturals = rules_module("naturals")
    held = naturals.naturals_held(rules_rule_set(rule_set), [card_index(c) for c in cards])
    return tuple(str(hand.natural.value) for hand in held)


def strongest_natural(hand: Hand, table: table_pb2.Table) -> str:
    """A declarer (``Seat.play_series``'s ``declarer``): the strongest natural the hand holds,
    else ``none``, whatever its rows are worth (:func:`best_declaration` weighs them)."""
    held = naturals_in_hand(hand.cards, table.rule_set)
    return held[0] if held else "none"


def random_legal_rows(
    cards: tuple[str, ...],
    generator: random.Random,
    rule_set: rule_set_pb2.RuleSet | None = None,
) -> Rows:
    """A random arrangement legal at a table of ``rule_set`` (its row order): random rows, the
    stronger five-card row put at the back, retried until no row order is broken (the solver's
    rows if unlucky)."""
    hands = rules_module("hands")
    indices = [card_index(card) for card in cards]
    for _ in range(RANDOM_TRIES):
        generator.shuffle(indices)
        front, first, second = indices[:3], indices[3:8], indices[8:]
        if hands.evaluate5(*first) > hands.evaluate5(*second):
            first, second = second, first
        if hands.evaluate3(*front) <= hands.evaluate5(*first):
            rows = Rows.of(
                (card_text(card) for card in front),
                (card_text(card) for card in first),
                (card_text(card) for card in second),
            )
            if not foul_detail(rows, cards, rule_set):
                return rows
    return solver_rows(cards, rule_set)


def solver_arranger(hand: Hand, table: table_pb2.Table) -> Rows:
    """An :data:`~sapsam_client.seat_types.Arranger` that plays the solver's rows for the table's
    rule set."""
    return solver_rows(hand.cards, table.rule_set)


def random_arranger(seed: int | None = None) -> Arranger:
    """An arranger playing random legal rows (seeded for repeatable runs)."""
    generator = random.Random(seed)

    def arrange(hand: Hand, table: table_pb2.Table) -> Rows:
        return random_legal_rows(hand.cards, generator, table.rule_set)

    return arrange
