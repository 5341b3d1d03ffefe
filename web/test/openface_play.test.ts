// The open-face play checks (src/openfacePlay.ts) on docs/fairness-vectors.json's open_face_deals,
// each turned into the events a deal records (docs/events.md): every check passes on each vector,
// and a single alteration fails exactly the check audit.md §4.3.1 names. The set's rules
// (src/openfaceSet.ts) against the cases rules.md §8.5 states in words.
import { describe, expect, it } from "vitest";
import type { Json } from "../src/canonical";
import { parseCards } from "../src/cards";
import * as O from "../src/openface";
import { type OpenFacePlay, openFacePlayChecks } from "../src/openfacePlay";
import { nextFantasyland } from "../src/openfaceSet";
import { list, load } from "./vectors";

const V = load("fairness-vectors.json");
const ROWS = ["front", "middle", "back"] as const;
type Ev = { version: number; type: string; data: { [k: string]: Json } };
const split = (s: string) => (s === "" ? [] : s.split(" "));

/** A vector's deal as the events it records, in order, and what the deals before decided. */
function asEvents(v: ReturnType<typeof list>[number]): { play: OpenFacePlay; events: Ev[] } {
  const { input: i, expected: e } = v;
  const events: Ev[] = [];
  const add = (type: string, data: Ev["data"]) => events.push({ version: events.length + 1, type, data: { deal_number: i.deal_number, ...data } });
  add("DealStarted", { dealer: i.dealer });
  const discards = (e.discards ?? []) as { seat: number; street: number; cards: string; nonce: string; commitment: string }[];
  e.schedule.forEach((counts: number[], t: number) => {
    add("StreetDealt", { street: t, card_counts: counts });
    if (t === 0) for (const f of e.fantasyland) add("FantasylandCommitted", { seat: f.seat, commitment: f.commitment });
    for (const p of e.placements.filter((x: { street: number }) => x.street === t)) {
      add("CardsPlaced", { seat: p.seat, street: t, front: split(p.front), middle: split(p.middle), back: split(p.back), automatic: null });
      const d = discards.find((x) => x.seat === p.seat && x.street === t);
      if (d) add("DiscardCommitted", { seat: d.seat, street: t, commitment: d.commitment });
    }
  });
  // rules.md §8.7: with a reveal deadline, the reveals are opened with the last move.
  const limit = i.rule_set.move_seconds ?? i.rule_set.reveal_seconds ?? null;
  if (e.fantasyland.length > 0 && limit !== null) add("FantasylandRevealsOpened", { seats: e.fantasyland.map((f: { seat: number }) => f.seat), deadline_ms: 0 });
  for (const f of e.fantasyland) add("FantasylandRevealed", { seat: f.seat, front: split(f.front), middle: split(f.middle), back: split(f.back), nonce: f.nonce, discards: [], dead: false });
  for (let s = 0; s < i.seat_count; s++) {
    const mine = discards.filter((d) => d.seat === s);
    if (mine.length) add("DiscardsRevealed", { seat: s, streets: mine.map((d) => d.street), cards: mine.flatMap((d) => split(d.cards)), nonces: mine.map((d) => d.nonce) });
  }
  add("SeedRevealed", {});
  add("DealScored", {
    fouls: e.hands.map((h: { dead: boolean }) => h.dead),
    // The rows as placed, street after street (docs/events.md: DealScored.arrangements).
    arrangements: e.rows.map((r: Record<string, string>, s: number) => {
      const fl = e.fantasyland.find((f: { seat: number }) => f.seat === s);
      if (fl) return ROWS.map((x) => fl[x]).join("|");
      const mine = e.placements.filter((p: { seat: number }) => p.seat === s);
      return ROWS.map((x) => mine.flatMap((p: Record<string, string>) => split(p[x]!)).join(" ") || r[x]).join("|");
    }),
    pairs: e.pairs.map((p: { seat_a: number; seat_b: number; rows: number[]; delta: number }) => ({ seat_a: p.seat_a, seat_b: p.seat_b, rows: p.rows, delta: p.delta })),
    totals: e.totals, series_totals: e.totals, solver_arrangements: null,
  });
  const streets = e.streets.map((st: string[]) => st.map((c) => parseCards(c)));
  return { play: { tableId: i.table_id, rules: i.rule_set, players: i.players, dealer: i.dealer, fantasyland: i.fantasyland, streets, previousSeriesTotals: [0, 0, 0, 0].slice(0, i.seat_count) }, events };
}

const statuses = async (play: OpenFacePlay, events: Ev[]) => (await openFacePlayChecks(play, events)).checks.map((c) => `${c.name} ${c.status}`);

describe("open_face_deals through the play checks", () => {
  it.each(list(V.open_face_deals).map((v) => [v.name, v] as const))("%s: every check passes", async (_, v) => {
    const { play, events } = asEvents(v);
    expect(await statuses(play, events)).toEqual(["placements passed", "fantasyland passed", "discards passed", "scores passed"]);
  });

  const [normal, , fantasy, pineapple] = list(V.open_face_deals);
  it("two placements traded: placements fails, the rest not reached", async () => {
    const { play, events } = asEvents(normal!);
    const [i, j] = events.flatMap((e, k) => (e.type === "CardsPlaced" ? [k] : []));
    [events[i!], events[j!]] = [events[j!]!, events[i!]!];
    expect(await statuses(play, events)).toEqual(["placements failed", "fantasyland passed", "discards passed", "scores skipped"]);
  });
  it("a Fantasyland row changed after its commitment: fantasyland fails", async () => {
    const { play, events } = asEvents(fantasy!);
    const rows = events.find((e) => e.type === "FantasylandRevealed")!.data as { front: string[]; middle: string[] };
    [rows.front[0], rows.middle[0]] = [rows.middle[0]!, rows.front[0]!];
    expect(await statuses(play, events)).toEqual(["placements passed", "fantasyland failed", "discards passed", "scores skipped"]);
  });
  it("a discard's nonce changed: discards fails", async () => {
    const { play, events } = asEvents(pineapple!);
    const opened = events.find((e) => e.type === "DiscardsRevealed")!.data as { nonces: string[] };
    opened.nonces[0] = "00".repeat(16);
    expect(await statuses(play, events)).toEqual(["placements passed", "fantasyland passed", "discards failed", "scores skipped"]);
  });
  it("a total moved: scores fails", async () => {
    const { play, events } = asEvents(normal!);
    const scored = events.at(-1)!.data as { totals: number[] };
    scored.totals = scored.totals.map((t, s) => t + (s === 0 ? 1 : -1));
    expect(await statuses(play, events)).toEqual(["placements passed", "fantasyland passed", "discards passed", "scores failed"]);
  });
});

describe("rules.md §8.5: who plays Fantasyland next", () => {
  const classic = list(V.open_face_deals)[0]!.input.rule_set as O.OfcRuleSet;
  const board = (front: string, middle = "2c 3d 4h 5s 7c", back = "8d 8h 9c 9d Ts") => ({ front: parseCards(front), middle: parseCards(middle), back: parseCards(back) });
  it("QQ or better in front enters with 13 cards; JJ does not; trips do", () => {
    expect(nextFantasyland(classic, board("Qc Qd 2s"), false, 0)).toBe(13);
    expect(nextFantasyland(classic, board("Jc Jd As"), false, 0)).toBeNull();
    expect(nextFantasyland(classic, board("3c 3d 3s"), false, 0)).toBe(13);
  });
  it("a dead hand earns nothing (§8.10)", () => {
    expect(nextFantasyland(classic, board("Ac Ad As"), true, 0)).toBeNull();
  });
  it("a plain entry does not repeat; a re-entry needs its hands; at most twice in a row", () => {
    expect(nextFantasyland(classic, board("Qc Qd 2s"), false, 1)).toBeNull();
    expect(nextFantasyland(classic, board("3c 3d 3s"), false, 1)).toBe(13);
    expect(nextFantasyland(classic, board("4c 5d 6s", "2c 2d 2h 5s 5c", "8d 8h 8c 8s Ts"), false, 1)).toBe(13);
    expect(nextFantasyland(classic, board("3c 3d 3s"), false, 2)).toBeNull();
  });
  it("progressive: QQ 14, KK 15, AA 16, trips 17; fourteen: 14", () => {
    const progressive = { ...classic, fantasyland_cards: "progressive" };
    expect(["Qc Qd 2s", "Kc Kd 2s", "Ac Ad 2s", "3c 3d 3s"].map((f) => nextFantasyland(progressive, board(f), false, 0))).toEqual([14, 15, 16, 17]);
    expect(nextFantasyland({ ...classic, fantasyland_cards: "fourteen" }, board("Qc Qd 2s"), false, 0)).toBe(14);
  });
});
