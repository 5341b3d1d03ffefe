// Checks of what an export records along the way (docs/audit.md §4.1-§4.2): header, opening,
// dealer_rotation, reveal_fouls, scored_arrangements. Each returns why it fails, or undefined.
import { canonicalJson, type Json } from "./canonical";
import type { ExportEvent } from "./exportFormat";
import type { PublishedDeal } from "./verify";

type Obj = { [key: string]: Json };

/** header: what the header copies from TableCreated, and the deals it lists. */
export function headerCheck(header: Obj, events: ExportEvent[]): string | undefined {
  const created = events.find((e) => e.type === "TableCreated")?.data;
  if (created === undefined) return "no TableCreated in the export";
  const tableId = header.table_id as string;
  if (header.stream_id !== `table-${tableId}`) return `stream_id ${String(header.stream_id)} is not table-${tableId}`;
  if (canonicalJson(header.rule_set ?? null) !== canonicalJson(created.rule_set ?? null)) return "the header's rule_set differs from TableCreated's";
  if (header.seat_count !== created.seat_count) return "the header's seat_count differs from TableCreated's";
  const ruleSet = created.rule_set as Obj | undefined;
  if (ruleSet?.family === "open_face") {
    const problem = openFaceRuleSetProblem(ruleSet, created.seat_count as number);
    if (problem !== undefined) return `the recorded rule set is not a valid rule set: ${problem}`;
  }
  const numbers = (type: string) => JSON.stringify(events.filter((e) => e.type === type).map((e) => e.data.deal_number));
  if (JSON.stringify(header.deals) !== numbers("DealStarted")) return "deals is not the exported DealStarted numbers";
  if (JSON.stringify(header.finished_deals) !== numbers("DealScored")) return "finished_deals is not the exported DealScored numbers";
  return undefined;
}

/** rules.md §8.9: an open-face rule set's keys (besides the family's name and the frame's series_length). */
const OPEN_FACE_KEYS = [
  "automatic_moves", "fantasyland_cards", "fantasyland_entry_rank", "fantasyland_max_consecutive", "fantasyland_reentry",
  "finnish_two_of_spades", "lowball_order", "max_seats", "middle_row", "middle_trips_royalty", "min_seats", "move_seconds",
  "name", "reveal_seconds", "royalty_table", "scoop_points", "street_cards", "street_discards", "timeout_policy", "two_of_three_points",
];

/**
 * What makes a recorded open-face rule set unreadable, as sapsam reads it strictly (rules.md §8.9,
 * §8.11): a key it does not know, or a set (series_length) that is not as many button moves as
 * seats within the rule set's seats.
 */
function openFaceRuleSetProblem(ruleSet: Obj, seatCount: number): string | undefined {
  const unknown = Object.keys(ruleSet).filter((k) => k !== "family" && k !== "series_length" && !OPEN_FACE_KEYS.includes(k)).sort();
  if (unknown.length > 0) return `unknown open-face rule set key ${unknown[0]}`;
  const [min, max] = [(ruleSet.min_seats as number | undefined) ?? 2, (ruleSet.max_seats as number | undefined) ?? 4];
  if (ruleSet.series_length !== seatCount || seatCount < min || seatCount > max) return `series_length ${String(ruleSet.series_length)} is not the seat count ${seatCount} within ${min} to ${max} seats`;
  return undefined;
}

/** opening: TableCreated at version 1, one PlayerSeated per seat (each seat and player once), DealerChosen. */
export function openingCheck(events: ExportEvent[]): string | undefined {
  const first = events.findIndex((e) => e.type === "DealStarted");
  const opening = first < 0 ? events : events.slice(0, first);
  const created = opening[0];
  if (created?.type !== "TableCreated" || created.version !== 1) return "the stream does not begin with TableCreated at version 1";
  const n = created.data.seat_count as number;
  const seated = opening.slice(1, 1 + n);
  const seats = new Set(seated.map((e) => e.data.seat));
  const players = new Set(seated.map((e) => e.data.player_id));
  if (seated.length !== n || seated.some((e) => e.type !== "PlayerSeated") || seats.size !== n || players.size !== n)
    return "not one PlayerSeated per seat, each seat and player once";
  if (opening[1 + n]?.type !== "DealerChosen" || opening.length !== n + 2) return "DealerChosen does not end the opening";
  return undefined;
}

/** dealer_rotation: deal n's dealer is DealerChosen's moved n - 1 seats to the left. */
export function dealerRotation(firstDealer: number, seatCount: number, started: Obj): string | undefined {
  const n = started.deal_number as number;
  const expected = (firstDealer + n - 1) % seatCount;
  return started.dealer === expected ? undefined : `deal ${n}'s dealer is seat ${String(started.dealer)}, not seat ${expected}`;
}

/** reveal_fouls: each ArrangementRevealed.foul is the verified foul (the published deal's fouls passed). */
export function revealFouls(deal: PublishedDeal, events: ExportEvent[]): string | undefined {
  for (const e of events.filter((x) => x.type === "ArrangementRevealed"))
    if (e.data.foul !== deal.recorded.fouls[e.data.seat as number]) return `seat ${String(e.data.seat)}'s reveal records foul ${String(e.data.foul)}`;
  return undefined;
}

/** scored_arrangements: DealScored.arrangements[s] holds the rows verified and scored. */
export function scoredArrangements(deal: PublishedDeal, scored: Obj): string | undefined {
  const recorded = scored.arrangements as (string | null)[] | undefined;
  for (let s = 0; s < deal.seat_count; s++) {
    const rows = deal.solver_seats[s] ? deal.solver_arrangements?.[s] : deal.reveals[s];
    const expected = rows ? `${rows.front}|${rows.middle}|${rows.back}` : null;
    if ((recorded?.[s] ?? null) !== expected) return `seat ${s}: recorded ${String(recorded?.[s])}, verified ${String(expected)}`;
  }
  return undefined;
}
