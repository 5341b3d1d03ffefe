// docs/rules-examples.json's open_face_moves through the page's own rules (src/openfaceMoves.ts,
// src/openface.ts): the moves made for a seat (rules.md §8.6, §8.7, §8.12), a timed-out Fantasyland
// hand's rows (§8.5, §8.7), 2-7's deuce-to-seven middle; the same vectors
// tests/unit/open_face/test_open_face_moves_examples.py holds sapsam to.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { formatCards, parseCards } from "../src/cards";
import { type OfcRuleSet, scoreOpenFace } from "../src/openface";
import { type Board, automaticMove, deuceToSevenKey, fantasylandTimeoutRows, inOrder, legalPlacements, timeoutMove } from "../src/openfaceMoves";
import { list, load } from "./vectors";

const V = load("rules-examples.json").open_face_moves;
// The presets' rule sets as sapsam recorded them in the sample sets' TableCreated.
const recorded = (file: string): OfcRuleSet =>
  JSON.parse(readFileSync(fileURLToPath(new URL(`data/open_face/${file}`, import.meta.url)), "utf8").split("\n")[1]!).data.rule_set;
const PRESETS: Record<string, OfcRuleSet> = {
  ofc_classic: recorded("ofc_classic.jsonl"), ofc_russian: recorded("timeout_003.jsonl"),
  pineapple: recorded("pineapple.jsonl"), pineapple_2_7: recorded("pineapple_2_7.jsonl"),
};
const rulesOf = (e: Record<string, string>): OfcRuleSet => ({ ...PRESETS[e.preset!]!, ...(e.timeout_policy ? { timeout_policy: e.timeout_policy } : {}) });
const board = (b: Record<string, string>): Board => ({ front: parseCards(b.front!), middle: parseCards(b.middle!), back: parseCards(b.back!) });
const written = (b: Board) => ({ front: formatCards(b.front), middle: formatCards(b.middle), back: formatCards(b.back) });
const pool = (b: Board, dealt: number[]) => Array.from({ length: 52 }, (_, c) => c).filter((c) => !dealt.includes(c) && ![...b.front, ...b.middle, ...b.back].includes(c));

describe("open_face_moves: a move made for a seat", () => {
  it.each(list(V.moves).map((v) => [v.id, v] as const))("%s", (_, v) => {
    const rules = rulesOf(v);
    const rows = board(v.board);
    const dealt = parseCards(v.dealt);
    const move = v.move === "timeout" ? timeoutMove(rules, rows, dealt, pool(rows, dealt)) : automaticMove(rules, rows, dealt, pool(rows, dealt), v.declared_dead === true);
    expect(move === null ? null : { reason: move.reason, placement: written(move.placement), discards: formatCards(move.thrown) }).toEqual(v.expected);
  });
  it("232 placements of five cards on an empty board, the fill from the back first", () => {
    const all = legalPlacements({ front: [], middle: [], back: [] }, parseCards("Qd Kh 4d 3d Ah"));
    expect(all.length).toBe(232);
    expect(written(all[0]!)).toEqual({ front: "", middle: "", back: "Qd Kh 4d 3d Ah" });
  });
});

describe("open_face_moves: a timed-out Fantasyland hand", () => {
  it.each(list(V.fantasyland_timeouts).map((v) => [v.id, v] as const))("%s", (_, v) => {
    const rules = rulesOf(v);
    const dealt = parseCards(v.dealt);
    const rows = fantasylandTimeoutRows(rules, dealt);
    const placed = [...rows.front, ...rows.middle, ...rows.back];
    const dead = !inOrder(rules, rows) || (rules.timeout_policy ?? "dead_for_set") === "dead_for_set";
    expect({ ...written(rows), discards: formatCards(dealt.filter((c) => !placed.includes(c))), dead }).toEqual(v.expected);
  });
});

describe("open_face_moves: 2-7's middle", () => {
  it.each(list(V.deuce_to_seven).map((v) => [v.cards, v] as const))("%s", (_, v) => {
    expect(deuceToSevenKey(parseCards(v.cards))).toEqual(v.key);
  });
  it("a 2-7 deal: the lower middle wins, a lowball middle earns nothing", () => {
    const d = V.deuce_to_seven_deal;
    const boards = d.seats.map(board);
    const fouls = boards.map((b: Board) => !inOrder(PRESETS[d.preset]!, b));
    const score = scoreOpenFace(boards, fouls, PRESETS[d.preset]!);
    expect({ fouls, pairs: score.pairs.map((p) => ({ seat_a: p.seat_a, seat_b: p.seat_b, rows: p.rows, delta: p.delta })), totals: score.totals })
      .toEqual({ fouls: d.fouls, pairs: d.pairs, totals: d.totals });
  });
});

describe("600 random boards and streets (test/data/make_open_face_moves.py): the page's moves are sapsam's", () => {
  const cases: { preset: string; board: Record<string, string>; dealt: string; automatic: { reason: string; placement: Record<string, string> } | null; timeout: Record<string, string> }[] =
    JSON.parse(readFileSync(fileURLToPath(new URL("data/open_face_moves.json", import.meta.url)), "utf8"));
  it.each(["ofc_classic", "ofc_russian", "pineapple", "pineapple_2_7"])("%s", (preset) => {
    const mine = cases.filter((c) => c.preset === preset);
    expect(mine.length).toBeGreaterThan(100);
    for (const [k, c] of mine.entries()) {
      const rules = PRESETS[preset]!;
      const rows = board(c.board);
      const dealt = parseCards(c.dealt);
      const made = automaticMove(rules, rows, dealt, pool(rows, dealt), false);
      expect(made === null ? null : { reason: made.reason, placement: written(made.placement) }, `${preset} case ${k}`).toEqual(c.automatic);
      expect(written(timeoutMove(rules, rows, dealt, pool(rows, dealt)).placement), `${preset} case ${k} timeout`).toEqual(c.timeout);
    }
  });
});
