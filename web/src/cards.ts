// Cards (docs/fairness.md §3, docs/rules.md §1.2): index = rank * 4 + suit, written "As", "Td", "2c".

export const RANKS = "23456789TJQKA";
export const SUITS = "cdhs";

export const rankOf = (card: number): number => card >> 2;
export const suitOf = (card: number): number => card & 3;

export function parseCard(s: string): number {
  const rank = RANKS.indexOf(s[0] ?? "");
  const suit = SUITS.indexOf(s[1] ?? "");
  if (s.length !== 2 || rank < 0 || suit < 0) throw new Error(`not a card: "${s}"`);
  return rank * 4 + suit;
}

export function cardName(card: number): string {
  if (!Number.isInteger(card) || card < 0 || card > 51) throw new Error(`not a card index: ${card}`);
  return `${RANKS[rankOf(card)]}${SUITS[suitOf(card)]}`;
}

/** A row or hand as one string, cards separated by single spaces ("" is no cards). */
export function parseCards(s: string): number[] {
  return s === "" ? [] : s.split(" ").map(parseCard);
}

export const formatCards = (cards: readonly number[]): string => cards.map(cardName).join(" ");

export const sortedCards = (cards: readonly number[]): number[] => [...cards].sort((a, b) => a - b);
