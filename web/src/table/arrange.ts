// The player's arrangement in progress (no DOM): 13 cards, each in the hand or in one of the three
// rows; row names as hands, and whether the rows as they stand foul (docs/rules.md §1.3-§1.5).
import { RANKS, rankOf, sortedCards } from "../cards";
import type { Rows } from "../fairness";
import { categoryOf, compareRows, rowKey } from "../hands";

export type RowName = "front" | "middle" | "back";
export const ROWS: readonly RowName[] = ["front", "middle", "back"];
export const ROW_SIZES: Record<RowName, number> = { front: 3, middle: 5, back: 5 };

const RANK_WORDS = ["2s", "3s", "4s", "5s", "6s", "7s", "8s", "9s", "10s", "jacks", "queens", "kings", "aces"];
const HIGH_WORDS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king", "ace"];

/** A row's hand in words: "pair of kings", "flush, ace high", "high card queen". */
export function handName(cards: readonly number[]): string {
  if (cards.length !== 3 && cards.length !== 5) return "";
  const key = rowKey(cards);
  const top = key[1]!;
  switch (categoryOf(cards)) {
    case "high_card":
      return `high card ${HIGH_WORDS[top]}`;
    case "pair":
      return `pair of ${RANK_WORDS[top]}`;
    case "two_pair":
      return `two pair, ${RANK_WORDS[top]} and ${RANK_WORDS[key[2]!]}`;
    case "three_of_a_kind":
      return `three ${RANK_WORDS[top]}`;
    case "straight":
      return `straight, ${HIGH_WORDS[top]} high`;
    case "flush":
      return `flush, ${HIGH_WORDS[top]} high`;
    case "full_house":
      return `full house, ${RANK_WORDS[top]} full of ${RANK_WORDS[key[2]!]}`;
    case "four_of_a_kind":
      return `four ${RANK_WORDS[top]}`;
    case "straight_flush":
      return top === RANKS.indexOf("A") ? "royal flush" : `straight flush, ${HIGH_WORDS[top]} high`;
  }
}

/** What a row holds while it is still filling: "pair of 8s so far" ("" for no cards). */
export function partialName(cards: readonly number[]): string {
  if (!cards.length) return "";
  const counts = new Map<number, number>();
  for (const c of cards) counts.set(rankOf(c), (counts.get(rankOf(c)) ?? 0) + 1);
  const groups = [...counts.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]);
  const [top, n] = groups[0]!;
  const second = groups[1];
  let name = `high card ${HIGH_WORDS[top]}`;
  if (n === 4) name = `four ${RANK_WORDS[top]}`;
  else if (n === 3) name = `three ${RANK_WORDS[top]}`;
  else if (n === 2 && second?.[1] === 2) name = `two pair, ${RANK_WORDS[top]} and ${RANK_WORDS[second[0]]}`;
  else if (n === 2) name = `pair of ${RANK_WORDS[top]}`;
  return `${name} so far`;
}

export class Arrangement {
  /** Where each card is: a row, or undefined while in the hand. */
  private readonly place = new Map<number, RowName>();

  constructor(readonly cards: readonly number[]) {}

  row(name: RowName): number[] {
    return sortedCards(this.cards.filter((c) => this.place.get(c) === name));
  }

  /** The cards in no row yet, in the order dealt, sorted by rank then suit. */
  hand(): number[] {
    return [...this.cards.filter((c) => !this.place.has(c))].sort((a, b) => rankOf(a) - rankOf(b) || a - b);
  }

  where(card: number): RowName | undefined {
    return this.place.get(card);
  }

  /** Put `card` in `row` (false when the row is full); `undefined` takes it back to the hand. */
  put(card: number, row: RowName | undefined): boolean {
    if (!this.cards.includes(card)) return false;
    if (row === undefined) {
      this.place.delete(card);
      return true;
    }
    if (this.place.get(card) === row) return true;
    if (this.row(row).length >= ROW_SIZES[row]) return false;
    this.place.set(card, row);
    return true;
  }

  clear(): void {
    this.place.clear();
  }

  set(rows: Rows): void {
    this.place.clear();
    for (const r of ROWS) for (const c of rows[r]) this.place.set(c, r);
  }

  complete(): boolean {
    return ROWS.every((r) => this.row(r).length === ROW_SIZES[r]);
  }

  rows(): Rows {
    return { front: this.row("front"), middle: this.row("middle"), back: this.row("back") };
  }

  /** Why the rows as they stand foul ("" when they do not, or cannot be judged yet). */
  foul(strict = false): string {
    const { front, middle, back } = this.rows();
    const full = (r: RowName) => this.row(r).length === ROW_SIZES[r];
    if (full("front") && full("middle") && compareRows(middle, front) < 0) return "the middle row is weaker than the front row";
    if (full("middle") && full("back")) {
      const c = compareRows(back, middle);
      if (c < 0) return "the back row is weaker than the middle row";
      if (strict && c === 0) return "the back row must beat the middle row at this table";
    }
    return "";
  }
}
