// Open face (docs/fairness.md §22-§23; docs/rules.md §8.1-§8.4, §8.12's Finnish 2♠): the schedule, the streets dealt from
// the cut deck, their digests, the placements' turn order, dead hands, royalties and scoring.
import { type Bytes, concat, lp, u8, u64, utf8, uuid } from "./bytes";
import { RANKS, parseCards } from "./cards";
import { hmac, sha256 } from "./crypto";
import type { Rows } from "./fairness";
import { CATEGORIES, compareRows, rowKey } from "./hands";
import { cmp, deuceToSevenKey, lowballMiddle } from "./openfaceMoves";

export type OfcRuleSet = Record<string, unknown> & { street_cards: number[] };

/**
 * §22: schedule[t][s], the cards seat s gets on street t (a Fantasyland seat: all on street 0);
 * §23: Pineapple deals `street_discards` more on every street after the first.
 */
export function schedule(rules: OfcRuleSet, fantasyland: readonly (number | null)[]): number[][] {
  const discards = (rules.street_discards as number | undefined) ?? 0;
  return rules.street_cards.map((k, t) => fantasyland.map((m) => (m === null ? k + (t > 0 ? discards : 0) : t === 0 ? m : 0)));
}

/** §23: a Pineapple discard's commitment (scheme 3: scheme 2 with the street, the discarded cards for the rows). */
export function discardCommitment(
  d: { tableId: string; dealNumber: number }, seat: number, playerId: string, street: number,
  cards: readonly number[], nonce: Bytes,
): Promise<Bytes> {
  if (nonce.length < 16 || nonce.length > 64) throw new Error(`the nonce is ${nonce.length} bytes, not 16 to 64`);
  return sha256(concat(
    lp("sapsam/fairness/v3/discard-commitment"), uuid(d.tableId), u64(d.dealNumber), u8(seat), lp(utf8(playerId)),
    u8(street), lp(Uint8Array.from([...cards].sort((a, b) => a - b))), lp(nonce),
  ));
}

/** §22: each street's cards per seat, one at a time clockwise from the dealer's left, in rounds. */
export function dealStreets(cutDeck: readonly number[], sched: number[][], dealer: number): number[][][] {
  const n = sched[0]!.length;
  let top = 0;
  return sched.map((counts) => {
    const street: number[][] = counts.map(() => []);
    for (let round = 0; street.some((cards, s) => cards.length < counts[s]!); round++)
      for (let k = 1; k <= n; k++) {
        const s = (dealer + k) % n;
        if (street[s]!.length < counts[s]!) street[s]!.push(cutDeck[top++]!);
      }
    return street;
  });
}

/** §22: street_digest[t][s] under the deal's record key. */
export const streetDigest = (recordKey: Bytes, t: number, s: number, cards: readonly number[]): Promise<Bytes> =>
  hmac(recordKey, concat(lp("sapsam/fairness/v1/street"), u8(t), u8(s), lp(Uint8Array.from(cards))));

/** The seats that place on street t, in turn: clockwise from the dealer's left, seats dealt nothing passed over. */
export const placingOrder = (sched: number[][], t: number, dealer: number, fantasyland: readonly (number | null)[]): number[] => {
  const n = sched[0]!.length;
  return Array.from({ length: n }, (_, k) => (dealer + 1 + k) % n).filter((s) => fantasyland[s] === null && sched[t]![s]! > 0);
};

/** rules.md §8.2: a finished hand is dead when its rows are out of order (equal allowed). */
export const isDead = (r: Rows): boolean => compareRows(r.middle, r.front) < 0 || compareRows(r.back, r.middle) < 0;

const TABLES: Record<string, Record<string, number[]>> = {
  //            straight, flush, full house, quads, straight flush, royal flush
  american: { back: [2, 4, 6, 10, 15, 25], middle: [4, 8, 12, 20, 30, 50] },
  russian: { back: [2, 4, 6, 8, 10, 15], middle: [4, 8, 12, 16, 20, 30] },
};

/** rules.md §8.3: a row's royalty under the rule set's table; §8.12: a 2-7 lowball middle earns none. */
export function ofcRoyalty(row: "front" | "middle" | "back", cards: readonly number[], rules: OfcRuleSet): number {
  if (row === "middle" && lowballMiddle(rules)) return 0;
  const key = rowKey(cards);
  const category = CATEGORIES[key[0]!]!;
  if (row === "front") {
    if (category === "three_of_a_kind") return 10 + key[1]!;
    return category === "pair" && key[1]! >= RANKS.indexOf("6") ? key[1]! - 3 : 0;
  }
  const table = TABLES[rules.royalty_table as string];
  if (table === undefined) throw new Error(`unknown royalty table ${String(rules.royalty_table)}`);
  if (row === "middle" && category === "three_of_a_kind") return (rules.middle_trips_royalty as number | undefined) ?? 2;
  const royal = category === "straight_flush" && key[1] === 12;
  const at = royal ? 5 : ["straight", "flush", "full_house", "four_of_a_kind", "straight_flush"].indexOf(category);
  return at < 0 ? 0 : table[row]![at]!;
}

export interface OfcPair {
  seat_a: number;
  seat_b: number;
  rows: number[];
  points: number;
  royalties: number;
  delta: number;
}

/**
 * rules.md §8.4: every pair (points, royalties, delta) and the totals; a dead hand scores as a foul.
 * §8.12's 2-7: the lower deuce-to-seven middle wins the row, and a lowball middle earns no royalty.
 */
export function scoreOpenFace(boards: readonly Rows[], dead: readonly boolean[], rules: OfcRuleSet) {
  const rows3 = ["front", "middle", "back"] as const;
  const lowball = lowballMiddle(rules);
  const royalties = boards.map((b, s) => (dead[s] ? [0, 0, 0] : rows3.map((r) => ofcRoyalty(r, b[r], rules))));
  const scoop = (rules.scoop_points as number | undefined) ?? 6;
  const twoOfThree = (rules.two_of_three_points as number | undefined) ?? 1;
  const finnish = (rules.finnish_two_of_spades as string | undefined) ?? "off";
  const twoOfSpades = parseCards("2s")[0]!;
  const twoRow = boards.map((b, s) => (finnish === "off" || dead[s] ? -1 : rows3.findIndex((r) => b[r].includes(twoOfSpades))));
  const pairs: OfcPair[] = [];
  const totals = boards.map(() => 0);
  for (let a = 0; a < boards.length; a++)
    for (let b = a + 1; b < boards.length; b++) {
      let rows: number[];
      if (dead[a] || dead[b]) rows = [0, 0, 0].map(() => (dead[a] && dead[b] ? 0 : dead[a] ? -1 : 1));
      else rows = rows3.map((r) => (lowball && r === "middle"
        ? cmp(deuceToSevenKey(boards[b]![r]), deuceToSevenKey(boards[a]![r]))
        : compareRows(boards[a]![r], boards[b]![r])));
      const won = rows.filter((x) => x > 0).length;
      const lost = rows.filter((x) => x < 0).length;
      const points = won === 3 ? scoop : lost === 3 ? -scoop : won >= 2 ? twoOfThree : lost >= 2 ? -twoOfThree : 0;
      const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
      // rules.md §8.12, Finnish 2♠: the live hand holding it doubles its own royalty of that row,
      // and under `row` the opponent's too.
      const mine = [...royalties[a]!];
      const theirs = [...royalties[b]!];
      for (const [seat, own, other] of [[a, mine, theirs], [b, theirs, mine]] as const) {
        const row = twoRow[seat]!;
        if (row < 0) continue;
        own[row]! *= 2;
        if (finnish === "row") other[row]! *= 2;
      }
      const royalty = sum(mine) - sum(theirs);
      const delta = points + royalty + 0;
      pairs.push({ seat_a: a, seat_b: b, rows, points: points + 0, royalties: royalty + 0, delta });
      totals[a]! += delta;
      totals[b]! -= delta;
    }
  return { royalties, pairs, totals: totals.map((t) => t + 0) };
}
