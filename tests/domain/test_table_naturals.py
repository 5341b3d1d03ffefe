"""Naturals at a table (docs/rules.md §2.9, docs/fairness.md §21): given these events, when a seat
declares, commits and reveals, then these events and scores.

The seeds below were found by searching seeds 0, 1, 2, … for a hand holding a natural (deal 1,
cut 17, no contributions, the lot's dealer seat 1), so each deal is real, not made up:

* seed 2: seat 2 holds `Th 8c Tc Kh Jc 4h 4c 7s Qs 8s 9h 8h Ac`, three flushes (hearts
  K T 9 8 4, clubs A J T 8 4, spades Q 8 7);
* seed 39: seat 3 holds `Qc 7h Qs Jc 7d Jh 6h Qd 6c 3d Qh Ks 3h`, six pairs (four queens count
  as two pairs, 004: «6 par + 1 karta nieparzysta»).
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from sapsam import fairness
from sapsam.domain.commands import (
    CommitArrangement,
    ConfirmArrangement,
    DeclareNatural,
    RevealArrangement,
    RevealSeed,
    StartDeal,
    TimeOutSeats,
)
from sapsam.domain.errors import Reason
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import (
    ArrangementRevealed,
    DealScored,
    Event,
    NaturalDeclared,
    NaturalRevealed,
)
from sapsam.domain.published import published_deal
from sapsam.domain.table import fold
from sapsam.fairness.natural_commitments import declaration_commitment
from sapsam.fairness.published import PublishedDeal
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.naturals import NaturalsTable
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.ruleset import FIELD_SINCE_VERSION, RuleSet
from sapsam.rules.solver import solve
from tests.domain.test_table import NONCE, PLAYERS, TABLE_ID, Table, ready_table

NATURALS = DEFAULT_RULE_SET.with_changes(naturals=NaturalsTable.CLASSIC, name="naturals")
DECLARATION_NONCE = b"d" * 16
THREE_FLUSHES_SEED = (2).to_bytes(32, "big")
SIX_PAIRS_SEED = (39).to_bytes(32, "big")


def start(table: Table, seed: bytes) -> None:
    table.seed = seed
    table.run(StartDeal(seed_commitment=fairness.seed_commitment(TABLE_ID, 1, seed)))
    table.cut(17, 0)


def declare(table: Table, seat: int, natural: str) -> list[Event]:
    commitment = declaration_commitment(
        TABLE_ID, 1, seat, PLAYERS[seat], natural, DECLARATION_NONCE
    )
    return table.run(DeclareNatural(player_id=PLAYERS[seat], commitment=commitment))


def reveal(table: Table, seat: int, rows: Arrangement, natural: str | None) -> list[Event]:
    return table.run(
        RevealArrangement(
            player_id=PLAYERS[seat],
            arrangement=rows,
            nonce=NONCE,
            dealt=table.hands()[seat],
            natural=natural,
            natural_nonce=DECLARATION_NONCE if natural else b"",
        )
    )


def play(table: Table, seed: bytes, declarations: dict[int, str]) -> DealScored:
    """A deal where each seat declares ``declarations.get(seat, 'none')`` and plays the
    solver's rows."""
    start(table, seed)
    hands = table.hands()
    rows = [solve(hand) for hand in hands]
    for seat in range(4):
        declare(table, seat, declarations.get(seat, "none"))
        table.commit(seat, rows[seat])
        table.run(ConfirmArrangement(player_id=PLAYERS[seat], now_ms=1))
    for seat in range(4):
        reveal(table, seat, rows[seat], declarations.get(seat, "none"))
    events = table.run(RevealSeed(seed=table.seed))
    return next(event for event in events if isinstance(event, DealScored))


def test_a_declared_three_flushes_collects_3_from_each_opponent() -> None:
    """Hand-computed, 004: «Trzy kolory […] 3 jednostki» and the natural «wygrywają z każdym
    innym "zwykłym" układem»: seat 2 collects 3 from each of seats 0, 1, 3 (+9); the other
    pairs score their rows (per_row)."""
    table = ready_table(4, NATURALS)
    scored = play(table, THREE_FLUSHES_SEED, {2: "three_flushes"})
    by_pair = {(pair.seat_a, pair.seat_b): pair for pair in scored.pairs}
    assert (by_pair[(0, 2)].rows, by_pair[(0, 2)].delta) == ((-1, -1, -1), -3)
    assert (by_pair[(1, 2)].rows, by_pair[(1, 2)].delta) == ((-1, -1, -1), -3)
    assert (by_pair[(2, 3)].rows, by_pair[(2, 3)].delta) == ((1, 1, 1), 3)
    assert scored.totals[2] == 9
    assert sum(scored.totals) == 0
    assert scored.fouls == (False, False, False, False)
    # The log replays to the same state, through the JSON codec too.
    decoded = [DEFAULT_CODEC.decode(*DEFAULT_CODEC.encode(event)) for event in table.events]
    assert decoded == table.events
    assert fold(decoded) == table.state


def test_six_pairs_with_four_queens() -> None:
    """Hand-computed, 004: «Sześć par. 6 par + 1 karta nieparzysta. 3 jednostki»: QQ QQ JJ 77 66
    33 and the K: seat 3 collects 3 from each (+9)."""
    table = ready_table(4, NATURALS)
    scored = play(table, SIX_PAIRS_SEED, {3: "six_pairs"})
    assert [pair.delta for pair in scored.pairs if pair.seat_b == 3] == [-3, -3, -3]
    assert scored.totals[3] == 9


def test_a_false_declaration_is_a_foul() -> None:
    """Seat 0 declares a dragon it does not hold: its reveal records FALSE_NATURAL and the deal
    scores it as a foul (000: a legal hand wins all three rows against a foul)."""
    table = ready_table(4, NATURALS)
    scored = play(table, THREE_FLUSHES_SEED, {0: "dragon", 2: "three_flushes"})
    revealed = [event for event in table.events if isinstance(event, ArrangementRevealed)]
    assert (revealed[0].foul, revealed[0].foul_reason) == (True, "FALSE_NATURAL")
    assert scored.fouls[0] is True
    by_pair = {(pair.seat_a, pair.seat_b): pair for pair in scored.pairs}
    assert by_pair[(0, 1)].rows == (-1, -1, -1)
    # The natural beats the foul too, for its 3 units (not a scoop's).
    assert by_pair[(0, 2)].delta == -3


def test_a_declaration_not_made_is_none_and_the_declaration_is_hidden() -> None:
    table = ready_table(4, NATURALS)
    start(table, THREE_FLUSHES_SEED)
    events = declare(table, 2, "three_flushes") + declare(table, 0, "none")
    # Every seat's declaration is the same kind of event holding only a hash: nobody reading the
    # log learns who declared a natural before the reveals.
    assert [type(event) for event in events] == [NaturalDeclared, NaturalDeclared]
    assert {tuple(event.to_data()) for event in events} == {
        ("deal_number", "seat", "commitment", "player_key", "signature")
    }
    assert all("flush" not in str(event.to_data()) for event in events)
    # Seat 1 and 3 never declare: they time out arranging (a foul), having declared nothing.
    rows = [solve(hand) for hand in table.hands()]
    for seat in (0, 2):
        table.commit(seat, rows[seat])
        table.run(ConfirmArrangement(player_id=PLAYERS[seat], now_ms=1))
    table.run(TimeOutSeats(now_ms=10**12))
    opened = reveal(table, 2, rows[2], "three_flushes")
    assert isinstance(opened[0], NaturalRevealed) and opened[0].natural == "three_flushes"
    reveal(table, 0, rows[0], "none")
    scored = next(e for e in table.run(RevealSeed(seed=table.seed)) if isinstance(e, DealScored))
    assert scored.fouls == (False, True, False, True)
    by_pair = {(pair.seat_a, pair.seat_b): pair.delta for pair in scored.pairs}
    assert by_pair[(1, 2)] == -3 and by_pair[(2, 3)] == 3  # the natural against fouls: 3 each


def test_refusals_write_nothing() -> None:
    plain = ready_table(4, DEFAULT_RULE_SET)
    start(plain, THREE_FLUSHES_SEED)
    commitment = declaration_commitment(TABLE_ID, 1, 0, "ann", "none", DECLARATION_NONCE)
    plain.refused(
        DeclareNatural(player_id="ann", commitment=commitment), Reason.NATURALS_NOT_PLAYED
    )

    table = ready_table(4, NATURALS)
    start(table, THREE_FLUSHES_SEED)
    rows = solve(table.hands()[0])
    arrangement_commitment = fairness.arrangement_commitment(TABLE_ID, 1, 0, rows, NONCE)
    table.refused(
        CommitArrangement(player_id="ann", commitment=arrangement_commitment),
        Reason.DECLARATION_REQUIRED,
    )
    table.refused(DeclareNatural(player_id="ann", commitment=b"x" * 31), Reason.BAD_COMMITMENT)
    declare(table, 0, "none")
    table.refused(DeclareNatural(player_id="ann", commitment=commitment), Reason.ALREADY_DECLARED)
    for seat in range(4):
        if seat:
            declare(table, seat, "none")
        seat_rows = solve(table.hands()[seat])
        table.commit(seat, seat_rows)
        table.run(ConfirmArrangement(player_id=PLAYERS[seat], now_ms=1))
    good = RevealArrangement(
        player_id="ann",
        arrangement=rows,
        nonce=NONCE,
        dealt=table.hands()[0],
        natural="none",
        natural_nonce=DECLARATION_NONCE,
    )
    table.refused(dataclasses.replace(good, natural="dragon"), Reason.DECLARATION_MISMATCH)
    table.refused(dataclasses.replace(good, natural=None), Reason.DECLARATION_REQUIRED)
    table.refused(dataclasses.replace(good, natural="Dragon"), Reason.INVALID_ARGUMENT)
    table.refused(dataclasses.replace(good, natural_nonce=b"d"), Reason.BAD_NONCE)
    table.refused(dataclasses.replace(good, natural_nonce=b"e" * 16), Reason.DECLARATION_MISMATCH)
    assert table.run(good)[0] == NaturalRevealed(
        deal_number=1, seat=0, natural="none", nonce=DECLARATION_NONCE.hex()
    )


def test_a_reveal_with_a_declaration_at_a_table_without_naturals_is_refused() -> None:
    table = ready_table(4, DEFAULT_RULE_SET)
    start(table, THREE_FLUSHES_SEED)
    hands = table.hands()
    for seat in range(4):
        table.commit(seat, solve(hands[seat]))
        table.run(ConfirmArrangement(player_id=PLAYERS[seat], now_ms=1))
    command = RevealArrangement(
        player_id="ann",
        arrangement=solve(hands[0]),
        nonce=NONCE,
        dealt=hands[0],
        natural="none",
        natural_nonce=DECLARATION_NONCE,
    )
    table.refused(command, Reason.NATURALS_NOT_PLAYED)
    assert reveal(table, 0, solve(hands[0]), None)  # without one: as ever


@pytest.mark.parametrize("version", [4, 5])
def test_a_table_without_naturals_scores_as_before(version: int) -> None:
    recorded = {
        key: value
        for key, value in DEFAULT_RULE_SET.to_dict().items()
        if not key.startswith("natural") and FIELD_SINCE_VERSION.get(key, 1) <= version
    }
    rules = RuleSet.from_dict({**recorded, "rules_version": version})
    table = ready_table(4, rules)
    start(table, THREE_FLUSHES_SEED)
    hands = table.hands()
    rows = [solve(hand) for hand in hands]
    for seat in range(4):
        table.commit(seat, rows[seat])
        table.run(ConfirmArrangement(player_id=PLAYERS[seat], now_ms=1))
    for seat in range(4):
        reveal(table, seat, rows[seat], None)
    scored = next(e for e in table.run(RevealSeed(seed=table.seed)) if isinstance(e, DealScored))
    # Seat 2's three flushes, undeclared and unplayed here, score as rows.
    assert max(abs(pair.delta) for pair in scored.pairs) <= 3
    assert not any(isinstance(event, NaturalRevealed) for event in table.events)


# -- the verifier (docs/fairness.md §13, §21) -------------------------------------------------


def three_flushes_deal(declarations: dict[int, str]) -> PublishedDeal:
    table = ready_table(4, NATURALS)
    play(table, THREE_FLUSHES_SEED, declarations)
    return published_deal(table.events, 1)


def test_a_deal_with_naturals_verifies_and_publishes_its_declarations() -> None:
    published = three_flushes_deal({2: "three_flushes", 0: "dragon"})
    report = fairness.verify_deal(published)
    assert report.ok, [check for check in report.checks if not check.passed]
    assert [report.check(f"declaration[{seat}]").found for seat in range(4)] == [
        "dragon",
        "none",
        "three_flushes",
        "none",
    ]
    # The JSON form reads back to the same deal, and verifies the same.
    again = PublishedDeal.from_dict(json.loads(json.dumps(published.to_dict())))
    assert again == published
    assert fairness.verify_deal(again).ok


def test_a_forged_declaration_is_detected() -> None:
    published = three_flushes_deal({2: "three_flushes"})
    declarations = published.natural_declarations
    assert declarations is not None and declarations[2] is not None
    honest = declarations[2]
    # The declaration changed in the record: its commitment no longer opens.
    changed = dataclasses.replace(honest, natural="dragon")
    forged = dataclasses.replace(
        published, natural_declarations=(*declarations[:2], changed, declarations[3])
    )
    report = fairness.verify_deal(forged)
    assert report.failed == ("declaration[2]",)
    assert set(report.skipped) == {"fouls", "scores"}
    # A forger who knows the nonce recomputes the commitment for "none": the declaration opens,
    # but the recorded scores hold the natural's, and rescoring the rows gives others.
    assert honest.nonce is not None
    recomputed = declaration_commitment(TABLE_ID, 1, 2, PLAYERS[2], "none", honest.nonce)
    none_instead = dataclasses.replace(honest, commitment=recomputed, natural="none")
    forged = dataclasses.replace(
        published, natural_declarations=(*declarations[:2], none_instead, declarations[3])
    )
    assert fairness.verify_deal(forged).failed == ("scores",)
    # A declaration removed from a seat that revealed.
    removed = dataclasses.replace(
        published, natural_declarations=(*declarations[:2], None, declarations[3])
    )
    assert fairness.verify_deal(removed).failed == ("declaration[2]",)


def test_a_false_declaration_left_out_of_the_fouls_is_detected() -> None:
    published = three_flushes_deal({0: "dragon", 2: "three_flushes"})
    assert published.recorded_fouls[0] is True
    forged = dataclasses.replace(published, recorded_fouls=(False, *published.recorded_fouls[1:]))
    assert fairness.verify_deal(forged).failed == ("fouls",)
