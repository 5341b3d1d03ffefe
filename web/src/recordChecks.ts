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
  const numbers = (type: string) => JSON.stringify(events.filter((e) => e.type === type).map((e) => e.data.deal_number));
  if (JSON.stringify(header.deals) !== numbers("DealStarted")) return "deals is not the exported DealStarted numbers";
  if (JSON.stringify(header.finished_deals) !== numbers("DealScored")) return "finished_deals is not the exported DealScored numbers";
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
