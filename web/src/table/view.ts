// The table's header (rules, deal, phase, the current deadline's countdown) and its seats' states.
import type { Seat, Table } from "../gen/sapsam/v1/table_pb";
import { SurrenderChoice, TablePhase } from "../gen/sapsam/v1/table_pb";

const PHASES: Partial<Record<TablePhase, string>> = {
  [TablePhase.SEATING]: "waiting for players",
  [TablePhase.AWAITING_DEALER]: "drawing the first dealer",
  [TablePhase.BETWEEN_DEALS]: "between deals: the dealer starts the next",
  [TablePhase.AWAITING_CUT]: "the cut",
  [TablePhase.DEALING]: "dealing",
  [TablePhase.ARRANGING]: "arranging: set your three rows",
  [TablePhase.REVEALING]: "the reveal",
  [TablePhase.AWAITING_SEED]: "scoring",
  [TablePhase.SERIES_COMPLETE]: "the series is over",
  [TablePhase.ANNOUNCING]: "play or surrender",
};

export const phaseWords = (p: TablePhase): string => PHASES[p] ?? "playing";

/** Seconds left until the table's deadline (null: none now). */
export function secondsLeft(t: Table, now = Date.now()): number | null {
  const d = t.deadlineTime;
  if (!d || (d.seconds === 0n && d.nanos === 0)) return null;
  const ms = Number(d.seconds) * 1000 + Math.floor(d.nanos / 1e6);
  return Math.max(0, Math.ceil((ms - now) / 1000));
}

export function renderHeader(root: HTMLElement, t: Table, mySeat: string): void {
  const series = t.ruleSet?.seriesLength ?? 0;
  const left = secondsLeft(t);
  const mine = t.seats.find((s) => s.name === mySeat);
  const parts = [
    `${t.ruleSet?.name ?? "table"} · ${t.seatCount} seats`,
    t.dealNumber ? `deal ${t.dealNumber}${series ? ` of ${series}` : ""}` : "",
    phaseWords(t.phase),
  ].filter(Boolean);
  const line = document.getElementById("phase") ?? document.createElement("p");
  line.id = "phase";
  line.textContent = parts.join(" · ");
  const clock = document.getElementById("countdown") ?? document.createElement("p");
  clock.id = "countdown";
  clock.setAttribute("role", "timer");
  clock.textContent = left === null ? "" : `${left} s left${t.phase === TablePhase.ARRANGING ? " to arrange" : t.phase === TablePhase.REVEALING ? " to reveal" : ""}`;
  clock.className = left !== null && left <= 10 ? "urgent" : "";
  const total = document.getElementById("my-total") ?? document.createElement("p");
  total.id = "my-total";
  total.textContent = mine ? `Your series total: ${mine.seriesTotal > 0n ? "+" : ""}${mine.seriesTotal}` : "";
  if (!line.parentElement) root.append(line, clock, total);
}

const announced = (s: Seat): string =>
  s.announcement === SurrenderChoice.SURRENDER ? "surrenders" : s.announcement === SurrenderChoice.PLAY ? "plays" : "";

function seatState(t: Table, s: Seat): string {
  if (!s.player) return "empty";
  if (s.timedOut) return "timed out";
  switch (t.phase) {
    case TablePhase.ARRANGING:
      return s.confirmed ? "confirmed" : s.committed ? "committed" : "arranging";
    case TablePhase.REVEALING:
      return s.revealed ? "revealed" : `to reveal${announced(s) ? ` (${announced(s)})` : ""}`;
    case TablePhase.ANNOUNCING:
      return t.announcingSeat === s.name ? "to announce" : announced(s);
    case TablePhase.AWAITING_CUT:
      return t.cutterSeat === s.name ? "cutting" : s.entropyContributed ? "entropy added" : "";
    default:
      return "";
  }
}

export function renderSeats(root: HTMLElement, t: Table, mySeat: string): void {
  const list = document.createElement("ul");
  list.className = "seats";
  for (const s of t.seats) {
    const li = document.createElement("li");
    li.dataset.seat = String(s.position);
    const badges = [t.dealerSeat === s.name ? "dealer" : "", t.cutterSeat === s.name && t.phase === TablePhase.AWAITING_CUT ? "cuts" : ""].filter(Boolean);
    const state = seatState(t, s);
    li.textContent = `${s.displayName || "—"}${s.name === mySeat ? " (you)" : ""}${badges.length ? ` [${badges.join(", ")}]` : ""}: ${s.seriesTotal > 0n ? "+" : ""}${s.seriesTotal}${state ? ` · ${state}` : ""}`;
    if (s.name === mySeat) li.className = "you";
    list.append(li);
  }
  root.replaceChildren(list);
}
