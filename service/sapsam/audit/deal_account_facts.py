"""What a scored deal's records say, ready to be told (``sapsam.audit.deal_account`` tells it):
each seat's player, rows and foul, the rules' score of those rows, the royalties, naturals and
surrenders, and the running totals, read from a table's decoded events by :func:`accounts`.

Pure (the offline verifier may load it). The score is the rules' own (``score_with_surrender``
over the recorded rows), never worked out here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from sapsam.audit.natural_account import real_naturals
from sapsam.domain.events import (
    ArrangementRevealed,
    DealScored,
    DealStarted,
    DealVoided,
    Event,
    NaturalRevealed,
    PlayerSeated,
    SeatReplaced,
    SeatTimedOut,
    SurrenderAnnounced,
    TableCreated,
)
from sapsam.rules.arrangement import Arrangement, ArrangementCheck, check_arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.naturals import NaturalHand
from sapsam.rules.royalties import (
    broken_royalties,
    row_royalties,
)
from sapsam.rules.ruleset import RuleSet, RuleSetError
from sapsam.rules.scoring import DealScore
from sapsam.rules.surrender import score_with_surrender

__all__ = ["FOUL_WORDS", "DealAccount", "Rows", "accounts"]

FOUL_WORDS: Final = {
    "WRONG_ROW_SIZE": "a row of the wrong size",
    "NOT_DEALT_CARDS": "cards not dealt to the seat",
    "ROWS_OUT_OF_ORDER": "rows out of order",
    "FALSE_NATURAL": "a natural declared that the cards do not hold",
}


Rows = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


@dataclass(frozen=True)
class DealAccount:
    """What a scored deal's records say, ready to be told."""

    deal_number: int
    dealer: int | None
    players: tuple[str | None, ...]
    """The player id at each seat during the deal."""
    rows: tuple[Rows | None, ...]
    """Each seat's scored rows (front, middle, back), or None (a fouled seat without rows)."""
    fouls: tuple[bool, ...]
    foul_words: tuple[str, ...]
    """Why each fouled seat fouled, in words ("" for a seat that did not)."""
    score: DealScore
    """The rules' score of those rows (``score_deal``): the pairs' rows and amounts."""
    recorded_totals: tuple[int, ...]
    series_totals: tuple[int, ...]
    royalties: tuple[tuple[int, int, int], ...] = ()
    """Each seat's royalty units per row (``rules.royalties.row_royalties``; zeros without)."""
    naturals: tuple[NaturalHand | None, ...] = ()
    """Each seat's real declared natural, if any (docs/rules.md §2.9; ``()`` without naturals)."""
    surrendered: tuple[bool, ...] = ()
    """Each seat's announcement at a table with surrender: True surrendered (docs/rules.md §2.8);
    ``()`` when nobody did."""
    broken: tuple[tuple[int, ...], ...] = ()
    """Each seat's royalties for hands split across rows (``rules.royalties.broken_royalties``)."""
    stated_before: bool = False
    """True when the deal before it is not among the events told: the totals before the deal
    are then only what its record states (the ``series_totals`` check is not covered)."""

    @property
    def totals_before(self) -> tuple[int, ...]:
        """The running totals before the deal, as its record states them (after less its own)."""
        return tuple(
            after - own for after, own in zip(self.series_totals, self.recorded_totals, strict=True)
        )


def _rows_of(text: str | None) -> Rows | None:
    if text is None:
        return None
    parts = text.split("|")
    if len(parts) != 3:
        return None
    front, middle, back = (tuple(part.split()) for part in parts)
    return (front, middle, back)


def _judged(rows: Rows | None, fouled: bool, strict_order: bool = False) -> ArrangementCheck:
    """The rules' verdict on a seat's scored rows (under the rule set's row order); the record's
    foul flag stands for a seat fouled for what rows alone do not show (cards not dealt to it, a
    missed deadline)."""
    if rows is not None and not fouled:
        try:
            cards = tuple(parse_cards(list(row)) for row in rows)
            verdict = check_arrangement(Arrangement.of_card_rows(*cards), None, strict_order)
        except ValueError:
            verdict = None
        if verdict is not None and not verdict.foul:
            return verdict
    return ArrangementCheck(foul=True, reason=None, detail="", values=None)


def accounts(events: Sequence[Event]) -> tuple[RuleSet | None, list[DealAccount]]:
    """The table's rule set and an account of every scored deal among ``events`` (decoded, in
    stream order); a deal whose record the rules cannot read is left out (the checks say why)."""
    rule_set: RuleSet | None = None
    players: list[str | None] = []
    dealer: int | None = None
    foul_words: dict[int, str] = {}
    surrendered: set[int] = set()
    opened: dict[int, str] = {}
    found: list[DealAccount] = []
    settled = 0  # the last deal accounted for or voided: the totals run on from it
    for event in events:
        if isinstance(event, TableCreated):
            try:
                rule_set = RuleSet.from_dict(event.rule_set)
            except (RuleSetError, ValueError, TypeError):
                rule_set = None
            players = [None] * event.seat_count
        elif isinstance(event, (PlayerSeated, SeatReplaced)) and 0 <= event.seat < len(players):
            players[event.seat] = event.player_id
        elif isinstance(event, DealStarted):
            dealer, foul_words, surrendered, opened = event.dealer, {}, set(), {}
        elif isinstance(event, NaturalRevealed):
            opened[event.seat] = event.natural
        elif isinstance(event, SurrenderAnnounced) and event.surrender:
            surrendered.add(event.seat)
        elif isinstance(event, ArrangementRevealed) and event.foul:
            foul_words[event.seat] = FOUL_WORDS.get(event.foul_reason or "", "a foul")
        elif isinstance(event, SeatTimedOut) and event.consequence != "solver":
            foul_words[event.seat] = f"missed the {event.stage} deadline"
        elif isinstance(event, DealScored) and rule_set is not None:
            account = _account(
                event, rule_set, tuple(players), dealer, foul_words, surrendered, opened
            )
            if account is not None:
                stated = account.deal_number not in (1, settled + 1)
                found.append(replace(account, stated_before=stated))
                settled = account.deal_number
        elif isinstance(event, DealVoided) and settled == event.deal_number - 1:
            settled = event.deal_number  # unscored: the totals before it carry over
    return rule_set, found


def _account(
    event: DealScored,
    rule_set: RuleSet,
    players: tuple[str | None, ...],
    dealer: int | None,
    foul_words: Mapping[int, str],
    surrendered: Collection[int] = (),
    opened: Mapping[int, str] | None = None,
) -> DealAccount | None:
    seats = len(players)
    if not (len(event.arrangements) == len(event.fouls) == len(event.totals) == seats):
        return None
    if len(event.series_totals) != seats:
        return None
    rows = tuple(_rows_of(text) for text in event.arrangements)
    strict = rule_set.strict_row_order
    judged = [_judged(rows[seat], event.fouls[seat], strict) for seat in range(seats)]
    announced = tuple(seat in surrendered for seat in range(seats)) if surrendered else ()
    naturals = real_naturals(rule_set, rows, event.fouls, opened) if opened else ()
    try:
        score = score_with_surrender(
            rule_set, judged, announced or (False,) * seats, naturals or None
        )
    except ValueError:
        return None
    return DealAccount(
        deal_number=event.deal_number,
        dealer=dealer,
        players=players,
        rows=rows,
        fouls=tuple(event.fouls),
        foul_words=tuple(
            foul_words.get(seat, "a foul") if event.fouls[seat] else "" for seat in range(seats)
        ),
        score=score,
        recorded_totals=tuple(event.totals),
        series_totals=tuple(event.series_totals),
        royalties=tuple(row_royalties(rule_set, check) for check in judged),
        surrendered=announced,
        naturals=naturals,
        broken=tuple(broken_royalties(rule_set, check) for check in judged),
    )
