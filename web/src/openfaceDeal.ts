// An open-face deal's state as its events describe it (docs/rules.md §8.2-§8.7, §8.11), folded
// event by event as docs/audit.md §4.3.1 replays a deal: each seat's board, who has placed, the
// Fantasyland hands committed, opened or timed out, the seats whose moves are made for them, the
// deadlines recorded, Pineapple's discards. openfacePlay.ts re-decides each event against it.
import type { Json } from "./canonical";
import { parseCard } from "./cards";
import type { Obj } from "./exportFormat";
import type { OfcRuleSet } from "./openface";
import { type Board, ROWS, timeoutPolicy } from "./openfaceMoves";

export type Ev = { version: number; type: string; data: Obj };
export const cards = (v: Json | undefined): number[] => (Array.isArray(v) ? v.map((c) => parseCard(String(c))) : []);
const num = (v: Json | undefined): number | null => (typeof v === "number" ? v : null);

const setAt = (deadline: number | null, seconds: number | null) => (deadline === null || seconds === null ? null : deadline - seconds * 1000);

export type Phase = "DEALING" | "PLACING" | "FANTASYLAND" | "DISCARDS" | "COMPLETE";

export class DealState {
  readonly n: number;
  streetsDealt = 0;
  boards: Board[];
  placed: boolean[];
  commitments: (string | null)[];
  revealed: boolean[];
  flDead: boolean[];
  declaredDead: boolean[];
  automatic: boolean[];
  timedOut: boolean[];
  deadline: number | null = null;
  flDeadline: number | null = null;
  revealsOpen = false;
  revealDeadline: number | null = null;
  /** When each deadline was set (an outage counts only for a deadline already running, docs/events.md). */
  deadlineSet: number | null = null;
  flDeadlineSet: number | null = null;
  revealDeadlineSet: number | null = null;
  discardCommitments: { street: number; commitment: string }[][];
  discardsOpened: boolean[];
  scored = false;

  constructor(readonly rules: OfcRuleSet, readonly dealer: number, readonly fantasyland: readonly (number | null)[], readonly sched: number[][], deadForSet: readonly boolean[]) {
    this.n = fantasyland.length;
    const each = <T>(f: () => T) => Array.from({ length: this.n }, f);
    this.boards = each(() => ({ front: [], middle: [], back: [] }));
    this.placed = each(() => true);
    this.commitments = each(() => null);
    this.revealed = each(() => false);
    this.flDead = each(() => false);
    this.declaredDead = [...deadForSet];
    this.automatic = [...deadForSet];
    this.timedOut = each(() => false);
    this.discardCommitments = each(() => []);
    this.discardsOpened = each(() => false);
  }

  isFl = (s: number) => this.fantasyland[s] != null;
  flUnset = (s: number) => this.isFl(s) && this.commitments[s] === null && !this.timedOut[s];
  get flHidden() { return Array.from({ length: this.n }, (_, s) => this.flUnset(s)).some(Boolean); }
  awaitsReveal = (s: number) => this.isFl(s) && !this.revealed[s] && !this.timedOut[s];
  awaitsDiscards = (s: number) => this.discardCommitments[s]!.length > 0 && !this.discardsOpened[s];
  get streetsDue() { return this.fantasyland.every((x) => x != null) ? 1 : this.sched.length; }
  get seats() { return Array.from({ length: this.n }, (_, s) => s); }
  get turn(): number | null {
    if (this.streetsDealt === 0) return null;
    for (let step = 1; step <= this.n; step++) {
      const s = (this.dealer + step) % this.n;
      if (!this.placed[s]) return s;
    }
    return null;
  }
  get phase(): Phase {
    if (this.streetsDealt === 0) return "DEALING";
    if (this.turn !== null) return "PLACING";
    if (this.streetsDealt < this.streetsDue) return "DEALING";
    if (this.seats.some(this.awaitsReveal)) return "FANTASYLAND";
    if (this.seats.some(this.awaitsDiscards)) return "DISCARDS";
    return "COMPLETE";
  }
  get revealsDue() { return this.phase === "FANTASYLAND" && !this.flHidden; }
  /** rules.md §8.7: `move_seconds`, else `reveal_seconds`; null: no reveal deadline. */
  get moveSeconds(): number | null { return (this.rules.move_seconds as number | null | undefined) ?? null; }
  get revealLimit(): number | null {
    return (this.rules.move_seconds as number | null | undefined) ?? (this.rules.reveal_seconds as number | null | undefined) ?? null;
  }

  private timeOut(s: number) {
    this.automatic[s] = true;
    this.declaredDead[s] = this.declaredDead[s]! || timeoutPolicy(this.rules) === "dead_for_set";
    this.timedOut[s] = true;
  }

  /** The state after one recorded event (trusted: re-deciding it is openfacePlay.ts's). */
  evolve(e: Ev): void {
    const d = e.data;
    const s = Number(d.seat);
    switch (e.type) {
      case "StreetDealt": {
        const counts = d.card_counts as number[];
        this.placed = counts.map((c, k) => c === 0 || this.isFl(k));
        this.streetsDealt = Number(d.street) + 1;
        this.deadline = num(d.deadline_ms);
        this.deadlineSet = setAt(this.deadline, this.moveSeconds);
        if (d.street === 0 && this.fantasyland.some((x) => x != null)) [this.flDeadline, this.flDeadlineSet] = [this.deadline, this.deadlineSet];
        break;
      }
      case "CardsPlaced":
        for (const r of ROWS) this.boards[s]![r].push(...cards(d[r]));
        this.placed[s] = true;
        this.deadline = num(d.deadline_ms);
        // With nobody else due this street, the deadline carried is a Fantasyland hand's.
        this.deadlineSet = this.deadline !== null && this.deadline === this.flDeadline ? this.flDeadlineSet : setAt(this.deadline, this.moveSeconds);
        if (d.automatic === "timeout") this.timeOut(s);
        break;
      case "FantasylandTimedOut": this.timeOut(s); break;
      case "FantasylandCommitted": this.commitments[s] = String(d.commitment); break;
      case "FantasylandRevealed":
        this.boards[s] = { front: cards(d.front), middle: cards(d.middle), back: cards(d.back) };
        this.revealed[s] = true;
        this.flDead[s] = d.dead === true;
        break;
      case "DiscardCommitted": this.discardCommitments[s]!.push({ street: Number(d.street), commitment: String(d.commitment) }); break;
      case "DiscardsRevealed": this.discardsOpened[s] = true; break;
      case "FantasylandRevealsOpened":
        this.revealsOpen = true;
        this.revealDeadline = this.deadline = num(d.deadline_ms);
        this.revealDeadlineSet = this.deadlineSet = setAt(this.deadline, this.revealLimit);
        break;
      case "DeadlinesExtended": {
        // The moved deadline runs from the end of the outage.
        const [to, from] = [num(d.deadline_ms), num(d.unserved_until_ms)];
        if (d.stage === "revealing") [this.revealDeadline, this.revealDeadlineSet] = [to, from];
        if (d.stage === "fantasyland") {
          const moves = this.deadline === num(d.previous_deadline_ms);
          [this.flDeadline, this.flDeadlineSet] = [to, from];
          if (!moves) break;
        }
        [this.deadline, this.deadlineSet] = [to, from];
        break;
      }
      case "DealScored": this.scored = true; break;
    }
  }

  /**
   * docs/events.md, "Deadlines across outages": the extensions a timeout at `now` decides instead,
   * one per stage (fantasyland, placing, revealing, discarding) whose passed deadline was running
   * when the window began and fell in it or before where it moves it.
   */
  extensions(number: number, now: number, window: { from: number; until: number; reason: string }, grace: number): Obj[] {
    const out: Obj[] = [];
    const stages: [string, number[], number | null, number | null][] = [
      ["fantasyland", this.seats.filter(this.flUnset), this.flDeadline, this.flDeadlineSet],
      ["placing", this.phase === "PLACING" && this.turn !== null ? [this.turn] : [], this.deadline, this.deadlineSet],
      ["revealing", this.revealsOpen && this.revealsDue ? this.seats.filter(this.awaitsReveal) : [], this.revealDeadline, this.revealDeadlineSet],
      ["discarding", this.phase === "DISCARDS" ? this.seats.filter(this.awaitsDiscards) : [], this.deadline, this.deadlineSet],
    ];
    for (const [stage, seats, deadline, set] of stages) {
      if (seats.length === 0 || deadline === null || now < deadline) continue;
      const resumed = window.reason !== "tournament_paused" ? window.until + grace
        : Math.max(window.until + grace, deadline + Math.max(0, window.until - (set === null ? window.from : Math.max(window.from, set))));
      if (!((set === null || set < window.until) && window.from <= deadline && deadline < resumed && now < resumed)) continue;
      out.push({ deal_number: number, stage, seats, previous_deadline_ms: deadline, deadline_ms: resumed, reason: window.reason, unserved_from_ms: window.from, unserved_until_ms: window.until });
    }
    return out;
  }

  /** The cards that may still come to `seat`: none it holds, was dealt, or may see on another board (rules.md §8.6). */
  unseen(seat: number, dealt: readonly number[]): number[] {
    const seen = new Set<number>([...dealt, ...ROWS.flatMap((r) => this.boards[seat]![r])]);
    for (const other of this.seats) {
      const visible = this.isFl(other) ? this.revealed[other] : !this.flHidden;
      if (other !== seat && visible) for (const r of ROWS) for (const c of this.boards[other]![r]) seen.add(c);
    }
    return Array.from({ length: 52 }, (_, c) => c).filter((c) => !seen.has(c));
  }
}
