// An open-face deal's play, after its `seed` and `streets` hold (docs/audit.md §4.3.1): the checks
// `placements`, `fantasyland`, `discards` and `scores`, in that order, from docs/audit.md,
// docs/fairness.md §12.1, §22-§23 and docs/rules.md §8.2-§8.5 alone. As `sapsam audit verify`
// re-decides a deal event by event (audit.md §4.3.1), the first event that does not hold fails its
// check, and every check with an event from there on is skipped (`stoppedAt` says where). What the page does not re-decide — the
// placement an automatic move or a timeout makes (rules.md §8.6-§8.7), a Fantasyland hand set
// after a timeout — is said in `notCovered`, which keeps the verdict below ANCHORED.
import type { Json } from "./canonical";
import { hex, unhex } from "./bytes";
import { parseCard, sortedCards } from "./cards";
import * as F from "./fairness";
import { type OfcRuleSet, discardCommitment, isDead, placingOrder, scoreOpenFace } from "./openface";
import type { Check } from "./verify";

type Obj = { [key: string]: Json };
const ROWS = ["front", "middle", "back"] as const;
const SIZE = { front: 3, middle: 5, back: 5 } as const;
export type Board = Record<(typeof ROWS)[number], number[]>;

export interface OpenFacePlay {
  tableId: string;
  rules: OfcRuleSet;
  players: string[];
  dealer: number;
  /** Per seat: the cards it got at once (a Fantasyland), or null. */
  fantasyland: (number | null)[];
  /** streets[t][s]: the cards the seed dealt seat s on street t. */
  streets: number[][][];
  /** The running totals after the previous deal of the export (null: not in the export). */
  previousSeriesTotals: number[] | null;
}

const WHAT = {
  placements: "every placement is the seat on turn, of the cards dealt it on that street, legal on its board",
  fantasyland: "each Fantasyland hand opens its commitment and holds the cards it was dealt",
  discards: "each discard opens its commitment to a card dealt that seat on that street and left off its board",
  scores: "the rows, dead hands, royalties, totals and running totals follow from the boards under the table's rules",
} as const;

const cards = (v: Json | undefined): number[] => (Array.isArray(v) ? v.map((c) => parseCard(String(c))) : []);
const same = (a: readonly number[], b: readonly number[]) => JSON.stringify(sortedCards(a)) === JSON.stringify(sortedCards(b));

export async function openFacePlayChecks(play: OpenFacePlay, events: readonly { version: number; type: string; data: Obj }[]): Promise<{ checks: Check[]; notCovered: string[]; stoppedAt?: { at: number; name: string }; boards?: Board[]; dead?: boolean[] }> {
  const n = play.players.length;
  const id: F.DealId = { tableId: play.tableId, dealNumber: Number(events[0]!.data.deal_number) };
  const discardsPerStreet = (play.rules.street_discards as number | undefined) ?? 0;
  const boards: Board[] = Array.from({ length: n }, () => ({ front: [], middle: [], back: [] }));
  const notCovered = new Set<string>();
  const uncovered = new Map<string, string>(); // a check this page cannot settle: why
  // 2-7 Pineapple's middle and Finnish 2♠ (rules.md §8.12) change dead hands and royalties:
  // Finnish 2♠ is scored (scoreOpenFace), a deuce-to-seven middle not yet.
  const ordinary = (play.rules.middle_row ?? "high") === "high";
  type Failure = { at: number; why: string } | undefined;
  const fail = (e: { version: number; type: string }, why: string): Failure => ({ at: events.indexOf(e as (typeof events)[number]), why: `version ${e.version} (${e.type}): ${why}` });

  const placements = (): Failure => {
    let street = -1;
    let due: number[] = [];
    const sched = play.streets;
    for (const [i, e] of events.entries()) {
      const d = e.data;
      if (e.type === "StreetDealt") {
        if (due.length > 0) return fail(e, `street ${street + 1} dealt before seats ${due.join(", ")} placed`);
        street = Number(d.street);
        due = placingOrder(sched.map((t) => t.map((c) => c.length)), street, play.dealer, play.fantasyland);
        continue;
      }
      if (e.type !== "CardsPlaced") continue;
      const s = Number(d.seat);
      if (Number(d.street) !== street) return fail(e, `a placement for street ${String(d.street)} while street ${street} is played`);
      if (due[0] !== s) return fail(e, `seat ${s} placed out of turn (seat ${String(due[0] ?? "none")} was due)`);
      due.shift();
      const placed = ROWS.flatMap((r) => cards(d[r]));
      const dealt = play.streets[street]![s]!;
      const keep = street > 0 ? dealt.length - discardsPerStreet : dealt.length;
      if (new Set(placed).size !== placed.length || placed.some((c) => !dealt.includes(c)) || placed.length !== keep)
        return fail(e, `seat ${s} placed ${placed.length} cards, not ${keep} of the ${dealt.length} dealt it on street ${street}`);
      for (const r of ROWS) {
        boards[s]![r].push(...cards(d[r]));
        if (boards[s]![r].length > SIZE[r]) return fail(e, `seat ${s}'s ${r} row holds more than ${SIZE[r]} cards`);
      }
      if (d.automatic != null) notCovered.add(`the placements made for a seat (${String(d.automatic)}: rules.md §8.6-§8.7) are checked for their cards, not re-decided`);
      if (street > 0 && discardsPerStreet > 0) {
        const next = events.slice(i + 1).find((x) => x.type !== "DeadlinesExtended");
        if (next?.type !== "DiscardCommitted" || next.data.seat !== s || next.data.street !== street)
          return fail(e, `seat ${s}'s placement on a discarding street is not followed by its discard's commitment`);
      }
    }
    if (due.length > 0) return { at: events.length, why: `street ${street}: seats ${due.join(", ")} never placed` };
    return undefined;
  };

  const fantasyland = async (): Promise<Failure> => {
    for (let s = 0; s < n; s++) {
      if (play.fantasyland[s] === null) continue;
      const commits = events.filter((e) => e.type === "FantasylandCommitted" && e.data.seat === s);
      const reveal = events.find((e) => e.type === "FantasylandRevealed" && e.data.seat === s);
      if (reveal === undefined) return { at: events.length, why: `the Fantasyland seat ${s} never revealed` };
      const d = reveal.data;
      const rows: Board = { front: cards(d.front), middle: cards(d.middle), back: cards(d.back) };
      if (ROWS.some((r) => rows[r].length !== SIZE[r])) return fail(reveal, `seat ${s}'s rows are not of 3, 5 and 5 cards`);
      if (!same([...ROWS.flatMap((r) => rows[r]), ...cards(d.discards)], play.streets[0]![s]!))
        return fail(reveal, `seat ${s}'s rows and discards are not the ${play.fantasyland[s]} cards it was dealt`);
      boards[s] = rows;
      if (d.nonce === "") {
        notCovered.add("a Fantasyland hand set after a timeout (rules.md §8.7) is checked for its cards, not re-decided");
        continue;
      }
      if (commits.length !== 1) return fail(reveal, `the Fantasyland seat ${s} committed ${commits.length} times, not once`);
      const found = await F.arrangementCommitment(id, s, rows, unhex(String(d.nonce)), 2, play.players[s]);
      if (hex(found) !== commits[0]!.data.commitment) return fail(reveal, `seat ${s}'s rows and nonce do not hash to its commitment`);
      if (ordinary && (d.dead === true) !== isDead(rows)) return fail(reveal, `seat ${s}'s hand is recorded ${d.dead ? "dead" : "live"}, its rows say otherwise`);
    }
    return undefined;
  };

  const discards = async (): Promise<Failure> => {
    const committed = events.filter((e) => e.type === "DiscardCommitted");
    const opened = events.filter((e) => e.type === "DiscardsRevealed");
    if (committed.length === 0 && opened.length === 0) return undefined; // no discard committed
    // Each commitment is recorded with its placement, right after it (audit.md §4.3.1).
    for (const c of committed) {
      const before = events.slice(0, events.indexOf(c)).filter((x) => x.type !== "DeadlinesExtended").at(-1);
      if (before?.type !== "CardsPlaced" || before.data.seat !== c.data.seat || before.data.street !== c.data.street)
        return fail(c, `seat ${String(c.data.seat)}'s discard commitment on street ${String(c.data.street)} is not recorded with the placement it belongs to`);
    }
    for (const e of opened) {
      const d = e.data;
      const s = Number(d.seat);
      const streets = (d.streets as number[]) ?? [];
      const all = cards(d.cards);
      const nonces = (d.nonces as string[]) ?? [];
      const mine = committed.filter((c) => c.data.seat === s);
      if (JSON.stringify(mine.map((c) => c.data.street)) !== JSON.stringify(streets)) return fail(e, `seat ${s} opens streets ${streets.join(", ")}, not every street it committed a discard on, in order`);
      for (const [k, t] of streets.entries()) {
        const card = all.slice(k * discardsPerStreet, (k + 1) * discardsPerStreet);
        const board = ROWS.flatMap((r) => boards[s]![r]);
        const left = play.streets[t]![s]!.filter((c) => !board.includes(c));
        if (!same(card, left)) return fail(e, `seat ${s}'s discard on street ${t} is not the card dealt it there and left off its board`);
        if (nonces[k] === "") continue; // opened by the service after the deadline: the card left off is the discard
        const found = await discardCommitment(id, s, play.players[s]!, t, card, unhex(String(nonces[k])));
        if (hex(found) !== mine[k]!.data.commitment) return fail(e, `seat ${s}'s discard on street ${t} does not hash to its commitment`);
      }
    }
    const openedSeats = new Set(opened.map((e) => e.data.seat));
    const unopened = committed.find((c) => !openedSeats.has(c.data.seat));
    return unopened === undefined ? undefined : fail(unopened, "a discard never opened");
  };

  const scores = (): Failure => {
    const scored = events.find((e) => e.type === "DealScored");
    if (scored === undefined) return { at: events.length, why: "the deal is not scored" };
    if (events.some((e) => e.type === "SeatTimedOut" || e.type === "FantasylandTimedOut" || (e.type === "CardsPlaced" && e.data.automatic === "timeout"))) {
      uncovered.set("scores", "a timeout's consequence for the hand and the set (rules.md §8.7) is not re-decided here");
      return undefined;
    }
    if (!ordinary) {
      uncovered.set("scores", "2-7 Pineapple's middle (rules.md §8.12) is not scored here");
      return undefined;
    }
    const d = scored.data;
    const dead = boards.map((b) => ROWS.some((r) => b[r].length !== SIZE[r]) || isDead(b));
    const recomputed = scoreOpenFace(boards, dead, play.rules);
    if (JSON.stringify(d.fouls) !== JSON.stringify(dead)) return fail(scored, `dead hands ${JSON.stringify(d.fouls)} recorded, the boards give ${JSON.stringify(dead)}`);
    const arrangements = (d.arrangements as (string | null)[]) ?? [];
    for (let s = 0; s < n; s++) {
      const rows = String(arrangements[s] ?? "").split("|").map((r) => r.trim().split(/\s+/).filter(Boolean).map(parseCard));
      if (rows.length !== 3 || ROWS.some((r, i) => !same(rows[i]!, boards[s]![r]))) return fail(scored, `seat ${s}'s recorded rows are not its board`);
    }
    const pairs = ((d.pairs as Obj[]) ?? []).map((p) => ({ seat_a: p.seat_a, seat_b: p.seat_b, rows: p.rows, delta: p.delta }));
    const expected = recomputed.pairs.map((p) => ({ seat_a: p.seat_a, seat_b: p.seat_b, rows: p.rows, delta: p.delta }));
    if (JSON.stringify(pairs) !== JSON.stringify(expected)) return fail(scored, `the pairs recorded are not the pairs the boards score: ${JSON.stringify(expected)}`);
    if (JSON.stringify(d.totals) !== JSON.stringify(recomputed.totals)) return fail(scored, `totals ${JSON.stringify(d.totals)} recorded, the pairs give ${JSON.stringify(recomputed.totals)}`);
    if (play.previousSeriesTotals !== null) {
      const running = recomputed.totals.map((t, s) => t + play.previousSeriesTotals![s]!);
      if (JSON.stringify(d.series_totals) !== JSON.stringify(running)) return fail(scored, `running totals ${JSON.stringify(d.series_totals)} recorded, not ${JSON.stringify(running)}`);
    }
    return undefined;
  };

  const found: [keyof typeof WHAT, Failure][] = [];
  for (const [name, run] of [["placements", placements], ["fantasyland", fantasyland], ["discards", discards], ["scores", scores]] as const) {
    try {
      found.push([name, await run()]);
    } catch (e) {
      found.push([name, { at: events.length, why: e instanceof Error ? e.message : String(e) }]);
    }
  }
  // The first event that does not hold; the checks with events from there on were not reached.
  const first = found.filter(([, f]) => f !== undefined).sort(([, a], [, b]) => a!.at - b!.at)[0];
  const stoppedAt = first === undefined ? undefined : { at: first[1]!.at, name: first[0] as string };
  const checks: Check[] = found.map(([name, f]) => {
    if (first !== undefined && name === first[0]) return { name, status: "failed", what: WHAT[name], detail: f!.why };
    if (stoppedAt !== undefined && reaches(events, name, stoppedAt.at))
      return { name, status: "skipped", what: WHAT[name], detail: `needs ${stoppedAt.name}: the replay stopped there` };
    const why = uncovered.get(name);
    if (why !== undefined) {
      notCovered.add(why);
      return { name, status: "skipped", what: WHAT[name], detail: `not covered: ${why}` };
    }
    return { name, status: "passed", what: WHAT[name] };
  });
  const dead = boards.map((b) => ROWS.some((r) => b[r].length !== SIZE[r]) || isDead(b));
  const settled = first === undefined && !uncovered.has("scores");
  return { checks, notCovered: [...notCovered], ...(stoppedAt === undefined ? {} : { stoppedAt }), ...(settled ? { boards, dead } : {}) };
}

const EVENTS: Record<string, string[]> = {
  streets: ["StreetDealt"],
  placements: ["CardsPlaced", "DeadlinesExtended"],
  fantasyland: ["FantasylandCommitted", "FantasylandRevealed", "FantasylandTimedOut", "FantasylandRevealsOpened"],
  discards: ["DiscardCommitted", "DiscardsRevealed"],
  scores: ["DealScored"],
};

/** Whether check `name` has an event at or after index `at` (so a replay stopped at `at` never finished it). */
export const reaches = (events: readonly { type: string }[], name: string, at: number): boolean =>
  events.some((e, i) => i >= at && (EVENTS[name] ?? []).includes(e.type));
