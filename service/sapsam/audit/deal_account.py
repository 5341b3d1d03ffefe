"""A scored deal told in words: who sat where, the hands as ``sapsam-play`` showed them, every
pair's rows with their winners, the points and the bonuses, and the running totals.

Pure (the offline verifier may load it: no replay, no solver, no table logic). The scores are not
worked out here: each pair's rows come from ``sapsam.rules.scoring.score_deal`` over the rows the
deal's ``DealScored`` records, each payment is split into its parts by
``sapsam.rules.scoring.settlement``, whose sum is the scorer's amount, and the royalties are
``sapsam.rules.royalties``' own units; so the explanation and the score cannot disagree
(tests/audit/test_deal_account.py holds them together over random deals of every scoring method
and royalty payment). ``sapsam audit verify`` prints an account of each deal after the checks,
and ``sapsam audit replay`` at each deal's score. What the records say of each deal, before it
is told, is ``sapsam.audit.deal_account_facts``.

Players are named by the display names the export carries (``ExportHeader.display_names``): labels
the server's directory gave, which no check covers. The ids are what the log binds, so every
account lists the seats with both, and a label never stands for a player on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from sapsam.audit.deal_account_facts import DealAccount, accounts
from sapsam.audit.deal_events import MALFORMED
from sapsam.audit.export_format import AuditExport
from sapsam.audit.natural_account import natural_phrase
from sapsam.audit.report import AuditReport, render_text
from sapsam.domain.event_codec import DEFAULT_CODEC, EventCodec
from sapsam.rules.hand_text import cards_shown, names_apart, row_name
from sapsam.rules.royalties import (
    RoyaltyLimit,
    RoyaltyPayment,
    royalty_units,
)
from sapsam.rules.ruleset import MajorityRule, RuleSet, ScoringMethod
from sapsam.rules.scoring import PairResult, settlement

ROWS: Final = ("front", "middle", "back")
MAJORITY_WORDS: Final = {
    MajorityRule.TWO_ROWS_WON: "at least two of the three rows",
    MajorityRule.MORE_ROWS_WON: "more rows than the other",
}
"""What holds the majority (2-4's unit, 1-6's 2-of-3 points) under the rule set's ``majority``."""
METHOD_WORDS: Final = {
    ScoringMethod.PER_ROW: "per row: each row won is one unit",
    ScoringMethod.TWO_FOUR: "2-4: each row won is one unit, and one more for winning {majority}",
    ScoringMethod.ONE_SIX: "1-6: rows pay nothing on their own; winning {majority} pays, a scoop"
    " pays more",
    ScoringMethod.PER_ROW_SCOOP_BONUS: "per row with a scoop bonus: each row won is one unit,"
    " and a bonus for winning all three",
}


@dataclass(frozen=True)
class CardWriting:
    """How cards are written: suit symbols (``A♠``) and colour, as the reader's terminal allows."""

    symbols: bool = False
    colour: bool = False


def seat_labels(players: Sequence[str | None], names: Mapping[str, str]) -> list[str]:
    """What to call each seat: its player's display name, with the seat number when two seats
    share it; the player id without one; ``seat N`` for an empty seat."""
    bare = [
        (names.get(player) or player) if player is not None else f"seat {seat}"
        for seat, player in enumerate(players)
    ]
    return [
        f"{label} (seat {seat})" if bare.count(label) > 1 else label
        for seat, label in enumerate(bare)
    ]


def seating(export: AuditExport) -> list[tuple[int, str, str]]:
    """Who the export seats: (seat, player id, when) for each ``PlayerSeated`` and
    ``SeatReplaced`` (``when`` is empty for a seat taken at the opening)."""
    found: list[tuple[int, str, str]] = []
    for event in export.events:
        seat, player = event.data.get("seat"), event.data.get("player_id")
        if type(seat) is not int or type(player) is not str:
            continue
        if event.type == "PlayerSeated":
            found.append((seat, player, ""))
        elif event.type == "SeatReplaced":
            found.append((seat, player, f" (replacing its player at v{event.version})"))
    return found


def player_lines(seated: Sequence[tuple[int, str, str]], names: Mapping[str, str]) -> list[str]:
    """The seats with their players' ids and display names (``seating``'s entries), saying that
    the names are labels."""
    labelled = any(player in names for _, player, _ in seated)
    heading = (
        "Players (the names are labels the export carries, not checked; the checks bind the ids):"
        if labelled
        else "Players (the export carries no display names; the ids are the players):"
    )
    lines = [heading]
    for seat, player, when in seated:
        name = names.get(player)
        who = f"{name} = player {player}" if name else f"player {player}"
        lines.append(f"  seat {seat}: {who}{when}")
    return lines


def _points(amount: int) -> str:
    return f"{amount:+d} point" + ("" if abs(amount) == 1 else "s")


def _row_name(row: tuple[str, ...]) -> str:
    try:
        return row_name(row)
    except ValueError:  # a fouled row repeating a card, or of the wrong size
        return "no hand"


def row_phrase(
    account: DealAccount, pair: PairResult, row: int, labels: Sequence[str]
) -> tuple[str, str | None]:
    """One row of a pair in words, and the label of its winner (None: a tie)."""
    first, second = pair.seat_a, pair.seat_b
    outcome = pair.rows[row]
    winner = None if outcome == 0 else labels[first] if outcome > 0 else labels[second]
    if account.fouls[first] and account.fouls[second]:
        return "both fouled: nobody wins it", None
    for fouled, other in ((first, second), (second, first)):
        if account.fouls[fouled]:
            return f"{labels[other]} wins it: {labels[fouled]} fouled", winner
    mine, theirs = account.rows[first], account.rows[second]
    if mine is None or theirs is None:  # pragma: no cover - a legal seat always has rows
        return "not revealed", winner
    try:
        first_name, second_name = names_apart(mine[row], theirs[row])
    except ValueError:
        first_name, second_name = _row_name(mine[row]), _row_name(theirs[row])
    if outcome > 0:
        return f"{labels[first]}'s {first_name} beat {labels[second]}'s {second_name}", winner
    if outcome < 0:
        return f"{labels[second]}'s {second_name} beat {labels[first]}'s {first_name}", winner
    return f"a tie, both {first_name}", None


@dataclass(frozen=True)
class PairItem:
    """One line of a pair's account: what it is, and the points it moves (from the pair's first
    seat's side: positive to ``seat_a``)."""

    text: str
    points: int


def pair_items(
    account: DealAccount, pair: PairResult, rule_set: RuleSet, labels: Sequence[str]
) -> list[PairItem]:
    """A pair's account line by line: each row and its winner, then the bonuses; the points of
    the items add up to the scorer's ``pair.delta`` (``settlement``'s parts)."""
    first, second = labels[pair.seat_a], labels[pair.seat_b]
    by_natural = natural_phrase(rule_set, pair, account.naturals, first, second)
    if by_natural is not None:
        return [PairItem(by_natural, pair.delta)]
    if account.surrendered and (
        account.surrendered[pair.seat_a] or account.surrendered[pair.seat_b]
    ):
        return [PairItem(_surrender_phrase(account, pair, first, second), pair.delta)]
    parts = settlement(rule_set, pair.rows, rule_set.unit_between(pair.seat_a, pair.seat_b))
    unit = parts.row_unit
    pays_rows = rule_set.scoring is not ScoringMethod.ONE_SIX
    items = []
    for row, name in enumerate(ROWS):
        text, _ = row_phrase(account, pair, row, labels)
        items.append(PairItem(f"{name}: {text}", pair.rows[row] * unit if pays_rows else 0))

    def side(units: int) -> str:
        return first if units > 0 else second

    won = MAJORITY_WORDS[rule_set.majority]
    if parts.majority:
        items.append(
            PairItem(f"2-4 majority: {side(parts.majority)} won {won}", parts.majority * unit)
        )
    if parts.two_of_three:
        items.append(
            PairItem(f"1-6: {side(parts.two_of_three)} won {won}", parts.two_of_three * unit)
        )
    if parts.scoop:
        what = "1-6 scoop" if rule_set.scoring is ScoringMethod.ONE_SIX else "scoop bonus"
        items.append(
            PairItem(f"{what}: {side(parts.scoop)} won all three rows", parts.scoop * unit)
        )
    if account.royalties:
        mine, theirs = account.royalties[pair.seat_a], account.royalties[pair.seat_b]
        my_broken, their_broken = (
            (account.broken[pair.seat_a], account.broken[pair.seat_b])
            if account.broken
            else ((), ())
        )
        extra = royalty_units(rule_set, pair.rows, mine, theirs, my_broken, their_broken)
        if extra:
            held = "; ".join(
                f"{label} {_royalty_rows(amounts, broken)}"
                for label, amounts, broken in (
                    (first, mine, my_broken),
                    (second, theirs, their_broken),
                )
                if any(amounts) or broken
            )
            how = "for rows won" if rule_set.royalties is RoyaltyPayment.WON_ROW else "held"
            limit = (
                ", the largest only" if rule_set.royalty_limit is RoyaltyLimit.LARGEST_ONLY else ""
            )
            items.append(PairItem(f"royalties ({how}{limit}): {held}", extra * unit))
    return items


def _surrender_phrase(account: DealAccount, pair: PairResult, first: str, second: str) -> str:
    """A pair settled by a surrender (docs/rules.md §2.8): no rows compared."""
    if account.surrendered[pair.seat_a] and account.surrendered[pair.seat_b]:
        return "both surrendered: nothing changes hands"
    payer, payee = (first, second) if account.surrendered[pair.seat_a] else (second, first)
    if pair.delta == 0:
        return f"{payer} surrendered; {payee}'s fouled hand collects nothing"
    return f"{payer} surrendered and pays {payee} the surrender price; no rows compared"


def _royalty_rows(amounts: tuple[int, int, int], broken: tuple[int, ...] = ()) -> str:
    rows = [f"{row} {amount}" for row, amount in zip(ROWS, amounts, strict=True) if amount]
    return ", ".join(rows + [f"a hand split across rows {amount}" for amount in broken])


def account_lines(
    account: DealAccount,
    rule_set: RuleSet,
    names: Mapping[str, str],
    writing: CardWriting = CardWriting(),
) -> list[str]:
    """The deal in words: each seat's rows as the client showed them, named; each pair row by
    row with the points and bonuses; the running totals."""
    labels = seat_labels(account.players, names)
    dealt_by = "" if account.dealer is None else f", dealt by {labels[account.dealer]}"
    lines = [f"Deal {account.deal_number}{dealt_by}: how it scored ({_method(rule_set)})"]
    for seat, label in enumerate(labels):
        foul = f", FOUL ({account.foul_words[seat]})" if account.fouls[seat] else ""
        lines.append(
            f"  seat {seat} {label}: {_points(account.score.totals[seat])}, total"
            f" {account.series_totals[seat]:+d}{foul}"
        )
        rows = account.rows[seat]
        if rows is None:
            lines.append("      (no rows: scored as a foul)")
            continue
        lines.append(
            "      "
            + " | ".join(
                cards_shown(row, symbols=writing.symbols, colour=writing.colour) for row in rows
            )
        )
        lines.append("      " + "; ".join(_row_name(row) for row in rows))
    for pair in account.score.pairs:
        first, second = labels[pair.seat_a], labels[pair.seat_b]
        lines.append(
            f"  {first} v {second}: {first} {_points(pair.delta)}, {second} {_points(-pair.delta)}"
        )
        for item in pair_items(account, pair, rule_set, labels):
            moved = (
                ""
                if item.points == 0
                else f"  [{first if item.points > 0 else second} +{abs(item.points)}]"
            )
            lines.append(f"      {item.text}{moved}")
    stated = (
        " (the totals before it as its record states them: the deal before is not in the export)"
        if account.stated_before
        else ""
    )
    lines.append(f"  running totals after deal {account.deal_number}{stated}:")
    for seat, label in enumerate(labels):
        lines.append(
            f"      {label}: {account.totals_before[seat]:+d} before"
            f" {account.score.totals[seat]:+d} this deal = {account.series_totals[seat]:+d}"
        )
    if account.score.totals != account.recorded_totals:
        lines.append(
            "  the record's scores differ from what the rules give for these rows: see the"
            " failed scores check"
        )
    return lines


def _method(rule_set: RuleSet) -> str:
    unit = "" if rule_set.row_unit == 1 else f"; a unit is {rule_set.row_unit} points"
    royalties = {
        RoyaltyPayment.WON_ROW: "; royalties for strong rows won",
        RoyaltyPayment.HELD_ROW: "; royalties for strong rows held, the difference paid",
    }.get(rule_set.royalties, "")
    words = METHOD_WORDS.get(rule_set.scoring, str(rule_set.scoring))
    order = "; each row must beat the one before" if rule_set.strict_row_order else ""
    return words.format(majority=MAJORITY_WORDS[rule_set.majority]) + order + royalties + unit


def export_account(
    export: AuditExport,
    checks_hold: bool,
    writing: CardWriting = CardWriting(),
    codec: EventCodec = DEFAULT_CODEC,
) -> tuple[list[str], list[str]]:
    """What ``sapsam audit verify FILE`` prints around its checks: the players (before), and an
    account of every scored deal (after) when ``checks_hold`` (no check failed: a record that
    failed one is not told as fact)."""
    names = dict(export.header.display_names)
    before = player_lines(seating(export), names)
    if not checks_hold:
        return before, ["(no account of the deals: a check failed, so the record is not told)"]
    try:
        decoded = [codec.decode(e.type, e.schema_version, e.data) for e in export.events]
    except MALFORMED:  # pragma: no cover - the decode check failed first
        return before, []
    rule_set, told = accounts(decoded)
    after: list[str] = []
    for account in told:
        if rule_set is not None:
            after.extend(["", *account_lines(account, rule_set, names, writing)])
    return before, after


def told_report(
    report: AuditReport, export: AuditExport | None, writing: CardWriting = CardWriting()
) -> str:
    """The report on ``export`` for a person, as ``sapsam audit verify FILE`` prints it: the
    players, one line per check, an account of each deal (``export_account``) and the verdict,
    last. An unreadable export (None: its ``format`` check says why) has only its checks. The
    one text of a verification for a person: the CLI's, ``VerifyDeal``'s ``report_text`` and
    the SDK's dispute verdict."""
    if export is None:
        return render_text(report)
    before, after = export_account(export, report.ok, writing)
    return render_text(report, before, after)
