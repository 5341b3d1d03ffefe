// The `sequence` check of a closed-game deal (docs/audit.md §4.2): the deal's events follow the
// protocol, and every event names this deal. Written from audit.md §4.2, docs/events.md and
// docs/fairness.md §4, §13.1, §20, §21.
import type { Json } from "./canonical";
import { cutter } from "./fairness";

type Obj = { [key: string]: Json };
export interface SequenceEvent { version: number; type: string; data: Obj }

export interface DealContext {
  seatCount: number;
  /** The rule set records `surrender` other than `off`. */
  surrender: boolean;
  /** The rule set plays naturals: every seat declares before its first commit. */
  naturals: boolean;
  /** `TableCreated.after_series` (schema 1: `close`). */
  afterSeries: string;
  seriesLength: number;
}

const isSeat = (v: Json | undefined, n: number): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) < n;

/**
 * The deal's events (from its `DealStarted` up to the next one) against the protocol; undefined when
 * they follow it, else what is wrong (naming the event's version). A deal cut short (still running,
 * or an export that stops before its reveals) passes as far as it goes.
 */
export function sequenceCheck(events: readonly SequenceEvent[], ctx: DealContext): string | undefined {
  const n = ctx.seatCount;
  const start = events[0];
  if (start === undefined || start.type !== "DealStarted") return "the deal does not begin with DealStarted";
  const number = start.data.deal_number;
  const dealer = start.data.dealer;
  if (!Number.isInteger(number) || !isSeat(dealer, n)) return `version ${start.version}: DealStarted without a deal number and a dealer seat`;
  const contributed = new Set<number>();
  const lastCommit = new Map<number, Json>();
  const declared = new Set<number>();
  const confirmed = new Set<number>();
  const timedOutArranging = new Set<number>();
  const revealed = new Set<number>();
  const timedOutRevealing = new Set<number>();
  const naturalRevealed = new Set<number>();
  let announceOrder: number[] = [];
  let announced = 0;
  let stage = "started";
  const settledArranging = () => confirmed.size + timedOutArranging.size === n;
  const settledRevealing = () => [...confirmed].every((s) => revealed.has(s) || timedOutRevealing.has(s));
  for (const [i, e] of events.entries()) {
    const where = `version ${e.version} (${e.type})`;
    const d = e.data;
    const noDealNumber = ["SeriesCompleted", "SeriesStarted", "SeatReplaced"].includes(e.type);
    if (!noDealNumber && d.deal_number !== number) return `${where} names deal ${String(d.deal_number)}, not deal ${String(number)}`;
    const seat = d.seat;
    const bad = (why: string) => `${where}: ${why} (stage ${stage})`;
    if (i === 0) continue;
    if (e.type === "DealVoided") {
      if (["seed", "scored", "series", "new_series", "voided", "between"].includes(stage)) return bad("a deal is voided only while in progress");
      stage = "voided";
      continue;
    }
    if (e.type === "DeadlinesExtended") {
      const due = stage === "arranging" ? "arranging" : stage === "announcing" ? "announcing" : stage === "revealing" ? "revealing" : undefined;
      if (due === undefined || d.stage !== due) return bad("a deadline extended outside its stage");
      continue;
    }
    switch (stage) {
      case "started":
        if (e.type === "EntropyContributed") {
          if (!isSeat(seat, n) || contributed.has(seat)) return bad("a seat contributes entropy at most once");
          contributed.add(seat);
        } else if (e.type === "DeckCut") {
          if (seat !== cutter(dealer, n)) return bad(`the cut is the dealer's right's, seat ${cutter(dealer, n)}`);
          stage = "cut";
        } else return bad("expected EntropyContributed or DeckCut");
        break;
      case "cut":
        if (e.type !== "CardsDealt") return bad("expected CardsDealt");
        stage = "arranging";
        break;
      case "arranging":
        if (!settledArranging()) {
          if (!isSeat(seat, n) || confirmed.has(seat) || timedOutArranging.has(seat)) return bad("a seat already settled, or no seat");
          if (e.type === "NaturalDeclared") {
            if (!ctx.naturals || declared.has(seat) || lastCommit.has(seat)) return bad("a natural is declared once, before the seat's first commit, at a table with naturals");
            declared.add(seat);
          } else if (e.type === "ArrangementCommitted") {
            if (ctx.naturals && !declared.has(seat)) return bad("at a table with naturals the seat declares before it commits");
            lastCommit.set(seat, d.commitment ?? null);
          } else if (e.type === "SeatConfirmed") {
            if (!lastCommit.has(seat) || lastCommit.get(seat) !== d.commitment) return bad("a confirmation of a commitment that is not the seat's last");
            confirmed.add(seat);
          } else if (e.type === "SeatTimedOut") {
            if (d.stage !== "arranging") return bad("a timeout of another stage while arranging");
            timedOutArranging.add(seat);
          } else return bad("expected a commit, a confirmation or an arranging timeout");
          break;
        }
        if (ctx.surrender && timedOutArranging.size < n) {
          if (e.type !== "AnnouncementsOpened") return bad("expected AnnouncementsOpened (the rule set has surrender)");
          const expected = Array.from({ length: n }, (_, k) => (dealer + 1 + k) % n).filter((s) => !timedOutArranging.has(s));
          const order = d.order;
          if (!Array.isArray(order) || order.join(",") !== expected.join(","))
            return bad(`the announcing order is clockwise from the dealer's left without the seats timed out arranging: [${expected.join(", ")}]`);
          announceOrder = expected;
          stage = "announcing";
        } else if (e.type === "RevealsOpened") stage = "revealing";
        else return bad("expected RevealsOpened");
        break;
      case "announcing":
        if (announced < announceOrder.length) {
          if (e.type !== "SurrenderAnnounced") return bad("expected SurrenderAnnounced");
          if (seat !== announceOrder[announced]) return bad(`seat ${announceOrder[announced]}'s turn to announce`);
          if (d.timed_out === true && d.surrender !== false) return bad("a seat that let its turn pass plays");
          announced++;
        } else if (e.type === "RevealsOpened") stage = "revealing";
        else return bad("expected RevealsOpened after the last announcement");
        break;
      case "revealing":
        if (!settledRevealing()) {
          if (!isSeat(seat, n) || !confirmed.has(seat) || revealed.has(seat) || timedOutRevealing.has(seat)) return bad("only a confirmed seat reveals or times out, once");
          if (e.type === "NaturalRevealed") {
            if (!ctx.naturals || naturalRevealed.has(seat) || events[i + 1]?.type !== "ArrangementRevealed" || events[i + 1]?.data.seat !== seat)
              return bad("a natural is revealed just before the seat's reveal, at a table with naturals");
            naturalRevealed.add(seat);
          } else if (e.type === "ArrangementRevealed") {
            if (ctx.naturals && !naturalRevealed.has(seat)) return bad("at a table with naturals the seat's declaration is revealed with its rows");
            revealed.add(seat);
          } else if (e.type === "SeatTimedOut") {
            if (d.stage !== "revealing") return bad("a timeout of another stage while revealing");
            timedOutRevealing.add(seat);
          } else return bad("expected a reveal or a revealing timeout");
          break;
        }
        if (e.type !== "SeedRevealed") return bad("expected SeedRevealed once every seat is settled");
        stage = "seed";
        break;
      case "seed":
        if (e.type !== "DealScored") return bad("expected DealScored");
        stage = "scored";
        break;
      case "scored":
        if (e.type === "SeriesCompleted") { stage = "series"; break; }
      // falls through: after the score, only a seat replaced between deals
      case "series":
        if (e.type === "SeriesStarted" && stage === "series") {
          if (ctx.afterSeries !== "new_series") return bad("a new series starts only at a table created with after_series = new_series");
          if (d.first_deal_number !== (number as number) + 1) return bad(`the new series starts with deal ${(number as number) + 1}`);
          stage = "new_series";
          break;
        }
      // falls through
      case "new_series":
      case "voided":
      case "between":
        if (e.type !== "SeatReplaced") return bad("nothing but a seat replaced comes between deals");
        if (!isSeat(seat, n)) return bad("no such seat");
        stage = "between";
        break;
      default:
        return bad("unexpected");
    }
  }
  return undefined;
}

/** How far a deal that passed `sequence` got: "voided", "scored" or "running". */
export function dealOutcome(events: readonly SequenceEvent[]): "voided" | "scored" | "running" {
  if (events.some((e) => e.type === "DealVoided")) return "voided";
  return events.some((e) => e.type === "DealScored") ? "scored" : "running";
}
