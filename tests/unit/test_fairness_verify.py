"""verify_deal: an honest deal passes every check; each single alteration fails exactly one."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from sapsam.fairness import FairnessError, arrangement_commitment, deal_record
from sapsam.fairness.example_deals import example_published_deal
from sapsam.fairness.published import PublishedDeal, Reveal
from sapsam.fairness.vectors import DEAL_INPUTS
from sapsam.fairness.verify import verify_deal
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.presets import preset
from sapsam.rules.scoring import DealScore

# Two, three and four seats; with and without contributions; one with a seat that never revealed.
HONEST = {
    "2 seats": example_published_deal(DEAL_INPUTS[1]),
    "3 seats": example_published_deal(DEAL_INPUTS[3], preset("two_four")),
    "4 seats": example_published_deal(DEAL_INPUTS[5]),
    "4 seats, one never revealed": example_published_deal(DEAL_INPUTS[6], revealed=False),
    "3 seats, one set by the solver": example_published_deal(
        DEAL_INPUTS[2], revealed=False, solver=True
    ),
}
DEAL_IDS = list(HONEST)

CHAIN = ("contributions", "cut", "dealer", "fouls", "scores")


def _flip(data: bytes, bit: int = 0) -> bytes:
    flipped = bytearray(data)
    flipped[bit // 8] ^= 1 << (bit % 8)
    return bytes(flipped)


def _replace_at(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return (*values[:index], value, *values[index + 1 :])


def _seat_names(deal: PublishedDeal) -> tuple[str, ...]:
    reveals = tuple(f"reveal_commitment[{seat}]" for seat in range(deal.seat_count))
    solver = tuple(
        f"solver_arrangement[{seat}]" for seat in range(deal.seat_count) if deal.solver_seats[seat]
    )
    return reveals + solver


@pytest.mark.parametrize("name", DEAL_IDS)
def test_an_honest_deal_passes_every_check(name: str) -> None:
    deal = HONEST[name]
    report = verify_deal(deal)
    assert report.ok
    assert [check.name for check in report.checks] == [
        "seed_commitment",
        "contributions",
        "cut",
        "dealer",
        *_seat_names(deal),
        "fouls",
        "scores",
    ]
    assert all(check.passed and check.expected == check.found for check in report.checks)
    assert report.hands is not None and all(len(hand) == 13 for hand in report.hands)


def test_a_seat_that_never_revealed_is_a_foul_not_a_failure() -> None:
    deal = HONEST["4 seats, one never revealed"]
    assert deal.reveals[3] is None
    assert deal.recorded_fouls == (False, False, False, True)
    check = verify_deal(deal).check("reveal_commitment[3]")
    assert check.passed and "never revealed" in check.detail


# Each alteration: (label, the check it must fail, alter(deal) -> deal). Seat-specific ones act on
# seat 1, which every deal above revealed.
def _seed(deal: PublishedDeal) -> PublishedDeal:
    return dataclasses.replace(deal, seed=_flip(deal.seed, 77))


def _seed_commitment(deal: PublishedDeal) -> PublishedDeal:
    return dataclasses.replace(deal, seed_commitment=_flip(deal.seed_commitment, 3))


def _contribution(deal: PublishedDeal) -> PublishedDeal:
    seat = next((s for s, c in enumerate(deal.contributions) if c is not None), None)
    if seat is None:
        # Nobody contributed: claim that seat 0 did.
        return dataclasses.replace(
            deal, contributions=_replace_at(deal.contributions, 0, b"forged")
        )
    value = deal.contributions[seat]
    assert value is not None
    return dataclasses.replace(
        deal, contributions=_replace_at(deal.contributions, seat, _flip(value, 5))
    )


def _contribution_removed(deal: PublishedDeal) -> PublishedDeal:
    seat = next((s for s, c in enumerate(deal.contributions) if c is not None), None)
    if seat is None:
        return _contribution(deal)
    return dataclasses.replace(deal, contributions=_replace_at(deal.contributions, seat, None))


def _cut(deal: PublishedDeal) -> PublishedDeal:
    return dataclasses.replace(deal, cut_position=deal.cut_position % 51 + 1)


def _cut_by_seat_count(deal: PublishedDeal) -> PublishedDeal:
    # With four seats every card is dealt; a cut moved by 4 deals each seat the same cards in
    # another order, and must still be caught.
    position = deal.cut_position + deal.seat_count
    return dataclasses.replace(deal, cut_position=position if position <= 51 else position - 52)


def _cut_out_of_range(deal: PublishedDeal) -> PublishedDeal:
    return dataclasses.replace(deal, cut_position=0)


def _dealer(deal: PublishedDeal) -> PublishedDeal:
    return dataclasses.replace(deal, dealer=(deal.dealer + 1) % deal.seat_count)


def _reveal_card_swapped_between_rows(deal: PublishedDeal) -> PublishedDeal:
    reveal = deal.reveals[1]
    assert reveal is not None
    front, middle, back = reveal.arrangement.rows
    swapped = Arrangement((back[0], *front[1:]), middle, (front[0], *back[1:]))
    return dataclasses.replace(
        deal, reveals=_replace_at(deal.reveals, 1, Reveal(swapped, reveal.nonce))
    )


def _reveal_card_replaced(deal: PublishedDeal) -> PublishedDeal:
    reveal = deal.reveals[1]
    assert reveal is not None
    held = set(reveal.arrangement.cards)
    outsider = next(card for card in range(52) if card not in held)
    front, middle, back = reveal.arrangement.rows
    changed = Arrangement.of((outsider, *front[1:]), middle, back)
    return dataclasses.replace(
        deal, reveals=_replace_at(deal.reveals, 1, Reveal(changed, reveal.nonce))
    )


def _nonce(deal: PublishedDeal) -> PublishedDeal:
    reveal = deal.reveals[1]
    assert reveal is not None
    changed = Reveal(reveal.arrangement, _flip(reveal.nonce, 100))
    return dataclasses.replace(deal, reveals=_replace_at(deal.reveals, 1, changed))


def _commitment(deal: PublishedDeal) -> PublishedDeal:
    value = deal.seat_commitments[1]
    assert value is not None
    return dataclasses.replace(
        deal, seat_commitments=_replace_at(deal.seat_commitments, 1, _flip(value, 200))
    )


def _score_total(deal: PublishedDeal) -> PublishedDeal:
    scores = deal.recorded_scores
    totals = (scores.totals[0] + 1, scores.totals[1] - 1, *scores.totals[2:])
    return dataclasses.replace(deal, recorded_scores=DealScore(scores.pairs, totals))


def _score_pair(deal: PublishedDeal) -> PublishedDeal:
    scores = deal.recorded_scores
    pair = scores.pairs[0]
    changed = dataclasses.replace(pair, rows=(-pair.rows[0], pair.rows[1], pair.rows[2] or 1))
    return dataclasses.replace(
        deal, recorded_scores=DealScore(_replace_at(scores.pairs, 0, changed), scores.totals)
    )


def _foul(deal: PublishedDeal) -> PublishedDeal:
    return dataclasses.replace(
        deal, recorded_fouls=_replace_at(deal.recorded_fouls, 1, not deal.recorded_fouls[1])
    )


def _rule_set(deal: PublishedDeal) -> PublishedDeal:
    # Every example deal has a scoop or a 2-1 split, which one_six pays differently.
    other = "one_six" if deal.rule_set.name != "one_six" else "pagat"
    return dataclasses.replace(deal, rule_set=preset(other))


def _record_deck(deal: PublishedDeal) -> PublishedDeal:
    return dataclasses.replace(deal, record=dataclasses.replace(deal.record, deck=bytes(32)))


def _record_cut_deck(deal: PublishedDeal) -> PublishedDeal:
    return dataclasses.replace(
        deal, record=dataclasses.replace(deal.record, cut_deck=_flip(deal.record.cut_deck))
    )


def _record_hand(deal: PublishedDeal) -> PublishedDeal:
    hands = _replace_at(deal.record.hands, 1, _flip(deal.record.hands[1]))
    return dataclasses.replace(deal, record=dataclasses.replace(deal.record, hands=hands))


ALTERATIONS: list[tuple[str, str, Callable[[PublishedDeal], PublishedDeal]]] = [
    ("seed", "seed_commitment", _seed),
    ("seed commitment", "seed_commitment", _seed_commitment),
    ("a contribution", "contributions", _contribution),
    ("a contribution removed", "contributions", _contribution_removed),
    ("the cut", "cut", _cut),
    ("the cut moved by the seat count", "cut", _cut_by_seat_count),
    ("the cut out of range", "cut", _cut_out_of_range),
    ("the dealer", "dealer", _dealer),
    (
        "a reveal's card moved to another row",
        "reveal_commitment[1]",
        _reveal_card_swapped_between_rows,
    ),
    ("a reveal's card replaced", "reveal_commitment[1]", _reveal_card_replaced),
    ("a nonce", "reveal_commitment[1]", _nonce),
    ("a commitment", "reveal_commitment[1]", _commitment),
    ("a score total", "scores", _score_total),
    ("a pair's rows", "scores", _score_pair),
    ("the rule set", "scores", _rule_set),
    ("a recorded foul", "fouls", _foul),
    ("the recorded deck", "contributions", _record_deck),
    ("the recorded cut deck", "cut", _record_cut_deck),
    ("a recorded hand", "dealer", _record_hand),
]

_DEPENDENTS = {
    "seed_commitment": {"contributions", "cut", "dealer", "fouls", "scores"},
    "contributions": {"cut", "dealer", "fouls", "scores"},
    "cut": {"dealer", "fouls", "scores"},
    "dealer": {"fouls", "scores"},
    "reveal_commitment[1]": {"fouls", "scores"},
    "fouls": {"scores"},
    "scores": set(),
}


@pytest.mark.parametrize("name", DEAL_IDS)
@pytest.mark.parametrize(
    ("label", "check_name", "alter"), ALTERATIONS, ids=[label for label, _, _ in ALTERATIONS]
)
def test_each_single_alteration_fails_exactly_its_check(
    name: str, label: str, check_name: str, alter: Callable[[PublishedDeal], PublishedDeal]
) -> None:
    deal = HONEST[name]
    report = verify_deal(alter(deal))
    assert not report.ok
    assert report.failed == (check_name,), label
    failed = report.check(check_name)
    assert failed.expected != failed.found
    assert failed.detail
    # Checks that rely on the failed one are skipped (they would say nothing), the rest pass. A
    # solver seat's check relies on the dealt hand, so on the dealer and what it relies on.
    solver_checks = {name for name in _seat_names(deal) if name.startswith("solver_")}
    hand_checks = _DEPENDENTS[check_name] | {check_name}
    expected = _DEPENDENTS[check_name] | (solver_checks if "dealer" in hand_checks else set())
    assert set(report.skipped) == expected
    for check in report.checks:
        if check.name not in report.skipped and check.name != check_name:
            assert check.passed


def _same_but_passed_texts(deal: PublishedDeal) -> None:
    """``passed_texts=False`` (the audit's) reports what the full report does, but for the
    expected and found texts of checks that passed, which it may leave empty."""
    full, quiet = verify_deal(deal), verify_deal(deal, passed_texts=False)
    assert (quiet.ok, quiet.hands, quiet.arrangements) == (full.ok, full.hands, full.arrangements)
    assert len(quiet.checks) == len(full.checks)
    for plain, short in zip(full.checks, quiet.checks, strict=True):
        if plain.passed and short.expected == short.found == "" != plain.expected:
            assert short == dataclasses.replace(plain, expected="", found="")
        else:
            assert short == plain


@pytest.mark.parametrize("name", DEAL_IDS)
def test_a_report_without_passed_texts_says_the_same_of_every_deal(name: str) -> None:
    deal = HONEST[name]
    _same_but_passed_texts(deal)
    for _, _, alter in ALTERATIONS:
        _same_but_passed_texts(alter(deal))
    quiet = verify_deal(deal, passed_texts=False)
    # The digests' and scores' texts are left out; the reveals' own phrases are kept.
    assert {check.name for check in quiet.checks if check.expected == ""} >= {
        "seed_commitment",
        "contributions",
        "cut",
        "dealer",
        "scores",
    }


def test_the_report_says_what_was_expected_and_what_was_found() -> None:
    deal = HONEST["2 seats"]
    seed_check = verify_deal(_seed(deal)).check("seed_commitment")
    assert seed_check.expected == deal.seed_commitment.hex()
    assert seed_check.found != seed_check.expected and len(seed_check.found) == 64
    cut_check = verify_deal(_cut_out_of_range(deal)).check("cut")
    assert "cut position 0 is outside 1..51" in cut_check.detail
    dealer_check = verify_deal(_dealer(deal)).check("dealer")
    assert "dealer 0" in dealer_check.detail and "seats 0, 1" in dealer_check.detail
    total_check = verify_deal(_score_total(deal)).check("scores")
    assert total_check.expected.endswith("totals " + ",".join(map(str, (-2, 2))))
    assert total_check.found.endswith("totals -3,3")
    skipped = verify_deal(_seed(deal)).check("scores")
    assert skipped.skipped and "seed_commitment" not in skipped.detail
    assert "dealer" in skipped.detail


def test_a_seat_set_by_the_solver_is_scored_with_the_solvers_hand() -> None:
    deal = HONEST["3 seats, one set by the solver"]
    assert deal.solver_seats == (False, False, True)
    assert deal.reveals[2] is None and deal.seat_commitments[2] is None
    assert deal.recorded_fouls[2] is False
    report = verify_deal(deal)
    assert report.ok
    assert "solver policy" in report.check("reveal_commitment[2]").detail
    assert deal.solver_arrangements is not None
    recorded = deal.solver_arrangements[2]
    assert recorded is not None and report.arrangements[2] == recorded
    check = report.check("solver_arrangement[2]")
    assert check.passed and check.expected == " / ".join(
        " ".join(map(str, row)) for row in recorded.rows
    )


def test_flipping_the_solver_flag_of_a_seat_that_never_revealed_fails_fouls() -> None:
    # Never revealed -> set by the solver: the seat's foul changes, scoring is then skipped.
    # (The deal records no arrangement set by the solver: the earlier scheme runs the solver.)
    deal = HONEST["4 seats, one never revealed"]
    flags = _replace_at(deal.solver_seats, 3, True)
    report = verify_deal(dataclasses.replace(deal, solver_seats=flags))
    assert report.failed == ("fouls",)
    assert report.skipped == ("scores",)


def test_unflagging_a_solver_seat_fails_its_recorded_arrangement() -> None:
    # Set by the solver -> never revealed: an arrangement recorded for a seat that was not set.
    deal = HONEST["3 seats, one set by the solver"]
    report = verify_deal(dataclasses.replace(deal, solver_seats=(False, False, False)))
    assert report.failed == ("solver_arrangement[2]",)
    assert report.skipped == ("fouls", "scores")
    assert "did not miss its arranging deadline" in report.check("solver_arrangement[2]").detail


def test_a_seat_set_by_the_solver_cannot_also_reveal() -> None:
    deal = HONEST["3 seats"]
    altered = dataclasses.replace(deal, solver_seats=(False, True, False))
    assert verify_deal(altered).failed == ("reveal_commitment[1]",)


def test_a_reveal_without_a_commitment_fails_its_check() -> None:
    deal = HONEST["3 seats"]
    altered = dataclasses.replace(
        deal, seat_commitments=_replace_at(deal.seat_commitments, 1, None)
    )
    assert verify_deal(altered).failed == ("reveal_commitment[1]",)


def test_a_malformed_seed_or_nonce_fails_its_check_instead_of_raising() -> None:
    deal = HONEST["2 seats"]
    assert verify_deal(dataclasses.replace(deal, seed=deal.seed[:31])).failed == (
        "seed_commitment",
    )
    reveal = deal.reveals[0]
    assert reveal is not None
    short = Reveal(reveal.arrangement, reveal.nonce[:15])
    report = verify_deal(dataclasses.replace(deal, reveals=_replace_at(deal.reveals, 0, short)))
    assert report.failed == ("reveal_commitment[0]",)
    assert "nonce must be 16 to 64 bytes" in report.check("reveal_commitment[0]").detail


def test_a_player_who_committed_to_undealt_cards_fouls_and_the_deal_still_verifies() -> None:
    # The commitment hides the cards, so a client can commit to cards it was not dealt; the
    # reveal is then a foul, recorded as such, and the deal verifies.
    deal = HONEST["2 seats"]
    reveal = deal.reveals[0]
    assert reveal is not None
    held = set(reveal.arrangement.cards)
    outsider = next(card for card in range(52) if card not in held)
    front, middle, back = reveal.arrangement.rows
    cheat = Arrangement.of((outsider, *front[1:]), middle, back)
    commitment = arrangement_commitment(deal.table_id, deal.deal_number, 0, cheat, reveal.nonce)
    altered = dataclasses.replace(
        deal,
        seat_commitments=_replace_at(deal.seat_commitments, 0, commitment),
        reveals=_replace_at(deal.reveals, 0, Reveal(cheat, reveal.nonce)),
        recorded_fouls=(True, False),
        recorded_scores=DealScore(
            (dataclasses.replace(deal.recorded_scores.pairs[0], rows=(-1, -1, -1), delta=-3),),
            (-3, 3),
        ),
    )
    report = verify_deal(altered)
    assert report.ok, report.to_dict()


@pytest.mark.parametrize("name", DEAL_IDS)
def test_the_json_form_round_trips(name: str) -> None:
    deal = HONEST[name]
    text = json.dumps(deal.to_dict())
    assert PublishedDeal.from_dict(json.loads(text)) == deal


def test_malformed_json_is_refused_with_a_clear_error() -> None:
    data = HONEST["2 seats"].to_dict()
    with pytest.raises(FairnessError, match="one entry per seat"):
        PublishedDeal.from_dict({**data, "reveals": data["reveals"][:1]})
    with pytest.raises(FairnessError, match="malformed published deal"):
        PublishedDeal.from_dict({key: value for key, value in data.items() if key != "seed"})
    with pytest.raises(FairnessError, match="unknown published deal format"):
        PublishedDeal.from_dict({**data, "format": 99})
    with pytest.raises(FairnessError, match="malformed published deal"):
        PublishedDeal.from_dict({**data, "seed": "zz"})
    with pytest.raises(FairnessError, match="dealer must be an integer"):
        PublishedDeal.from_dict({**data, "dealer": "0"})


def test_the_report_has_a_json_form() -> None:
    report = verify_deal(_nonce(HONEST["2 seats"]))
    data = json.loads(json.dumps(report.to_dict()))
    assert data["ok"] is False
    by_name = {check["name"]: check for check in data["checks"]}
    assert by_name["reveal_commitment[1]"]["passed"] is False
    assert by_name["scores"]["skipped"] is True


@pytest.mark.parametrize("name", ["2 seats", "3 seats", "4 seats"])
def test_a_consistent_rewrite_of_the_cut_and_the_record_is_still_caught_by_the_reveals(
    name: str,
) -> None:
    # Once the seed is public anyone can recompute the deal record, so a careful forger may alter
    # the cut and the record together. The players' reveals, committed before the seed was
    # revealed, hold the cards they were really dealt: the forged hands make them fouls.
    deal = HONEST[name]
    cut = deal.cut_position % 51 + 1
    forged = dataclasses.replace(
        deal,
        cut_position=cut,
        record=deal_record(
            deal.seed,
            deal.contributions,
            deal.table_id,
            deal.deal_number,
            cut,
            deal.dealer,
            deal.seat_count,
        ),
    )
    report = verify_deal(forged)
    assert report.failed == ("fouls",)
    assert "not dealt" in report.check("fouls").detail
