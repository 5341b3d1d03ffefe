// Open face's set, deal to deal (docs/rules.md §8.5, §8.11): who plays Fantasyland next and with how
// many cards, whether the button moves, and when the set ends. From the rules' text alone.
import { RANKS } from "./cards";
import { categoryOf, rowKey } from "./hands";
import { type OfcRuleSet, ofcRoyalty } from "./openface";
import type { Board } from "./openfaceMoves";

const AT_LEAST = (row: readonly number[], categories: string[]) => categories.includes(categoryOf(row));
const QUADS_OR_BETTER = ["four_of_a_kind", "straight_flush"];
const FULL_HOUSE_OR_BETTER = ["full_house", ...QUADS_OR_BETTER];

/** §8.5: a re-entry from a Fantasyland hand, by `fantasyland_reentry`. */
function reenters(rules: OfcRuleSet, b: Board): boolean {
  const trips = categoryOf(b.front) === "three_of_a_kind";
  switch ((rules.fantasyland_reentry as string | undefined) ?? "front_trips_middle_full_house_back_quads") {
    case "none": return false;
    case "front_trips_back_quads": return trips || AT_LEAST(b.back, QUADS_OR_BETTER);
    case "front_trips_middle_full_house_back_quads": return trips || AT_LEAST(b.middle, FULL_HOUSE_OR_BETTER) || AT_LEAST(b.back, QUADS_OR_BETTER);
    case "row_royalty_over_ten": return (["front", "middle", "back"] as const).some((r) => ofcRoyalty(r, b[r], rules) > 10);
    default: throw new Error(`unknown fantasyland_reentry ${String(rules.fantasyland_reentry)}`);
  }
}

/** §8.5: the cards a plain entry gets (`progressive`: QQ 14, KK 15, AA 16, trips 17, a lower pair 14). */
function entryCards(rules: OfcRuleSet, front: readonly number[]): number {
  const kind = (rules.fantasyland_cards as string | undefined) ?? "thirteen";
  if (kind === "thirteen") return 13;
  if (kind === "fourteen") return 14;
  if (kind !== "progressive") throw new Error(`unknown fantasyland_cards ${kind}`);
  const key = rowKey(front);
  if (categoryOf(front) === "three_of_a_kind") return 17;
  return { Q: 14, K: 15, A: 16 }[RANKS[key[1]!]!] ?? 14;
}

/**
 * §8.5: the cards seat's next deal deals it at once (a Fantasyland), or null (a normal deal), from
 * this deal's board, whether it was dead, and how many Fantasyland deals in a row it has just played.
 */
export function nextFantasyland(rules: OfcRuleSet, board: Board, dead: boolean, inARow: number): number | null {
  if (dead) return null; // §8.10: a dead hand earns neither entry nor re-entry
  const limit = rules.fantasyland_max_consecutive === undefined ? 2 : (rules.fantasyland_max_consecutive as number | null);
  if (limit !== null && inARow + 1 > limit) return null;
  if (inARow > 0) {
    if (!reenters(rules, board)) return null;
    const kind = (rules.fantasyland_cards as string | undefined) ?? "thirteen";
    return kind === "thirteen" ? 13 : 14; // a re-entry: 13, or 14 (fourteen, progressive)
  }
  const entry = rules.fantasyland_entry_rank === undefined ? "Q" : (rules.fantasyland_entry_rank as string | null);
  if (entry === null) return null;
  const category = categoryOf(board.front);
  const qualifies = category === "three_of_a_kind" || (category === "pair" && rowKey(board.front)[1]! >= RANKS.indexOf(entry));
  return qualifies ? entryCards(rules, board.front) : null;
}
