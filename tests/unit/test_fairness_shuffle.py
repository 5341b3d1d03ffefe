"""Seed, shuffle, rejection sampling, cut, deal order and the lot."""

from __future__ import annotations

import hashlib
import itertools
import uuid
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sapsam.fairness import (
    SEED_BYTES,
    FairnessError,
    cut_deck,
    cutter_for,
    deal_hands,
    draw_dealer,
    hands_for_deal,
    left_of,
    new_seed,
    right_of,
    seed_commitment,
    shuffle_deck,
)
from sapsam.fairness.shuffle import (
    accept_word,
    acceptance_limit,
    draw_index,
    fisher_yates,
    shuffle_key,
    shuffle_with_key,
    shuffle_words,
    stream_words,
)
from sapsam.rules.cards import DECK

TABLE = uuid.UUID("5a9c7e3e-1f2b-4c8d-9e0f-112233445566")
SEED = bytes(range(32))

seeds = st.binary(min_size=32, max_size=32)
contribution = st.one_of(st.none(), st.binary(min_size=1, max_size=64))
contribution_lists = st.integers(2, 4).flatmap(
    lambda n: st.lists(contribution, min_size=n, max_size=n)
)


def _flip_bit(data: bytes, bit: int) -> bytes:
    flipped = bytearray(data)
    flipped[bit // 8] ^= 1 << (bit % 8)
    return bytes(flipped)


# --- seed and commitment -------------------------------------------------------------------------


def test_new_seeds_are_32_fresh_bytes() -> None:
    seeds_drawn = {new_seed() for _ in range(100)}
    assert len(seeds_drawn) == 100
    assert all(len(seed) == SEED_BYTES for seed in seeds_drawn)


def test_seed_commitment_binds_table_deal_and_seed() -> None:
    base = seed_commitment(TABLE, 1, SEED)
    assert len(base) == 32
    assert seed_commitment(TABLE, 1, SEED) == base
    assert seed_commitment(uuid.UUID(int=TABLE.int ^ 1), 1, SEED) != base
    assert seed_commitment(TABLE, 2, SEED) != base
    assert seed_commitment(TABLE, 1, _flip_bit(SEED, 255)) != base


@pytest.mark.parametrize("seed", [b"", bytes(31), bytes(33)])
def test_a_seed_must_be_32_bytes(seed: bytes) -> None:
    with pytest.raises(FairnessError, match="seed must be 32 bytes"):
        seed_commitment(TABLE, 1, seed)
    with pytest.raises(FairnessError, match="seed must be 32 bytes"):
        shuffle_deck(seed, [None, None], TABLE, 1)


@pytest.mark.parametrize("deal_number", [-1, 2**64])
def test_deal_number_must_fit_in_64_bits(deal_number: int) -> None:
    with pytest.raises(FairnessError, match="deal number"):
        seed_commitment(TABLE, deal_number, SEED)


def test_table_id_must_be_a_uuid() -> None:
    with pytest.raises(FairnessError, match="table id must be a UUID"):
        seed_commitment(str(TABLE), 1, SEED)  # type: ignore[arg-type]


# --- the shuffle -------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(seed=seeds, contributions=contribution_lists, deal=st.integers(0, 2**64 - 1))
def test_the_shuffle_is_always_a_permutation_and_repeatable(
    seed: bytes, contributions: list[bytes | None], deal: int
) -> None:
    deck = shuffle_deck(seed, contributions, TABLE, deal)
    assert sorted(deck) == list(DECK)
    assert shuffle_deck(seed, contributions, TABLE, deal) == deck


@settings(max_examples=50, deadline=None)
@given(seed=seeds, contributions=contribution_lists, bit=st.integers(0, 255))
def test_one_bit_of_the_seed_changes_the_deck(
    seed: bytes, contributions: list[bytes | None], bit: int
) -> None:
    deck = shuffle_deck(seed, contributions, TABLE, 1)
    assert shuffle_deck(_flip_bit(seed, bit), contributions, TABLE, 1) != deck


@settings(max_examples=50, deadline=None)
@given(seed=seeds, contributions=contribution_lists, data=st.data())
def test_one_bit_of_any_contribution_changes_the_deck(
    seed: bytes, contributions: list[bytes | None], data: st.DataObject
) -> None:
    deck = shuffle_deck(seed, contributions, TABLE, 1)
    for seat, value in enumerate(contributions):
        if value is None:
            continue
        bit = data.draw(st.integers(0, len(value) * 8 - 1))
        changed = list(contributions)
        changed[seat] = _flip_bit(value, bit)
        assert shuffle_deck(seed, changed, TABLE, 1) != deck


def test_every_seed_bit_and_every_contribution_bit_matters_exhaustively() -> None:
    contributions = [b"\x00\x01", None, b"abc"]
    deck = shuffle_deck(SEED, contributions, TABLE, 9)
    for bit in range(256):
        assert shuffle_deck(_flip_bit(SEED, bit), contributions, TABLE, 9) != deck
    for seat in (0, 2):
        value = contributions[seat]
        assert value is not None
        for bit in range(len(value) * 8):
            changed = list(contributions)
            changed[seat] = _flip_bit(value, bit)
            assert shuffle_deck(SEED, changed, TABLE, 9) != deck


def test_absent_contributions_are_encoded_and_seat_order_matters() -> None:
    decks = {
        shuffle_deck(SEED, contributions, TABLE, 1)
        for contributions in (
            [None, None],
            [None, None, None],
            [b"\x00", None],
            [None, b"\x00"],
            [b"a", b"b"],
            [b"b", b"a"],
            [b"ab", None],
            [b"a", b"b", None],
        )
    }
    assert len(decks) == 8


def test_the_table_and_deal_number_change_the_deck() -> None:
    deck = shuffle_deck(SEED, [None, None], TABLE, 1)
    assert shuffle_deck(SEED, [None, None], TABLE, 2) != deck
    assert shuffle_deck(SEED, [None, None], uuid.UUID(int=1), 1) != deck


@pytest.mark.parametrize(
    ("contributions", "message"),
    [
        ([None], "seat count 1 is not supported"),
        ([None] * 5, "seat count 5 is not supported"),
        ([], "seat count 0 is not supported"),
        ([b"", None], "contribution of seat 0 must be 1 to 64 bytes"),
        ([None, bytes(65)], "contribution of seat 1 must be 1 to 64 bytes"),
        ([None, "text"], "contribution of seat 1 must be bytes or None"),
    ],
)
def test_bad_contributions_are_refused(contributions: list[object], message: str) -> None:
    with pytest.raises(FairnessError, match=message):
        shuffle_deck(SEED, contributions, TABLE, 1)  # type: ignore[arg-type]


# --- rejection sampling: exhaustive over small word sizes ----------------------------------------


@pytest.mark.parametrize("word_bits", [8, 12])
def test_rejection_sampling_is_exactly_uniform_over_every_word(word_bits: int) -> None:
    for bound in range(1, 53):
        outcomes = Counter(
            index
            for word in range(1 << word_bits)
            if (index := accept_word(word, bound, word_bits)) is not None
        )
        limit = acceptance_limit(bound, word_bits)
        # Every index 0..bound-1 comes from exactly limit/bound words; every other word is refused.
        assert set(outcomes) == set(range(bound))
        assert set(outcomes.values()) == {limit // bound}
        assert sum(outcomes.values()) == limit
        assert (1 << word_bits) - limit < bound


def test_plain_modulo_would_be_biased_at_the_same_word_size() -> None:
    # The check above is not vacuous: without the rejection, 8-bit words give unequal counts.
    outcomes = Counter(word % 52 for word in range(256))
    assert len(set(outcomes.values())) == 2


@pytest.mark.parametrize("word_bits", [4, 5])
def test_fisher_yates_with_rejection_gives_every_permutation_equally_often(word_bits: int) -> None:
    # Enumerate every sequence of words for a 4-card deck; count the permutations reached by the
    # sequences whose words are all accepted (the draws are independent, so this is the whole
    # distribution). Each of the 24 permutations must appear equally often.
    size = 4
    counts: Counter[tuple[int, ...]] = Counter()
    for words in itertools.product(range(1 << word_bits), repeat=size - 1):
        if any(
            accept_word(word, bound, word_bits) is None
            for word, bound in zip(words, range(size, 1, -1), strict=True)
        ):
            continue
        items = list(range(size))
        stream = iter(words)
        fisher_yates(items, lambda bound, stream=stream: draw_index(stream, bound, word_bits))
        counts[tuple(items)] += 1
    assert len(counts) == 24
    assert len(set(counts.values())) == 1


def test_draw_index_skips_rejected_words() -> None:
    limit = acceptance_limit(52)
    assert draw_index(iter([limit, 2**32 - 1, 105]), 52) == 105 % 52
    with pytest.raises(FairnessError, match="stream ended"):
        draw_index(iter([limit]), 52)


def test_the_fast_shuffle_equals_the_reference_loop() -> None:
    for number in range(20):
        key = hashlib.sha256(number.to_bytes(4, "big")).digest()
        reference = list(DECK)
        words = stream_words(key)
        fisher_yates(reference, lambda bound, words=words: draw_index(words, bound))
        assert shuffle_with_key(key) == tuple(reference)


def test_the_fast_shuffle_handles_rejections_like_the_reference() -> None:
    # Real streams almost never reject (p < 2**-26 per word), so feed crafted words: rejected
    # words early on, and so few words up front that more blocks must be fetched.
    rejected_for_52 = acceptance_limit(52)
    words = [rejected_for_52, 2**32 - 1, 7, acceptance_limit(51), *range(100, 180)]
    blocks_asked: list[int] = []

    def block_words(counter: int) -> list[int]:
        blocks_asked.append(counter)
        return words[8 * counter : 8 * counter + 8]

    fast = shuffle_words(words[:8], 1, block_words)
    reference = list(DECK)
    stream = iter(words)
    fisher_yates(reference, lambda bound: draw_index(stream, bound))
    assert fast == tuple(reference)
    assert blocks_asked[:2] == [1, 2]


def test_shuffle_key_is_32_bytes_and_depends_on_every_input() -> None:
    key = shuffle_key(SEED, [None, b"x"], TABLE, 3)
    assert len(key) == 32
    assert key != shuffle_key(SEED, [None, b"x"], TABLE, 4)
    assert key != shuffle_key(SEED, [b"x", None], TABLE, 3)


# --- seats, cut and deal -----------------------------------------------------------------------


def test_left_is_the_next_seat_clockwise_and_right_the_previous() -> None:
    assert [left_of(seat, 4) for seat in range(4)] == [1, 2, 3, 0]
    assert [right_of(seat, 4) for seat in range(4)] == [3, 0, 1, 2]
    assert [left_of(seat, 2) for seat in range(2)] == [1, 0]
    assert [cutter_for(dealer, 3) for dealer in range(3)] == [2, 0, 1]
    for seats in (2, 3, 4):
        for seat in range(seats):
            assert right_of(left_of(seat, seats), seats) == seat


@pytest.mark.parametrize(("seat", "seats"), [(4, 4), (-1, 3), (0, 1), (0, 5)])
def test_bad_seats_and_seat_counts_are_refused(seat: int, seats: int) -> None:
    with pytest.raises(FairnessError):
        left_of(seat, seats)
    with pytest.raises(FairnessError):
        cutter_for(seat, seats)


@pytest.mark.parametrize("position", [1, 13, 26, 51])
def test_the_cut_moves_the_top_cards_to_the_bottom(position: int) -> None:
    assert cut_deck(DECK, position) == DECK[position:] + DECK[:position]
    assert cut_deck(DECK, position)[0] == DECK[position]


@pytest.mark.parametrize("position", [0, 52, -1, 100])
def test_a_cut_outside_1_to_51_is_refused(position: int) -> None:
    with pytest.raises(FairnessError, match=f"cut position {position} is outside 1..51"):
        cut_deck(DECK, position)


def test_a_cut_needs_a_whole_deck_and_an_integer_position() -> None:
    with pytest.raises(FairnessError, match="52 distinct cards"):
        cut_deck(DECK[:51], 5)
    with pytest.raises(FairnessError, match="52 distinct cards"):
        cut_deck((*DECK[:51], DECK[0]), 5)
    with pytest.raises(FairnessError, match="must be an integer"):
        cut_deck(DECK, True)


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("dealer", [0, 1])
def test_the_deal_goes_clockwise_from_the_dealers_left_one_card_at_a_time(
    seats: int, dealer: int
) -> None:
    hands = deal_hands(DECK, dealer, seats)
    assert len(hands) == seats
    assert all(len(hand) == 13 for hand in hands)
    first = left_of(dealer, seats)
    # The top card goes to the dealer's left, the next to that seat's left, and so on.
    assert hands[first][0] == DECK[0]
    assert hands[left_of(first, seats)][0] == DECK[1]
    assert hands[dealer][0] == DECK[seats - 1]
    assert hands[first][1] == DECK[seats]
    dealt = sorted(card for hand in hands for card in hand)
    assert dealt == list(DECK[: 13 * seats])


def test_bad_deals_are_refused() -> None:
    with pytest.raises(FairnessError, match=r"dealer 2 is outside 0\.\.1"):
        deal_hands(DECK, 2, 2)
    with pytest.raises(FairnessError, match="seat count 5"):
        deal_hands(DECK, 0, 5)
    with pytest.raises(FairnessError, match="one entry per seat"):
        hands_for_deal(SEED, [None, None], TABLE, 1, 5, 0, 3)


def test_hands_for_deal_is_shuffle_then_cut_then_deal() -> None:
    contributions = [b"x", None, b"yz"]
    deck = shuffle_deck(SEED, contributions, TABLE, 4)
    expected = deal_hands(cut_deck(deck, 20), 1, 3)
    assert hands_for_deal(SEED, contributions, TABLE, 4, 20, 1, 3) == expected


# --- the lot -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_the_highest_lot_card_deals(seats: int) -> None:
    for number in range(30):
        lot_seed = hashlib.sha256(bytes([seats, number])).digest()
        lot = draw_dealer(lot_seed, TABLE, seats)
        assert len(lot.cards) == seats == len(set(lot.cards))
        assert lot.cards[lot.dealer] == max(lot.cards)
        assert draw_dealer(lot_seed, TABLE, seats) == lot


def test_rank_ties_in_the_lot_go_to_the_higher_suit() -> None:
    # Find a draw where two seats hold the same rank and the top rank is shared.
    for number in range(5000):
        lot = draw_dealer(hashlib.sha256(number.to_bytes(4, "big")).digest(), TABLE, 4)
        top_rank = max(card.rank for card in lot.cards)
        tied = [seat for seat, card in enumerate(lot.cards) if card.rank == top_rank]
        if len(tied) > 1:
            assert lot.dealer == max(tied, key=lambda seat: lot.cards[seat].suit)
            return
    pytest.fail("no tied lot found")


def test_the_lot_refuses_bad_input() -> None:
    with pytest.raises(FairnessError, match="lot seed must be 32 bytes"):
        draw_dealer(bytes(8), TABLE, 2)
    with pytest.raises(FairnessError, match="seat count 1"):
        draw_dealer(bytes(32), TABLE, 1)
