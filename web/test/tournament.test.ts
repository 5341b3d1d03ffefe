// docs/tournament-vectors.json, from fairness.md §17 and docs/tournaments.md alone.
import { describe, expect, it } from "vitest";
import { hex, unhex } from "../src/bytes";
import * as T from "../src/tournament";
import { list, load } from "./vectors";

const V = load("tournament-vectors.json");

describe("random seating", () => {
  it.each(list(V.random))("$entrants.length entrants at $seats_per_table", async (v) => {
    const seed = unhex(v.seed);
    expect(hex(await T.seatingCommitment(v.tournament_id, v.round, seed))).toBe(v.commitment);
    const key = await T.seatingKey(v.tournament_id, v.round, seed);
    expect(hex(key)).toBe(v.key);
    const order = await T.drawOrder(v.entrants, key);
    expect(order).toEqual(v.draw_order);
    const sizes = T.tableSizes(v.entrants.length, v.seats_per_table);
    expect(sizes).toEqual(v.table_sizes);
    expect(T.seat(order, sizes)).toEqual(v.tables);
  });
});

describe("seating by standings", () => {
  it.each(list(V.standings))("round $round", async (v) => {
    const key = await T.seatingKey(v.tournament_id, v.round, unhex(v.seed));
    const order = await T.drawOrder(Object.keys(v.totals), key);
    expect(order).toEqual(v.draw_order);
    const ranked = T.byStandings(order, v.totals);
    expect(T.seat(ranked, T.tableSizes(order.length, v.seats_per_table))).toEqual(v.tables);
  });
  it("tournaments.md's sizes", () => {
    expect([[12, 4], [10, 4], [5, 4], [3, 2]].map(([n, k]) => T.tableSizes(n!, k!))).toEqual([[4, 4, 4], [4, 3, 3], [3, 2], [3]]);
  });
});
