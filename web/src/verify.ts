// Verifying a published deal (docs/fairness.md §13-§14): every check in order, each passed, failed
// or skipped (an input failed), with what was published (expected) and what recomputation found.
import { type Bytes, hex, unhex } from "./bytes";
import { parseCards } from "./cards";
import * as F from "./fairness";
import { ALL_NATURALS, naturalsPlayed } from "./naturals";
import { type Natural, type RuleSet, type Scored, foulReason, realNatural, scoreDeal } from "./rules";

interface RowsJson {
  front: string;
  middle: string;
  back: string;
}
interface RevealJson extends RowsJson {
  nonce: string;
}

/** The published deal of docs/fairness.md §14. */
export interface PublishedDeal {
  format: number;
  table_id: string;
  deal_number: number;
  rule_set: RuleSet;
  seat_count: number;
  dealer: number;
  seed_commitment: string;
  seed: string;
  contributions: (string | null)[];
  cut_position: number;
  record: { deck: string; cut_deck: string; hands: string[] };
  seat_commitments: (string | null)[];
  reveals: (RevealJson | null)[];
  solver_seats: boolean[];
  solver_arrangements?: (RowsJson | null)[];
  commitment_schemes?: number[];
  players?: string[];
  surrendered?: boolean[];
  natural_declarations?: ({ commitment: string; natural: string | null; nonce: string | null } | null)[];
  recorded: { fouls: boolean[]; pairs: { seats: number[]; rows: number[]; delta: number }[]; totals: number[] };
}

export type Status = "passed" | "failed" | "skipped";

export interface Check {
  name: string;
  status: Status;
  /** What the check confirms, in words (docs/fairness.md §13's table). */
  what: string;
  expected?: string;
  found?: string;
  detail?: string;
}

const WHAT: Record<string, string> = {
  seed_commitment: "the seed revealed is the seed committed to before anyone acted",
  contributions: "the deck came from the committed seed and the players' own entropy",
  cut: "the cut was made where the cutter chose",
  dealer: "each seat was dealt its cards from the dealer's left",
  reveal_commitment: "the rows revealed are the rows committed before the seed was revealed",
  solver_arrangement: "the hand set on the seat's behalf is a legal arrangement of its own cards",
  declaration: "the natural declared is the one committed",
  fouls: "the fouls recorded are the fouls of the revealed rows",
  scores: "the scores follow from the rows under the table's rules",
};

export const describe = (name: string): string => WHAT[name.replace(/\[\d+\]$/, "")] ?? name;

const rows = (r: RowsJson): F.Rows => ({
  front: parseCards(r.front),
  middle: parseCards(r.middle),
  back: parseCards(r.back),
});

/** Runs every check of §13 in order; never throws on bad data (a malformed value fails its check). */
export async function verifyDeal(deal: PublishedDeal): Promise<Check[]> {
  const checks: Check[] = [];
  const passed = (...names: string[]) =>
    names.every((n) => checks.find((c) => c.name === n)?.status === "passed");
  async function run(name: string, needs: string[], body: () => Promise<[string, string] | string | void>) {
    const check: Check = { name, status: "passed", what: describe(name) };
    checks.push(check);
    if (!passed(...needs)) {
      check.status = "skipped";
      check.detail = `needs ${needs.filter((n) => !passed(n)).join(", ")}`;
      return;
    }
    try {
      const out = await body();
      if (Array.isArray(out)) [check.status, check.expected, check.found] = ["failed", out[0], out[1]];
      else if (typeof out === "string") [check.status, check.detail] = ["failed", out];
    } catch (e) {
      check.status = "failed";
      check.detail = e instanceof Error ? e.message : String(e);
    }
  }
  const compare = (expected: string, found: string): [string, string] | void =>
    expected === found ? undefined : [expected, found];

  const id: F.DealId = { tableId: deal.table_id, dealNumber: deal.deal_number };
  const n = deal.seat_count;
  const seats = Array.from({ length: n }, (_, s) => s);
  let key: Bytes = new Uint8Array();
  let deck: number[] = [];
  let cutDeck: number[] = [];
  let hands: number[][] = [];

  await run("seed_commitment", [], async () =>
    compare(deal.seed_commitment, hex(await F.seedCommitment(id, unhex(deal.seed)))),
  );
  await run("contributions", ["seed_commitment"], async () => {
    if (deal.contributions.length !== n) return `${deal.contributions.length} contributions for ${n} seats`;
    const contributions = deal.contributions.map((c) => (c === null ? null : unhex(c)));
    const seed = unhex(deal.seed);
    deck = await F.shuffle(await F.shuffleKey(id, seed, contributions));
    key = await F.recordKey(id, seed);
    return compare(deal.record.deck, hex(await F.deckDigest(key, deck)));
  });
  await run("cut", ["contributions"], async () => {
    cutDeck = F.cut(deck, deal.cut_position);
    return compare(deal.record.cut_deck, hex(await F.cutDigest(key, cutDeck)));
  });
  await run("dealer", ["cut"], async () => {
    hands = F.deal(cutDeck, deal.dealer, n);
    const digests = await Promise.all(hands.map((h, s) => F.handDigest(key, s, h)));
    return compare(deal.record.hands.join(" "), digests.map(hex).join(" "));
  });

  const scored: Scored[] = seats.map(() => null);
  for (const s of seats) {
    await run(`reveal_commitment[${s}]`, [], async () => {
      const reveal = deal.reveals[s] ?? null;
      if (reveal === null) return; // nothing to check: a seat that never revealed
      if (deal.solver_seats[s]) return "a reveal from a seat whose hand the solver set";
      const commitment = deal.seat_commitments[s] ?? null;
      if (commitment === null) return "a reveal without a commitment";
      const scheme = deal.commitment_schemes?.[s] ?? 1;
      if (scheme !== 1 && scheme !== 2) return `unknown commitment scheme ${scheme}`;
      const found = await F.arrangementCommitment(id, s, rows(reveal), unhex(reveal.nonce), scheme, deal.players?.[s]);
      return compare(commitment, hex(found));
    });
  }
  const solverChecked: string[] = [];
  for (const s of seats) {
    const recorded = deal.solver_arrangements?.[s] ?? null;
    if (!deal.solver_seats[s] && recorded === null) continue;
    const name = `solver_arrangement[${s}]`;
    solverChecked.push(name);
    await run(name, ["dealer"], async () => {
      if (deal.solver_arrangements === undefined)
        return "a deal of the earlier scheme (no recorded arrangement): needs sapsam's solver, not checkable here";
      if (!deal.solver_seats[s]) return "an arrangement recorded for a seat the solver did not set";
      if (recorded === null) return "a seat marked as set by the solver has no recorded arrangement";
      const reason = foulReason(rows(recorded), hands[s]!, deal.rule_set);
      if (reason !== null) return `the recorded arrangement is not legal: ${reason}`;
    });
  }
  const declared = seats.map(() => "none");
  if (deal.natural_declarations !== undefined)
    for (const s of seats)
      await run(`declaration[${s}]`, [], async () => {
        const d = deal.natural_declarations![s] ?? null;
        const revealed = (deal.reveals[s] ?? null) !== null;
        if (d === null) return revealed ? "a revealing seat with no declaration" : undefined;
        if (naturalsPlayed(deal.rule_set).length === 0) return "a declaration at a table without naturals";
        if (d.natural === null || d.nonce === null) return revealed ? "a revealing seat whose declaration was never opened" : undefined;
        if (d.natural !== "none" && !ALL_NATURALS.includes(d.natural)) return `an unknown natural "${d.natural}"`;
        const player = deal.players?.[s];
        if (player === undefined) return "no player id for the seat";
        const found = await F.declarationCommitment(id, s, player, d.natural, unhex(d.nonce));
        declared[s] = d.natural;
        return compare(d.commitment, hex(found));
      });

  const foulNeeds = ["dealer", ...seats.map((s) => `reveal_commitment[${s}]`), ...solverChecked];
  if (deal.natural_declarations !== undefined) foulNeeds.push(...seats.map((s) => `declaration[${s}]`));
  const naturals: (Natural | null)[] = seats.map(() => null);
  await run("fouls", foulNeeds, async () => {
    const fouls = seats.map((s) => {
      const arrangement = deal.solver_seats[s] ? deal.solver_arrangements?.[s] : deal.reveals[s];
      if (!arrangement) return true; // never revealed
      const r = rows(arrangement);
      if (foulReason(r, hands[s]!, deal.rule_set, declared[s]) !== null) return true;
      scored[s] = r;
      if (declared[s] !== "none" && realNatural(declared[s]!, hands[s]!, deal.rule_set))
        naturals[s] = { name: declared[s]!, cards: hands[s]! };
      return false;
    });
    return compare(JSON.stringify(deal.recorded.fouls), JSON.stringify(fouls));
  });
  await run("scores", ["fouls"], async () => {
    const { pairs, totals } = scoreDeal(scored, deal.rule_set, deal.surrendered ?? [], naturals);
    const { pairs: recordedPairs, totals: recordedTotals } = deal.recorded;
    const norm = (p: { seats: number[]; rows: number[]; delta: number }[]) =>
      JSON.stringify(p.map(({ seats, rows, delta }) => ({ seats, rows, delta })));
    return (
      compare(norm(recordedPairs), norm(pairs)) ?? compare(JSON.stringify(recordedTotals), JSON.stringify(totals))
    );
  });
  return checks;
}

export type Verdict = "ANCHORED" | "INTERNALLY CONSISTENT ONLY" | "FAILED";

/**
 * docs/audit.md's three verdict levels. `anchored` says every event is in a checkpoint signed by a
 * pinned key; this verifier does not check checkpoints yet, so callers pass false.
 */
export function verdict(checks: readonly Check[], anchored: boolean): { verdict: Verdict; lines: string[] } {
  const failed = checks.filter((c) => c.status === "failed");
  if (failed.length > 0)
    return {
      verdict: "FAILED",
      lines: failed.map(
        (c) =>
          `${c.name} does not hold: ${c.what}` +
          (c.detail !== undefined ? ` (${c.detail})` : "") +
          (c.expected !== undefined ? ` — expected ${c.expected}, found ${c.found}` : ""),
      ),
    };
  return { verdict: anchored ? "ANCHORED" : "INTERNALLY CONSISTENT ONLY", lines: [] };
}
