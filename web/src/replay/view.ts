// The replay on the page: one deal's steps (src/replay/steps.ts) with previous/next, a slider and
// the keyboard (← →, Home, End, Page Up/Down by ten), the seats drawn with the shared SVG cards.
import { cardBackSvg, cardRow, cardSlotSvg } from "../ui/cards";
import { type DealReplay, ROWS, type SeatState, type Step } from "./steps";

const h = <K extends keyof HTMLElementTagNameMap>(tag: K, props: { className?: string; text?: string } = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag);
  if (props.className) node.className = props.className;
  if (props.text !== undefined) node.textContent = props.text;
  node.append(...children);
  return node;
};

const ROW_SIZE = { front: 3, middle: 5, back: 5 } as const;
const signed = (x: number) => `${x > 0 ? "+" : ""}${x}`;

function rowView(seat: SeatState, row: (typeof ROWS)[number], openFace: boolean): HTMLElement {
  const cards = seat.rows?.[row] ?? [];
  const line = h("div", { className: "replay-row" }, h("span", { className: "row-name", text: row }));
  const shown = cardRow(cards);
  if (openFace) for (let k = cards.length; k < ROW_SIZE[row]; k++) shown.append(cardSlotSvg(`empty place in the ${row} row`));
  line.append(shown);
  const i = ROWS.indexOf(row);
  const name = seat.names?.[i];
  if (name !== undefined) {
    const royalty = seat.royalties?.[i] ?? 0;
    line.append(h("span", { className: "row-hand", text: `${name}${royalty ? ` · royalty ${royalty}` : ""}` }));
  }
  return line;
}

function seatView(seat: SeatState, step: Step, openFace: boolean): HTMLElement {
  const box = h("section", { className: `replay-seat${step.focus === seat.seat ? " focus" : ""}` });
  box.setAttribute("aria-label", `seat ${seat.seat}, ${seat.player}`);
  const head = h("h4", { text: `Seat ${seat.seat} · ${seat.player}` });
  for (const m of seat.marks) head.append(h("span", { className: `mark${/foul|dead/.test(m) ? " bad" : ""}`, text: m }));
  box.append(head);
  if (seat.rows !== null) for (const r of ROWS) box.append(rowView(seat, r, openFace));
  if (seat.inHand.length > 0) box.append(h("div", { className: "replay-row" }, h("span", { className: "row-name", text: seat.rows ? "in hand" : "hand" }), cardRow(seat.inHand)));
  if (seat.discards.length > 0 || seat.hiddenDiscards > 0) {
    const held = cardRow(seat.discards);
    for (let k = 0; k < seat.hiddenDiscards; k++) held.append(cardBackSvg());
    held.setAttribute("aria-label", seat.discards.length ? `discards: ${held.getAttribute("aria-label")}` : `${seat.hiddenDiscards} discards face down`);
    box.append(h("div", { className: "replay-row" }, h("span", { className: "row-name", text: "discards" }), held));
  }
  if (seat.delta !== undefined)
    box.append(h("p", { className: "replay-total", text: `this deal ${signed(seat.delta)}${seat.seriesTotal !== undefined ? ` · series ${seat.seriesTotal}` : ""}` }));
  return box;
}

function pairsView(step: Step): HTMLElement | null {
  if (!step.pairs?.length) return null;
  const table = h("table", { className: "replay-pairs" });
  table.append(h("caption", { text: "Row results (from the first seat's side) and what it wins" }));
  table.append(h("tr", {}, ...["pair", "front", "middle", "back", "delta"].map((t) => h("th", { text: t }))));
  for (const p of step.pairs) {
    const cell = (r: number) => h("td", { className: r > 0 ? "won" : r < 0 ? "lost" : "", text: r > 0 ? "won" : r < 0 ? "lost" : "tie" });
    table.append(h("tr", {}, h("td", { text: `${p.a} v ${p.b}` }), ...p.rows.map(cell), h("td", { text: signed(p.delta) })));
  }
  return table;
}

/**
 * Draws `deals` into `root` (a deal chooser when there are several); returns a function showing a
 * step. `failures` (event version -> what does not hold there, from the verifier's failed checks)
 * marks those steps and offers to jump to the first.
 */
export function mountReplay(root: HTMLElement, deals: DealReplay[], failures: Map<number, string> = new Map()): { show: (deal: number, step: number) => void } {
  root.replaceChildren();
  root.classList.add("replay");
  if (deals.length === 0) {
    root.append(h("p", { text: "No deal in this file to replay." }));
    return { show: () => undefined };
  }
  const chooser = h("select");
  chooser.setAttribute("aria-label", "Deal to replay");
  deals.forEach((d, i) => chooser.append(new Option(`Deal ${d.dealNumber} (${d.outcome}${d.family === "open_face" ? ", open face" : ""})`, String(i))));
  const prev = h("button", { text: "◀ Previous" });
  const next = h("button", { text: "Next ▶" });
  prev.type = next.type = "button";
  const slider = h("input");
  slider.type = "range";
  slider.min = "0";
  slider.setAttribute("aria-label", "Step");
  const counter = h("span", { className: "replay-counter" });
  counter.setAttribute("aria-live", "polite");
  const title = h("h3");
  const lines = h("ul", { className: "replay-lines" });
  const warnings = h("p", { className: "replay-warning" });
  const failure = h("p", { className: "replay-failure" });
  failure.setAttribute("role", "alert");
  const jump = h("button", { text: "Go to the first failure" });
  jump.type = "button";
  const table = h("div", { className: "replay-table" });
  const controls = h("div", { className: "replay-controls" }, ...(deals.length > 1 ? [chooser] : []), prev, slider, next, counter, ...(failures.size ? [jump] : []));
  root.tabIndex = 0;
  root.setAttribute("aria-label", "Replay: ← and → step, Home and End jump, Page Up and Page Down step by ten");
  root.append(controls, title, failure, lines, warnings, table);

  let deal = 0;
  let at = 0;
  const show = (d: number, step: number) => {
    deal = Math.max(0, Math.min(deals.length - 1, d));
    const replay = deals[deal]!;
    at = Math.max(0, Math.min(replay.steps.length - 1, step));
    const s = replay.steps[at]!;
    chooser.value = String(deal);
    slider.max = String(replay.steps.length - 1);
    slider.value = String(at);
    slider.setAttribute("aria-valuetext", `step ${at + 1}: ${s.title}`);
    prev.disabled = at === 0;
    next.disabled = at === replay.steps.length - 1;
    counter.textContent = `step ${at + 1} of ${replay.steps.length}${s.version !== undefined ? ` · event ${s.version}` : ""}`;
    title.textContent = s.title;
    lines.replaceChildren(...s.lines.map((l) => h("li", { text: l })));
    warnings.textContent = replay.warnings.join("; ");
    warnings.hidden = replay.warnings.length === 0;
    const failed = s.version === undefined ? undefined : failures.get(s.version);
    failure.textContent = failed === undefined ? "" : `✗ This event does not hold: ${failed}`;
    failure.hidden = failed === undefined;
    table.replaceChildren(...s.seats.map((seat) => seatView(seat, s, replay.family === "open_face")));
    const pairs = pairsView(s);
    if (pairs) table.append(pairs);
    root.dataset.step = String(at);
    root.dataset.kind = s.kind;
  };
  prev.addEventListener("click", () => show(deal, at - 1));
  next.addEventListener("click", () => show(deal, at + 1));
  slider.addEventListener("input", () => show(deal, Number(slider.value)));
  chooser.addEventListener("change", () => show(Number(chooser.value), 0));
  jump.addEventListener("click", () => {
    for (const [d, replay] of deals.entries()) {
      const at = replay.steps.findIndex((st) => st.version !== undefined && failures.has(st.version));
      if (at >= 0) return show(d, at);
    }
  });
  root.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLSelectElement || event.target instanceof HTMLInputElement) return;
    const last = deals[deal]!.steps.length - 1;
    const to = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: last, PageUp: at - 10, PageDown: at + 10 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    show(deal, to);
  });
  show(0, 0);
  return { show };
}
