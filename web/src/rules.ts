// Fouls and pair scoring (docs/rules.md §1.5, §1.6, §2.3, §2.4), royalties (§2.7, broken hands
// claimed included), surrender (§2.8), naturals (§2.9) and per-pair stakes (§2.10).
import { RANKS, rankOf } from "./cards";
import type { Rows } from "./fairness";
import { CATEGORIES, categoryOf, compareRows, rowKey } from "./hands";
import { naturalKey, naturalUnits, naturalsPlayed } from "./naturals";

export type RuleSet = Record<string, unknown>;

export type FoulReason = "WRONG_ROW_SIZE" | "NOT_DEALT_CARDS" | "FALSE_NATURAL" | "ROWS_OUT_OF_ORDER";

interface Scoring {
  method: string;
  rowUnit: number;
  scoopBonus: number;
  oneSixTwoOfThree: number;
  oneSixScoop: number;
  majority: string;
  rowOrder: string;
  royalties: string;
  royaltyLimit: string;
  brokenClaimed: boolean;
  surrender: string;
  surrenderPrice: number;
  pairUnits: Record<string, number>;
  /** The seven royalty fields (key without "royalty_") and royalty_amounts, as §2.6 reads them. */
  fields: Record<string, number>;
  amounts: Record<string, number>;
}

const SEVEN: Record<string, number> = {
  front_three_of_a_kind: 3, middle_three_of_a_kind: 0, middle_full_house: 2, middle_four_of_a_kind: 4,
  middle_straight_flush: 5, back_four_of_a_kind: 4, back_straight_flush: 5,
};

/** A recorded rule set read with §2.1's defaults and §2.6's per-version values. */
export function readRuleSet(r: RuleSet): Scoring {
  const version = (r.rules_version as number | undefined) ?? 7;
  const broken = version >= 6 ? ((r.royalty_broken_hands as string | undefined) ?? "not_claimed") : "not_claimed";
  if (broken !== "not_claimed" && broken !== "claimed") throw new Error(`unknown royalty_broken_hands "${broken}"`);
  const num = (k: string, d: number) => (r[k] as number | undefined) ?? d;
  return {
    method: (r.scoring as string | undefined) ?? "per_row",
    rowUnit: num("row_unit", 1),
    scoopBonus: num("scoop_bonus", 1),
    oneSixTwoOfThree: num("one_six_two_of_three", 1),
    oneSixScoop: num("one_six_scoop", 6),
    majority: version === 1 ? "more_rows_won" : ((r.majority as string | undefined) ?? "two_rows_won"),
    rowOrder: version <= 2 ? "non_decreasing" : ((r.row_order as string | undefined) ?? "non_decreasing"),
    royalties: version <= 3 ? "none" : ((r.royalties as string | undefined) ?? "none"),
    royaltyLimit: (r.royalty_limit as string | undefined) ?? "every_row",
    brokenClaimed: broken === "claimed",
    surrender: (r.surrender as string | undefined) ?? "off",
    surrenderPrice: num("surrender_price", 2),
    pairUnits: version <= 5 ? {} : ((r.pair_units as Record<string, number> | undefined) ?? {}),
    fields: Object.fromEntries(Object.entries(SEVEN).map(([k, d]) => [k, num(`royalty_${k}`, d)])),
    amounts: version <= 5 ? {} : ((r.royalty_amounts as Record<string, number> | undefined) ?? {}),
  };
}

/**
 * §1.5: the first failing check's reason, or null for a legal arrangement of the dealt cards
 * (dealt null: the rows' own cards). `natural`: the seat's declaration (§2.9; "none" or absent: none).
 */
export function foulReason(rows: Rows, dealt: readonly number[] | null, ruleSet: RuleSet, natural = "none"): FoulReason | null {
  if (rows.front.length !== 3 || rows.middle.length !== 5 || rows.back.length !== 5) return "WRONG_ROW_SIZE";
  const all = [...rows.front, ...rows.middle, ...rows.back];
  if (new Set(all).size !== 13) return "NOT_DEALT_CARDS";
  if (dealt !== null && !all.every((c) => dealt.includes(c))) return "NOT_DEALT_CARDS";
  if (natural !== "none") return realNatural(natural, dealt ?? all, ruleSet) ? null : "FALSE_NATURAL";
  const strict = readRuleSet(ruleSet).rowOrder === "strictly_increasing";
  const backVsMiddle = compareRows(rows.back, rows.middle);
  if (compareRows(rows.middle, rows.front) < 0 || backVsMiddle < 0 || (strict && backVsMiddle === 0))
    return "ROWS_OUT_OF_ORDER";
  return null;
}

/** A seat's scored hand: its rows, or null for a foul. */
export type Scored = Rows | null;

/** §2.9: does the rule set play this natural, and do the 13 cards hold it? */
export function realNatural(natural: string, cards: readonly number[], ruleSet: RuleSet): boolean {
  const counting = (ruleSet.natural_six_pairs_counting as string | undefined) ?? "any_group";
  return naturalsPlayed(ruleSet).includes(natural) && naturalKey(natural, cards, counting) !== null;
}

/** A seat's real natural and its 13 cards, for §2.9's pair settlement. */
export interface Natural {
  name: string;
  cards: readonly number[];
}

/** §2.9: the units a pair's natural(s) settle, from a's side (0 for a tie). */
function naturalUnitsBetween(a: Natural | null, b: Natural | null, ruleSet: RuleSet): number {
  const order = naturalsPlayed(ruleSet);
  const counting = (ruleSet.natural_six_pairs_counting as string | undefined) ?? "any_group";
  if (b === null) return naturalUnits(a!.name, ruleSet);
  if (a === null) return -naturalUnits(b.name, ruleSet);
  const strength = order.indexOf(a.name) - order.indexOf(b.name);
  let cmp = Math.sign(strength);
  if (cmp === 0) {
    const [ka, kb] = [naturalKey(a.name, a.cards, counting)!, naturalKey(b.name, b.cards, counting)!];
    const i = ka.findIndex((x, j) => x !== kb[j]);
    cmp = i < 0 ? 0 : ka[i]! > kb[i]! ? 1 : -1;
  }
  return cmp > 0 ? naturalUnits(a.name, ruleSet) : cmp < 0 ? -naturalUnits(b.name, ruleSet) : 0;
}

/** §1.5-§1.6: front, middle, back from seat a's side (+1 won, 0 tied, -1 lost). */
export function pairRows(a: Scored, b: Scored): number[] {
  if (a === null || b === null) {
    const all = a === null ? (b === null ? 0 : -1) : 1; // a foul loses every row to a legal hand; two fouls tie
    return [all, all, all];
  }
  return [compareRows(a.front, b.front), compareRows(a.middle, b.middle), compareRows(a.back, b.back)];
}

function methodUnits(rows: readonly number[], s: Scoring): number {
  const won = rows.filter((r) => r > 0).length;
  const lost = rows.filter((r) => r < 0).length;
  const scoop = won === 3 ? 1 : lost === 3 ? -1 : 0;
  const majority =
    s.majority === "more_rows_won" ? Math.sign(won - lost) : won >= 2 ? 1 : lost >= 2 ? -1 : 0;
  let units: number;
  switch (s.method) {
    case "per_row": units = won - lost; break;
    case "two_four": units = won - lost + majority; break;
    case "one_six": units = scoop !== 0 ? scoop * s.oneSixScoop : majority * s.oneSixTwoOfThree; break;
    case "per_row_scoop_bonus": units = won - lost + scoop * s.scoopBonus; break;
    default: throw new Error(`unknown scoring method ${s.method}`);
  }
  return units;
}

const ROWS = ["front", "middle", "back"] as const;

const lookupIn = (s: Scoring) => (...keys: string[]): number => {
  for (const k of keys) {
    if (k in s.amounts) return s.amounts[k]!;
    if (k in s.fields) return s.fields[k]!;
  }
  return 0;
};

const higher = (a: number[], b: number[]): boolean => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
  return false;
};

/** The straight flushes among cards, as [top rank (the wheel's: 3), its five cards], highest first. */
function straightFlushes(cards: readonly number[]): [number, number[]][] {
  const held = new Set(cards);
  const found: [number, number[]][] = [];
  for (let top = 12; top >= 3; top--)
    for (let suit = 3; suit >= 0; suit--) {
      const five = [0, 1, 2, 3, 4].map((k) => (top - k < 0 ? 12 : top - k) * 4 + suit); // the wheel: A low
      if (five.every((c) => held.has(c))) found.push([top, five]);
    }
  return found;
}

/**
 * §2.7 broken hands (royalty_broken_hands claimed): the royalties of a legal hand's 13 cards beyond
 * its rows: each four of a kind no row holds as four of a kind pays back_four_of_a_kind; and as many
 * straight flushes as the most that share no card among the 13 cards, less the rows that are
 * straight flushes, the highest first, each what it pays in the back.
 */
export function brokenRoyalties(h: Rows, s: Scoring): number[] {
  if (!s.brokenClaimed) return [];
  const lookup = lookupIn(s);
  const cards = [...h.front, ...h.middle, ...h.back];
  const out: number[] = [];
  const rowQuads = ROWS.filter((r) => categoryOf(h[r]) === "four_of_a_kind").map((r) => rowKey(h[r])[1]);
  for (let rank = 12; rank >= 0; rank--)
    if (cards.filter((c) => rankOf(c) === rank).length === 4 && !rowQuads.includes(rank)) out.push(lookup("back_four_of_a_kind"));
  // The most straight flushes that share no card, the highest first (the lexicographically highest
  // of the largest disjoint sets).
  const all = straightFlushes(cards);
  let best: [number, number[]][] = [];
  const search = (from: number, chosen: [number, number[]][], used: Set<number>) => {
    const better = chosen.length > best.length
      || (chosen.length === best.length && higher(chosen.map((c) => c[0]), best.map((c) => c[0])));
    if (better) best = [...chosen];
    for (let i = from; i < all.length; i++) {
      const [, five] = all[i]!;
      if (five.some((c) => used.has(c))) continue;
      five.forEach((c) => used.add(c));
      search(i + 1, [...chosen, all[i]!], used);
      five.forEach((c) => used.delete(c));
    }
  };
  search(0, [], new Set());
  const rowFlushes = ROWS.filter((r) => categoryOf(h[r]) === "straight_flush").length;
  for (const [top] of best.slice(0, Math.max(0, best.length - rowFlushes)))
    out.push(top === 12 ? lookup("back_royal_flush", "back_straight_flush") : lookup("back_straight_flush"));
  return out;
}

/** §2.7: the royalty one row earns: its most specific key the table holds. */
export function rowRoyalty(row: "front" | "middle" | "back", cards: readonly number[], s: Scoring): number {
  const key = rowKey(cards);
  const category = CATEGORIES[key[0]!]!;
  const lookup = lookupIn(s);
  if (row === "front") {
    if (category !== "pair" && category !== "three_of_a_kind") return 0;
    return lookup(`front_${category}_${RANKS[key[1]!]}`, `front_${category}`);
  }
  const royal = category === "straight_flush" && key[1] === 12; // ace-high (the wheel's top is the five)
  return royal ? lookup(`${row}_royal_flush`, `${row}_straight_flush`) : lookup(`${row}_${category}`);
}

const total = (xs: number[], s: Scoring): number =>
  s.royaltyLimit === "largest_only" ? Math.max(0, ...xs) : xs.reduce((a, b) => a + b, 0);

/** §2.7: the royalty units between a pair, from a's side (a fouled seat earns none). */
function royaltyUnits(a: Scored, b: Scored, rows: readonly number[], s: Scoring): number {
  if (s.royalties === "none") return 0;
  const of = (h: Scored) => (h === null ? [0, 0, 0] : ROWS.map((row) => rowRoyalty(row, h[row], s)));
  // Broken hands' royalties are the hand's, paid whatever the rows (a foul claims nothing).
  const [ba, bb] = [a === null ? [] : brokenRoyalties(a, s), b === null ? [] : brokenRoyalties(b, s)];
  const [ra, rb] = [of(a), of(b)];
  if (s.royalties === "held_row") return total([...ra, ...ba], s) - total([...rb, ...bb], s);
  return total([...ra.filter((_, i) => rows[i]! > 0), ...ba], s) - total([...rb.filter((_, i) => rows[i]! < 0), ...bb], s);
}

export interface Pair {
  seats: [number, number];
  rows: number[];
  delta: number;
}

/** §1.6, §2.8, §2.10: every pair in seat order, and each seat's total (surrendered[s]: the seat surrendered). */
export function scoreDeal(
  hands: readonly Scored[], ruleSet: RuleSet, surrendered: readonly boolean[] = [],
  naturals: readonly (Natural | null)[] = [],
): { pairs: Pair[]; totals: number[] } {
  const s = readRuleSet(ruleSet);
  const pairs: Pair[] = [];
  const totals = hands.map(() => 0);
  for (let a = 0; a < hands.length; a++)
    for (let b = a + 1; b < hands.length; b++) {
      const [ha, hb] = [hands[a]!, hands[b]!];
      const [sa, sb] = [surrendered[a] ?? false, surrendered[b] ?? false];
      let rows: number[];
      let units: number;
      const [na, nb] = [naturals[a] ?? null, naturals[b] ?? null];
      if (na !== null || nb !== null) {
        // §2.9: a natural settles its amount, before any surrender; rows: the winner's three.
        units = naturalUnitsBetween(na, nb, ruleSet);
        rows = [0, 0, 0].map(() => Math.sign(units));
      } else if (sa || sb) {
        // §2.8: no rows compared; the surrendered seat pays the price to a seat that plays
        // (under pay_legal_hands, only to a legal hand); two surrendered seats settle nothing.
        rows = [0, 0, 0];
        const collects = (h: Scored) => s.surrender !== "pay_legal_hands" || h !== null;
        units = sa && sb ? 0 : sa ? (collects(hb) ? -s.surrenderPrice : 0) : collects(ha) ? s.surrenderPrice : 0;
      } else {
        rows = pairRows(ha, hb);
        units = methodUnits(rows, s) + royaltyUnits(ha, hb, rows, s);
      }
      const delta = units * (s.pairUnits[`${a}-${b}`] ?? s.rowUnit) + 0; // + 0: no -0
      pairs.push({ seats: [a, b], rows, delta });
      totals[a]! += delta;
      totals[b]! -= delta;
    }
  return { pairs, totals: totals.map((t) => t + 0) };
}
