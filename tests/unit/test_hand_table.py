"""The shipped hand table against its construction (``sapsam.rules.hand_table``), exhaustively:
every distinct 5- and 3-card value, its strength, category, ranks, size and evaluator entry."""

from __future__ import annotations

import subprocess
import sys

from sapsam.rules import hand_table, hands
from sapsam.rules.hands import ALL_VALUES, evaluate, evaluate3, evaluate5


def test_the_shipped_file_is_the_construction_byte_for_byte() -> None:
    assert hand_table.SHIPPED.read_bytes() == hand_table.table_bytes()


def test_every_value_loaded_is_the_constructed_one() -> None:
    built = hand_table.entries()
    assert len(built) == len(ALL_VALUES) == hands.VALUE_COUNT
    for strength, (key, category, ranks, size, product, suited) in enumerate(built):
        value = ALL_VALUES[strength]
        assert (value.category, value.ranks, value.size, value.strength) == (
            category,
            ranks,
            size,
            strength,
        )
        assert value.key == key
        assert type(value.category) is hands.Category
        table = (
            hands._FRONT_STRENGTH
            if size == 3
            else hands._SUITED_STRENGTH
            if suited
            else hands._UNSUITED_STRENGTH
        )
        assert table[product] == strength


def test_every_value_evaluates_to_its_shared_object() -> None:
    """One hand of each value, through every evaluator: the value built, the same object."""
    for _, category, ranks, size, _, suited in hand_table.entries():
        cards = _a_hand(category, ranks, size, suited)
        value = evaluate(cards)
        assert (value.category, value.ranks, value.size) == (category, ranks, size)
        assert value is ALL_VALUES[value.strength]
        fast = evaluate3(*cards) if size == 3 else evaluate5(*cards)
        assert fast is value


def test_the_evaluator_tables_hold_exactly_the_constructed_products() -> None:
    built = hand_table.entries()
    assert set(hands._FRONT_STRENGTH) == {e[4] for e in built if e[3] == 3}
    assert set(hands._UNSUITED_STRENGTH) == {e[4] for e in built if e[3] == 5 and not e[5]}
    assert set(hands._SUITED_STRENGTH) == {e[4] for e in built if e[3] == 5 and e[5]}


def test_a_fresh_process_makes_value_objects_only_when_evaluated() -> None:
    code = (
        "from sapsam.rules import hands\n"
        "assert not hands._MADE\n"
        "v = hands.evaluate5(0, 4, 8, 12, 17)\n"
        "assert list(hands._MADE) == [v.strength]\n"
        "assert 'ALL_VALUES' not in vars(hands)\n"
        "assert hands.ALL_VALUES[v.strength] is v and len(hands.THREE_CARD_VALUES) == 455\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def _a_hand(category: hands.Category, ranks: tuple[int, ...], size: int, suited: bool) -> list[int]:
    """Cards (rank * 4 + suit) of one hand with this value."""
    if category in (hands.Category.STRAIGHT, hands.Category.STRAIGHT_FLUSH):
        top = ranks[0]
        row = [12, 0, 1, 2, 3] if top == hands.FIVE else list(range(top, top - 5, -1))
    else:
        group = {
            hands.Category.FOUR_OF_A_KIND: [4, 1],
            hands.Category.FULL_HOUSE: [3, 2],
            hands.Category.THREE_OF_A_KIND: [3, 1, 1],
            hands.Category.TWO_PAIR: [2, 2, 1],
            hands.Category.PAIR: [2, 1, 1, 1],
        }.get(category, [1] * 5)
        row = [rank for rank, count in zip(ranks, group, strict=False) for _ in range(count)]
    if suited:
        return [rank * 4 for rank in row]
    # Unsuited: spread suits so that repeated ranks differ and the five never share one suit.
    cards: list[int] = []
    seen: dict[int, int] = {}
    for position, rank in enumerate(row):
        suit = (seen.get(rank, -1) + 1) if rank in seen else position % 2
        seen[rank] = suit
        cards.append(rank * 4 + suit)
    assert len(cards) == size
    return cards


def test_threads_evaluating_at_once_get_one_object_per_value() -> None:
    code = (
        "import sys, threading\n"
        "from itertools import combinations\n"
        "from sapsam.rules import hands\n"
        "sys.setswitchinterval(1e-6)\n"
        "hands_ = list(combinations(range(0, 52, 3), 5))\n"
        "seen = [[] for _ in range(8)]\n"
        "def work(k):\n"
        "    seen[k] = [hands.evaluate5(*h) for h in hands_]\n"
        "threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "for k in range(1, 8):\n"
        "    assert all(a is b for a, b in zip(seen[0], seen[k], strict=True))\n"
        "assert all(hands.ALL_VALUES[v.strength] is v for v in seen[0])\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
