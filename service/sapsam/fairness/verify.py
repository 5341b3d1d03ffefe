"""Verify a finished deal from its published data alone (docs/fairness.md §13).

Each check confirms one published fact from facts already confirmed, in this order:

===========================  =============================================  ===================
check                        confirms                                       needs
===========================  =============================================  ===================
``seed_commitment``          the seed matches the commitment                —
``contributions``            seed + contributions give the recorded deck    seed_commitment
``cut``                      the cut gives the recorded cut deck            contributions
``dealer``                   dealing from the dealer's left gives the       cut
                             recorded hands
``reveal_commitment[s]``     seat ``s``'s reveal and nonce match its        —
                             commitment
``solver_arrangement[s]``    (a solver seat only) the arrangement recorded  dealer
                             for it is a legal one of its dealt cards
``fouls``                    the recorded fouls follow from the reveals     dealer, every
                             (and solver arrangements) and the dealt hands  reveal_commitment
                                                                            and
                                                                            solver_arrangement
``scores``                   the recorded scores follow from the rules      fouls (and all
                                                                            that fouls needs)
===========================  =============================================  ===================

A check whose needs did not all pass is *skipped*, not failed: its inputs are not trustworthy, so
it says nothing. Hence altering any single published fact fails exactly the check that owns it.

No check runs sapsam's solver, except for a deal of the earlier scheme (published without
``solver_arrangements``: scored before ``DealScored`` recorded them), whose solver seats are set
again by ``sapsam.rules.solver.solve`` in ``solver_arrangement[s]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from sapsam.fairness.commitments import arrangement_commitment
from sapsam.fairness.deal import (
    cut_deck_record_message,
    deal_hand_bytes,
    deck_record_message,
    hand_record_message,
    record_key,
    require_cut_position,
)
from sapsam.fairness.encoding import (
    COMMITMENT_SCHEMES,
    FairnessError,
    card_bytes,
    keyed_hmac_sha256,
)
from sapsam.fairness.natural_checks import declaration_problem, declared_natural
from sapsam.fairness.published import PublishedDeal
from sapsam.fairness.shuffle import seed_commitment, shuffle_deck
from sapsam.fairness.verification_checks import (
    Check,
    CheckRunner,
    VerificationReport,
    check_result,
    compared,
    compared_bytes,
    failing,
    passing,
)
from sapsam.frozen import from_fields
from sapsam.plurals import numbered
from sapsam.rules.arrangement import Arrangement, ArrangementCheck, FoulReason, check_arrangement
from sapsam.rules.cards import DECK, Card, format_cards
from sapsam.rules.naturals import NaturalHand, NaturalsTable, judge_seat
from sapsam.rules.scoring import DealScore
from sapsam.rules.surrender import score_with_surrender


def _no_key(message: bytes) -> bytes:
    raise FairnessError("the record key was never derived")


@dataclass
class _Work:
    """Values computed by one check and used by the checks that rely on it.

    The decks and hands go from check to check as card bytes, what the record's digests sign; the
    record key as its HMAC, keyed once for the deal's digests (``deck_digest``, ``cut_deck_digest``
    and ``hand_digest`` give the same values).
    """

    mac: Callable[[bytes], bytes] = _no_key
    deck: bytes = b""
    cut_deck: bytes = b""
    hands: tuple[tuple[Card, ...], ...] = ()


def _hex_list(values: Sequence[bytes | None]) -> str:
    return ",".join("-" if value is None else value.hex() for value in values)


def _foul_for_missing_reveal() -> ArrangementCheck:
    return ArrangementCheck(
        foul=True, reason=FoulReason.WRONG_ROW_SIZE, detail="never revealed", values=None
    )


def _judge(
    deal: PublishedDeal, seat: int, hand: Sequence[Card], set_for: dict[int, Arrangement]
) -> tuple[Arrangement | None, ArrangementCheck, NaturalHand | None]:
    """The arrangement scored for ``seat`` (its reveal, the one set on its behalf, or none), the
    verdict on it, and the real natural it declared, if any (docs/rules.md §2.9)."""
    reveal = deal.reveals[seat]
    if reveal is not None:
        declarations = deal.natural_declarations
        natural = declared_natural(None if declarations is None else declarations[seat])
        verdict, held = judge_seat(deal.rule_set, reveal.arrangement, hand, natural)
        return reveal.arrangement, verdict, held
    if deal.solver_seats[seat]:
        arrangement = set_for[seat]  # its solver_arrangement check passed, so it is there
        strict = deal.rule_set.strict_row_order
        return arrangement, check_arrangement(arrangement, hand, strict), None
    return None, _foul_for_missing_reveal(), None


def _rows_text(arrangement: Arrangement | None) -> str:
    if arrangement is None:
        return "none"
    return " / ".join(format_cards(row) for row in arrangement.rows)


def _solver_check(
    deal: PublishedDeal, seat: int, name: str, work: _Work, set_for: dict[int, Arrangement]
) -> Check:
    """The arrangement set on behalf of a solver seat: recorded (checked for legality: exactly
    the seat's dealt cards, rows of 3, 5 and 5, in order), or, for a deal of the earlier scheme,
    set again by sapsam's solver."""
    hand = work.hands[seat]
    if deal.solver_arrangements is None:
        # Imported here: only deals of the earlier scheme need the solver and its tables.
        from sapsam.rules.solver import solve

        arrangement = solve(hand, deal.rule_set)
        set_for[seat] = arrangement
        return passing(
            name,
            _rows_text(arrangement),
            "earlier scheme: the deal was scored before the arrangement was recorded, so "
            "sapsam's solver set it again",
        )
    recorded = deal.solver_arrangements[seat]
    if not deal.solver_seats[seat]:
        return failing(
            name,
            "none",
            _rows_text(recorded),
            "an arrangement is recorded as set on behalf of a seat that did not miss its "
            "arranging deadline under the solver policy",
        )
    if recorded is None:
        return failing(
            name,
            "an arrangement",
            "none",
            "the seat's hand was set on its behalf, but no arrangement is recorded for it",
        )
    verdict = check_arrangement(recorded, hand, deal.rule_set.strict_row_order)
    if verdict.foul:
        return failing(
            name,
            "a legal arrangement of the seat's dealt cards",
            _rows_text(recorded),
            f"the arrangement recorded for the seat is not legal: {verdict.detail}",
        )
    set_for[seat] = recorded
    return passing(name, _rows_text(recorded))


def _score_text(score: DealScore) -> str:
    pairs = " ".join(
        f"{pair.seat_a}-{pair.seat_b}:{','.join(map(str, pair.rows))}={pair.delta}"
        for pair in score.pairs
    )
    return f"pairs {pairs}; totals {','.join(map(str, score.totals))}"


def verify_deal(published: PublishedDeal, passed_texts: bool = True) -> VerificationReport:
    """Recompute a finished deal from its published data and report every check by name.

    Never raises for bad published values: a malformed or altered value fails its check.
    ``passed_texts=False`` is for a caller that reads the expected and found texts of failed
    checks only (the audit's report): a digest or score check that passes then carries none,
    which spares writing them (the verdicts and every other text are the same).
    """
    deal = published
    checks = CheckRunner()
    state = _Work()

    def seed_check() -> Check:
        found = seed_commitment(deal.table_id, deal.deal_number, deal.seed)
        return compared_bytes(
            "seed_commitment",
            deal.seed_commitment,
            found,
            lambda: (
                "the published seed does not hash to the seed commitment published at the "
                "deal's start"
            ),
            passed_texts,
        )

    def contributions_check() -> Check:
        key = record_key(deal.table_id, deal.deal_number, deal.seed)
        deck = card_bytes(
            shuffle_deck(deal.seed, deal.contributions, deal.table_id, deal.deal_number)
        )
        mac = keyed_hmac_sha256(key)
        state.mac, state.deck = mac, deck
        return compared_bytes(
            "contributions",
            deal.record.deck,
            mac(deck_record_message(deck)),
            lambda: (
                f"shuffling with the seed and the contributions "
                f"{_hex_list(deal.contributions)} does not give the deck recorded at the deal"
            ),
            passed_texts,
        )

    def cut_check() -> Check:
        # cut_deck on the shuffled deck (a permutation of the canonical deck, so a valid deck).
        position = require_cut_position(deal.cut_position)
        after_cut = state.deck[position:] + state.deck[:position]
        state.cut_deck = after_cut
        return compared_bytes(
            "cut",
            deal.record.cut_deck,
            state.mac(cut_deck_record_message(after_cut)),
            lambda: (
                f"cutting at position {deal.cut_position} does not give the cut deck recorded "
                "at the deal"
            ),
            passed_texts,
        )

    def dealer_check() -> Check:
        mac = state.mac
        dealt = deal_hand_bytes(state.cut_deck, deal.dealer, deal.seat_count)
        state.hands = tuple(tuple(map(DECK.__getitem__, hand)) for hand in dealt)
        found = [mac(hand_record_message(seat, hand)) for seat, hand in enumerate(dealt)]

        def detail() -> str:
            wrong = [
                seat for seat in range(deal.seat_count) if found[seat] != deal.record.hands[seat]
            ]
            return (
                f"dealing from the left of dealer {deal.dealer} does not give the hands recorded "
                f"at the deal for {numbered('seat', wrong)}"
            )

        # Equal digests print alike: the usual case writes the text once (or not at all).
        same = found == list(deal.record.hands)
        if same and not passed_texts:
            return check_result("dealer", True, "", "", "")
        expected = _hex_list(deal.record.hands)
        return compared("dealer", expected, expected if same else _hex_list(found), detail)

    checks.run("seed_commitment", (), seed_check)
    checks.run("contributions", ("seed_commitment",), contributions_check)
    checks.run("cut", ("contributions",), cut_check)
    checks.run("dealer", ("cut",), dealer_check)

    reveal_names = []
    for seat in range(deal.seat_count):
        name = f"reveal_commitment[{seat}]"
        reveal_names.append(name)
        checks.run(name, (), partial(_reveal_check, deal, seat, name, passed_texts))

    # Only the seats whose hand was set on their behalf (or that hold such an arrangement) get
    # a solver_arrangement check: a deal without one reports the same checks as ever.
    set_for: dict[int, Arrangement] = {}
    solver_names = []
    recorded_sets = deal.solver_arrangements
    for seat in range(deal.seat_count):
        if deal.solver_seats[seat] or (
            recorded_sets is not None and recorded_sets[seat] is not None
        ):
            name = f"solver_arrangement[{seat}]"
            solver_names.append(name)
            checks.run(name, ("dealer",), partial(_solver_check, deal, seat, name, state, set_for))

    # A table with naturals (or a deal claiming declarations): each seat's declaration[s].
    declaration_names = []
    if deal.natural_declarations is not None or deal.rule_set.naturals is not NaturalsTable.NONE:
        for seat in range(deal.seat_count):
            name = f"declaration[{seat}]"
            declaration_names.append(name)
            checks.run(name, (), partial(_declaration_check, deal, seat, name))

    needs = ("dealer", *reveal_names, *solver_names, *declaration_names)
    judged: list[ArrangementCheck] = []
    scored: list[Arrangement | None] = []
    naturals: list[NaturalHand | None] = []

    def fouls_check() -> Check:
        for seat, hand in enumerate(state.hands):
            arrangement, verdict, natural = _judge(deal, seat, hand, set_for)
            scored.append(arrangement)
            judged.append(verdict)
            naturals.append(natural)
        found = tuple(verdict.foul for verdict in judged)

        def detail() -> str:
            reasons = "; ".join(
                f"seat {seat}: {verdict.detail}"
                for seat, verdict in enumerate(judged)
                if verdict.foul
            )
            return (
                f"the reveals judged against the dealt hands give other fouls ({reasons or 'none'})"
            )

        return compared(
            "fouls", ",".join(map(str, deal.recorded_fouls)), ",".join(map(str, found)), detail
        )

    def scores_check() -> Check:
        if len(judged) != deal.seat_count:
            raise FairnessError("the reveals could not be judged")
        # A surrendered seat's pairs settle its price, not its rows (docs/rules.md §2.8).
        found = score_with_surrender(
            deal.rule_set, judged, deal.surrendered or (False,) * deal.seat_count, naturals
        )
        if not passed_texts and found == deal.recorded_scores:
            return check_result("scores", True, "", "", "")  # passes below too, as equal texts
        expected = _score_text(deal.recorded_scores)
        return compared(
            "scores",
            expected,
            # Equal scores print alike: the usual case writes the text once.
            expected if found == deal.recorded_scores else _score_text(found),
            lambda: f"rescoring under the rule set {deal.rule_set.name!r} gives other results",
        )

    checks.run("fouls", needs, fouls_check)
    checks.run("scores", (*needs, "fouls"), scores_check)

    results = tuple(checks.results)
    # VerificationReport(...) without the frozen __init__ (no __post_init__; every field given,
    # in the class's order).
    return from_fields(
        VerificationReport,
        {
            "ok": all(check.passed for check in results),
            "checks": results,
            "hands": state.hands or None,
            "arrangements": tuple(scored),
        },
    )


def _declaration_check(deal: PublishedDeal, seat: int, name: str) -> Check:
    """Seat ``seat``'s natural declaration opens its commitment (docs/fairness.md §21)."""
    declarations = deal.natural_declarations
    declaration = None if declarations is None else declarations[seat]
    problem = declaration_problem(
        declaration,
        plays_naturals=deal.rule_set.naturals is not NaturalsTable.NONE,
        revealed=deal.reveals[seat] is not None,
        table_id=deal.table_id,
        deal_number=deal.deal_number,
        seat=seat,
        player_id=deal.players[seat],
    )
    if problem is not None:
        return failing(name, *problem)
    if declaration is None or declaration.natural is None:
        return passing(name, "none", "the seat declared nothing it opened: none")
    return passing(name, declaration.natural)


def _reveal_check(deal: PublishedDeal, seat: int, name: str, passed_texts: bool = True) -> Check:
    commitment = deal.seat_commitments[seat]
    reveal = deal.reveals[seat]
    if reveal is None:
        if deal.solver_seats[seat]:
            return passing(
                name,
                "no reveal",
                "the seat timed out under the solver policy: its hand was set for it",
            )
        return passing(name, "no reveal", "the seat never revealed: its hand counts as a foul")
    if deal.solver_seats[seat]:
        return failing(
            name,
            "no reveal",
            "a reveal",
            "a seat whose hand the solver set cannot also have revealed",
        )
    if commitment is None:
        return failing(name, "a commitment", "none", "the seat revealed without having committed")
    arrangement = reveal.arrangement
    scheme = deal.commitment_schemes[seat]
    player = deal.players[seat]
    if scheme not in COMMITMENT_SCHEMES:
        return failing(name, "scheme 1 or 2", f"scheme {scheme}", "an unknown commitment scheme")
    if scheme == 2 and player is None:
        return failing(name, "a player id", "none", "a scheme 2 commitment binds a seated player")
    # A malformed value (a player id too long) raises a ValueError: the runner fails the check.
    found = arrangement_commitment(
        deal.table_id,
        deal.deal_number,
        seat,
        arrangement,
        reveal.nonce,
        scheme=scheme,
        player_id=player,
    )

    def detail() -> str:
        shown = _rows_text(arrangement)
        return (
            f"the revealed arrangement {shown} with nonce {reveal.nonce.hex()} does not match "
            "the seat's commitment"
            + (f" under scheme 2 for player {player}" if scheme == 2 else "")
        )

    return compared_bytes(name, commitment, found, detail, passed_texts)
