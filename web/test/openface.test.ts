// docs/fairness-vectors.json open_face_deals, from fairness.md §22 and rules.md §8 alone.
import { describe, expect, it } from "vitest";
import { hex, unhex } from "../src/bytes";
import { formatCards, parseCards, sortedCards } from "../src/cards";
import * as F from "../src/fairness";
import * as O from "../src/openface";
import { list, load } from "./vectors";

const V = load("fairness-vectors.json");
const ROWS = ["front", "middle", "back"] as const;

describe("open-face deals (§22, Pineapple §23)", () => {
  it.each(list(V.open_face_deals).map((v, i) => [i, v] as const))("open-face vector %i", async (_, v) => {
    const { input: i, expected: e } = v;
    const id = { tableId: i.table_id, dealNumber: i.deal_number };
    const seed = unhex(i.seed);
    expect(hex(await F.seedCommitment(id, seed))).toBe(e.seed_commitment);
    const contributions = i.contributions.map((c: string | null) => (c === null ? null : unhex(c)));
    const cutDeck = F.cut(await F.shuffle(await F.shuffleKey(id, seed, contributions)), i.cut_position);
    expect(formatCards(cutDeck)).toBe(e.cut_deck);
    const sched = O.schedule(i.rule_set, i.fantasyland);
    expect(sched).toEqual(e.schedule);
    const streets = O.dealStreets(cutDeck, sched, i.dealer);
    expect(streets.map((st) => st.map(formatCards))).toEqual(e.streets);
    const rk = await F.recordKey(id, seed);
    expect(hex(rk)).toBe(e.record_key);
    const digests = await Promise.all(
      streets.map((st, t) => Promise.all(st.map(async (cards, s) => (cards.length ? hex(await O.streetDigest(rk, t, s, cards)) : "")))),
    );
    expect(digests).toEqual(e.street_digests);

    // Placements: the seat on turn places exactly its street's cards into rows with room.
    const boards = i.fantasyland.map(() => ({ front: [] as number[], middle: [] as number[], back: [] as number[] }));
    const expectedTurns = sched.flatMap((_: unknown, t: number) => O.placingOrder(sched, t, i.dealer, i.fantasyland).map((s) => [s, t]));
    expect(e.placements.map((p: any) => [p.seat, p.street])).toEqual(expectedTurns);
    const discards = (e.discards ?? []) as any[];
    for (const p of e.placements) {
      const placed = ROWS.flatMap((r) => parseCards(p[r]));
      const discarded = discards.filter((x) => x.seat === p.seat && x.street === p.street).flatMap((x) => parseCards(x.cards));
      expect(sortedCards([...placed, ...discarded])).toEqual(sortedCards(streets[p.street]![p.seat]!));
      for (const r of ROWS) boards[p.seat]![r].push(...parseCards(p[r]));
    }
    // Pineapple discards (§23): dealt cards of their street left off the board, committed under scheme 3.
    for (const x of discards) {
      const c = await O.discardCommitment(id, x.seat, x.player_id, x.street, parseCards(x.cards), unhex(x.nonce));
      expect(hex(c)).toBe(x.commitment);
      expect(parseCards(x.cards).every((card) => streets[x.street]![x.seat]!.includes(card))).toBe(true);
    }
    // Fantasyland hands: scheme-2 commitments of their rows (§12.1), holding the seat's cards.
    for (const f of e.fantasyland) {
      const rows = { front: parseCards(f.front), middle: parseCards(f.middle), back: parseCards(f.back) };
      expect(hex(F.rowsEncoding(rows))).toBe(f.rows_encoding);
      expect(hex(await F.arrangementCommitment(id, f.seat, rows, unhex(f.nonce), 2, f.player_id))).toBe(f.commitment);
      const held = [...rows.front, ...rows.middle, ...rows.back];
      expect(held.length).toBe(13);
      expect(held.every((c) => streets[0]![f.seat]!.includes(c))).toBe(true); // beyond 13: the dealt cards not in its rows
      boards[f.seat] = rows;
    }
    expect(boards.map((b: any) => Object.fromEntries(ROWS.map((r) => [r, formatCards(sortedCards(b[r]))])))).toEqual(e.rows);

    const dead = boards.map((b: any) => O.isDead(b));
    const score = O.scoreOpenFace(boards, dead, i.rule_set);
    expect(dead.map((d: boolean, s: number) => ({ dead: d, royalties: score.royalties[s] }))).toEqual(e.hands);
    expect(score.pairs).toEqual(e.pairs);
    expect(score.totals).toEqual(e.totals);
  });
});
