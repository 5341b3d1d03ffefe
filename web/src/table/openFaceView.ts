// What the open-face table page draws from the public view (Table.open_face) and the scores
// (DealScored.open_face): every seat's rows as they fill, its state on this street, each scored
// deal's boards with their royalties, the deltas and the running totals.
import { parseCard } from "../cards";
import { type OpenFaceDeal, OpenFaceDealPhase, type OpenFaceRows } from "../gen/sapsam/v1/open_face_pb";
import type { OpenFaceScore } from "../gen/sapsam/v1/table_event_pb";
import { type Table, TablePhase } from "../gen/sapsam/v1/table_pb";
import type { OfcRuleSet } from "../openface";
import { cardRow } from "../ui/cards";
import { handName } from "./arrange";
import { ROWS, type Rows3, royaltiesOf } from "./openFaceStreet";
import { phaseWords, secondsLeft } from "./view";

export const rowsOf = (r: OpenFaceRows | undefined): Rows3 => ({
  front: (r?.front ?? []).map(parseCard),
  middle: (r?.middle ?? []).map(parseCard),
  back: (r?.back ?? []).map(parseCard),
});

function h(tag: string, text = "", className = ""): HTMLElement {
  const e = document.createElement(tag);
  if (text) e.textContent = text;
  if (className) e.className = className;
  return e;
}

const signed = (n: bigint | number): string => (n > 0 ? `+${n}` : String(n));

/** The deal's phase in words, with the street. */
export function ofcPhaseWords(t: Table): string {
  const d = t.openFace;
  if (t.phase !== TablePhase.PLAYING || !d) return phaseWords(t.phase);
  switch (d.phase) {
    case OpenFaceDealPhase.PLACING:
      return `street ${(d.street ?? 0) + 1}: placing`;
    case OpenFaceDealPhase.FANTASYLAND:
      return "Fantasyland hands opening";
    case OpenFaceDealPhase.DISCARDS:
      return "discards opening";
    case OpenFaceDealPhase.COMPLETE:
      return "scoring";
    default:
      return "dealing";
  }
}

export function renderOfcHeader(root: HTMLElement, t: Table, mySeat: string): void {
  const r = t.openFaceRuleSet;
  const series = r?.seriesLength ?? 0;
  const d = t.openFace;
  const deadline = d?.deadlineTime && d.deadlineTime.seconds !== 0n ? { ...t, deadlineTime: d.deadlineTime } : t;
  const left = secondsLeft(deadline as Table);
  const mine = t.seats.find((s) => s.name === mySeat);
  const line = document.getElementById("phase") ?? h("p");
  line.id = "phase";
  line.textContent = [`${r?.name ?? "open face"} · ${t.seatCount} seats`, t.dealNumber ? `deal ${t.dealNumber}${series ? ` of ${series}` : ""}` : "", ofcPhaseWords(t)].filter(Boolean).join(" · ");
  const clock = document.getElementById("countdown") ?? h("p");
  clock.id = "countdown";
  clock.setAttribute("role", "timer");
  const onTurn = d?.turnSeat ? (d.turnSeat === mySeat ? " for your street" : " for the seat on turn") : "";
  clock.textContent = left === null ? "" : `${left} s left${onTurn}`;
  clock.className = left !== null && left <= 10 ? "urgent" : "";
  const total = document.getElementById("my-total") ?? h("p");
  total.id = "my-total";
  total.textContent = mine ? `Your series total: ${signed(mine.seriesTotal)}` : "";
  if (!line.parentElement) root.replaceChildren(line, clock, total);
}

function boardRows(rows: Rows3, withNames: boolean, royalties?: Record<string, number>): HTMLElement {
  const box = h("div", "", "ofc-board");
  for (const r of ROWS) {
    const line = h("div", "", "result-row");
    line.dataset.row = r;
    const extra = [withNames && rows[r].length ? handName(rows[r]) : "", royalties?.[r] ? `royalty ${royalties[r]}` : ""].filter(Boolean).join(" · ");
    line.append(h("span", r, "row-label"), cardRow(rows[r], { width: 34 }), h("span", extra, "hand-name"));
    box.append(line);
  }
  return box;
}

/** Every seat's rows as they fill, and what it is doing now. */
export function renderOfcSeats(root: HTMLElement, t: Table, mySeat: string, names: (s: string) => string): void {
  const d: OpenFaceDeal | undefined = t.openFace;
  const list = h("ul", "", "seats ofc-seats");
  t.seats.forEach((s, i) => {
    const v = d?.seats[i];
    const li = h("li", "", s.name === mySeat ? "seat you" : "seat");
    li.dataset.seat = String(i);
    const state = !v
      ? ""
      : v.fantasyland
        ? v.rowsHidden ? "Fantasyland: set face down" : v.committed ? "Fantasyland: set" : "Fantasyland: setting its hand"
        : d?.turnSeat === s.name ? "on turn" : v.placed ? "placed this street" : "";
    const discards = v?.discardsMade ? ` · discarded ${v.discardsMade}${v.discards.length ? `: ${v.discards.join(" ")}` : ""}` : "";
    li.append(h("strong", `${s.displayName || names(s.name)}${s.name === mySeat ? " (you)" : ""}`), h("span", ` · total ${signed(s.seriesTotal)}${state ? ` · ${state}` : ""}${discards}`));
    if (v) li.append(boardRows(rowsOf(v.rows), false));
    list.append(li);
  });
  root.replaceChildren(list);
}

/** One scored deal: each seat's board, dead or not, royalties, the deal's delta and the running total. */
export function renderOfcScore(n: number, score: OpenFaceScore, rules: OfcRuleSet, mySeat: string, names: (s: string) => string): HTMLElement {
  const section = h("section", "", "result ofc-result");
  section.dataset.deal = String(n);
  section.append(h("h3", `Deal ${n}`));
  for (const s of score.seats) {
    const rows = rowsOf(s.rows);
    const box = h("div", "", s.seat === mySeat ? "seat-result you" : "seat-result");
    box.append(h("p", `${names(s.seat)}${s.seat === mySeat ? " (you)" : ""}: ${s.dead ? "dead hand · " : ""}${signed(s.scoreDelta)} this deal, ${signed(s.seriesTotal)} in all`, "seat-line"));
    box.append(boardRows(rows, true, royaltiesOf(rows, s.dead, rules)));
    section.append(box);
  }
  return section;
}
