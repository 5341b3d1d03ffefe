// The value of a row (docs/rules.md §1.3-§1.4): the key (category, ranks..., padded with -1 to six).
import { rankOf, suitOf } from "./cards";

export const CATEGORIES = [
  "high_card", "pair", "two_pair", "three_of_a_kind", "straight",
  "flush", "full_house", "four_of_a_kind", "straight_flush",
] as const;
export type Category = (typeof CATEGORIES)[number];

export type RowKey = number[];

/** §1.4 "the whole ordering, as a verifier computes it", for a row of 3 or 5 cards. */
export function rowKey(cards: readonly number[]): RowKey {
  if (cards.length !== 3 && cards.length !== 5) throw new Error(`a row of ${cards.length} cards`);
  const counts = new Map<number, number>();
  for (const c of cards) counts.set(rankOf(c), (counts.get(rankOf(c)) ?? 0) + 1);
  // Ranks by (count, rank), both descending: groups first, then kickers high to low.
  const groups = [...counts].sort((a, b) => b[1] - a[1] || b[0] - a[0]);
  let ranks = groups.map(([rank]) => rank);
  const shape = groups.map(([, count]) => count).join("");
  let category: number;
  if (cards.length === 3) {
    category = shape === "3" ? 3 : shape === "21" ? 1 : 0;
  } else if (shape === "41") category = 7;
  else if (shape === "32") category = 6;
  else if (shape === "311") category = 3;
  else if (shape === "221") category = 2;
  else if (shape === "2111") category = 1;
  else {
    const wheel = ranks.join() === "12,3,2,1,0";
    const straight = ranks[0]! - ranks[4]! === 4 || wheel;
    const flush = cards.every((c) => suitOf(c) === suitOf(cards[0]!));
    if (straight) ranks = [wheel ? 3 : ranks[0]!];
    category = straight && flush ? 8 : flush ? 5 : straight ? 4 : 0;
  }
  const key = [category, ...ranks];
  while (key.length < 6) key.push(-1);
  return key;
}

export const categoryOf = (cards: readonly number[]): Category => CATEGORIES[rowKey(cards)[0]!]!;

/** -1, 0 or 1 as row a is weaker than, equal to or stronger than row b (keys compared lexicographically). */
export function compareRows(a: readonly number[], b: readonly number[]): -1 | 0 | 1 {
  const ka = rowKey(a);
  const kb = rowKey(b);
  for (let i = 0; i < 6; i++) if (ka[i] !== kb[i]) return ka[i]! > kb[i]! ? 1 : -1;
  return 0;
}
