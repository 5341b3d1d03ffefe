// The worked examples of docs/rules.md §2.7 (royalties), §2.8 (surrender) and §2.10 (per-pair
// stakes), from the prose: no vector file holds them without naturals.
import { describe, expect, it } from "vitest";
import { parseCards } from "../src/cards";
import { type RuleSet, scoreDeal } from "../src/rules";

const hand = (front: string, middle: string, back: string) => ({
  front: parseCards(front), middle: parseCards(middle), back: parseCards(back),
});
// §2.7's A and B: A wins the front, B the middle and the back.
const A = hand("Qc Qd Qh", "5c 5d 5h 9c 9d", "8c 8d 8h 8s 2c");
const B = hand("Ac Ad 3c", "4s 5s 6s 7s 3s", "9s Ts Js Qs Ks");
const v6 = (r: RuleSet) => ({ rules_version: 7, ...r });

describe("royalties (§2.7)", () => {
  it.each([
    ["won_row", "every_row", -8],
    ["won_row", "largest_only", -3],
    ["held_row", "every_row", -2],
    ["held_row", "largest_only", -2],
  ] as const)("%s, %s: A gets %i", (royalties, limit, delta) => {
    const { pairs } = scoreDeal([A, B], v6({ royalties, royalty_limit: limit }));
    expect(pairs[0]!.rows).toEqual([1, -1, -1]);
    expect(pairs[0]!.delta).toBe(delta);
  });
  it("003's example: a scoop (6) with back quads (10) against a back flush (4) pays 12", () => {
    const a = hand("2c 3d 5h", "Ac Ad Kc Kd Qh", "7c 7d 7h 7s 4c");
    const b = hand("2d 3h 4s", "Jc Jd Th 9h 8h", "As Ks 9s 6s 2s");
    const rules = v6({ scoring: "one_six", royalties: "held_row", royalty_back_four_of_a_kind: 10, royalty_amounts: { back_flush: 4 } });
    const { pairs } = scoreDeal([a, b], rules);
    expect(pairs[0]!.rows).toEqual([1, 1, 1]);
    expect(pairs[0]!.delta).toBe(12);
  });
  it("a fouled seat earns none and pays the winner's royalties of every row", () => {
    const { pairs } = scoreDeal([A, null], v6({ royalties: "won_row" }));
    expect(pairs[0]!.delta).toBe(3 + 3 + 2 + 4);
  });
});

describe("per-pair stakes (§2.10)", () => {
  it("row_unit 10, pair_units 0-1: 100", () => {
    // seat 0 wins two rows and loses one against seats 1 and 2; seat 1 scoops seat 2.
    const s0 = hand("Ac Ad 2c", "Kc Kd Ks 3c 3d", "4c 5c 6c 7c 9c");
    const s1 = hand("Kh Qh 2d", "Qc Qd Qs 4h 4d", "2s 3s 4s 5s 6s");
    const s2 = hand("Jh Th 3h", "Jc Jd 7h 6h 5h", "Tc Td Ts 8d 8s");
    const { pairs, totals } = scoreDeal([s0, s1, s2], v6({ row_unit: 10, pair_units: { "0-1": 100 } }));
    expect(pairs.map((p) => p.rows)).toEqual([[1, 1, -1], [1, 1, -1], [1, 1, 1]]);
    expect(totals).toEqual([110, -70, -40]);
  });
});

describe("surrender (§2.8)", () => {
  const rules = (surrender: string) => v6({ surrender, surrender_price: 2 });
  it("pay_players: the price to each seat that plays, a foul included; two surrendered settle nothing", () => {
    const { pairs, totals } = scoreDeal([A, null, B, B], rules("pay_players"), [false, false, true, true]);
    expect(pairs.map((p) => p.delta)).toEqual([3, 2, 2, 2, 2, 0]);
    expect(pairs.filter((p) => p.seats[1] >= 2).every((p) => p.rows.join() === "0,0,0")).toBe(true);
    expect(totals).toEqual([7, 1, -4, -4]);
  });
  it("pay_legal_hands: nothing to a fouled hand", () => {
    const { pairs } = scoreDeal([A, null, B], rules("pay_legal_hands"), [false, false, true]);
    expect(pairs.map((p) => p.delta)).toEqual([3, 2, 0]);
  });
});

describe("broken hands claimed (rules.md §2.7): sapsam's scorer on planted quads and straight flushes", async () => {
  const { readFileSync } = await import("node:fs");
  const { fileURLToPath } = await import("node:url");
  const { parseCards: cardsOf } = await import("../src/cards");
  const { scoreDeal: score, brokenRoyalties, readRuleSet } = await import("../src/rules");
  type Case = { preset: string; rule_set: Record<string, unknown>; hands: { front: string; middle: string; back: string; foul: boolean }[]; totals: number[]; deltas: number[] };
  const cases: Case[] = JSON.parse(readFileSync(fileURLToPath(new URL("data/broken_hands.json", import.meta.url)), "utf8"));
  it.each(cases.map((c, i) => [`${c.preset} #${i}`, c] as const))("%s", (_, c) => {
    const hands = c.hands.map((h) => (h.foul ? null : { front: cardsOf(h.front), middle: cardsOf(h.middle), back: cardsOf(h.back) }));
    const { pairs, totals } = score(hands, c.rule_set);
    expect({ totals, deltas: pairs.map((p) => p.delta) }).toEqual({ totals: c.totals, deltas: c.deltas });
  });
  it("the cases exercise the claim: many deals claim a broken hand, and it changes their score", () => {
    const claiming = cases.filter((c) => c.hands.some((h) => !h.foul
      && brokenRoyalties({ front: cardsOf(h.front), middle: cardsOf(h.middle), back: cardsOf(h.back) }, readRuleSet(c.rule_set)).length > 0));
    expect(claiming.length).toBeGreaterThan(20);
    const changed = claiming.filter((c) => {
      const hands = c.hands.map((h) => (h.foul ? null : { front: cardsOf(h.front), middle: cardsOf(h.middle), back: cardsOf(h.back) }));
      return score(hands, { ...c.rule_set, royalty_broken_hands: "not_claimed" }).totals.join() !== c.totals.join();
    });
    expect(changed.length).toBeGreaterThan(10);
  });
  it("002's example: four sevens broken into front trips and a middle straight claim back quads", () => {
    const s = readRuleSet(cases.find((c) => c.preset === "capsa_susun_broken")!.rule_set);
    const rows = { front: cardsOf("7c 7d 7h"), middle: cardsOf("7s 8d 9c Th Jh"), back: cardsOf("2s 5s 8s Ts Ks") };
    expect(brokenRoyalties(rows, s)).toEqual([1]);
    const kept = { front: cardsOf("2c 3d 4h"), middle: cardsOf("7c 7d 7h 7s 8d"), back: cardsOf("9s Ts Js Qs Ks") };
    expect(brokenRoyalties(kept, s)).toEqual([]); // the quads and the straight flush are rows
  });
});
