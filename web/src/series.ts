// The series (docs/audit.md §4.3): series_totals per scored deal, standings with SeriesCompleted (or at a series' end without it),
// series_start at new_series tables. Written from audit.md §4.3, docs/events.md and fairness.md §13.1.
import type { Json } from "./canonical";
import type { Check } from "./verify";

type Obj = { [key: string]: Json };

export interface SeriesDeal {
  number: number;
  outcome: "voided" | "scored" | "running";
  /** Every fair-dealing check of the deal passed (its totals are the verified ones). */
  verified: boolean;
  /** `DealScored.data` (scored deals). */
  scored?: Obj;
  completed?: Obj; // SeriesCompleted.data
  started?: Obj; // SeriesStarted.data
}

export interface SeriesRules { seatCount: number; seriesLength: number; afterSeries: string }

type SeriesCheck = Check & { deal: number };

const WHAT: Record<string, string> = {
  series_totals: "the running totals are the sums of the verified deal results",
  standings: "the series ended after its deals, with the standings of its final totals",
  series_start: "a new series started where the last one ended",
};

const same = (a: Json | undefined, b: readonly number[]) =>
  Array.isArray(a) && a.length === b.length && a.every((x, i) => x === b[i]);

/** Standings of final totals: seats by total, highest first, then by seat; equal totals share a place. */
export function standingsOf(totals: readonly number[]): { seat: number; total: number; place: number }[] {
  const order = totals.map((total, seat) => ({ seat, total })).sort((a, b) => b.total - a.total || a.seat - b.seat);
  return order.map((s) => ({ ...s, place: 1 + order.findIndex((o) => o.total === s.total) }));
}

/** How many of the sorted `numbers` lie in lo..hi. */
function countIn(numbers: readonly number[], lo: number, hi: number): number {
  const firstAtLeast = (x: number) => {
    let a = 0, b = numbers.length;
    while (a < b) { const m = (a + b) >> 1; if (numbers[m]! < x) a = m + 1; else b = m; }
    return a;
  };
  return hi < lo ? 0 : firstAtLeast(hi + 1) - firstAtLeast(lo);
}

/** The series checks of the deals an export holds, in export order. */
export function seriesChecks(deals: readonly SeriesDeal[], rules: SeriesRules): SeriesCheck[] {
  const { seatCount: n, seriesLength: L, afterSeries } = rules;
  const checks: SeriesCheck[] = [];
  const add = (name: string, deal: number, status: Check["status"], detail?: string, expected?: string, found?: string) =>
    checks.push({
      name, deal, status, what: WHAT[name]!,
      ...(detail === undefined ? {} : { detail }), ...(expected === undefined ? {} : { expected }), ...(found === undefined ? {} : { found }),
    });
  const newSeries = afterSeries === "new_series";
  const startsSeries = (k: number) => k === 1 || (newSeries && (k - 1) % L === 0);
  const seriesFirst = (k: number) => (newSeries ? Math.floor((k - 1) / L) * L + 1 : 1);
  const byNumber = new Map(deals.map((d) => [d.number, d]));
  const held = [...byNumber.keys()].sort((a, b) => a - b);
  const scoredNumbers = deals.filter((d) => d.outcome === "scored").map((d) => d.number).sort((a, b) => a - b);
  const zeros = () => Array.from({ length: n }, () => 0);
  const recorded = (d: SeriesDeal): number[] | undefined =>
    Array.isArray(d.scored?.series_totals) ? (d.scored!.series_totals as number[]) : undefined;
  // The running totals after deal k: those its DealScored records (each checked in its turn), a
  // voided deal changing nothing; "unknown" when the export does not hold the deal.
  const after = (k: number): number[] | undefined | "unknown" => {
    if (k < 1) return zeros();
    const d = byNumber.get(k);
    if (d === undefined) return "unknown";
    if (d.outcome === "voided") return startsSeries(k) ? zeros() : after(k - 1);
    return recorded(d);
  };
  for (const d of deals) {
    if (d.outcome !== "scored") continue;
    const k = d.number;
    const previous = startsSeries(k) ? zeros() : after(k - 1);
    const totals = d.scored?.totals;
    if (previous === "unknown") {
      add("series_totals", k, "skipped", `not covered: it needs deal ${k - 1}'s result (export the whole table to check the series)`);
    } else if (!d.verified || previous === undefined || !Array.isArray(totals)) {
      add("series_totals", k, "skipped", "needs the fair-dealing checks of this deal and the running totals before it");
    } else {
      const expected = previous.map((t, s) => t + (totals[s] as number));
      const found = d.scored?.series_totals;
      if (same(found, expected)) add("series_totals", k, "passed");
      else add("series_totals", k, "failed", undefined, JSON.stringify(expected), JSON.stringify(found ?? null));
    }

    // standings: the series completes exactly after its L-th deal, a voided deal not counting.
    const first = seriesFirst(k);
    // counted by bisection (a forged export of 16,000 deals stays linear, as in sapsam audit verify)
    const heldAll = countIn(held, first, k) === k - first + 1;
    const counted = heldAll ? countIn(scoredNumbers, first, k) : undefined;
    const completes = counted === undefined ? undefined : counted === L;
    // A series' L-th deal that counts records SeriesCompleted (docs/events.md): when the export
    // holds the series up to it, a deal that completes it without one fails standings.
    if (d.completed === undefined && completes === true)
      add("standings", k, "failed", `deal ${k} is deal ${L} of ${L} that count in its series, but no SeriesCompleted follows its DealScored`, "SeriesCompleted", "none");
    if (d.completed !== undefined) {
      const c = d.completed;
      const finalTotals = recorded(d);
      const expected = finalTotals === undefined ? undefined : standingsOf(finalTotals);
      const standings = Array.isArray(c.standings)
        ? (c.standings as Obj[]).map((s) => ({ seat: s.seat, total: s.total, place: s.place }))
        : null;
      if (c.deals_played !== L) add("standings", k, "failed", `deals_played is ${String(c.deals_played)}, the series has ${L} deals`);
      else if (completes === false) add("standings", k, "failed", `the series completed after ${counted} of its ${L} deals`);
      else if (counted === undefined && k - first + 1 < L) add("standings", k, "failed", `the series completed at deal ${k}, before its ${L}th deal`);
      else if (counted === undefined && expected !== undefined && JSON.stringify(standings) !== JSON.stringify(expected))
        // where the series ended is not checkable here, the ranking of the totals this deal records is
        add("standings", k, "failed", "the standings are not those of the running totals this deal's DealScored records", JSON.stringify(expected), JSON.stringify(standings));
      else if (counted === undefined) add("standings", k, "skipped", "not covered: the export does not hold the series' earlier deals, which may have been voided (the standings rank the running totals this deal records)");
      else if (expected === undefined) add("standings", k, "skipped", "needs the series totals");
      else if (JSON.stringify(standings) !== JSON.stringify(expected))
        add("standings", k, "failed", undefined, JSON.stringify(expected), JSON.stringify(standings));
      else add("standings", k, "passed");
    }

    // series_start: at a new_series table the deal ending a series records SeriesStarted.
    if (d.started !== undefined || (newSeries && k % L === 0)) {
      const s = d.started;
      if (!newSeries) add("series_start", k, "failed", "a new series at a table created with after_series = close");
      else if (k % L !== 0) add("series_start", k, "failed", `deal ${k} does not end a series of ${L} deals`);
      else if (s === undefined) add("series_start", k, "failed", `deal ${k} ends series ${k / L} and no SeriesStarted follows it`);
      else if (s.series_number !== k / L + 1 || s.first_deal_number !== k + 1)
        add("series_start", k, "failed", undefined, JSON.stringify({ series_number: k / L + 1, first_deal_number: k + 1 }),
          JSON.stringify({ series_number: s.series_number ?? null, first_deal_number: s.first_deal_number ?? null }));
      else add("series_start", k, "passed");
    }
  }
  return checks;
}
