// Naturals (docs/rules.md §2.9): which whole 13-card hands a seat may declare, whether its cards hold
// the one declared, and how two naturals compare.
import { rankOf, suitOf } from "./cards";

const CLASSIC = ["six_pairs", "three_straights", "three_flushes", "dragon"];
/** §2.9's order, weakest first, with `extended`. */
const EXTENDED = [
  "six_pairs", "three_straights", "three_flushes", "five_pairs_and_trips", "four_trips", "one_colour",
  "all_low", "all_high", "dragon", "three_straight_flushes", "three_quads", "twelve_royals", "supreme_dragon",
];
const EXTENDED_UNITS: Record<string, number> = {
  five_pairs_and_trips: 5, four_trips: 8, one_colour: 10, all_low: 10, all_high: 10,
  three_straight_flushes: 18, three_quads: 20, twelve_royals: 24, supreme_dragon: 52,
};

/** Every natural's name (a declaration is one of these, or "none"). */
export const ALL_NATURALS: readonly string[] = EXTENDED;

/** The naturals a rule set plays, weakest first (three_straight_flushes from rules version 7). */
export function naturalsPlayed(ruleSet: Record<string, unknown>): string[] {
  const version = (ruleSet.rules_version as number | undefined) ?? 7;
  const kind = version <= 4 ? "none" : ((ruleSet.naturals as string | undefined) ?? "none");
  if (kind === "classic") return CLASSIC;
  if (kind === "extended") return EXTENDED.filter((n) => n !== "three_straight_flushes" || version >= 7);
  return [];
}

/** The natural's amount in units under the rule set. */
export const naturalUnits = (name: string, ruleSet: Record<string, unknown>): number =>
  EXTENDED_UNITS[name] ?? (ruleSet[`natural_${name}`] as number | undefined) ?? (name === "dragon" ? 13 : 3);

const counts = (cards: readonly number[]): number[] => {
  const c = new Array<number>(13).fill(0);
  for (const card of cards) c[rankOf(card)]!++;
  return c;
};

/** A 3- or 5-card straight's top rank (the wheel's top the five, A-2-3's the three), or null. */
function straightTop(cards: readonly number[]): number | null {
  const ranks = [...new Set(cards.map(rankOf))].sort((a, b) => b - a);
  if (ranks.length !== cards.length) return null;
  if (ranks[0]! - ranks.at(-1)! === cards.length - 1) return ranks[0]!;
  const low = cards.length === 5 ? [12, 3, 2, 1, 0] : [12, 1, 0];
  return ranks.join() === low.join() ? low[1]! : null;
}

const flush = (cards: readonly number[]) => cards.every((c) => suitOf(c) === suitOf(cards[0]!));

/** Every way to split 13 cards into back (5), middle (5) and front (3). */
function* splits(cards: readonly number[]): Generator<[number[], number[], number[]]> {
  const pick = function* (from: readonly number[], k: number, start = 0, taken: number[] = []): Generator<number[]> {
    if (taken.length === k) { yield taken; return; }
    for (let i = start; i <= from.length - (k - taken.length); i++) yield* pick(from, k, i + 1, [...taken, from[i]!]);
  };
  for (const back of pick(cards, 5)) {
    const rest = cards.filter((c) => !back.includes(c));
    for (const middle of pick(rest, 5)) yield [back, middle, rest.filter((c) => !middle.includes(c))];
  }
}

const lexMax = (a: number[] | null, b: number[]): number[] => {
  if (a === null) return b;
  for (let i = 0; i < Math.max(a.length, b.length); i++) if ((a[i] ?? -1) !== (b[i] ?? -1)) return (a[i] ?? -1) > (b[i] ?? -1) ? a : b;
  return a;
};

/** The best rows' key of a three-rows natural (back first), or null when the cards do not hold it. */
function threeRows(cards: readonly number[], rowOk: (row: number[]) => boolean, key: (row: number[]) => number[]): number[] | null {
  let best: number[] | null = null;
  for (const rows of splits(cards)) if (rows.every(rowOk)) best = lexMax(best, rows.flatMap(key));
  return best;
}

const byRanksDesc = (row: number[]) => row.map(rankOf).sort((a, b) => b - a);

/**
 * The natural's comparison key when the 13 cards hold it (§2.9: a larger key is the stronger of
 * two of one kind; equal keys tie), or null when they do not.
 */
export function naturalKey(name: string, cards: readonly number[], counting = "any_group"): number[] | null {
  if (cards.length !== 13) return null;
  const c = counts(cards);
  const ranks = cards.map(rankOf);
  switch (name) {
    case "six_pairs": {
      const ok = counting === "distinct_ranks"
        ? c.filter((n) => n === 2).length === 6 && c.filter((n) => n === 1).length === 1
        : c.reduce((n, k) => n + Math.floor(k / 2), 0) >= 6;
      // The pairs from the highest down (four of a kind gives two pairs of its rank).
      return ok ? c.flatMap((k, r) => Array<number>(Math.floor(k / 2)).fill(r)).sort((a, b) => b - a).slice(0, 6) : null;
    }
    case "three_straights":
      return threeRows(cards, (row) => straightTop(row) !== null, (row) => [straightTop(row)!]);
    case "three_flushes":
      return threeRows(cards, flush, byRanksDesc);
    case "three_straight_flushes":
      return threeRows(cards, (row) => flush(row) && straightTop(row) !== null, (row) => [straightTop(row)!]);
    case "dragon":
      return c.every((n) => n === 1) ? [] : null;
    case "supreme_dragon":
      return c.every((n) => n === 1) && flush([...cards]) ? [] : null;
    case "five_pairs_and_trips":
      return c.some((n, r) => n >= 3 && c.reduce((p, k, q) => p + Math.floor((q === r ? k - 3 : k) / 2), 0) >= 5) ? [] : null;
    case "four_trips":
      return c.filter((n) => n >= 3).length >= 4 ? [] : null;
    case "three_quads":
      return c.filter((n) => n === 4).length >= 3 ? [] : null;
    case "one_colour": {
      const red = cards.map((card) => suitOf(card) === 1 || suitOf(card) === 2);
      return red.every((x) => x) || red.every((x) => !x) ? [] : null;
    }
    case "all_low":
      return ranks.every((r) => r <= 6) ? [] : null;
    case "all_high":
      return ranks.every((r) => r >= 6) ? [] : null;
    case "twelve_royals":
      return ranks.every((r) => r >= 9) ? [] : null;
    default:
      return null;
  }
}

