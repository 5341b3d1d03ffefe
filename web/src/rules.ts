// Fouls and pair scoring (docs/rules.md §1.5, §1.6, §2.3, §2.4), without royalties, naturals,
// surrender and per-pair stakes (rules versions 1 to 3; a rule set using those is refused).
import type { Rows } from "./fairness";
import { compareRows } from "./hands";

export type RuleSet = Record<string, unknown>;

export type FoulReason = "WRONG_ROW_SIZE" | "NOT_DEALT_CARDS" | "ROWS_OUT_OF_ORDER";

interface Scoring {
  method: string;
  rowUnit: number;
  scoopBonus: number;
  oneSixTwoOfThree: number;
  oneSixScoop: number;
  majority: string;
  rowOrder: string;
}

const NOT_YET = ["royalties", "naturals", "surrender", "pair_units"];

/** A recorded rule set read with §2.1's defaults and §2.6's per-version values. */
export function readRuleSet(r: RuleSet): Scoring {
  const version = (r.rules_version as number | undefined) ?? 7;
  for (const field of NOT_YET) {
    const v = r[field];
    const off = v === undefined || v === "none" || v === "off" || (typeof v === "object" && v !== null && Object.keys(v).length === 0);
    if (!off) throw new Error(`the rule set's ${field} (${JSON.stringify(v)}) is not implemented by this verifier yet`);
  }
  const num = (k: string, d: number) => (r[k] as number | undefined) ?? d;
  return {
    method: (r.scoring as string | undefined) ?? "per_row",
    rowUnit: num("row_unit", 1),
    scoopBonus: num("scoop_bonus", 1),
    oneSixTwoOfThree: num("one_six_two_of_three", 1),
    oneSixScoop: num("one_six_scoop", 6),
    majority: version === 1 ? "more_rows_won" : ((r.majority as string | undefined) ?? "two_rows_won"),
    rowOrder: version <= 2 ? "non_decreasing" : ((r.row_order as string | undefined) ?? "non_decreasing"),
  };
}

/** §1.5: the first failing check's reason, or null for a legal arrangement of the dealt cards. */
export function foulReason(rows: Rows, dealt: readonly number[] | null, ruleSet: RuleSet): FoulReason | null {
  if (rows.front.length !== 3 || rows.middle.length !== 5 || rows.back.length !== 5) return "WRONG_ROW_SIZE";
  const all = [...rows.front, ...rows.middle, ...rows.back];
  if (new Set(all).size !== 13) return "NOT_DEALT_CARDS";
  if (dealt !== null && !all.every((c) => dealt.includes(c))) return "NOT_DEALT_CARDS";
  const strict = readRuleSet(ruleSet).rowOrder === "strictly_increasing";
  const backVsMiddle = compareRows(rows.back, rows.middle);
  if (compareRows(rows.middle, rows.front) < 0 || backVsMiddle < 0 || (strict && backVsMiddle === 0))
    return "ROWS_OUT_OF_ORDER";
  return null;
}

/** A seat's scored hand: its rows, or null for a foul. */
export type Scored = Rows | null;

/** §1.5-§1.6: front, middle, back from seat a's side (+1 won, 0 tied, -1 lost). */
export function pairRows(a: Scored, b: Scored): number[] {
  if (a === null || b === null) {
    const all = a === null ? (b === null ? 0 : -1) : 1; // a foul loses every row to a legal hand; two fouls tie
    return [all, all, all];
  }
  return [compareRows(a.front, b.front), compareRows(a.middle, b.middle), compareRows(a.back, b.back)];
}

/** §2.3: the pair's delta (units x row_unit) from its rows. */
export function pairDelta(rows: readonly number[], ruleSet: RuleSet): number {
  const s = readRuleSet(ruleSet);
  const won = rows.filter((r) => r > 0).length;
  const lost = rows.filter((r) => r < 0).length;
  const scoop = won === 3 ? 1 : lost === 3 ? -1 : 0;
  const majority =
    s.majority === "more_rows_won" ? Math.sign(won - lost) : won >= 2 ? 1 : lost >= 2 ? -1 : 0;
  let units: number;
  switch (s.method) {
    case "per_row": units = won - lost; break;
    case "two_four": units = won - lost + majority; break;
    case "one_six": units = scoop !== 0 ? scoop * s.oneSixScoop : majority * s.oneSixTwoOfThree; break;
    case "per_row_scoop_bonus": units = won - lost + scoop * s.scoopBonus; break;
    default: throw new Error(`unknown scoring method ${s.method}`);
  }
  return units * s.rowUnit + 0; // + 0: no -0
}

export interface Pair {
  seats: [number, number];
  rows: number[];
  delta: number;
}

/** §1.6: every pair in seat order, and each seat's total. */
export function scoreDeal(hands: readonly Scored[], ruleSet: RuleSet): { pairs: Pair[]; totals: number[] } {
  const pairs: Pair[] = [];
  const totals = hands.map(() => 0);
  for (let a = 0; a < hands.length; a++)
    for (let b = a + 1; b < hands.length; b++) {
      const rows = pairRows(hands[a]!, hands[b]!);
      const delta = pairDelta(rows, ruleSet);
      pairs.push({ seats: [a, b], rows, delta });
      totals[a]! += delta;
      totals[b]! -= delta;
    }
  return { pairs, totals: totals.map((t) => t + 0) };
}
