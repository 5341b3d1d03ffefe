// The open-face moves the table page signs and sends (src/api/openFaceMoves.ts), against a fake
// API: each placement's signature verifies over the `place` message with its discard commitment;
// the discards opened at the end hash to the commitments sent and their signature verifies; a
// Fantasyland hand's commitment opens with the rows and nonce kept (and a second commit sends the
// kept setting unchanged); what is opened is forgotten.
import { beforeEach, describe, expect, it } from "vitest";
import { OpenFaceMoves, loadDiscards, loadSetting } from "../src/api/openFaceMoves";
import { type Identity, newKeyPair } from "../src/api/session";
import type { Api } from "../src/api/transport";
import { type Bytes, hex } from "../src/bytes";
import { parseCard, parseCards } from "../src/cards";
import { ed25519Verify } from "../src/crypto";
import * as F from "../src/fairness";
import { discardCommitment } from "../src/openface";

const TABLE = "0b6f3c0e-8a0e-4c57-9a43-6f1f0d6c2a11";
const SEAT = `tables/${TABLE}/seats/1`;
const rows = (f: string, m: string, b: string) => ({ front: parseCards(f), middle: parseCards(m), back: parseCards(b) });

class Memory {
  private m = new Map<string, string>();
  getItem = (k: string) => this.m.get(k) ?? null;
  setItem = (k: string, v: string) => void this.m.set(k, v);
  removeItem = (k: string) => void this.m.delete(k);
}

async function setUp() {
  const [secret, pub] = await newKeyPair();
  const identity: Identity = { player: "players/p-1", displayName: "P", token: "t", secretKey: hex(secret), publicKey: hex(pub), keyRegistered: true };
  const sent: Record<string, any>[] = [];
  const record = (name: string) => async (request: Record<string, unknown>) => (sent.push({ name, ...request }), {});
  const api = { tables: { placeCards: record("place"), revealDiscards: record("discards"), commitFantasyland: record("commit"), revealFantasyland: record("reveal") } } as unknown as Api;
  return { moves: new OpenFaceMoves(api, identity, SEAT), sent, pub };
}

describe("api/openFaceMoves", () => {
  beforeEach(() => {
    (globalThis as { localStorage?: unknown }).localStorage = new Memory();
  });
  it("signs each placement, commits each discard and opens them all at the end", async () => {
    const { moves, sent, pub } = await setUp();
    const d = { tableId: TABLE, dealNumber: 3 };
    await moves.place(3, 0, rows("As", "Kd Kc", "2h 3h"));
    await moves.place(3, 1, rows("", "Qs", "4h"), parseCards("9c"));
    await moves.place(3, 2, rows("Ah", "", "5h"), parseCards("Td"));
    expect(sent.map((s) => s.name)).toEqual(["place", "place", "place"]);
    expect(sent[0]!.discardCommitment).toHaveLength(0);
    for (const [i, s] of sent.entries()) {
      const placed = rows(s.placement.front.join(" "), s.placement.middle.join(" "), s.placement.back.join(" "));
      const message = F.placeMessage(d, 1, "p-1", i, placed, s.discardCommitment);
      expect(await ed25519Verify(pub, s.signature.signature, message)).toBe(true);
    }
    expect(loadDiscards(SEAT, 3).map((k) => k.cards)).toEqual([["9c"], ["Td"]]);
    expect(await moves.revealDiscards(3)).toBe(true);
    const opened = sent[3]!;
    expect(opened.discards.map((o: { cards: string[] }) => o.cards)).toEqual([["9c"], ["Td"]]);
    for (const [k, o] of (opened.discards as { cards: string[]; nonce: Bytes }[]).entries()) {
      expect(o.nonce).toHaveLength(16);
      expect(await discardCommitment(d, 1, "p-1", k + 1, o.cards.map(parseCard), o.nonce)).toEqual(sent[k + 1]!.discardCommitment);
    }
    const openings = (opened.discards as { cards: string[]; nonce: Bytes }[]).map((o, k) => ({ street: k + 1, cards: o.cards.map(parseCard), nonce: o.nonce }));
    expect(await ed25519Verify(pub, opened.signature.signature, F.discardsRevealMessage(d, 1, "p-1", openings))).toBe(true);
    expect(loadDiscards(SEAT, 3)).toEqual([]);
    expect(await moves.revealDiscards(3)).toBe(false);
  });
  it("commits a Fantasyland hand and opens it with the rows and nonce kept", async () => {
    const { moves, sent, pub } = await setUp();
    const d = { tableId: TABLE, dealNumber: 2 };
    const setting = rows("Qs Qd 2c", "7c 7d 7h 9s 3d", "As Ks Qc Jh Td");
    await moves.commitFantasyland(2, setting);
    await moves.commitFantasyland(2, rows("", "", "")); // a retry after a reload: the kept setting, unchanged
    expect(sent[1]!.commitment).toEqual(sent[0]!.commitment);
    expect(await ed25519Verify(pub, sent[0]!.signature.signature, F.fantasylandCommitMessage(d, 1, "p-1", 2, sent[0]!.commitment))).toBe(true);
    expect(loadSetting(SEAT, 2)?.rows.front).toEqual(["Qs", "Qd", "2c"]);
    expect(await moves.revealFantasyland(2)).toBe(true);
    const r = sent[2]!;
    expect(r.arrangement).toEqual({ front: ["Qs", "Qd", "2c"], middle: ["7c", "7d", "7h", "9s", "3d"], back: ["As", "Ks", "Qc", "Jh", "Td"] });
    expect(await F.arrangementCommitment(d, 1, setting, r.nonce, 2, "p-1")).toEqual(sent[0]!.commitment);
    expect(await ed25519Verify(pub, r.signature.signature, F.fantasylandRevealMessage(d, 1, "p-1", setting, r.nonce))).toBe(true);
    expect(loadSetting(SEAT, 2)).toBeNull();
  });
});
