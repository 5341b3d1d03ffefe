// The pure part of the open-face table page (issues #18, #19, #21): one street's cards placed into
// front, middle and back (3/5/5 with what the board already holds), Pineapple's discard, and a
// Fantasyland hand's 13 or 14 cards set at once (the cards beyond 13 left off); the dead-hand
// warning (docs/rules.md §8.2: rows out of order) as soon as two neighbouring rows are full.
import { compareRows } from "../hands";
import { type OfcRuleSet, ofcRoyalty } from "../openface";

export type Row = "front" | "middle" | "back";
export type Spot = Row | "discard";
export const ROWS: readonly Row[] = ["front", "middle", "back"];
export const CAPACITY: Readonly<Record<Row, number>> = { front: 3, middle: 5, back: 5 };

export interface Rows3 {
  front: number[];
  middle: number[];
  back: number[];
}

export const emptyRows = (): Rows3 => ({ front: [], middle: [], back: [] });

/** One street (or one Fantasyland hand): `dealt` to place on `board`, `discards` of them left off. */
export class StreetPlan {
  private readonly where = new Map<number, Spot>();

  constructor(
    readonly board: Readonly<Rows3>,
    readonly dealt: readonly number[],
    readonly discards: number,
  ) {}

  /** Room left in `row` (or discards still to choose). */
  room(spot: Spot): number {
    const used = [...this.where.values()].filter((s) => s === spot).length;
    if (spot === "discard") return this.discards - used;
    const placed = [...this.where.values()].filter((s) => s !== "discard").length;
    // a row's free places, and no more cards placed than the street places (the rest are discarded)
    return Math.min(CAPACITY[spot] - this.board[spot].length - used, this.dealt.length - this.discards - placed);
  }

  /** Put `card` (one of the street's) in `spot`; false when it has no room. */
  put(card: number, spot: Spot): boolean {
    if (!this.dealt.includes(card)) return false;
    if (this.where.get(card) === spot) return true;
    if (this.room(spot) <= 0) return false;
    this.where.set(card, spot);
    return true;
  }

  /** Back to the cards still to place. */
  take(card: number): void {
    this.where.delete(card);
  }

  spotOf(card: number): Spot | undefined {
    return this.where.get(card);
  }

  clear(): void {
    this.where.clear();
  }

  unplaced(): number[] {
    return this.dealt.filter((c) => !this.where.has(c));
  }

  complete(): boolean {
    return this.unplaced().length === 0 && this.room("discard") === 0;
  }

  /** What each row gains (the placement sent with PlaceCards). */
  placement(): Rows3 {
    const rows = emptyRows();
    for (const c of this.dealt) {
      const s = this.where.get(c);
      if (s && s !== "discard") rows[s].push(c);
    }
    return rows;
  }

  discarded(): number[] {
    return this.dealt.filter((c) => this.where.get(c) === "discard");
  }

  /** The board with this placement on it. */
  after(): Rows3 {
    const p = this.placement();
    return { front: [...this.board.front, ...p.front], middle: [...this.board.middle, ...p.middle], back: [...this.board.back, ...p.back] };
  }

  /** Each unplaced card into the first row with room, back first (and the discards last). */
  fill(): void {
    for (const c of this.unplaced()) {
      const spot = (["back", "middle", "front", "discard"] as const).find((s) => this.room(s) > 0);
      if (spot) this.where.set(c, spot);
    }
  }
}

/** A dead hand for sure: two neighbouring rows full and out of order (middle under front, back under middle). */
export function deadRows(rows: Readonly<Rows3>): boolean {
  const full = (r: Row) => rows[r].length === CAPACITY[r];
  return (full("front") && full("middle") && compareRows(rows.middle, rows.front) < 0) || (full("middle") && full("back") && compareRows(rows.back, rows.middle) < 0);
}

/** The cards dealt this seat not yet on its board nor discarded: the street's to place. */
export function toPlace(dealt: readonly number[], board: Readonly<Rows3>, discarded: readonly number[]): number[] {
  const gone = new Set([...board.front, ...board.middle, ...board.back, ...discarded]);
  return dealt.filter((c) => !gone.has(c));
}

/** How many cards the street discards: Pineapple's `street_discards` after the first street. */
export const streetDiscards = (street: number, streetDiscardsRule: number): number => (street > 0 ? streetDiscardsRule : 0);

/** Keys 1/2/3 (or f/m/b) put the focused card in front/middle/back, x discards it. */
export function spotForKey(key: string): Spot | undefined {
  return ({ "1": "front", f: "front", "2": "middle", m: "middle", "3": "back", b: "back", x: "discard", "0": "discard" } as Record<string, Spot>)[key.toLowerCase()];
}

/** The table's open-face rule set as web/src/openface.ts takes it (snake_case, as the export's). */
export function ofcRules(r: {
  streetCards: number[]; royaltyTable: string; middleTripsRoyalty: number; streetDiscards: number;
  scoopPoints: number; twoOfThreePoints: number; finnishTwoOfSpades: string; middleRow: string;
}): OfcRuleSet {
  return {
    street_cards: r.streetCards, royalty_table: r.royaltyTable || "american", middle_trips_royalty: r.middleTripsRoyalty,
    street_discards: r.streetDiscards, scoop_points: r.scoopPoints, two_of_three_points: r.twoOfThreePoints,
    finnish_two_of_spades: r.finnishTwoOfSpades || "off", middle_row: r.middleRow || "high",
  };
}

/** Each row's royalty (docs/rules.md §8.3) of a scored board; a dead hand earns none. */
export function royaltiesOf(rows: Readonly<Rows3>, dead: boolean, rules: OfcRuleSet): Record<Row, number> {
  const r = (row: Row) => (dead || rows[row].length !== CAPACITY[row] ? 0 : ofcRoyalty(row, rows[row], rules));
  return { front: r("front"), middle: r("middle"), back: r("back") };
}
