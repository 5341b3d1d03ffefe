// An open-face deal's play re-decided (docs/audit.md §4.3.1), from docs/audit.md, docs/fairness.md
// §12.1, §22-§23 and docs/rules.md §8 alone: each event after the cut is turned back into the move
// that must have made it and the rules must make exactly the recorded event (deadlines and
// signatures aside): a seat's placement in turn of the cards dealt it, a move made for a seat
// (§8.6-§8.7: only where it is due, exactly what the policy places, a timeout only after a
// recorded deadline unless the operator's), a Fantasyland hand opening its commitment or set by the
// timeout policy, Pineapple's discards, the reveals opened, the seed's reveal with the score and
// the set's end. The first event that does not hold fails its check; every check with an event
// from there on is skipped (`stoppedAt`).
import { canonicalJson } from "./canonical";
import { hex, unhex } from "./bytes";
import { formatCards, parseCards } from "./cards";
import * as F from "./fairness";
import { type OfcRuleSet, discardCommitment, scoreOpenFace } from "./openface";
import { DealState, type Ev, cards } from "./openfaceDeal";
import type { Obj } from "./exportFormat";
export { DealState } from "./openfaceDeal";
import { type Board, CAPACITY, ROWS, automaticMove, fantasylandTimeoutRows, inOrder, timeoutMove, timeoutPolicy } from "./openfaceMoves";
import { nextFantasyland } from "./openfaceSet";
import { standingsOf } from "./series";
import type { Check } from "./verify";

export type { Board } from "./openfaceMoves";

/** What the deals before decided for the set (rules.md §8.5, §8.7, §8.11). */
export interface SetState {
  inARow: number[];
  /** null: the deals before are not all in the export. */
  buttonMoves: number | null;
  timeoutEndsSet: boolean;
  dealsVoided: number;
  deadForSet: boolean[];
}

export interface SetAfter extends SetState {
  fantasyland: (number | null)[];
  buttonMoved: boolean;
  over: boolean;
}

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
  /** The set before this deal (absent: a fresh set, every earlier deal unknown for its end). */
  set?: SetState;
}

const WHAT = {
  placements: "every placement is the seat on turn, of the cards dealt it on that street, legal on its board; every move made for a seat is the rule set's",
  fantasyland: "each Fantasyland hand opens its commitment and holds the cards it was dealt, or is set by the timeout policy",
  discards: "each discard opens its commitment to a card dealt that seat on that street and left off its board",
  scores: "the rows, dead hands, royalties, totals, running totals and the set's end follow from the boards under the table's rules",
} as const;
type PlayCheck = keyof typeof WHAT;

const CHECK_OF: Record<string, string> = {
  DealStarted: "seed", EntropyContributed: "seed", DeckCut: "seed", SeedRevealed: "seed", DealVoided: "seed",
  StreetDealt: "streets", CardsPlaced: "placements", DeadlinesExtended: "placements",
  FantasylandCommitted: "fantasyland", FantasylandRevealed: "fantasyland", FantasylandTimedOut: "fantasyland", FantasylandRevealsOpened: "fantasyland",
  DiscardCommitted: "discards", DiscardsRevealed: "discards",
  DealScored: "scores", SeriesCompleted: "scores", SeatReplaced: "scores",
};
const checkOf = (type: string) => CHECK_OF[type] ?? "placements";

/** Whether check `name` has an event at or after index `at` (so a replay stopped at `at` never finished it). */
export const reaches = (events: readonly { type: string }[], name: string, at: number): boolean =>
  events.some((e, i) => i >= at && checkOf(e.type) === name);

type Outage = { window: { from: number; until: number; reason: string }; grace: number };

class Refused extends Error {
  constructor(readonly check: string, message: string) { super(message); }
}
const nameOf = (e: Ev) => `version ${e.version} (${e.type}${e.data.seat === undefined ? "" : ` of seat ${String(e.data.seat)}`}${e.data.street === undefined ? "" : ` on street ${String(e.data.street)}`})`;
type Made = { type: string; data: Obj };
const names = (xs: readonly number[]): string[] => formatCards(xs).split(" ").filter(Boolean);
const named = (b: Board): Obj => ({ front: names(b.front), middle: names(b.middle), back: names(b.back) });

const freshSet = (n: number): SetState => ({ inARow: Array(n).fill(0), buttonMoves: null, timeoutEndsSet: false, dealsVoided: 0, deadForSet: Array(n).fill(false) });
const deadSeat = (st: DealState, s: number) => st.flDead[s]! || st.declaredDead[s]! || !inOrder(st.rules, st.boards[s]!);

/** rules.md §8.5, §8.7, §8.11: what a scored deal decides for the set (sapsam's next_deal and set_progress). */
function settled(st: DealState, set: SetState): SetAfter {
  const { rules, n } = st;
  // Only complete boards of distinct cards are scored: anything else cannot be folded (audit.md §4.3.1).
  for (const [s, b] of st.boards.entries()) {
    const all = ROWS.flatMap((r) => b[r]);
    if (ROWS.some((r) => b[r].length !== CAPACITY[r]) || new Set(all).size !== all.length)
      throw new Error(`seat ${s}'s board is not 3, 5 and 5 distinct cards`);
  }
  const inARow = set.inARow.map((x, s) => (st.isFl(s) ? x + 1 : 0));
  const fantasyland = st.seats.map((s) => nextFantasyland(rules, st.boards[s]!, deadSeat(st, s), inARow[s]!));
  const buttonMoved = fantasyland.every((x) => x === null);
  const moves = set.buttonMoves === null ? null : set.buttonMoves + (buttonMoved ? 1 : 0);
  const ends = set.timeoutEndsSet || (st.timedOut.some(Boolean) && timeoutPolicy(rules) === "biggest_row_first");
  const early = ends && buttonMoved && (moves === null || moves < n);
  return { inARow, fantasyland, buttonMoved, buttonMoves: moves, timeoutEndsSet: ends, dealsVoided: set.dealsVoided, deadForSet: [...st.declaredDead], over: early || (moves !== null && moves >= n) };
}

/**
 * A deal's events from `from` folded as recorded, without re-deciding them (as sapsam folds the
 * deals before the one it checks): what the deal decided for the set, or why it cannot be folded.
 */
export function foldPlay(st: DealState, set: SetState, events: readonly Ev[], from = 0, after?: SetAfter): { after?: SetAfter; unfoldable?: string } {
  try {
    for (const e of events.slice(from)) {
      st.evolve(e);
      if (e.type === "DealScored") after = settled(st, set);
      if (e.type === "SeatReplaced" && after !== undefined) after.deadForSet[Number(e.data.seat)] = false;
    }
    return after === undefined ? {} : { after };
  } catch (e) {
    return { unfoldable: `version ${events[0]?.version ?? "?"}'s deal: ${e instanceof Error ? e.message : String(e)}` };
  }
}

export async function openFacePlayChecks(play: OpenFacePlay, events: readonly Ev[]): Promise<{
  checks: Check[]; notCovered: string[]; stoppedAt?: { at: number; name: string; why: string }; after?: SetAfter; unfoldable?: string; boards?: Board[]; dead?: boolean[];
}> {
  const { rules, streets } = play;
  const n = play.players.length;
  const number = Number(events[0]!.data.deal_number);
  const id: F.DealId = { tableId: play.tableId, dealNumber: number };
  const discardsPerStreet = (rules.street_discards as number | undefined) ?? 0;
  const sched = streets.map((t) => t.map((c) => c.length));
  const set: SetState = play.set ?? freshSet(n);
  const st = new DealState(rules, play.dealer, play.fantasyland, sched, set.deadForSet);
  const notCovered = new Set<string>();
  let after: SetAfter | undefined;
  let voided = false;
  let judged: { boards: Board[]; dead: boolean[] } | undefined;

  const deadOf = (s: number) => deadSeat(st, s);
  const settle = () => settled(st, set);

  /** Compare the events the rules make with those recorded from `at`; evolve by the recorded ones. */
  const expect = (at: number, made: Made[]): number => {
    for (const [k, m] of made.entries()) {
      const found = events[at + k];
      if (found === undefined) throw new Refused("scores", `the deal ends without its ${m.type}`);
      const differs = found.type !== m.type || Object.entries(m.data).some(([key, value]) =>
        !(key === "timed_out_by" && found.data.timed_out_by == null) && canonicalJson(found.data[key] ?? null) !== canonicalJson(value));
      if (differs) throw new Refused(checkOf(found.type), `${nameOf(found)} is not what the rules decide: expected ${m.type} ${canonicalJson(m.data)}`);
      st.evolve(found);
    }
    return made.length;
  };
  /** rules.md §8.7: the reveals opened with the move that made every hand placed and set. */
  const withReveals = (at: number, made: Made[]): number => {
    const wasOpen = st.revealsOpen;
    let used = expect(at, made);
    if (st.revealLimit !== null && !wasOpen && made.length > 0 && st.revealsDue && !st.revealsOpen)
      used += expect(at + used, [{ type: "FantasylandRevealsOpened", data: { deal_number: number, seats: st.seats.filter(st.awaitsReveal) } }]);
    return used;
  };
  const timedOutBy = (e: Ev, check: string): string | null => {
    const by = e.data.timed_out_by;
    if (by != null && by !== "service" && by !== "operator") throw new Refused(check, `${nameOf(e)} is timed out by ${JSON.stringify(by)}, neither the sweep nor the operator`);
    return (by as string | null | undefined) ?? null;
  };
  const flTimedOut = (s: number, by: string): Made => ({ type: "FantasylandTimedOut", data: { deal_number: number, seat: s, timed_out_by: by } });
  const placedBy = (s: number, b: Board, reason: string | null, by: string | null): Made =>
    ({ type: "CardsPlaced", data: { deal_number: number, seat: s, street: st.streetsDealt - 1, ...named(b), automatic: reason, timed_out_by: by } });
  const dealtToTurn = () => (st.turn === null || st.streetsDealt === 0 ? [] : streets[st.streetsDealt - 1]![st.turn]!);

  /** The operator's forced timeout of `seat` (docs/api.md ForceSeatTimeout): what its deadline would record, now. */
  const forced = (e: Ev, s: number): Made[] => {
    if (st.streetsDealt > 0 && (st.flUnset(s) || (st.revealsDue && st.awaitsReveal(s)))) return [flTimedOut(s, "operator")];
    if (st.phase === "PLACING" && st.turn === s && !st.automatic[s]) {
      const dealt = dealtToTurn();
      return [placedBy(s, timeoutMove(rules, st.boards[s]!, dealt, st.unseen(s, dealt)).placement, "timeout", "operator")];
    }
    throw new Refused(checkOf(e.type), `${nameOf(e)}: seat ${s} owes no move now`);
  };
  /** The deadline sweep at `now` (rules.md §8.6-§8.7): a timed-out move, or the move made for a seat whose moves are made for it. */
  const sweep = (e: Ev, now: number, timedOut: boolean, outage?: Outage): Made[] => {
    if (timedOut && outage !== undefined) {
      const extended = st.extensions(number, now, outage.window, outage.grace);
      if (extended.length > 0) return extended.map((data) => ({ type: "DeadlinesExtended", data }));
    }
    if (timedOut) {
      const overdue = st.flDeadline !== null && now >= st.flDeadline ? st.seats.filter(st.flUnset) : [];
      if (overdue.length > 0) return overdue.map((s) => flTimedOut(s, "service"));
      if (st.revealsOpen && st.revealsDue) {
        if (st.revealDeadline === null || now < st.revealDeadline) throw new Refused(checkOf(e.type), `${nameOf(e)}: the time to open the Fantasyland hands has not run out`);
        return st.seats.filter(st.awaitsReveal).map((s) => flTimedOut(s, "service"));
      }
    }
    const s = st.turn;
    if (st.phase !== "PLACING" || s === null) throw new Refused(checkOf(e.type), `${nameOf(e)}: no placement is due`);
    const dealt = dealtToTurn();
    const board = st.boards[s]!;
    const pool = st.unseen(s, dealt);
    if (timedOut) {
      if (st.deadline === null || now < st.deadline) throw new Refused(checkOf(e.type), `${nameOf(e)}: seat ${s}'s time to place has not run out (no deadline was recorded)`);
      return [placedBy(s, timeoutMove(rules, board, dealt, pool).placement, "timeout", "service")];
    }
    const move = st.automatic[s] && !st.declaredDead[s] ? timeoutMove(rules, board, dealt, pool) : automaticMove(rules, board, dealt, pool, st.declaredDead[s]!);
    if (move === null) throw new Refused("placements", `${nameOf(e)}: seat ${s} chooses its own placement, no move of it is forced`);
    return [placedBy(s, move.placement, move.reason, null)];
  };

  const placeOwn = (i: number, e: Ev): number => {
    const d = e.data;
    const s = Number(d.seat);
    const street = Number(d.street);
    const dealt = streets[street]?.[s];
    const placement: Board = { front: cards(d.front), middle: cards(d.middle), back: cards(d.back) };
    const placed = ROWS.flatMap((r) => placement[r]);
    const thrown = street > 0 ? discardsPerStreet : 0;
    if (dealt === undefined || new Set(placed).size !== placed.length || placed.some((c) => !dealt.includes(c)) || placed.length !== dealt.length - thrown)
      throw new Refused("placements", `${nameOf(e)} places ${formatCards(placed)}: not the cards the seed dealt seat ${s} on street ${street}${thrown ? ` less ${thrown} discarded` : ""}`);
    if (st.isFl(s)) throw new Refused("placements", `${nameOf(e)}: seat ${s} plays a Fantasyland hand, it places no street`);
    if (st.phase !== "PLACING") throw new Refused("placements", `${nameOf(e)}: no placement is due`);
    if (street !== st.streetsDealt - 1) throw new Refused("placements", `${nameOf(e)}: street ${street} is not the street being placed (${st.streetsDealt - 1})`);
    if (st.turn !== s) throw new Refused("placements", `${nameOf(e)}: seat ${s} placed out of turn (seat ${String(st.turn)} was due)`);
    if (st.automatic[s]) throw new Refused("placements", `${nameOf(e)}: seat ${s}'s time ran out, the rest of its hand is placed for it`);
    for (const r of ROWS)
      if (st.boards[s]![r].length + placement[r].length > CAPACITY[r]) throw new Refused("placements", `${nameOf(e)}: the ${r} row has no room for ${placement[r].length} more`);
    const made: Made[] = [{ type: "CardsPlaced", data: { deal_number: number, seat: s, street, ...named(placement), automatic: null, timed_out_by: null } }];
    if (thrown > 0) {
      const next = events[i + 1];
      if (next?.type !== "DiscardCommitted" || next.data.seat !== s || next.data.street !== street)
        throw new Refused("placements", `${nameOf(e)}: a placement on a discarding street without its discard's commitment right after it`);
      made.push({ type: "DiscardCommitted", data: { deal_number: number, seat: s, street, commitment: String(next.data.commitment) } });
    }
    return withReveals(i, made);
  };

  const flSeat = (e: Ev, s: number) => {
    if (!st.isFl(s)) throw new Refused("fantasyland", `${nameOf(e)}: seat ${s} plays a normal hand this deal`);
    if (st.streetsDealt === 0) throw new Refused("fantasyland", `${nameOf(e)}: the Fantasyland hand is not dealt yet`);
    if (st.timedOut[s]) throw new Refused("fantasyland", `${nameOf(e)}: seat ${s}'s time ran out, the service sets its hand`);
  };
  const openFantasyland = async (i: number, e: Ev): Promise<number> => {
    const d = e.data;
    const s = Number(d.seat);
    flSeat(e, s);
    if (st.commitments[s] === null) throw new Refused("fantasyland", `${nameOf(e)}: seat ${s} never set its hand`);
    if (st.revealed[s]) throw new Refused("fantasyland", `${nameOf(e)}: seat ${s} already opened its hand`);
    if (st.phase !== "FANTASYLAND" || st.flHidden) throw new Refused("fantasyland", `${nameOf(e)}: a Fantasyland hand is opened once every normal hand is complete and every Fantasyland hand set`);
    const nonce = unhex(String(d.nonce));
    if (nonce.length < 16 || nonce.length > 64) throw new Refused("fantasyland", `${nameOf(e)}: the nonce is not 16 to 64 bytes`);
    const rows: Board = { front: cards(d.front), middle: cards(d.middle), back: cards(d.back) };
    const dealt = streets[0]![s]!;
    const all = ROWS.flatMap((r) => rows[r]);
    if (ROWS.some((r) => rows[r].length !== CAPACITY[r]) || new Set(all).size !== 13 || all.some((c) => !dealt.includes(c)))
      throw new Refused("fantasyland", `${nameOf(e)}: the rows are not 3, 5 and 5 of the ${dealt.length} cards dealt the seat`);
    if (hex(await F.arrangementCommitment(id, s, rows, nonce, 2, play.players[s])) !== st.commitments[s])
      throw new Refused("fantasyland", `${nameOf(e)}: the rows and nonce do not hash to the seat's commitment`);
    return withReveals(i, [{ type: "FantasylandRevealed", data: {
      deal_number: number, seat: s, ...named(rows), discards: names(dealt.filter((c) => !all.includes(c))),
      nonce: hex(nonce), dead: !inOrder(rules, rows),
    } }]);
  };

  /** docs/fairness.md §23: the seat committed discards it has not opened, and every hand is complete. */
  const awaitedDiscards = (e: Ev, s: number) => {
    const check = checkOf(e.type);
    if ((st.discardCommitments[s] ?? []).length === 0) throw new Refused(check, `${nameOf(e)}: seat ${s} committed no discard`);
    if (st.discardsOpened[s]) throw new Refused(check, `${nameOf(e)}: seat ${s} already opened its discards`);
    if ((st.phase !== "FANTASYLAND" && st.phase !== "DISCARDS") || st.flHidden) throw new Refused(check, `${nameOf(e)}: discards are opened once every hand is complete`);
  };
  /** The service opens a seat's discards: each committed street's dealt cards left off its board, nonces empty. */
  const openedByService = (s: number, by: string): Made => {
    const board = ROWS.flatMap((r) => st.boards[s]![r]);
    const committed = st.discardCommitments[s]!;
    return { type: "DiscardsRevealed", data: {
      deal_number: number, seat: s, streets: committed.map((c) => c.street),
      cards: committed.map((c) => formatCards(streets[c.street]![s]!.filter((x) => !board.includes(x)))), nonces: committed.map(() => ""), timed_out_by: by,
    } };
  };

  const openDiscards = async (i: number, e: Ev): Promise<number> => {
    const d = e.data;
    const s = Number(d.seat);
    const nonces = (d.nonces as string[] | undefined) ?? [];
    const committed = st.discardCommitments[s] ?? [];
    const board = ROWS.flatMap((r) => st.boards[s]![r]);
    if (nonces.length > 0 && nonces.every((x) => x === "")) {
      const by = timedOutBy(e, "discards");
      const isForced = by === "operator" || (by === null && st.deadline === null);
      awaitedDiscards(e, s);
      if (!isForced && st.deadline === null) throw new Refused("discards", `${nameOf(e)}: seat ${s}'s time to open its discards has not run out (no deadline was recorded)`);
      return withReveals(i, [openedByService(s, isForced ? "operator" : "service")]);
    }
    awaitedDiscards(e, s);
    const opened = ((d.cards as string[] | undefined) ?? []).map((x) => parseCards(String(x)));
    if (opened.length !== committed.length || nonces.length !== committed.length) throw new Refused("discards", `${nameOf(e)}: seat ${s} committed ${committed.length} discards, opens ${opened.length}`);
    for (const [k, c] of committed.entries()) {
      const dealt = streets[c.street]?.[s] ?? [];
      const thrown = opened[k]!;
      const nonce = unhex(String(nonces[k]));
      if (thrown.length !== discardsPerStreet || new Set(thrown).size !== thrown.length || thrown.some((x) => !dealt.includes(x) || board.includes(x)))
        throw new Refused("discards", `${nameOf(e)}: street ${c.street}'s discard is not a card dealt the seat there and left off its board`);
      if (nonce.length < 16 || nonce.length > 64) throw new Refused("discards", `${nameOf(e)}: a nonce is not 16 to 64 bytes`);
      if (hex(await discardCommitment(id, s, play.players[s]!, c.street, thrown, nonce)) !== c.commitment)
        throw new Refused("discards", `${nameOf(e)}: street ${c.street}'s card and nonce do not hash to the commitment`);
    }
    return withReveals(i, [{ type: "DiscardsRevealed", data: {
      deal_number: number, seat: s, streets: committed.map((c) => c.street), cards: opened.map(formatCards), nonces: nonces.map((x) => hex(unhex(String(x)))), timed_out_by: null,
    } }]);
  };

  /** The seed's reveal (rules.md §8.7, §8.11): the timed-out Fantasyland hands set and opened, the seed, the score, the set's end. */
  const revealSeed = (i: number, e: Ev): number => {
    if (st.phase !== "COMPLETE") throw new Refused(checkOf(e.type), `${nameOf(e)}: the deal is not complete (${st.phase})`);
    const made: Made[] = [];
    for (const s of st.seats) {
      if (!st.isFl(s) || st.revealed[s] || !st.timedOut[s]) continue;
      const dealt = streets[0]![s]!;
      const rows = fantasylandTimeoutRows(rules, dealt);
      const all = ROWS.flatMap((r) => rows[r]);
      made.push({ type: "FantasylandRevealed", data: {
        deal_number: number, seat: s, ...named(rows), discards: names(dealt.filter((c) => !all.includes(c))),
        nonce: "", dead: !inOrder(rules, rows) || st.commitments[s] !== null,
      } });
    }
    const used = expect(i, made);
    const dead = st.seats.map(deadOf);
    const score = scoreOpenFace(st.boards, dead, rules);
    const running = play.previousSeriesTotals?.map((t, s) => t + score.totals[s]!) ?? null;
    const scored: Obj = {
      deal_number: number, pairs: score.pairs.map((p) => ({ seat_a: p.seat_a, seat_b: p.seat_b, rows: p.rows, delta: p.delta })),
      totals: score.totals, fouls: dead, arrangements: st.boards.map((b) => ROWS.map((r) => formatCards(b[r])).join("|")),
      solver_arrangements: null, ...(running === null ? {} : { series_totals: running }),
    };
    // The seed itself opens the deal's commitment: the seed check's (openfaceExport.ts).
    const rest: Made[] = [{ type: "SeedRevealed", data: { deal_number: number } }, { type: "DealScored", data: scored }];
    const settled = settle();
    judged = { boards: st.boards.map((b) => ({ ...b })), dead };
    if (set.buttonMoves === null) notCovered.add("whether the set ends after a deal is decided by the deals before it, which the export does not hold");
    else if (settled.over) {
      const totals = running ?? ((events.find((x) => x.type === "DealScored")?.data.series_totals as number[] | undefined) ?? []);
      rest.push({ type: "SeriesCompleted", data: { deals_played: number - set.dealsVoided, standings: standingsOf(totals) } });
    }
    const total = used + expect(i + used, rest);
    after = settled;
    return total;
  };

  const redecide = async (i: number, e: Ev): Promise<number> => {
    const d = e.data;
    switch (e.type) {
      case "DealStarted": case "EntropyContributed": case "DeckCut": return 1; // the seed check's (openfaceExport.ts)
      case "StreetDealt":
        if (st.phase !== "DEALING") throw new Refused("streets", `${nameOf(e)}: no street is due (${st.phase})`);
        if (d.street !== st.streetsDealt) throw new Refused("streets", `${nameOf(e)}: street ${st.streetsDealt} is due`);
        return withReveals(i, [{ type: "StreetDealt", data: { deal_number: number, street: st.streetsDealt, card_counts: sched[st.streetsDealt]! } }]);
      case "CardsPlaced": {
        if (d.automatic == null) return placeOwn(i, e);
        const timeout = d.automatic === "timeout";
        const by = timedOutBy(e, "placements");
        const s = Number(d.seat);
        // The rest of a hand after 003's timeout, named by nobody: made for the seat, deadline or not.
        if (by === null && st.automatic[s] === true && !st.declaredDead[s]) return withReveals(i, sweep(e, st.deadline ?? 0, false));
        if (by === "operator" || (by === null && timeout && st.deadline === null)) return withReveals(i, forced(e, s));
        return withReveals(i, sweep(e, st.deadline ?? 0, timeout || by !== null));
      }
      case "FantasylandCommitted": {
        const s = Number(d.seat);
        flSeat(e, s);
        if (st.commitments[s] !== null) throw new Refused("fantasyland", `${nameOf(e)}: seat ${s} already set its hand`);
        return withReveals(i, [{ type: "FantasylandCommitted", data: { deal_number: number, seat: s, commitment: String(d.commitment) } }]);
      }
      case "FantasylandTimedOut": {
        const s = Number(d.seat);
        const by = timedOutBy(e, "fantasyland");
        const committed = st.commitments[s] !== null;
        if (by === "operator" || (by === null && (committed || st.flDeadline === null))) return withReveals(i, forced(e, s));
        if (committed) return withReveals(i, sweep(e, st.revealDeadline ?? 0, true));
        if (!st.isFl(s) || st.streetsDealt === 0) throw new Refused("fantasyland", `${nameOf(e)}: seat ${s} plays no Fantasyland hand dealt yet`);
        if (!st.flUnset(s)) throw new Refused("fantasyland", `${nameOf(e)}: seat ${s} has set its Fantasyland hand`);
        if (st.flDeadline === null) throw new Refused("fantasyland", `${nameOf(e)}: seat ${s}'s time to set its hand has not run out`);
        return withReveals(i, [flTimedOut(s, "service")]);
      }
      case "FantasylandRevealed": return d.nonce === "" ? revealSeed(i, e) : openFantasyland(i, e);
      case "DiscardsRevealed": return openDiscards(i, e);
      case "SeedRevealed": return revealSeed(i, e);
      case "DeadlinesExtended": {
        // The sweep's timeout that met a deadline fallen in an outage, taken to come at the
        // recorded previous deadline: the rules must extend exactly these (docs/events.md).
        const outage: Outage = { window: { from: Number(d.unserved_from_ms), until: Number(d.unserved_until_ms), reason: String(d.reason) }, grace: Number(d.deadline_ms) - Number(d.unserved_until_ms) };
        if (!["server_restart", "database_outage", "tournament_paused"].includes(outage.window.reason) || !(outage.grace >= 0))
          throw new Refused("placements", `${nameOf(e)}: not an extension the rules make`);
        const now = Number(d.previous_deadline_ms);
        if (d.stage !== "discarding") return withReveals(i, sweep(e, now, true, outage));
        const s = Array.isArray(d.seats) && d.seats.length > 0 ? Number(d.seats[0]) : -1;
        awaitedDiscards(e, s);
        const extended = st.extensions(number, now, outage.window, outage.grace);
        if (extended.length > 0) return withReveals(i, extended.map((data) => ({ type: "DeadlinesExtended", data })));
        if (st.deadline === null || now < st.deadline) throw new Refused("placements", `${nameOf(e)}: seat ${s}'s time to open its discards has not run out`);
        return withReveals(i, [openedByService(s, "service")]);
      }
      case "DealVoided":
        // The operator's VoidDeal of the deal in progress (its seed is the seed check's).
        if (st.scored || voided) throw new Refused("seed", `${nameOf(e)}: no deal is in progress`);
        voided = true;
        return 1;
      case "SeatReplaced":
        if (!(st.scored || voided) || after?.over) throw new Refused("scores", `${nameOf(e)}: a seat is replaced only between deals of a set`);
        if (after !== undefined) after.deadForSet[Number(d.seat)] = false;
        return 1;
      case "DiscardCommitted": throw new Refused("discards", `${nameOf(e)} without the placement it belongs to`);
      case "FantasylandRevealsOpened": throw new Refused("fantasyland", `${nameOf(e)} recorded where the rules open none`);
      case "DealScored": case "SeriesCompleted": throw new Refused("scores", `${nameOf(e)} recorded where the rules make none`);
      default: throw new Refused(checkOf(e.type), `${e.type} is not an event of an open-face deal`);
    }
  };

  let stoppedAt: { at: number; name: string; why: string } | undefined;
  let i = 0;
  while (i < events.length) {
    try {
      i += await redecide(i, events[i]!);
    } catch (err) {
      stoppedAt = { at: i, name: err instanceof Refused ? err.check : checkOf(events[i]!.type), why: err instanceof Error ? err.message : String(err) };
      break;
    }
  }
  let unfoldable: string | undefined;
  if (stoppedAt !== undefined) {
    // The next deal starts from what this one recorded (as sapsam folds the log): fold the rest.
    judged = undefined;
    ({ after, unfoldable } = foldPlay(st, set, events, i, after));
  }
  const checks: Check[] = (Object.keys(WHAT) as PlayCheck[]).map((name) => {
    if (stoppedAt !== undefined && name === stoppedAt.name) return { name, status: "failed", what: WHAT[name], detail: stoppedAt.why };
    if (stoppedAt !== undefined && reaches(events, name, stoppedAt.at))
      return { name, status: "skipped", what: WHAT[name], detail: `needs ${stoppedAt.name}: the replay stopped there` };
    return { name, status: "passed", what: WHAT[name] };
  });
  return { checks, notCovered: [...notCovered], ...(stoppedAt === undefined ? {} : { stoppedAt }), ...(after === undefined ? {} : { after }), ...(unfoldable === undefined ? {} : { unfoldable }), ...(judged ?? {}) };
}
