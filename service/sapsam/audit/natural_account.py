"""Naturals in the audit's account of a deal (docs/rules.md §2.9): which seats held a real
declared natural, and how a pair settled by naturals is told. ``sapsam.audit.deal_account`` calls
these; the verdicts themselves are ``sapsam.rules.naturals``'."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sapsam.domain.events import Event, NaturalDeclared, NaturalRevealed
from sapsam.plurals import plural
from sapsam.rules.cards import CardError, parse_cards
from sapsam.rules.naturals import NaturalHand, declared, natural_amount, natural_hand
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.scoring import PairResult


def real_naturals(
    rule_set: RuleSet,
    rows: Sequence[tuple[tuple[str, ...], ...] | None],
    fouls: Sequence[bool],
    opened: Mapping[int, str],
) -> tuple[NaturalHand | None, ...]:
    """Per seat, the natural it declared and holds: a seat that opened a declaration other than
    ``none`` and did not foul (a false declaration is a foul) holds it in its 13 revealed cards,
    which are then exactly its dealt cards."""
    result: list[NaturalHand | None] = []
    for seat, seat_rows in enumerate(rows):
        natural = declared(opened.get(seat))
        if seat_rows is None or fouls[seat] or opened.get(seat) is None:
            result.append(None)
            continue
        try:
            cards = parse_cards([card for row in seat_rows for card in row], 13)
        except CardError:  # a malformed record: the checks say what is wrong with it
            result.append(None)
            continue
        result.append(natural_hand(rule_set, natural, cards))
    return tuple(result)


def natural_phrase(
    rule_set: RuleSet,
    pair: PairResult,
    naturals: Sequence[NaturalHand | None],
    first: str,
    second: str,
) -> str | None:
    """How a pair settled by naturals is told, or None when neither seat held one."""
    if not naturals:
        return None
    mine, theirs = naturals[pair.seat_a], naturals[pair.seat_b]
    if mine is None and theirs is None:
        return None
    if mine is not None and theirs is not None:
        if pair.delta == 0 and pair.rows == (0, 0, 0):
            return f"{first}'s and {second}'s naturals tie: nothing changes hands"
        winner, hand = (first, mine) if pair.rows[0] > 0 else (second, theirs)
        return (
            f"natural against natural: {winner}'s {_name(hand)} is the stronger and collects its"
            f" {plural(natural_amount(rule_set, hand.natural), 'unit')}"
        )
    holder, held = (first, mine) if mine is not None else (second, theirs)
    assert held is not None
    return (
        f"{holder}'s natural, {_name(held)}, beats every ordinary hand: "
        f"{plural(natural_amount(rule_set, held.natural), 'unit')}, no rows compared"
    )


def _name(hand: NaturalHand) -> str:
    return hand.natural.value.replace("_", " ")


def tell_natural(
    event: Event, who: Callable[[int], str] = lambda seat: f"seat {seat}"
) -> str | None:
    """A natural declaration event in words (``sapsam audit replay``), the seat named by
    ``who``; None for another event."""
    if isinstance(event, NaturalDeclared):
        return f"{who(event.seat)} committed its natural declaration ({event.commitment[:16]}…)"
    if isinstance(event, NaturalRevealed):
        said = "no natural" if event.natural == "none" else event.natural.replace("_", " ")
        return f"{who(event.seat)} opened its declaration: {said}"
    return None
