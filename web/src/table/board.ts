// The arranging board: your unplaced cards and the three rows. Tap (or Enter or Space on) a card to
// pick it, then tap a row (or press 1, 2, 3 for front, middle, back) to put it there; or press 1,
// 2, 3 on a focused card at once, ← → moving between cards; a placed card tapped goes back to the
// hand (or press 0 on it). Cards can also be dragged onto a row. Each row shows its hand's
// name, and a foul warning appears as soon as two full rows are out of order.
import { arrowBetweenCards, cardLabel, cardShort, cardSvg } from "../ui/cards";
import { Arrangement, ROWS, ROW_SIZES, type RowName, handName, partialName } from "./arrange";

/** Keys 1, 2, 3: front, middle, back; 0: back to the hand. */
const KEY_ROWS: Record<string, RowName | undefined> = { "1": "front", "2": "middle", "3": "back", "0": undefined };

export interface BoardEvents {
  changed(): void;
}

export class Board {
  readonly root = document.createElement("div");
  private picked: number | null = null;

  constructor(
    readonly arrangement: Arrangement,
    private readonly events: BoardEvents,
    private readonly strict = false,
  ) {
    this.root.className = "board";
    this.root.addEventListener("keydown", (e) => this.key(e));
    this.render();
  }

  /**
   * The keyboard: ← → move between the cards; 1, 2, 3 put the picked card (or, with none picked,
   * the focused one) in the front, middle or back row; 0 takes it back to the hand.
   */
  private key(e: KeyboardEvent): void {
    const focused = (e.target as HTMLElement | null)?.closest?.("button.card-button") as HTMLButtonElement | null;
    if (focused && arrowBetweenCards(e, [...this.root.querySelectorAll<HTMLButtonElement>("button.card-button")], focused)) return;
    if (!(e.key in KEY_ROWS)) return;
    const card = this.picked ?? (focused ? Number(focused.dataset.index) : null);
    if (card === null || !Number.isInteger(card)) return;
    e.preventDefault();
    this.place(card, KEY_ROWS[e.key]);
  }

  private place(card: number, row: RowName | undefined): void {
    const ok = this.arrangement.put(card, row);
    if (ok) this.picked = null;
    this.render(ok ? undefined : `The ${row} row is full.`);
    this.events.changed();
    // keep the keyboard's place: focus the next card in the hand
    (this.root.querySelector<HTMLButtonElement>(".hand button.card-button") ?? this.root.querySelector<HTMLButtonElement>("button"))?.focus();
  }

  private cardButton(card: number, where: RowName | undefined): HTMLButtonElement {
    const b = document.createElement("button");
    b.type = "button";
    b.className = `card-button${this.picked === card ? " picked" : ""}`;
    b.dataset.card = cardShort(card);
    b.dataset.index = String(card);
    b.setAttribute("aria-pressed", String(this.picked === card));
    b.setAttribute("aria-label", `${cardLabel(card)}${where ? `, in the ${where} row: press (or 0) to take it back` : ": press 1, 2 or 3 for the front, middle or back row, or press to pick it"}`);
    b.draggable = true;
    b.append(cardSvg(card));
    b.addEventListener("dragstart", (e) => e.dataTransfer?.setData("text/plain", String(card)));
    b.addEventListener("click", () => {
      if (where) this.place(card, undefined);
      else {
        this.picked = this.picked === card ? null : card;
        this.render();
        this.root.querySelector<HTMLButtonElement>(`button[data-card="${cardShort(card)}"]`)?.focus();
      }
    });
    return b;
  }

  render(notice = ""): void {
    const a = this.arrangement;
    this.root.replaceChildren();
    for (const row of ROWS) {
      const cards = a.row(row);
      const zone = document.createElement("div");
      zone.className = `row-zone ${row}`;
      zone.setAttribute("role", "group");
      zone.setAttribute("aria-label", `${row} row, ${cards.length} of ${ROW_SIZES[row]} cards`);
      zone.addEventListener("dragover", (e) => e.preventDefault());
      zone.addEventListener("drop", (e) => {
        e.preventDefault();
        const card = Number(e.dataTransfer?.getData("text/plain"));
        if (Number.isInteger(card)) this.place(card, row);
      });
      const head = document.createElement("button");
      head.type = "button";
      head.className = "row-head";
      head.dataset.row = row;
      const full = cards.length === ROW_SIZES[row];
      const name = full ? handName(cards) : `${cards.length}/${ROW_SIZES[row]}${cards.length ? `, ${partialName(cards)}` : ""}`;
      head.textContent = `${row[0]!.toUpperCase()}${row.slice(1)} (${ROWS.indexOf(row) + 1}): ${name}`;
      head.setAttribute("aria-label", `put the picked card in the ${row} row; ${name}`);
      head.disabled = this.picked === null || cards.length >= ROW_SIZES[row];
      head.addEventListener("click", () => this.picked !== null && this.place(this.picked, row));
      const line = document.createElement("div");
      line.className = "row-cards";
      for (const c of cards) line.append(this.cardButton(c, row));
      zone.append(head, line);
      this.root.append(zone);
    }
    const hand = document.createElement("div");
    hand.className = "hand";
    hand.setAttribute("role", "group");
    hand.setAttribute("aria-label", `your hand, ${a.hand().length} cards to place`);
    for (const c of a.hand()) hand.append(this.cardButton(c, undefined));
    const warn = document.createElement("p");
    warn.className = "foul-warning";
    warn.setAttribute("role", "status");
    const foul = a.foul(this.strict);
    warn.textContent = notice || (foul ? `Foul: ${foul}.` : "");
    this.root.append(hand, warn);
  }
}
