// The replay's steps (src/replay/steps.ts) from sample exports sapsam made: every card dealt one at
// a time and ending in the hands the rows were made of; open face's streets, placements and
// Pineapple's discards ending in the scored boards.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseCards } from "../src/cards";
import { replayExport } from "../src/replay/steps";

const data = (name: string) => readFileSync(new URL(`./data/${name}`, import.meta.url), "utf8");
const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);

describe("replay", () => {
  it("replays a closed deal card by card, ending in the revealed rows and the recorded scores", async () => {
    const [deal] = await replayExport(data("deal2.jsonl"));
    expect(deal!.dealNumber).toBe(2);
    expect(deal!.outcome).toBe("scored");
    expect(deal!.warnings).toEqual([]);
    const kinds = deal!.steps.map((s) => s.kind);
    expect(kinds.slice(0, 5)).toEqual(["TableCreated", "PlayerSeated", "PlayerSeated", "PlayerSeated", "DealerChosen"]);
    expect(kinds.filter((k) => k === "card")).toHaveLength(39);
    const cards = deal!.steps.filter((s) => s.kind === "card");
    expect(cards[0]!.focus).toBe(1); // the dealer is seat 0: the first card goes to its left
    expect(cards[0]!.seats[1]!.dealt).toHaveLength(1);
    const last = deal!.steps.at(-1)!;
    expect(last.kind).toBe("DealScored");
    for (const seat of last.seats) {
      const rows = seat.rows!;
      expect(sorted([...rows.front, ...rows.middle, ...rows.back])).toEqual(sorted(seat.dealt));
      expect(seat.names).toHaveLength(3);
    }
    const scoredLine = JSON.parse(data("deal2.jsonl").trim().split("\n").at(-1)!).data;
    expect(last.seats.map((s) => s.delta)).toEqual(scoredLine.totals);
    expect(last.pairs!.map((p) => p.rows)).toEqual(scoredLine.pairs.map((p: { rows: number[] }) => p.rows));
  });

  it("replays every deal of a series export: a voided deal, a surrender, naturals' declarations", async () => {
    const deals = await replayExport(data("series.jsonl"));
    expect(deals.map((d) => [d.dealNumber, d.outcome])).toEqual([[1, "scored"], [2, "voided"], [3, "scored"], [4, "scored"]]);
    for (const d of deals) expect(d.warnings).toEqual([]);
    const voided = deals[1]!.steps.at(-1)!;
    expect(voided.title).toBe("Deal 2 voided");
    expect(voided.seats.every((s) => s.dealt.length === 13)).toBe(true); // the published seed shows the cards
    const surrender = deals[2]!.steps.find((s) => s.kind === "SurrenderAnnounced" && s.title.includes("surrenders"))!;
    expect(surrender.seats[surrender.focus!]!.marks).toContain("surrendered");
    const naturals = await replayExport(data("naturals.jsonl"));
    expect(naturals[0]!.steps.filter((s) => s.kind === "NaturalRevealed").map((s) => s.title)).toEqual(
      [0, 1, 2].map((seat) => `Seat ${seat}'s declaration opened: none`));
  });

  it("replays Pineapple street by street, discards hidden until revealed", async () => {
    const [deal] = await replayExport(data("open_face/pineapple.jsonl"));
    expect(deal!.family).toBe("open_face");
    const streets = deal!.steps.filter((s) => s.kind === "StreetDealt");
    expect(streets).toHaveLength(5);
    const beforeReveal = deal!.steps.filter((s) => s.kind === "DiscardCommitted").at(-1)!;
    expect(beforeReveal.seats.every((s) => s.discards.length === 0)).toBe(true);
    expect(Math.max(...beforeReveal.seats.map((s) => s.hiddenDiscards))).toBeGreaterThan(0);
    const last = deal!.steps.find((s) => s.kind === "DealScored")!;
    const scored = readLine("open_face/pineapple.jsonl", "DealScored");
    for (const seat of last.seats) {
      expect(seat.discards).toHaveLength(4);
      expect(seat.hiddenDiscards).toBe(0);
      expect(seat.inHand).toEqual([]);
      const [f, m, b] = (scored.arrangements[seat.seat] as string).split("|").map(parseCards);
      expect(sorted(seat.rows!.front)).toEqual(sorted(f!));
      expect(sorted(seat.rows!.middle)).toEqual(sorted(m!));
      expect(sorted(seat.rows!.back)).toEqual(sorted(b!));
      // every card dealt is placed or discarded: 5 + 4 streets of 3
      expect(sorted(seat.dealt)).toEqual(sorted([...f!, ...m!, ...b!, ...seat.discards]));
    }
  });

  it("2-7 Pineapple: a hand is dead and earns royalties as its deal recorded (a low middle is no dead hand, earns nothing)", async () => {
    const deals = await replayExport(data("open_face/pineapple_2_7.jsonl"));
    const text = data("open_face/pineapple_2_7.jsonl").trim().split("\n").map((l) => JSON.parse(l));
    let live = 0;
    for (const deal of deals) {
      const last = deal.steps.find((s) => s.kind === "DealScored")!;
      const fouls = text.find((e) => e.type === "DealScored" && e.data.deal_number === deal.dealNumber).data.fouls as boolean[];
      for (const seat of last.seats) {
        expect(seat.marks.includes("dead hand"), `deal ${deal.dealNumber} seat ${seat.seat}`).toBe(fouls[seat.seat]);
        if (!fouls[seat.seat]) { live++; expect(seat.royalties![1]).toBe(0); }
      }
    }
    expect(live).toBeGreaterThan(0);
  });

  it("shows a Fantasyland seat's rows at once", async () => {
    const deals = await replayExport(data("open_face/fantasyland.jsonl"));
    const fl = deals.find((d) => d.steps.some((s) => s.kind === "FantasylandRevealed"))!;
    const revealed = fl.steps.find((s) => s.kind === "FantasylandRevealed")!;
    const seat = revealed.seats[revealed.focus!]!;
    expect(seat.marks).toContain("Fantasyland");
    expect(seat.rows!.front.length + seat.rows!.middle.length + seat.rows!.back.length).toBe(13);
    expect(seat.dealt.length).toBeGreaterThanOrEqual(13);
  });
});

function readLine(file: string, type: string) {
  return data(file).trim().split("\n").map((l) => JSON.parse(l)).find((e) => e.type === type).data;
}
