// docs/rules-examples.json: row values, comparisons, arrangements, deals and series, as far as the
// verifier implements the rules (no royalties, naturals or surrender yet: those are skipped).
import { describe, expect, it } from "vitest";
import { parseCards } from "../src/cards";
import { categoryOf, compareRows } from "../src/hands";
import { type Scored, foulReason, readRuleSet, scoreDeal } from "../src/rules";
import { list, load } from "./vectors";

const R = load("rules-examples.json");
const rows = (s: any) => ({ front: parseCards(s.front), middle: parseCards(s.middle), back: parseCards(s.back) });
const ruleSet = (r: Record<string, unknown>) => ({ rules_version: R.rules_version, ...r });
const implemented = (r: Record<string, unknown>) => {
  try { readRuleSet(ruleSet(r)); return true; } catch { return false; }
};

describe("row values (§1.3-§1.4)", () => {
  it.each(list(R.row_values))("$cards is $category", ({ cards, category }) => {
    expect(categoryOf(parseCards(cards))).toBe(category);
  });
});

describe("row comparisons", () => {
  it.each(list(R.row_comparisons))("$first vs $second", ({ first, second, result }) => {
    expect(compareRows(parseCards(first), parseCards(second))).toBe(result);
  });
});

describe("arrangements (§1.5)", () => {
  it.each(list(R.arrangements))("$front / $middle / $back", (a) => {
    const dealt = a.dealt === undefined ? null : parseCards(a.dealt);
    const reason = foulReason(rows(a), dealt, ruleSet(a.rule_set ?? {}));
    expect(reason).toBe(a.foul_reason);
    expect(reason !== null).toBe(a.foul);
  });
});

function scoreExample(deal: any, rs: Record<string, unknown>) {
  const hands: Scored[] = deal.seats.map((s: any) => (foulReason(rows(s), null, ruleSet(rs)) === null ? rows(s) : null));
  return scoreDeal(hands, ruleSet(rs));
}

describe("deals (§7)", () => {
  for (const deal of R.deals) {
    it(`${deal.id}: categories, fouls and rows`, () => {
      expect(deal.seats.map((s: any) => [s.front, s.middle, s.back].map((r) => categoryOf(parseCards(r))))).toEqual(deal.categories);
      expect(deal.seats.map((s: any) => foulReason(rows(s), null, ruleSet({})))).toEqual(deal.foul_reasons);
      expect(scoreExample(deal, {}).pairs.map((p) => ({ seats: p.seats, rows: p.rows }))).toEqual(
        deal.pairs.map((p: any) => ({ seats: p.seats, rows: p.rows })),
      );
    });
    for (const score of deal.scores.filter((s: any) => implemented(s.rule_set)))
      it(`${deal.id} under ${score.label}`, () => {
        const { pairs, totals } = scoreExample(deal, score.rule_set);
        expect(pairs.map((p) => p.delta)).toEqual(score.deltas);
        expect(totals).toEqual(score.totals);
      });
  }
});

describe("series (§1.7)", () => {
  for (const series of R.series)
    for (const score of series.scores.filter((s: any) => implemented(s.rule_set)))
      it(`${series.id} under ${score.label}`, () => {
        const deals = series.deals.map((id: string) => R.deals.find((d: any) => d.id === id));
        const totals = deals
          .map((d: any) => scoreExample(d, score.rule_set).totals)
          .reduce((a: number[], b: number[]) => a.map((x, i) => x + b[i]!));
        expect(totals).toEqual(score.totals);
        const places = totals.map((t: number) => 1 + totals.filter((u: number) => u > t).length);
        expect(places).toEqual(score.places);
      });
});

// The two presets special_deals name, as docs/rules.md §2.2 lists them (rules version 7).
const PRESETS: Record<string, Record<string, unknown>> = {
  capsa_susun: {
    rules_version: 7, scoring: "two_four", royalties: "won_row",
    royalty_front_three_of_a_kind: 1, royalty_middle_full_house: 1, royalty_middle_four_of_a_kind: 1,
    royalty_middle_straight_flush: 1, royalty_back_four_of_a_kind: 1, royalty_back_straight_flush: 1,
    royalty_middle_three_of_a_kind: 0, naturals: "classic", surrender: "pay_players",
  },
  thirteen_waters: { rules_version: 7, scoring: "per_row", royalties: "won_row", naturals: "extended" },
};

describe("special deals (§7.8: naturals, surrender)", () => {
  for (const deal of R.special_deals) {
    it(deal.id, () => {
      const rs = typeof deal.rules === "string" ? PRESETS[deal.rules]! : deal.rules;
      const seats = deal.seats.map((s: any) => ({ rows: rows(s), natural: s.natural ?? "none" }));
      const reasons = seats.map((s: any) => foulReason(s.rows, null, rs, s.natural));
      expect(reasons).toEqual(deal.foul_reasons);
      expect(reasons.map((r: unknown) => r !== null)).toEqual(deal.fouls);
      const hands = seats.map((s: any, i: number) => (reasons[i] === null ? s.rows : null));
      const naturals = seats.map((s: any, i: number) =>
        reasons[i] === null && s.natural !== "none" ? { name: s.natural, cards: [...s.rows.front, ...s.rows.middle, ...s.rows.back] } : null);
      const surrendered = deal.seats.map((s: any) => s.surrender === true);
      const { pairs, totals } = scoreDeal(hands, rs, surrendered, naturals);
      expect(pairs).toEqual(deal.pairs);
      expect(totals).toEqual(deal.totals);
    });
  }
});
