"""The audit tells a deal with naturals as the rules scored it (docs/rules.md §2.9): a pair
settled by a natural is one line, the totals agree with the record, and the replay names each
declaration event."""

from __future__ import annotations

from sapsam.audit.deal_account import account_lines
from sapsam.audit.deal_account_facts import accounts
from sapsam.audit.natural_account import tell_natural
from sapsam.domain.events import DealScored, NaturalDeclared, NaturalRevealed
from tests.domain.test_table import ready_table
from tests.domain.test_table_naturals import NATURALS, THREE_FLUSHES_SEED, play


def test_the_account_of_a_deal_with_a_natural() -> None:
    table = ready_table(4, NATURALS)
    scored = play(table, THREE_FLUSHES_SEED, {0: "dragon", 2: "three_flushes"})
    rule_set, told = accounts(table.events)
    assert rule_set is not None and len(told) == 1
    account = told[0]
    assert account.score.totals == scored.totals == account.recorded_totals
    lines = account_lines(account, rule_set, {})
    text = "\n".join(lines)
    assert "three flushes, beats every ordinary hand: 3 units, no rows compared" in text
    assert "differ from what the rules give" not in text
    assert "a natural declared that the cards do not hold" in text  # seat 0's false dragon


def test_the_replay_names_the_declarations() -> None:
    table = ready_table(4, NATURALS)
    play(table, THREE_FLUSHES_SEED, {2: "three_flushes"})
    declared = next(event for event in table.events if isinstance(event, NaturalDeclared))
    opened = [event for event in table.events if isinstance(event, NaturalRevealed)]
    assert (tell_natural(declared) or "").startswith("seat 0 committed its natural declaration")
    assert [tell_natural(event) for event in opened] == [
        "seat 0 opened its declaration: no natural",
        "seat 1 opened its declaration: no natural",
        "seat 2 opened its declaration: three flushes",
        "seat 3 opened its declaration: no natural",
    ]
    assert tell_natural(next(e for e in table.events if isinstance(e, DealScored))) is None
