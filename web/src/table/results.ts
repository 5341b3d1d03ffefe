// A scored deal drawn from your seat: every seat's rows as cards, each row named, won / lost / tied
// against you row by row, the deal's deltas and the series totals; and the final standings.
import { parseCard } from "../cards";
import type { DealResult, Standing } from "../gen/sapsam/v1/table_pb";
import { RowOutcome, TimeoutConsequence, TimeoutStage } from "../gen/sapsam/v1/table_pb";
import { cardRow } from "../ui/cards";
import { ROWS, type RowName, handName } from "./arrange";

export type SeatNames = (seat: string) => string;

/** "won" / "lost" / "tied" of `seat`'s row against `against`'s, from the pair results ("" if none). */
export function rowOutcome(result: DealResult, seat: string, against: string, row: RowName): "won" | "lost" | "tied" | "" {
  for (const p of result.pairs) {
    const mine = p.firstSeat === seat ? "first" : p.secondSeat === seat ? "second" : "";
    const theirs = p.firstSeat === against ? "first" : p.secondSeat === against ? "second" : "";
    if (!mine || !theirs || mine === theirs) continue;
    const o = p[row];
    if (o === RowOutcome.TIE) return "tied";
    if (o === RowOutcome.FIRST_SEAT_WON) return mine === "first" ? "won" : "lost";
    if (o === RowOutcome.SECOND_SEAT_WON) return mine === "second" ? "won" : "lost";
  }
  return "";
}

const TIMEOUT_STAGES: Partial<Record<TimeoutStage, string>> = {
  [TimeoutStage.ARRANGING]: "arranging",
  [TimeoutStage.REVEALING]: "revealing",
  [TimeoutStage.ANNOUNCING]: "announcing",
};

const signed = (n: bigint): string => (n > 0n ? `+${n}` : String(n));

function h(tag: string, text = "", className = ""): HTMLElement {
  const e = document.createElement(tag);
  if (text) e.textContent = text;
  if (className) e.className = className;
  return e;
}

/** The reveal of one scored deal, from `mySeat`'s point of view. */
export function renderResult(result: DealResult, mySeat: string, names: SeatNames): HTMLElement {
  const box = h("section", "", "result");
  box.setAttribute("aria-label", `deal ${result.dealNumber} result`);
  box.dataset.deal = String(result.dealNumber);
  box.append(h("h3", `Deal ${result.dealNumber}: the reveal`));
  for (const s of result.seats) {
    const you = s.seat === mySeat;
    const card = h("article", "", `seat-result${you ? " you" : ""}`);
    const head = h("h4", `${names(s.seat)}${you ? " (you)" : ""}: ${signed(s.scoreDelta)} this deal, ${signed(s.seriesTotal)} in all`);
    card.append(head);
    if (s.foul) card.append(h("p", `Fouled${s.foulReason ? ` (${s.foulReason.toLowerCase().replaceAll("_", " ")})` : ""}: every row loses.`, "foul"));
    if (s.timedOutStage) card.append(h("p", `Timed out ${TIMEOUT_STAGES[s.timedOutStage] ?? ""}: ${s.timeoutConsequence === TimeoutConsequence.SOLVER ? "the server's solver set the rows" : "a foul"}.`, "foul"));
    if (s.natural && s.natural !== "none") card.append(h("p", `Declared a natural: ${s.natural.replaceAll("_", " ")}`));
    const arrangement = s.arrangement;
    for (const row of ROWS) {
      const cards = (arrangement?.[row] ?? []).map(parseCard);
      const line = h("div", "", "result-row");
      line.append(h("span", row, "row-label"), cardRow(cards));
      const name = handName(cards);
      if (name) line.append(h("span", name, "hand-name"));
      if (!you) {
        const o = rowOutcome(result, mySeat, s.seat, row);
        if (o) line.append(h("span", `you ${o}`, `outcome ${o}`));
      }
      card.append(line);
    }
    box.append(card);
  }
  return box;
}

/** The final standings, best first. */
export function renderStandings(standings: readonly Standing[], mySeat: string, names: SeatNames): HTMLElement {
  const box = h("section", "", "standings");
  box.setAttribute("aria-label", "final standings");
  box.append(h("h3", "Series complete: final standings"));
  const list = h("ul");
  for (const s of standings) {
    list.append(h("li", `${s.place}. ${names(s.seat)}${s.seat === mySeat ? " (you)" : ""}: ${signed(s.total)}`));
  }
  box.append(list);
  return box;
}
