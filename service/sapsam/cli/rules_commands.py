"""``sapsam hand``, ``sapsam arrange``, ``sapsam score`` and ``sapsam rules list``: the rules engine
on the command line.

``rules list`` prints every preset rule set (docs/rules.md §2.2) with its one-line description;
with ``--json``, one JSON array of ``{"name", "description", "aliases", "rule_set"}`` objects,
``rule_set`` holding every parameter as a table records it. The same as the API's ListRuleSets.

``score`` is a contract for other tools. It reads one deal as a JSON object (from a file or stdin)::

    {"rules": "pagat", "seats": [{"front": "2s 2h Ad", "middle": "7c 7d 9s 5h 3d",
                                  "back": "Tc Jc Qc Kc Ac"}, ...]}

``rules`` is a preset name or a full rule-set object (default ``pagat``); ``seats`` holds 2 to 4
arrangements, numbered from 0 in the output and in error messages. With ``--jsonl`` it reads one
such deal per line (blank lines are skipped) and prints one result per line.

A seat may also hold ``"natural"``, its declaration (docs/rules.md §2.9: ``"none"``, the default,
or a natural the rule set plays, e.g. ``"six_pairs"``), judged from the seat's 13 cards, the rows
then read no further (a false declaration is a foul, ``FALSE_NATURAL``); and ``"surrender":
true`` when it surrendered (docs/rules.md §2.8; a rule set with ``surrender`` on). Such a seat's
result repeats them (``"natural"``, ``"surrendered"``)::

    {"rules": "capsa_susun", "seats": [{"front": "2s Kc Kd", "middle": "Qc Qd Jc Jd Tc",
      "back": "Td 9c 9d 8c 8d", "natural": "six_pairs"}, {..., "surrender": true}, ...]}

A seat must give 13 distinct cards and no card may appear at two seats: anything else is bad input.
Thirteen cards in rows of the wrong sizes (say 4/4/5) are a foul, judged like any other. Bad input
prints one line on stderr naming the problem (and, for ``--jsonl`` or a JSON syntax error, the
line), nothing on stdout, and exits with status 2; ``--jsonl`` checks every line before printing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sapsam.rules.arrangement import (
    HAND_SIZE,
    ROW_NAMES,
    Arrangement,
    ArrangementCheck,
)
from sapsam.rules.cards import Card, CardError, format_cards, parse_cards
from sapsam.rules.hands import evaluate
from sapsam.rules.naturals import Natural, NaturalHand, judge_seat, playable_naturals
from sapsam.rules.presets import (
    DEFAULT_RULE_SET,
    PRESET_ALIASES,
    PRESET_DESCRIPTIONS,
    PRESETS,
    resolve_rule_set,
)
from sapsam.rules.ruleset import RuleSet, RuleSetError, SurrenderRule
from sapsam.rules.scoring import DealScore, pair_units, unit_totals
from sapsam.rules.solver import DEFAULT_OBJECTIVE, Objective, objective
from sapsam.rules.solver_play import best_play
from sapsam.rules.surrender import score_with_surrender

BAD_INPUT: Final = 2
DEAL_KEYS: Final = frozenset({"rules", "seats"})
SEAT_KEYS: Final = (*ROW_NAMES, "natural", "surrender")


@dataclass(frozen=True)
class SeatInput:
    """One seat of a ``score`` deal: its rows, its declaration and whether it surrendered."""

    arrangement: Arrangement
    natural: Natural = Natural.NONE
    surrendered: bool = False


class InputError(ValueError):
    """Input the command cannot use; the message is shown to the user as one line."""


def register(subparsers: Any) -> None:
    """Add the ``hand``, ``arrange`` and ``score`` subcommands."""
    hand = subparsers.add_parser(
        "hand", help="print the value of a 3- or 5-card row in words", description=_hand.__doc__
    )
    hand.add_argument("cards", nargs="+", help='cards, e.g. "As Ks Qs Js Ts"')
    hand.set_defaults(handler=_hand)

    arrange = subparsers.add_parser(
        "arrange", help="the solver's best arrangement of 13 cards", description=_arrange.__doc__
    )
    arrange.add_argument("cards", nargs="+", help="13 cards")
    arrange.add_argument("--json", action="store_true", help="print JSON instead of text")
    arrange.add_argument(
        "--objective",
        choices=[goal.value for goal in Objective],
        default=DEFAULT_OBJECTIVE.value,
        help="what the solver maximises (default: %(default)s, a new table's; see "
        "sapsam.rules.solver)",
    )
    arrange.add_argument(
        "--preset",
        default=DEFAULT_RULE_SET.name,
        help="the rule set the rows are for (default %(default)s): its row order, royalties and "
        "naturals; with naturals, whether to declare one is shown too",
    )
    arrange.set_defaults(handler=_arrange)

    score = subparsers.add_parser(
        "score",
        help="score a deal given as JSON",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument("file", nargs="?", default="-", help="JSON input (default: stdin)")
    score.add_argument("--jsonl", action="store_true", help="one deal per line, one result each")
    score.set_defaults(handler=_score)

    rules = subparsers.add_parser(
        "rules",
        help="list the preset rule sets",
        description="The preset rule sets of docs/rules.md.",
    )
    rules_commands = rules.add_subparsers(dest="rules_command", metavar="ACTION", required=True)
    listing = rules_commands.add_parser(
        "list",
        help="every preset with its description (--json: with every parameter)",
        description=_rules_list.__doc__,
    )
    listing.add_argument(
        "--json", action="store_true", help="print a JSON array with every parameter"
    )
    listing.set_defaults(handler=_rules_list)


def _fail(command: str, message: str) -> int:
    # One line, always: a message with new lines in it would break line-oriented callers.
    print(f"sapsam {command}: {' '.join(message.split())}", file=sys.stderr)
    return BAD_INPUT


def _hand(arguments: argparse.Namespace) -> int:
    """Print the value of a 3-card front or a 5-card row in words."""
    try:
        cards = parse_cards(" ".join(arguments.cards))
        if len(cards) not in (3, 5):
            raise CardError(f"expected 3 or 5 cards, got {len(cards)}")
    except CardError as error:
        return _fail("hand", str(error))
    print(evaluate(cards).describe())
    return 0


def _arrange(arguments: argparse.Namespace) -> int:
    """Print the solver's front, middle and back for 13 cards, with each row's value; under a
    rule set with naturals (--preset), whether to declare the natural the cards hold: when it
    pays at least what the rows are expected to (sapsam.rules.solver_play.best_play)."""
    try:
        cards = parse_cards(" ".join(arguments.cards), count=HAND_SIZE)
    except CardError as error:
        return _fail("arrange", str(error))
    goal = Objective(arguments.objective)
    try:
        rule_set = resolve_rule_set(arguments.preset)
    except RuleSetError as error:
        return _fail("arrange", str(error))
    play = best_play(cards, rule_set, goal)
    arrangement = play.arrangement
    rows = [
        (name, row, evaluate(row).describe())
        for name, row in zip(ROW_NAMES, arrangement.rows, strict=True)
    ]
    if arguments.json:
        result: dict[str, Any] = {name: format_cards(row) for name, row, _ in rows}
        result["values"] = [words for _, _, words in rows]
        result["objective"] = round(objective(arrangement, goal), 6)
        if playable_naturals(rule_set):
            result["natural"] = play.natural.value
            result["natural_units"] = play.natural_units
            result["rows_units"] = round(float(play.rows_units), 4)
        print(json.dumps(result))
    else:
        for name, row, words in rows:
            print(f"{name:<7} {format_cards(row):<15} {words}")
        if play.natural is not Natural.NONE:
            print(
                f"declare {play.natural.value} ({play.natural_units} units from each opponent; "
                f"these rows are expected to make {float(play.rows_units):.2f})"
            )
        elif play.natural_units:
            print(
                f"do not declare: these rows are expected to make {float(play.rows_units):.2f} "
                f"units an opponent, the natural held {play.natural_units}"
            )
    return 0


def preset_listing() -> list[dict[str, Any]]:
    """Every preset, the default first: name, description, older names, every parameter."""
    return [
        {
            "name": name,
            "description": PRESET_DESCRIPTIONS[name],
            "aliases": [alias for alias, target in PRESET_ALIASES.items() if target == name],
            "rule_set": rule_set.to_dict(),
        }
        for name, rule_set in PRESETS.items()
    ]


def _rules_list(arguments: argparse.Namespace) -> int:
    """Print every preset rule set with its one-line description; with --json, a JSON array that
    also holds each preset's older names and every parameter of its rule set."""
    listing = preset_listing()
    if arguments.json:
        print(json.dumps(listing, indent=2, ensure_ascii=False))
        return 0
    width = max(len(entry["name"]) for entry in listing)
    for entry in listing:
        aliases = f" (also: {', '.join(entry['aliases'])})" if entry["aliases"] else ""
        print(f"{entry['name']:<{width}}  {entry['description']}{aliases}")
    return 0


def _score(arguments: argparse.Namespace) -> int:
    """Score deals read as JSON; see the module documentation for the format."""
    try:
        text = _read_input(arguments.file)
    except InputError as error:
        return _fail("score", str(error))
    try:
        if arguments.jsonl:
            results = []
            for number, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    try:
                        results.append(score_document(_load_json(line, one_line=True)))
                    except InputError as error:
                        raise InputError(f"line {number}: {error}") from None
        else:
            results = [score_document(_load_json(text))]
    except InputError as error:
        return _fail("score", str(error))
    for result in results:
        print(json.dumps(result, separators=(",", ":")))
    return 0


def _read_input(file: str) -> str:
    if file == "-":
        return sys.stdin.read()
    try:
        with open(file, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read {file}: {error}") from None


def _load_json(text: str, one_line: bool = False) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        where = f"column {error.colno}" if one_line else f"line {error.lineno} column {error.colno}"
        raise InputError(f"bad JSON at {where}: {error.msg}") from None


def read_deal(document: object) -> tuple[RuleSet, list[SeatInput]]:
    """The rule set and the seats (rows, declaration, surrender) of one deal object, or
    :class:`InputError`."""
    if not isinstance(document, Mapping):
        raise InputError(f"a deal must be a JSON object, got {_json_type(document)}")
    unknown = sorted(str(key) for key in document if key not in DEAL_KEYS)
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} (a deal has 'rules' and 'seats')")
    rules = document.get("rules", DEFAULT_RULE_SET.name)
    if not isinstance(rules, str | Mapping):
        raise InputError(f"'rules' must be a preset name or an object, got {_json_type(rules)}")
    try:
        rule_set = resolve_rule_set(rules)
    except RuleSetError as error:
        raise InputError(str(error)) from None
    seats = document.get("seats")
    if not isinstance(seats, list):
        raise InputError(f"'seats' must be a list of arrangements, got {_json_type(seats)}")
    if not rule_set.min_seats <= len(seats) <= rule_set.max_seats:
        raise InputError(
            f"{len(seats)} seats; rule set {rule_set.name!r} plays with "
            f"{rule_set.min_seats} to {rule_set.max_seats}"
        )
    read: list[SeatInput] = []
    seen: dict[Card, str] = {}
    for seat, data in enumerate(seats):
        entry = _read_seat(rule_set, seat, data)
        for name, row in zip(ROW_NAMES, entry.arrangement.rows, strict=True):
            for card in row:
                where = f"seat {seat} {name}"
                if card in seen:
                    raise InputError(f"{where}: card {card} repeats (already in {seen[card]})")
                seen[card] = where
        read.append(entry)
    return rule_set, read


def _read_seat(rule_set: RuleSet, seat: int, data: object) -> SeatInput:
    if not isinstance(data, Mapping):
        raise InputError(f"seat {seat}: expected an object with front, middle, back")
    unknown = sorted(str(key) for key in data if key not in SEAT_KEYS)
    if unknown:
        raise InputError(
            f"seat {seat}: unknown key {unknown[0]!r} (rows are front, middle, back; "
            "a seat may also hold natural and surrender)"
        )
    rows: list[tuple[Card, ...]] = []
    for name in ROW_NAMES:
        if name not in data:
            raise InputError(f"seat {seat}: missing {name!r}")
        value = data[name]
        if not isinstance(value, str) and not (
            isinstance(value, list) and all(isinstance(token, str) for token in value)
        ):
            raise InputError(f'seat {seat} {name}: expected cards as a string like "As Kd Tc"')
        try:
            rows.append(parse_cards(value))
        except CardError as error:
            raise InputError(f"seat {seat} {name}: {error}") from None
    count = sum(len(row) for row in rows)
    if count != HAND_SIZE:
        raise InputError(f"seat {seat}: {count} cards, expected {HAND_SIZE}")
    return SeatInput(
        Arrangement(rows[0], rows[1], rows[2]),
        _read_natural(rule_set, seat, data.get("natural", Natural.NONE.value)),
        _read_surrender(rule_set, seat, data.get("surrender", False)),
    )


def _read_natural(rule_set: RuleSet, seat: int, value: object) -> Natural:
    playable = playable_naturals(rule_set)
    if value == Natural.NONE.value:
        return Natural.NONE
    if not playable:
        raise InputError(
            f"seat {seat}: declares a natural, but rule set {rule_set.name!r} plays none "
            "(naturals none; docs/rules.md §2.9)"
        )
    names = ", ".join(["none", *(natural.value for natural in playable)])
    if not isinstance(value, str) or value not in {natural.value for natural in playable}:
        shown = repr(value) if isinstance(value, str) else _json_type(value)
        raise InputError(f"seat {seat} natural: {shown[:40]} is not one of {names}")
    return Natural(value)


def _read_surrender(rule_set: RuleSet, seat: int, value: object) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"seat {seat} surrender: expected true or false, got {_json_type(value)}")
    if value and rule_set.surrender is SurrenderRule.OFF:
        raise InputError(
            f"seat {seat}: surrenders, but rule set {rule_set.name!r} has surrender off "
            "(docs/rules.md §2.8)"
        )
    return value


def score_document(document: object) -> dict[str, Any]:
    """Read one deal object and return its scored result as JSON-ready data."""
    rule_set, seats = read_deal(document)
    checks: list[ArrangementCheck] = []
    naturals: list[NaturalHand | None] = []
    for seat in seats:
        dealt = [card for row in seat.arrangement.rows for card in row]
        check, held = judge_seat(rule_set, seat.arrangement, dealt, seat.natural)
        checks.append(check)
        naturals.append(held)
    surrendered = [seat.surrendered for seat in seats]
    score = score_with_surrender(rule_set, checks, surrendered, naturals)
    result = deal_result(rule_set, checks, score)
    for entry, seat in zip(result["seats"], seats, strict=True):
        if seat.natural is not Natural.NONE:
            entry["natural"] = seat.natural.value
        if seat.surrendered:
            entry["surrendered"] = True
    return result


def deal_result(
    rule_set: RuleSet, checks: Sequence[ArrangementCheck], score: DealScore
) -> dict[str, Any]:
    """The ``score`` command's output for one deal: amounts in stakes (``total``, ``delta``: units
    times the pair's unit value) and in units (``total_units``, ``units``)."""
    seats: list[dict[str, Any]] = []
    in_units = unit_totals(rule_set, score)
    for seat, (check, total) in enumerate(zip(checks, score.totals, strict=True)):
        entry: dict[str, Any] = {
            "seat": seat,
            "foul": check.foul,
            "total": total,
            "total_units": in_units[seat],
            "rows": None if check.values is None else [v.describe() for v in check.values],
        }
        if check.foul and check.reason is not None:
            entry["foul_reason"] = check.reason.value
            entry["foul_detail"] = check.detail
        seats.append(entry)
    pairs = [
        {
            "seat_a": pair.seat_a,
            "seat_b": pair.seat_b,
            "rows": list(pair.rows),
            "delta": pair.delta,
            "units": pair_units(rule_set, pair),
        }
        for pair in score.pairs
    ]
    return {"seats": seats, "pairs": pairs}


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return "a number"
