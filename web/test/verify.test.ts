// docs/fairness.md §13 on every published_deals vector, and single alterations that fail exactly
// the check §13's table names.
import { describe, expect, it } from "vitest";
import { type PublishedDeal, verdict, verifyDeal } from "../src/verify";
import { load } from "./vectors";

const deals: PublishedDeal[] = load("fairness-vectors.json").published_deals;

describe("published deals verify", () => {
  it.each(deals.map((d, i) => [i, d] as const))("published deal %i", async (_, deal) => {
    const checks = await verifyDeal(deal);
    expect(checks.filter((c) => c.status !== "passed")).toEqual([]);
    expect(verdict(checks, false).verdict).toBe("INTERNALLY CONSISTENT ONLY");
    expect(verdict(checks, true).verdict).toBe("ANCHORED");
  });
});

const flip = (h: string) => (h[0] === "0" ? "1" : "0") + h.slice(1);

// Each alteration of one published value, and the one check §13 says it fails.
const alterations: [string, (d: PublishedDeal) => void, string][] = [
  ["the seed", (d) => { d.seed = flip(d.seed); }, "seed_commitment"],
  ["the seed commitment", (d) => { d.seed_commitment = flip(d.seed_commitment); }, "seed_commitment"],
  ["a contribution", (d) => { d.contributions[0] = "aa"; }, "contributions"],
  ["the deck digest", (d) => { d.record.deck = flip(d.record.deck); }, "contributions"],
  ["the cut position", (d) => { d.cut_position = d.cut_position === 1 ? 2 : d.cut_position - 1; }, "cut"],
  ["a cut of 0", (d) => { d.cut_position = 0; }, "cut"],
  ["the dealer", (d) => { d.dealer = (d.dealer + 1) % d.seat_count; }, "dealer"],
  ["a hand digest", (d) => { d.record.hands[1] = flip(d.record.hands[1]!); }, "dealer"],
  ["a nonce", (d) => { d.reveals[0]!.nonce = flip(d.reveals[0]!.nonce); }, "reveal_commitment[0]"],
  ["a commitment", (d) => { d.seat_commitments[0] = flip(d.seat_commitments[0]!); }, "reveal_commitment[0]"],
  ["a recorded foul", (d) => { d.recorded.fouls[0] = !d.recorded.fouls[0]; }, "fouls"],
  ["a total", (d) => { d.recorded.totals[0]! += 1; }, "scores"],
  ["a pair's delta", (d) => { d.recorded.pairs[0]!.delta += 1; }, "scores"],
];

describe("an altered published value fails exactly its check", () => {
  it.each(alterations)("%s -> %s", async (_, alter, name) => {
    const deal = structuredClone(deals[0]!);
    alter(deal);
    const checks = await verifyDeal(deal);
    expect(checks.filter((c) => c.status === "failed").map((c) => c.name)).toEqual([name]);
    const v = verdict(checks, true);
    expect(v.verdict).toBe("FAILED");
    expect(v.lines[0]).toMatch(new RegExp(`^${name.replace(/[[\]]/g, "\\$&")} does not hold: `));
  });

  it("scheme 2: a swapped player fails that seat's reveal_commitment", async () => {
    const deal = structuredClone(deals.find((d) => d.commitment_schemes !== undefined)!);
    [deal.players![0], deal.players![1]] = [deal.players![1]!, deal.players![0]!];
    const failed = (await verifyDeal(deal)).filter((c) => c.status === "failed").map((c) => c.name);
    expect(failed).toEqual(["reveal_commitment[0]", "reveal_commitment[1]"]);
  });

  it("solver: an illegal recorded arrangement fails solver_arrangement", async () => {
    const deal = structuredClone(deals.find((d) => d.solver_arrangements !== undefined)!);
    const s = deal.solver_seats.indexOf(true);
    const a = deal.solver_arrangements![s]!;
    [a.front, a.back] = [a.back, a.front];
    const failed = (await verifyDeal(deal)).filter((c) => c.status === "failed").map((c) => c.name);
    expect(failed).toEqual([`solver_arrangement[${s}]`]);
  });
});

describe("natural declarations (fairness.md §21)", async () => {
  const { declarationCommitment } = await import("../src/fairness");
  const { hex } = await import("../src/bytes");
  async function withDeclarations(natural = "none"): Promise<PublishedDeal> {
    const deal = structuredClone(deals[0]!);
    deal.rule_set = { ...deal.rule_set, rules_version: 7, naturals: "classic" };
    deal.players = ["0d5a7b1e-4c3f-4a2b-9e8d-7c6b5a493827", "f1e2d3c4-b5a6-4978-8695-a4b3c2d1e0f9"];
    const nonce = "00".repeat(16);
    const id = { tableId: deal.table_id, dealNumber: deal.deal_number };
    deal.natural_declarations = await Promise.all(
      deal.players.map(async (p, s) => ({
        commitment: hex(await declarationCommitment(id, s, p, s === 0 ? natural : "none", new Uint8Array(16))),
        natural: s === 0 ? natural : "none",
        nonce,
      })),
    );
    return deal;
  }
  const failed = async (d: PublishedDeal) => (await verifyDeal(d)).filter((c) => c.status === "failed").map((c) => c.name);

  it("every seat declaring none verifies", async () => {
    expect(await failed(await withDeclarations())).toEqual([]);
  });
  it("an altered nonce, or swapped players, fail declaration[s]", async () => {
    const deal = await withDeclarations();
    deal.natural_declarations![1]!.nonce = "01".repeat(16);
    expect(await failed(deal)).toEqual(["declaration[1]"]);
    const swapped = await withDeclarations();
    swapped.players!.reverse();
    expect(await failed(swapped)).toEqual(["declaration[0]", "declaration[1]"]);
  });
  it("a false natural is a foul: the recorded fouls and scores no longer hold", async () => {
    expect(await failed(await withDeclarations("dragon"))).toEqual(["fouls"]);
  });
  it("a declaration at a table without naturals fails", async () => {
    const deal = await withDeclarations();
    deal.rule_set = deals[0]!.rule_set;
    expect(await failed(deal)).toEqual(["declaration[0]", "declaration[1]"]);
  });
});
