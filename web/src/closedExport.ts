// An export's closed-game deals (docs/audit.md §4.2, §4.3): each deal's sequence and dealer
// rotation, a voided deal's seed, a finished deal mapped to fairness.md §14's published deal and
// verified (src/verify.ts), the fouls and rows recorded along the way, the players' signatures, and
// the series over the deals.
import type { Json } from "./canonical";
import type { ExportEvent, Obj } from "./exportFormat";
import { naturalsPlayed } from "./naturals";
import { signatureChecks } from "./playerSignatures";
import { dealerRotation, revealFouls, scoredArrangements } from "./recordChecks";
import { dealOutcome, sequenceCheck } from "./sequence";
import { type SeriesDeal, seriesChecks } from "./series";
import { type Check, type PublishedDeal, verifyDeal } from "./verify";
import { voidedDealCheck } from "./voided";

const rowString = (cards: Json): string => (cards as string[]).join(" ");

/** §4.2's mapping from a finished deal's events (and the table's opening) to fairness.md §14. */
function publishedDeal(tableId: string, ruleSet: Obj, seatCount: number, players: string[], events: readonly ExportEvent[]): PublishedDeal {
  const of = (type: string) => events.filter((e) => e.type === type).map((e) => e.data);
  const one = (type: string) => of(type)[0] ?? {};
  const perSeat = <X>(type: string, f: (d: Obj) => X): (X | null)[] => {
    const out: (X | null)[] = Array.from({ length: seatCount }, () => null);
    for (const d of of(type)) out[d.seat as number] = f(d);
    return out;
  };
  const started = one("DealStarted");
  for (const e of events)
    if ("deal_number" in e.data && e.data.deal_number !== started.deal_number)
      throw new Error(`version ${e.version} (${e.type}) names deal ${String(e.data.deal_number)}, not deal ${String(started.deal_number)}`);
  const dealt = one("CardsDealt");
  const scored = one("DealScored");
  const confirmed = perSeat("SeatConfirmed", (d) => d);
  const schemes = confirmed.map((d) => (d?.scheme as number | undefined) ?? 1);
  const solverSeats = Array.from({ length: seatCount }, (_, s) =>
    of("SeatTimedOut").some((d) => d.seat === s && d.consequence === "solver"));
  const solver = scored.solver_arrangements as (Obj | null)[] | null | undefined;
  return {
    format: 1,
    table_id: tableId,
    deal_number: started.deal_number as number,
    rule_set: ruleSet,
    seat_count: seatCount,
    dealer: started.dealer as number,
    seed_commitment: started.seed_commitment as string,
    seed: one("SeedRevealed").seed as string,
    contributions: perSeat("EntropyContributed", (d) => d.entropy as string),
    cut_position: one("DeckCut").position as number,
    record: {
      deck: dealt.deck_digest as string,
      cut_deck: dealt.cut_deck_digest as string,
      hands: dealt.hand_digests as string[],
    },
    seat_commitments: confirmed.map((d) => (d?.commitment as string | undefined) ?? null),
    reveals: perSeat("ArrangementRevealed", (d) => ({
      front: rowString(d.front!), middle: rowString(d.middle!), back: rowString(d.back!), nonce: d.nonce as string,
    })),
    solver_seats: solverSeats,
    ...(of("SurrenderAnnounced").some((d) => d.surrender === true)
      ? { surrendered: perSeat("SurrenderAnnounced", (d) => d.surrender === true).map((x) => x === true) }
      : {}),
    ...(solver === null || solver === undefined ? {} : {
      solver_arrangements: solver.map((r) => r === null ? null : {
        front: rowString(r.front!), middle: rowString(r.middle!), back: rowString(r.back!),
      }),
    }),
    ...(schemes.some((s) => s === 2) ? { commitment_schemes: schemes, players } : {}),
    ...(naturalsPlayed(ruleSet).length > 0 || of("NaturalDeclared").length > 0
      ? {
          players,
          natural_declarations: (() => {
            const opened = perSeat("NaturalRevealed", (d) => d);
            return perSeat("NaturalDeclared", (d) => d).map((d, s) => d === null ? null : {
              commitment: d.commitment as string,
              natural: (opened[s]?.natural as string | undefined) ?? null,
              nonce: (opened[s]?.nonce as string | undefined) ?? null,
            });
          })(),
        }
      : {}),
    recorded: {
      fouls: scored.fouls as boolean[],
      pairs: (scored.pairs as Obj[]).map((p) => ({ seats: [p.seat_a as number, p.seat_b as number], rows: p.rows as number[], delta: p.delta as number })),
      totals: scored.totals as number[],
    },
  };
}

/**
 * Every closed deal of the export (§4.2) and the series (§4.3); `reasons` names the deals still
 * being played (they keep the verdict below ANCHORED).
 */
export async function closedDealChecks(
  tableId: string, created: Obj | undefined, chosen: Obj | undefined, seatCount: number, players: string[], events: readonly ExportEvent[],
): Promise<{ checks: (Check & { deal?: number })[]; reasons: string[] }> {
  const checks: (Check & { deal?: number })[] = [];
  const reasons: string[] = [];
  const add = (name: string, status: Check["status"], what: string, detail?: string, deal?: number) =>
    checks.push({ name, status, what, ...(detail === undefined ? {} : { detail }), ...(deal === undefined ? {} : { deal }) });
  const verdictOf = (name: string, what: string, failure: string | undefined, deal?: number) =>
    add(name, failure === undefined ? "passed" : "failed", what, failure, deal);
  const starts = events.flatMap((e, i) => (e.type === "DealStarted" ? [i] : []));
  const signers = new Set<string>(); // players who signed a move earlier in the file
  const ruleSet = (created?.rule_set ?? {}) as Obj;
  const context = {
    seatCount,
    surrender: ruleSet.surrender !== undefined && ruleSet.surrender !== "off",
    naturals: naturalsPlayed(ruleSet).length > 0,
    afterSeries: (created?.after_series as string | undefined) ?? "close",
    seriesLength: ruleSet.series_length as number,
  };
  const seriesDeals: SeriesDeal[] = [];
  for (const [k, start] of starts.entries()) {
    const dealEvents = events.slice(start, starts[k + 1] ?? events.length);
    const number = dealEvents[0]!.data.deal_number as number;
    verdictOf("sequence", "the events follow the protocol", sequenceCheck(dealEvents, context), number);
    if (chosen) verdictOf("dealer_rotation", "the deal passed to the left", dealerRotation(chosen.dealer as number, seatCount, dealEvents[0]!.data), number);
    const outcome = dealOutcome(dealEvents);
    const seriesDeal: SeriesDeal = {
      number, outcome, verified: false,
      ...(outcome === "scored" ? { scored: dealEvents.find((e) => e.type === "DealScored")!.data } : {}),
      ...(dealEvents.some((e) => e.type === "SeriesCompleted") ? { completed: dealEvents.find((e) => e.type === "SeriesCompleted")!.data } : {}),
      ...(dealEvents.some((e) => e.type === "SeriesStarted") ? { started: dealEvents.find((e) => e.type === "SeriesStarted")!.data } : {}),
    };
    seriesDeals.push(seriesDeal);
    if (outcome === "voided") {
      let failure: string | undefined;
      try {
        failure = await voidedDealCheck(tableId, seatCount, dealEvents);
      } catch (e) {
        failure = e instanceof Error ? e.message : String(e);
      }
      verdictOf("voided_deal", "the voided deal was the deal committed to and dealt", failure, number);
      continue;
    }
    if (outcome === "running") {
      add("fair_dealing", "skipped", "pending: the deal is not finished", undefined, number);
      reasons.push(`deal ${number} is still being played`);
      continue;
    }
    // Seats replaced before this deal play for their new player (fairness.md §13.2).
    const seated = [...players];
    for (const e of events.slice(0, start)) if (e.type === "SeatReplaced") seated[e.data.seat as number] = e.data.player_id as string;
    try {
      const deal = publishedDeal(tableId, created!.rule_set as Obj, seatCount, seated, dealEvents);
      const dealChecks = await verifyDeal(deal);
      for (const c of dealChecks) checks.push({ ...c, deal: number });
      seriesDeal.verified = dealChecks.every((c) => c.status === "passed");
      if (dealChecks.find((c) => c.name === "fouls")?.status === "passed") {
        verdictOf("reveal_fouls", "each reveal recorded its foul as verified", revealFouls(deal, dealEvents), number);
        const scored = dealEvents.find((e) => e.type === "DealScored")!.data;
        verdictOf("scored_arrangements", "the rows recorded with the score are the rows verified", scoredArrangements(deal, scored), number);
      } else {
        add("reveal_fouls", "skipped", "each reveal recorded its foul as verified", "needs fouls", number);
        add("scored_arrangements", "skipped", "the rows recorded with the score are the rows verified", "needs fouls", number);
      }
      for (const c of await signatureChecks({ tableId, dealNumber: number }, seated, dealEvents, signers))
        checks.push({ ...c, deal: number });
    } catch (e) {
      add("published_deal", "failed", "the deal's events give a published deal", e instanceof Error ? e.message : String(e), number);
    }
  }

  // the series (§4.3), then the pinned player keys (§4.2).
  checks.push(...seriesChecks(seriesDeals, { seatCount, seriesLength: context.seriesLength, afterSeries: context.afterSeries }));
  return { checks, reasons };
}
