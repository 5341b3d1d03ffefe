// A suggestion of rows computed in the browser, only the fallback when the server's solver cannot
// be asked (suggestion.ts: GetSuggestion refused or out of reach): of every legal way to
// set 13 cards (1287 backs x 56 middles), the one scoring highest by a simple measure of each row's
// strength, the front weighted up (its hands are rarer). A hint, not the server's solver.
import type { Rows } from "../fairness";
import { compareRows, rowKey } from "../hands";

const value = (cards: readonly number[]): number => {
  const k = rowKey(cards);
  return k[0]! + (k[1]! + 1) / 14 + (Math.max(k[2]!, -1) + 1) / 196;
};

function* choose(items: readonly number[], k: number, start = 0, picked: number[] = []): Generator<number[]> {
  if (picked.length === k) {
    yield [...picked];
    return;
  }
  for (let i = start; i <= items.length - (k - picked.length); i++) {
    picked.push(items[i]!);
    yield* choose(items, k, i + 1, picked);
    picked.pop();
  }
}

/** The suggested rows for 13 cards; `strict`: the back must beat the middle (row_order strictly_increasing). */
export function suggestRows(cards: readonly number[], strict = false): Rows {
  if (cards.length !== 13) throw new Error("a hand is 13 cards");
  let best: Rows | null = null;
  let bestScore = -Infinity;
  for (const back of choose(cards, 5)) {
    const rest = cards.filter((c) => !back.includes(c));
    const backValue = value(back);
    for (const middle of choose(rest, 5)) {
      const c = compareRows(back, middle);
      if (c < 0 || (strict && c === 0)) continue;
      const front = rest.filter((x) => !middle.includes(x));
      if (compareRows(middle, front) < 0) continue;
      const score = 2.2 * value(front) + 1.3 * value(middle) + backValue;
      if (score > bestScore) {
        bestScore = score;
        best = { front, middle, back };
      }
    }
  }
  return best!; // some arrangement is always legal (the strongest five at the back, and so on)
}
