// Playing cards drawn as SVG, for the table and the replay (one component: reuse it, do not write
// another). A card is its index (rank * 4 + suit, docs/fairness.md §3) or its written form ("As").
import { RANKS, SUITS, parseCard, rankOf, suitOf } from "../cards";

const SVG = "http://www.w3.org/2000/svg";
export const SUIT_SYMBOLS = ["♣", "♦", "♥", "♠"] as const;
export const SUIT_NAMES = ["clubs", "diamonds", "hearts", "spades"] as const;
const RANK_NAMES = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "jack", "queen", "king", "ace"];
/** How a rank is printed on the card (ten as "10"). */
const RANK_LABELS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];

const toIndex = (card: number | string): number => (typeof card === "number" ? card : parseCard(card));

/** "ace of spades": what a screen reader says for a card. */
export function cardLabel(card: number | string): string {
  const c = toIndex(card);
  return `${RANK_NAMES[rankOf(c)]} of ${SUIT_NAMES[suitOf(c)]}`;
}

/** "A♠", "10♥": a card as short text with its suit symbol. */
export function cardShort(card: number | string): string {
  const c = toIndex(card);
  return `${RANK_LABELS[rankOf(c)]}${SUIT_SYMBOLS[suitOf(c)]}`;
}

/** Whether a card is printed red (hearts and diamonds) or black (clubs and spades). */
export const isRed = (card: number | string): boolean => {
  const s = suitOf(toIndex(card));
  return s === 1 || s === 2;
};

export interface CardOptions {
  /** Four colours: clubs green, diamonds blue, hearts red, spades black (easier at a glance). */
  fourColour?: boolean;
  /** Width in CSS pixels (the height is 1.4 times it); the CSS may override it. */
  width?: number;
}

function el<K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

/** One card face as an <svg> (role img, labelled "ace of spades"; class "card suit-s red|black"). */
export function cardSvg(card: number | string, options: CardOptions = {}): SVGSVGElement {
  const c = toIndex(card);
  const suit = suitOf(c);
  const colour = options.fourColour ? ["#1b7a33", "#1f5fbf", "#c8102e", "#111"][suit]! : isRed(c) ? "#c8102e" : "#111";
  const svg = el("svg", { viewBox: "0 0 50 70", role: "img", "aria-label": cardLabel(c), class: `card suit-${SUITS[suit]} ${isRed(c) ? "red" : "black"}` });
  if (options.width) {
    svg.setAttribute("width", String(options.width));
    svg.setAttribute("height", String(Math.round(options.width * 1.4)));
  }
  svg.dataset.card = `${RANKS[rankOf(c)]}${SUITS[suit]}`;
  svg.append(el("rect", { x: 0.5, y: 0.5, width: 49, height: 69, rx: 4, fill: "#fff", stroke: "#888" }));
  const rank = RANK_LABELS[rankOf(c)]!;
  const symbol = SUIT_SYMBOLS[suit]!;
  const corner = (x: number, y: number, rotate: boolean): SVGGElement => {
    const g = el("g", rotate ? { transform: "rotate(180 25 35)" } : {});
    const r = el("text", { x, y, "font-size": 13, "font-weight": 700, fill: colour, "font-family": "system-ui, sans-serif", "text-anchor": "middle" });
    r.textContent = rank;
    const s = el("text", { x, y: y + 12, "font-size": 12, fill: colour, "text-anchor": "middle" });
    s.textContent = symbol;
    g.append(r, s);
    return g;
  };
  const middle = el("text", { x: 25, y: 44, "font-size": 26, fill: colour, "text-anchor": "middle" });
  middle.textContent = symbol;
  svg.append(corner(8, 14, false), corner(8, 14, true), middle);
  return svg;
}

/** A card's back (a card not shown: another seat's, or one not yet dealt). */
export function cardBackSvg(options: CardOptions = {}): SVGSVGElement {
  const svg = el("svg", { viewBox: "0 0 50 70", role: "img", "aria-label": "a card face down", class: "card back" });
  if (options.width) {
    svg.setAttribute("width", String(options.width));
    svg.setAttribute("height", String(Math.round(options.width * 1.4)));
  }
  svg.append(
    el("rect", { x: 0.5, y: 0.5, width: 49, height: 69, rx: 4, fill: "#23408e", stroke: "#888" }),
    el("rect", { x: 4, y: 4, width: 42, height: 62, rx: 3, fill: "none", stroke: "#9fb3e8", "stroke-dasharray": "3 2" }),
  );
  return svg;
}

/** An empty place for a card (a row's free slot). */
export function cardSlotSvg(label: string, options: CardOptions = {}): SVGSVGElement {
  const svg = el("svg", { viewBox: "0 0 50 70", role: "img", "aria-label": label, class: "card slot" });
  if (options.width) {
    svg.setAttribute("width", String(options.width));
    svg.setAttribute("height", String(Math.round(options.width * 1.4)));
  }
  svg.append(el("rect", { x: 1, y: 1, width: 48, height: 68, rx: 4, fill: "none", stroke: "#999", "stroke-dasharray": "4 3" }));
  return svg;
}

/** A row of cards as one element (class "cards"), labelled with the cards' names. */
export function cardRow(cards: readonly (number | string)[], options: CardOptions = {}): HTMLElement {
  const row = document.createElement("span");
  row.className = "cards";
  row.setAttribute("role", "group");
  row.setAttribute("aria-label", cards.map(cardLabel).join(", ") || "no cards");
  for (const c of cards) row.append(cardSvg(c, options));
  return row;
}

/**
 * ← → on a card button: the focus moves to the next or previous of `cards` (wrapping round), and
 * the key is taken (true); any other key is left to the caller (false).
 */
export function arrowBetweenCards(event: KeyboardEvent, cards: readonly HTMLButtonElement[], from: HTMLButtonElement): boolean {
  if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return false;
  event.preventDefault();
  const step = event.key === "ArrowRight" ? 1 : cards.length - 1;
  cards[(cards.indexOf(from) + step) % cards.length]?.focus();
  return true;
}
