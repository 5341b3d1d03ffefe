// Open face's moves made for a seat, from docs/rules.md alone: the placements of a street in the
// order §8.2 lists them (biggest row first), a board dead whatever the cards still to come (§8.2:
// exact once at most two places remain, otherwise bounds of each row), the automatic moves (§8.6),
// a timeout's move (§8.7), a timed-out Fantasyland hand's setting (§8.5, §8.7) and 2-7's middle
// (§8.12). What the service placed for a seat must be exactly what these give.
import { type RowKey, rowKey } from "./hands";
import type { OfcRuleSet } from "./openface";

export type Board = { front: number[]; middle: number[]; back: number[] };
export type Row = keyof Board;
export const ROWS = ["front", "middle", "back"] as const;
export const CAPACITY: Record<Row, number> = { front: 3, middle: 5, back: 5 };
const BIGGEST_ROW_FIRST = ["back", "middle", "front"] as const;

/** Two row keys compared (1, 0, -1), a shorter key below a longer one it begins. */
export const cmp = (a: RowKey, b: RowKey): number => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return (a[i] ?? -2) > (b[i] ?? -2) ? 1 : -1;
  return 0;
};
const free = (b: Board, r: Row) => CAPACITY[r] - b[r].length;
const with_ = (b: Board, p: Board): Board => ({ front: [...b.front, ...p.front], middle: [...b.middle, ...p.middle], back: [...b.back, ...p.back] });

/** §8.12: a 5-card row's deuce-to-seven key (lower is better): the wheel is ace high, a suited one an ace-high flush. */
export function deuceToSevenKey(cards: readonly number[]): RowKey {
  const key = rowKey(cards);
  if ((key[0] === 4 || key[0] === 8) && key[1] === 3) return [key[0] === 8 ? 5 : 0, 12, 3, 2, 1, 0];
  return key;
}

export const lowballMiddle = (rules: OfcRuleSet) => ((rules.middle_row as string | undefined) ?? "high") === "deuce_to_seven";

/** §8.2, §8.12: whether a complete board's rows are in order under the rule set's order rule. */
export function inOrder(rules: OfcRuleSet, b: Board): boolean {
  const front = rowKey(b.front);
  const back = rowKey(b.back);
  if (!lowballMiddle(rules)) return cmp(front, rowKey(b.middle)) <= 0 && cmp(rowKey(b.middle), back) <= 0;
  if (cmp(front, back) > 0) return false;
  return ((rules.lowball_order as string | undefined) ?? "middle_weakest") !== "middle_weakest" || cmp(deuceToSevenKey(b.middle), front) <= 0;
}

/** §8.2: every placement of `dealt` (in the order dealt) the rows have room for, each card tried back, middle, front. */
export function legalPlacements(board: Board, dealt: readonly number[]): Board[] {
  const room = { front: free(board, "front"), middle: free(board, "middle"), back: free(board, "back") };
  const out: Board[] = [];
  const chosen: Row[] = [];
  const extend = (i: number) => {
    if (i === dealt.length) {
      const p: Board = { front: [], middle: [], back: [] };
      dealt.forEach((c, k) => p[chosen[k]!].push(c));
      out.push(p);
      return;
    }
    for (const r of BIGGEST_ROW_FIRST) {
      if (room[r] === 0) continue;
      room[r]--; chosen.push(r);
      extend(i + 1);
      chosen.pop(); room[r]++;
    }
  };
  extend(0);
  return out;
}

function combinations<T>(xs: readonly T[], k: number): T[][] {
  if (k === 0) return [[]];
  return xs.flatMap((x, i) => combinations(xs.slice(i + 1), k - 1).map((rest) => [x, ...rest]));
}

/** §8.12: every (placement, discards) of a street: each choice of discards (the last dealt first), every placement of the rest. */
export function streetMoves(board: Board, dealt: readonly number[], discards: number): { placement: Board; thrown: number[] }[] {
  return combinations(dealt, discards).reverse().flatMap((thrown) =>
    legalPlacements(board, dealt.filter((c) => !thrown.includes(c))).map((placement) => ({ placement, thrown })));
}

/** The weakest and strongest key a row can end with from `pool`, when at most two places are empty; else null. */
function rowBounds(row: readonly number[], capacity: number, pool: readonly number[]): [RowKey, RowKey] | null {
  const empty = capacity - row.length;
  if (empty === 0) { const k = rowKey(row); return [k, k]; }
  if (empty > 2 || pool.length < empty) return null;
  let lo: RowKey | null = null;
  let hi: RowKey | null = null;
  for (const extra of combinations(pool, empty)) {
    const k = rowKey([...row, ...extra]);
    if (lo === null || cmp(k, lo) < 0) lo = k;
    if (hi === null || cmp(k, hi) > 0) hi = k;
  }
  return [lo!, hi!];
}

/**
 * §8.2: whether the board cannot end in order whatever cards of `pool` fill it; true only when
 * certain. With at most two empty places on the board every filling is tried; otherwise each row
 * alone is bounded (exactly with at most two empty places, else unbounded) and a necessary
 * condition failing is proof (2-7: only back against front).
 */
export function deadWhateverComes(board: Board, pool: readonly number[], rules: OfcRuleSet): boolean {
  const places = ROWS.flatMap((r) => Array.from({ length: free(board, r) }, () => r));
  if (places.length <= 2) {
    if (pool.length < places.length) return false;
    const alive = (extra: number[]) => {
      const b: Board = { front: [...board.front], middle: [...board.middle], back: [...board.back] };
      places.forEach((r, i) => b[r].push(extra[i]!));
      return inOrder(rules, b);
    };
    if (places.length === 0) return !alive([]);
    if (places.length === 1 || places[0] === places[1]) return !combinations(pool, places.length).some(alive);
    for (const a of pool) for (const b of pool) if (a !== b && alive([a, b])) return false;
    return true;
  }
  const [front, middle, back] = ROWS.map((r) => rowBounds(board[r], CAPACITY[r], pool));
  if (lowballMiddle(rules)) return front != null && back != null && cmp(front[0], back[1]) > 0;
  if (front && middle && cmp(front[0], middle[1]) > 0) return true;
  if (middle && back && cmp(middle[0], back[1]) > 0) return true;
  return front != null && back != null && cmp(front[0], back[1]) > 0;
}

const kills = (board: Board, placement: Board, remaining: readonly number[], rules: OfcRuleSet) =>
  deadWhateverComes(with_(board, placement), remaining.filter((c) => !placement.front.includes(c) && !placement.middle.includes(c) && !placement.back.includes(c)), rules);

export type Reason = "only_option" | "already_dead" | "every_option_kills" | "timeout";
export interface MadeMove { placement: Board; reason: Reason; thrown: number[] }

const movesOf = (rules: OfcRuleSet, board: Board, dealt: readonly number[]) =>
  streetMoves(board, dealt, ROWS.some((r) => board[r].length > 0) ? ((rules.street_discards as number | undefined) ?? 0) : 0);
const remainingOf = (board: Board, dealt: readonly number[], pool: readonly number[]) =>
  pool.filter((c) => !dealt.includes(c) && !ROWS.some((r) => board[r].includes(c)));

/**
 * §8.6: the move made for a seat, or null when it chooses. `pool`: the cards that may still come
 * (none the seat holds, was dealt or may see on another board); `declaredDead`: a hand a timeout
 * declared dead, every street placed for it.
 */
export function automaticMove(rules: OfcRuleSet, board: Board, dealt: readonly number[], pool: readonly number[], declaredDead: boolean): MadeMove | null {
  const options = movesOf(rules, board, dealt);
  const first = options[0]!;
  if (declaredDead) return { ...first, reason: "already_dead" };
  if (((rules.automatic_moves as string | undefined) ?? "forced") === "off") return null;
  if (options.length === 1) return { ...first, reason: "only_option" };
  const remaining = remainingOf(board, dealt, pool);
  if (deadWhateverComes(board, [...remaining, ...dealt], rules)) return { ...first, reason: "already_dead" };
  if (options.every((o) => kills(board, o.placement, remaining, rules))) return { ...first, reason: "every_option_kills" };
  return null;
}

/** §8.7: a timeout's move: `dead_for_set` the fill from the back; `biggest_row_first` the first move that keeps the hand alive, else that fill. */
export function timeoutMove(rules: OfcRuleSet, board: Board, dealt: readonly number[], pool: readonly number[]): MadeMove {
  const options = movesOf(rules, board, dealt);
  if (timeoutPolicy(rules) === "biggest_row_first" && options.length > 1) {
    const remaining = remainingOf(board, dealt, pool);
    if (!deadWhateverComes(board, [...remaining, ...dealt], rules)) {
      const alive = options.find((o) => !kills(board, o.placement, remaining, rules));
      if (alive !== undefined) return { ...alive, reason: "timeout" };
    }
  }
  return { ...options[0]!, reason: "timeout" };
}

export const timeoutPolicy = (rules: OfcRuleSet) => (rules.timeout_policy as string | undefined) ?? "dead_for_set";

/** The `size` cards of `cards` (ascending) making the strongest row: the first of equals in combination order. */
function strongest(cards: readonly number[], size: number): number[] {
  let best: number[] = [];
  let bestKey: RowKey | null = null;
  for (const c of combinations(cards, size)) {
    const k = rowKey(c);
    if (bestKey === null || cmp(k, bestKey) > 0) { best = c; bestKey = k; }
  }
  return best;
}

/**
 * §8.5, §8.7: the rows the service sets for a timed-out Fantasyland hand: `dead_for_set` the cards
 * in the order dealt, five to the back, five to the middle, three to the front; otherwise the
 * cards in ascending order, the strongest five behind, the strongest five of the rest in the
 * middle, the strongest three of what is left in front (2-7: the middles of the rest from the best
 * deuce-to-seven hand down, the first alive with the strongest three left in front, else the first).
 */
export function fantasylandTimeoutRows(rules: OfcRuleSet, dealt: readonly number[]): Board {
  if (timeoutPolicy(rules) === "dead_for_set") return { front: dealt.slice(10, 13), middle: dealt.slice(5, 10), back: dealt.slice(0, 5) };
  const cards = [...dealt].sort((a, b) => a - b);
  const back = strongest(cards, 5);
  const rest = cards.filter((c) => !back.includes(c));
  if (!lowballMiddle(rules)) {
    const middle = strongest(rest, 5);
    return { front: strongest(rest.filter((c) => !middle.includes(c)), 3), middle, back };
  }
  const middles = combinations(rest, 5).map((m) => ({ m, k: deuceToSevenKey(m) })).sort((a, b) => cmp(a.k, b.k));
  let chosen: Board | null = null;
  for (const { m } of middles) {
    const b = { front: strongest(rest.filter((c) => !m.includes(c)), 3), middle: m, back };
    chosen ??= b;
    if (inOrder(rules, b)) return b;
  }
  return chosen!;
}
