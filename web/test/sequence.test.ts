// sequence (audit.md §4.2, fairness.md §20) and the series (§4.3) on hand-made event lists.
import { describe, expect, it } from "vitest";
import { sequenceCheck } from "../src/sequence";
import { seriesChecks, standingsOf } from "../src/series";

const ctx = { seatCount: 3, surrender: true, naturals: false, afterSeries: "close", seriesLength: 3 };
let version = 0;
const ev = (type: string, data: Record<string, unknown> = {}) => ({ version: ++version, type, data: { deal_number: 1, ...data } as any });
/** Deal 1, dealer 0, at a surrender table; seat 2 times out arranging. */
const deal = (order: number[] = [1, 0], announce: number[] = [1, 0]) => [
  ev("DealStarted", { dealer: 0 }), ev("EntropyContributed", { seat: 1 }), ev("DeckCut", { seat: 2 }), ev("CardsDealt"),
  ev("ArrangementCommitted", { seat: 0, commitment: "aa" }), ev("ArrangementCommitted", { seat: 0, commitment: "bb" }),
  ev("SeatConfirmed", { seat: 0, commitment: "bb" }), ev("ArrangementCommitted", { seat: 1, commitment: "cc" }),
  ev("SeatConfirmed", { seat: 1, commitment: "cc" }), ev("SeatTimedOut", { seat: 2, stage: "arranging" }),
  ev("AnnouncementsOpened", { order }),
  ...announce.map((seat) => ev("SurrenderAnnounced", { seat, surrender: seat === 1, timed_out: false })),
  ev("RevealsOpened"), ev("ArrangementRevealed", { seat: 1 }), ev("SeatTimedOut", { seat: 0, stage: "revealing" }),
  ev("SeedRevealed"), ev("DealScored"),
];

describe("sequence", () => {
  it("a deal in protocol order passes; so does one cut short", () => {
    expect(sequenceCheck(deal(), ctx)).toBeUndefined();
    expect(sequenceCheck(deal().slice(0, 9), ctx)).toBeUndefined();
  });
  it.each([
    ["the seat timed out arranging in the order", () => deal([1, 2, 0], [1, 2, 0]), /announcing order/],
    ["an announcement out of turn", () => deal([1, 0], [0, 1]), /seat 1's turn/],
    ["a confirmation of an earlier commitment", () => deal().map((e) => (e.type === "SeatConfirmed" && e.data.seat === 0 ? { ...e, data: { ...e.data, commitment: "aa" } } : e)), /not the seat's last/],
    ["the cut by the dealer's left", () => deal().map((e) => (e.type === "DeckCut" ? { ...e, data: { ...e.data, seat: 1 } } : e)), /dealer's right/],
    ["a reveal by a seat timed out arranging", () => deal().map((e) => (e.type === "ArrangementRevealed" ? { ...e, data: { ...e.data, seat: 2 } } : e)), /only a confirmed seat/],
    ["an event of another deal", () => deal().map((e) => (e.type === "CardsDealt" ? { ...e, data: { ...e.data, deal_number: 2 } } : e)), /names deal 2/],
    ["a score before the seed", () => deal().filter((e) => e.type !== "SeedRevealed"), /expected SeedRevealed/],
    ["a void after the score", () => [...deal(), ev("DealVoided")], /only while in progress/],
  ])("%s fails", (_, events, why) => {
    expect(sequenceCheck(events(), ctx)).toMatch(why);
  });
  it("every seat timed out arranging: the reveals open at once, even with surrender", () => {
    const events = [ev("DealStarted", { dealer: 1 }), ev("DeckCut", { seat: 0 }), ev("CardsDealt"),
      ...[0, 1, 2].map((seat) => ev("SeatTimedOut", { seat, stage: "arranging" })), ev("RevealsOpened"), ev("SeedRevealed"), ev("DealScored")];
    expect(sequenceCheck(events, ctx)).toBeUndefined();
  });
  it("a void after the cut, then a seat replaced", () => {
    const events = [ev("DealStarted", { dealer: 0 }), ev("DeckCut", { seat: 2 }), ev("CardsDealt"), ev("DealVoided"), ev("SeatReplaced", { seat: 1 })];
    expect(sequenceCheck(events, ctx)).toBeUndefined();
  });
  it("a new series only at a new_series table, from the next deal", () => {
    const tail = [ev("SeriesCompleted"), ev("SeriesStarted", { first_deal_number: 2 })];
    expect(sequenceCheck([...deal(), ...tail], ctx)).toMatch(/after_series = new_series/);
    expect(sequenceCheck([...deal(), ...tail], { ...ctx, afterSeries: "new_series" })).toBeUndefined();
  });
});

describe("the series", () => {
  it("standings: highest first, then by seat; equal totals share a place", () => {
    expect(standingsOf([2, 5, 2, -9])).toEqual([
      { seat: 1, total: 5, place: 1 }, { seat: 0, total: 2, place: 2 }, { seat: 2, total: 2, place: 2 }, { seat: 3, total: -9, place: 4 }]);
  });
  const scored = (number: number, totals: number[], series: number[], extra = {}) =>
    ({ number, outcome: "scored" as const, verified: true, scored: { totals, series_totals: series }, ...extra });
  const rules = { seatCount: 2, seriesLength: 2, afterSeries: "new_series" };
  it("a new_series table: totals restart, SeriesStarted names the next series", () => {
    const deals = [
      scored(1, [1, -1], [1, -1]),
      scored(2, [2, -2], [3, -3], { completed: { deals_played: 2, standings: standingsOf([3, -3]) }, started: { series_number: 2, first_deal_number: 3 } }),
      scored(3, [-1, 1], [-1, 1]),
    ];
    expect(seriesChecks(deals, rules).map((c) => `${c.name}@${c.deal} ${c.status}`)).toEqual([
      "series_totals@1 passed", "series_totals@2 passed", "standings@2 passed", "series_start@2 passed", "series_totals@3 passed"]);
    const forged = [deals[0]!, { ...deals[1]!, started: { series_number: 3, first_deal_number: 3 } }, scored(3, [-1, 1], [2, -2])];
    expect(seriesChecks(forged, rules).filter((c) => c.status === "failed").map((c) => `${c.name}@${c.deal}`)).toEqual(["series_start@2", "series_totals@3"]);
  });
  it("a series completed before its last deal fails standings", () => {
    const deals = [scored(1, [1, -1], [1, -1], { completed: { deals_played: 2, standings: standingsOf([1, -1]) } })];
    expect(seriesChecks(deals, { ...rules, afterSeries: "close" }).find((c) => c.name === "standings")?.status).toBe("failed");
  });
  const failedOf = (deals: Parameters<typeof seriesChecks>[0], r = rules) =>
    seriesChecks(deals, r).filter((c) => c.status === "failed").map((c) => `${c.name}@${c.deal}`);
  it("a series whose last deal records no SeriesCompleted fails standings (a voided deal not counting)", () => {
    const close = { seatCount: 2, seriesLength: 2, afterSeries: "close" };
    const voided = { number: 2, outcome: "voided" as const, verified: true };
    const completed = { completed: { deals_played: 2, standings: standingsOf([3, -3]) } };
    const honest = [scored(1, [1, -1], [1, -1]), voided, scored(3, [2, -2], [3, -3], completed)];
    expect(failedOf(honest, close)).toEqual([]);
    expect(failedOf([honest[0]!, voided, scored(3, [2, -2], [3, -3])], close)).toEqual(["standings@3"]);
    // completed one deal early (the void counted as its second), the real last deal without it
    const early = [scored(1, [1, -1], [1, -1], { completed: { deals_played: 2, standings: standingsOf([1, -1]) } }), voided, scored(3, [2, -2], [3, -3])];
    expect(failedOf(early, close)).toEqual(["standings@1", "standings@3"]);
    // at a new_series table each series' last deal needs its own SeriesCompleted
    const started = { started: { series_number: 2, first_deal_number: 3 } };
    const two = [scored(1, [1, -1], [1, -1]), scored(2, [2, -2], [3, -3], { ...completed, ...started }), scored(3, [-1, 1], [-1, 1]),
      scored(4, [-1, 1], [-2, 2], { completed: { deals_played: 2, standings: standingsOf([-2, 2]) }, ...{ started: { series_number: 3, first_deal_number: 5 } } })];
    expect(failedOf(two)).toEqual([]);
    expect(failedOf([two[0]!, two[1]!, two[2]!, scored(4, [-1, 1], [-2, 2], { started: { series_number: 3, first_deal_number: 5 } })])).toEqual(["standings@4"]);
    // a table export still in its series' last deal (running) fails nothing yet
    expect(failedOf([honest[0]!, voided, { number: 3, outcome: "running" as const, verified: false }], close)).toEqual([]);
  });
  it("a deal export of a series' last deal: its standings rank its recorded running totals", () => {
    const close = { seatCount: 2, seriesLength: 2, afterSeries: "close" };
    const last = (standings: unknown) => [scored(3, [2, -2], [3, -3], { completed: { deals_played: 2, standings } })];
    const status = (deals: Parameters<typeof seriesChecks>[0]) => seriesChecks(deals, close).find((c) => c.name === "standings")?.status;
    expect(status(last(standingsOf([3, -3])))).toBe("skipped"); // not covered: deal 1 or 2 may have been voided
    expect(status(last([{ seat: 1, total: -3, place: 1 }, { seat: 0, total: 3, place: 2 }]))).toBe("failed");
  });
});
