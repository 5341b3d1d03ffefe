// An open-face export's `seed` and `streets` checks (docs/audit.md §4.3.1, fairness.md §22): the
// seed opens the deal's commitment, and each StreetDealt's digests are the HMACs of the cards the
// seed dealt each seat on that street, for the counts the deal's schedule gives (a Fantasyland seat
// gets all its cards on street 0). Which seats play Fantasyland, and who deals, is decided by the
// deals before (src/openfaceSet.ts): when the export holds them, street 0's counts and the dealer
// must be what they decide; otherwise the page reads the Fantasylands from street 0's counts (not
// covered). Then the play re-decided (src/openfacePlay.ts): placements, fantasyland, discards and
// scores, the set's end (rules.md §8.7, §8.11) judged with `scores`; what each deal decides for the
// set (Fantasylands, the button, hands dead for the set, a timeout that ends it) carried to the next.
import { type Json, canonicalJson } from "./canonical";
import { type Bytes, hex, unhex } from "./bytes";
import * as F from "./fairness";
import { type OfcRuleSet, dealStreets, schedule, streetDigest } from "./openface";
import { DealState, type SetAfter, type SetState, foldPlay, openFacePlayChecks, reaches } from "./openfacePlay";
import { standingsOf } from "./series";
import type { Check } from "./verify";

type Obj = { [key: string]: Json };

/** What the deals before decide for this one (null: not in the export, so not checked). */
export interface DealContext {
  players: string[];
  previousSeriesTotals: number[] | null;
  dealer: number | null;
  fantasyland: (number | null)[] | null;
  set?: SetState;
}

export interface DealOutcome {
  checks: Check[];
  /** What the deal decided for the set, folded from what it recorded (absent: it could not be). */
  after?: SetAfter;
  /** Why what the deal recorded cannot be folded (every later deal then fails `seed`). */
  unfoldable?: string;
}

export async function openFaceDealChecks(
  tableId: string, rules: OfcRuleSet, seatCount: number, events: readonly { version: number; type: string; data: Obj }[],
  context: DealContext = { players: [], previousSeriesTotals: null, dealer: null, fantasyland: null }, notCovered: Set<string> = new Set(),
): Promise<DealOutcome> {
  const { players, previousSeriesTotals } = context;
  const started = events[0]!.data;
  const id: F.DealId = { tableId, dealNumber: started.deal_number as number };
  const seedText = (events.find((e) => e.type === "SeedRevealed") ?? events.find((e) => e.type === "DealVoided"))?.data.seed;
  const checks: Check[] = [];
  const seedWhat = "the seed revealed opens the deal's commitment";
  const streetsWhat = "each street dealt the cards the seed gives, as the schedule says";
  let seed: Bytes;
  try {
    seed = unhex(String(seedText));
    const cut = events.find((e) => e.type === "DeckCut")?.data;
    if (context.dealer !== null && started.dealer !== context.dealer)
      throw new Error(`seat ${String(started.dealer)} deals, where the button is at seat ${context.dealer} (rules.md §8.5, §8.11)`);
    if (cut === undefined || cut.seat !== F.cutter(started.dealer as number, seatCount)) throw new Error("the cut is not the dealer's right's");
    if (hex(await F.seedCommitment(id, seed)) !== started.seed_commitment) throw new Error("the seed does not open the deal's commitment");
  } catch (e) {
    checks.push({ name: "seed", status: "failed", what: seedWhat, detail: e instanceof Error ? e.message : String(e) });
    checks.push({ name: "streets", status: "skipped", what: streetsWhat, detail: "needs seed" });
    // The replay stopped at the deal's start: a check with events in the deal was not reached.
    for (const name of ["placements", "fantasyland", "discards", "scores"])
      checks.push(reaches(events, name, 0)
        ? { name, status: "skipped", what: `the deal's ${name}`, detail: "needs seed" }
        : { name, status: "passed", what: `the deal's ${name}` });
    if (!events.some((e) => e.type === "DealVoided"))
      checks.push({ name: "series_totals", status: "skipped", what: "the running totals are the sums of the verified deal results", detail: "needs scores" });
    return { checks, ...folded(rules, seatCount, events, context) };
  }
  checks.push({ name: "seed", status: "passed", what: seedWhat });
  let failure: string | undefined;
  let play: { streets: number[][][]; fantasyland: (number | null)[] } | undefined;
  try {
    const contributions: (Bytes | null)[] = Array.from({ length: seatCount }, () => null);
    for (const e of events) if (e.type === "EntropyContributed") contributions[e.data.seat as number] = unhex(String(e.data.entropy));
    const deck = F.cut(await F.shuffle(await F.shuffleKey(id, seed, contributions)), events.find((e) => e.type === "DeckCut")!.data.position as number);
    const dealt = events.filter((e) => e.type === "StreetDealt").map((e) => e.data);
    const first = dealt[0]?.card_counts as number[] | undefined;
    // Fantasyland seats: those dealt other than the first street's count on street 0.
    const fantasyland = context.fantasyland ?? Array.from({ length: seatCount }, (_, s) =>
      first !== undefined && first[s] !== rules.street_cards[0] ? first[s]! : null);
    const sched = schedule(rules, fantasyland);
    const streets = dealStreets(deck, sched, started.dealer as number);
    const key = await F.recordKey(id, seed);
    for (const [t, d] of dealt.entries()) {
      if (d.street !== t) { failure = `street ${String(d.street)} where street ${t} comes`; break; }
      if (JSON.stringify(d.card_counts) !== JSON.stringify(sched[t])) { failure = `street ${t} deals ${JSON.stringify(d.card_counts)}, the schedule ${JSON.stringify(sched[t])}`; break; }
      const expected = await Promise.all(streets[t]!.map(async (cards, s) => (cards.length ? hex(await streetDigest(key, t, s, cards)) : "")));
      const digests = d.digests as string[];
      const seat = expected.findIndex((x, s) => x !== digests[s]);
      if (seat >= 0) { failure = `street ${t}: seat ${seat}'s digest is not that of the cards the seed dealt it`; break; }
    }
    play = { streets, fantasyland };
  } catch (e) {
    failure = e instanceof Error ? e.message : String(e);
  }
  checks.push({ name: "streets", status: failure ? "failed" : "passed", what: streetsWhat, ...(failure ? { detail: failure } : {}) });
  // A voided deal is re-decided up to its voiding; it has no score, so no running totals (§4.3).
  const voided = events.some((e) => e.type === "DealVoided");
  if (failure !== undefined || play === undefined) {
    for (const name of ["placements", "fantasyland", "discards", "scores", ...(voided ? [] : ["series_totals"])])
      checks.push({ name, status: "skipped", what: `the deal's ${name.replace("_", " ")}`, detail: "needs streets" });
    return { checks, ...folded(rules, seatCount, events, context) };
  }
  const judged = await openFacePlayChecks({
    tableId, rules, players, dealer: started.dealer as number, fantasyland: play.fantasyland, streets: play.streets, previousSeriesTotals,
    ...(context.set === undefined ? {} : { set: context.set }),
  }, events);
  for (const x of judged.notCovered) notCovered.add(x);
  const stopped = judged.stoppedAt;
  // The replay may stop at a street or the seed's reveal (audit.md §4.3.1): that check fails.
  const own = checks.findIndex((c) => c.name === stopped?.name);
  if (stopped !== undefined && own >= 0) checks[own] = { ...checks[own]!, status: "failed", detail: stopped.why };
  else if (stopped !== undefined && reaches(events, "streets", stopped.at))
    checks[1] = { ...checks[1]!, status: "skipped", detail: `needs ${stopped.name}: the replay stopped there` };
  // audit.md §4.3: the running totals, judged once the deal's result holds (scores judges them too).
  const scoresPassed = judged.checks.find((c) => c.name === "scores")?.status === "passed";
  const totals: Check = { name: "series_totals", status: "passed", what: "the running totals are the sums of the verified deal results" };
  if (!scoresPassed) Object.assign(totals, { status: "skipped", detail: "needs scores" });
  else if (previousSeriesTotals === null) Object.assign(totals, { status: "skipped", detail: "not covered: the deals before this one are not in the export" });
  return { checks: [...checks, ...judged.checks, ...(voided ? [] : [totals])], ...(judged.after === undefined ? {} : { after: judged.after }), ...(judged.unfoldable === undefined ? {} : { unfoldable: judged.unfoldable }) };
}

/** What a deal that could not be replayed decided for the set, folded from what it recorded. */
function folded(rules: OfcRuleSet, n: number, events: readonly { version: number; type: string; data: Obj }[], context: DealContext): { after?: SetAfter; unfoldable?: string } {
  if (context.set === undefined) return {};
  const counts = events.find((e) => e.type === "StreetDealt")?.data.card_counts as number[] | undefined;
  const fantasyland = context.fantasyland ?? Array.from({ length: n }, (_, s) => (counts !== undefined && counts[s] !== rules.street_cards[0] ? counts[s]! : null));
  return foldPlay(new DealState(rules, Number(events[0]!.data.dealer), fantasyland, [], context.set.deadForSet), context.set, events);
}

/**
 * Every deal of an open-face export (audit.md §4.3.1), deal after deal, carrying what each decides
 * for the next: the running totals, the button, the Fantasylands, hands dead for the set and the
 * set's end. What the export cannot settle is added to `notCovered` (shown, but no bar to ANCHORED,
 * as in sapsam audit verify), a deal still being played to `pending`.
 */
export async function openFaceExportChecks(
  tableId: string, rules: OfcRuleSet, seatCount: number, wholeTable: boolean,
  events: readonly { version: number; type: string; data: Obj }[], notCovered: Set<string>, pending: string[] = [],
): Promise<(Check & { deal?: number })[]> {
  const out: (Check & { deal?: number })[] = [];
  const starts = events.flatMap((e, i) => (e.type === "DealStarted" ? [i] : []));
  const seated: string[] = [];
  const fresh = () => Array.from({ length: seatCount }, () => 0);
  // What the deals before decide; null while the export does not hold them.
  let running: number[] | null = wholeTable ? fresh() : null;
  let dealer: number | null = null;
  let fantasyland: (number | null)[] | null = null;
  let set: SetState | undefined;
  let unfoldable: string | undefined; // set once a deal's record cannot be folded: every later deal fails seed
  const unknown = () => { dealer = null; fantasyland = null; set = undefined; };
  let last = -1; // the deal number the context above follows from (0: the lot)
  for (const [k, start] of starts.entries()) {
    for (const e of events.slice(starts[k - 1] ?? 0, start)) {
      if (e.type === "PlayerSeated" || e.type === "SeatReplaced") seated[e.data.seat as number] = e.data.player_id as string;
      if (e.type === "DealerChosen") {
        dealer = e.data.dealer as number;
        fantasyland = Array.from({ length: seatCount }, () => null);
        set = { inARow: fresh(), buttonMoves: 0, timeoutEndsSet: false, dealsVoided: 0, deadForSet: Array.from({ length: seatCount }, () => false) };
        last = 0;
      }
    }
    const dealEvents = events.slice(start, starts[k + 1] ?? events.length);
    const number = dealEvents[0]!.data.deal_number as number;
    if (number !== last + 1) unknown(); // the deals before are not all in the export
    last = number;
    if (number === 1) running = fresh();
    if (!dealEvents.some((e) => e.type === "SeedRevealed" || e.type === "DealVoided")) {
      // Still being played: its seed is secret until SeedRevealed (audit.md §1, §4.3.1).
      out.push({ name: "seed", status: "skipped", what: "the deal's seed, streets and play", detail: "pending: the deal is still being played", deal: number });
      pending.push(`deal ${number} is still being played`);
      continue;
    }
    const voided = dealEvents.some((e) => e.type === "DealVoided");
    if (unfoldable !== undefined) {
      out.push({ name: "seed", status: "failed", what: "the seed revealed opens the deal's commitment", detail: `the deals before this one cannot be folded: ${unfoldable}`, deal: number },
        { name: "series_totals", status: "skipped", what: "the running totals are the sums of the verified deal results", detail: "needs scores", deal: number });
      continue;
    }
    if (dealer === null) {
      // audit.md §4.3.1: what the deal starts from (Fantasylands, the button, hands dead for the
      // set) is decided by the deals before it, which the export does not hold: nothing of it is
      // re-decided, as sapsam audit verify re-decides nothing of it.
      notCovered.add(`deal ${number} starts from what deals 1 to ${number - 1} decided, which the export does not hold (export the whole table)`);
      for (const name of ["seed", "streets", "placements", "fantasyland", "discards", "scores", "series_totals"])
        out.push({ name, status: "skipped", what: `the deal's ${name.replace("_", " ")}`, detail: "not covered: the deals before it are not in the export", deal: number });
      continue;
    }
    let outcome: DealOutcome;
    try {
      outcome = await openFaceDealChecks(tableId, rules, seatCount, dealEvents,
        { players: [...seated], previousSeriesTotals: running, dealer, fantasyland, ...(set === undefined ? {} : { set }) }, notCovered);
    } catch (e) {
      outcome = { checks: [{ name: "seed", status: "failed", what: "the seed revealed opens the deal's commitment", detail: e instanceof Error ? e.message : String(e) }] };
    }
    const scored = dealEvents.find((e) => e.type === "DealScored");
    if (scored !== undefined) running = scored.data.series_totals as number[];
    // The set after this deal (§8.5, §8.7, §8.11), folded from what it recorded whether or not it
    // held, as sapsam's replay folds the log. A voided deal changes nothing but the count of voided
    // deals: the same dealer deals again.
    unfoldable = outcome.unfoldable;
    if (voided) {
      // Nothing the voided deal did counts; a seat replaced after it leaves its hand dead for the set behind (§8.11).
      if (set !== undefined) {
        const deadForSet = [...set.deadForSet];
        for (const e of dealEvents) if (e.type === "SeatReplaced") deadForSet[Number(e.data.seat)] = false;
        set = { ...set, dealsVoided: set.dealsVoided + 1, deadForSet };
      }
    }
    else if (outcome.after === undefined || set === undefined) unknown();
    else {
      const after = outcome.after;
      dealer = after.buttonMoved ? (dealEvents[0]!.data.dealer as number + 1) % seatCount : dealEvents[0]!.data.dealer as number;
      fantasyland = after.fantasyland;
      set = after;
      if (after.over) { unknown(); running = null; }
    }
    out.push(...outcome.checks.map((c) => ({ ...c, deal: number })));
  }
  out.push(...setStandings(events, starts, rules.series_length as number | undefined));
  return out;
}

/**
 * audit.md §4.3.1's `standings` (the framework's, the set's end judged by `scores`): a deal
 * recording SeriesCompleted counts every deal of the set but the voided ones in `deals_played`,
 * and ranks the running totals its DealScored records; where the export lacks earlier deals that
 * may have been voided, only the ranking is checked.
 */
function setStandings(events: readonly { type: string; data: Obj }[], starts: number[], length: number | undefined): (Check & { deal: number })[] {
  const what = "the set ended with the standings of its final totals";
  const deals = starts.map((start, k) => events.slice(start, starts[k + 1] ?? events.length));
  const numbers = deals.map((d) => d[0]!.data.deal_number as number);
  const voided = deals.filter((d) => d.some((e) => e.type === "DealVoided")).map((d) => d[0]!.data.deal_number as number);
  const out: (Check & { deal: number })[] = [];
  for (const d of deals) {
    const completed = d.find((e) => e.type === "SeriesCompleted")?.data;
    if (completed === undefined) continue;
    const deal = d[0]!.data.deal_number as number;
    const inSet = deal - voided.filter((k) => k >= 1 && k <= deal).length;
    const unseen = deal - numbers.filter((k) => k >= 1 && k <= deal).length;
    const final = d.find((e) => e.type === "DealScored")?.data.series_totals as number[] | undefined;
    const played = completed.deals_played as number;
    const ranked = () => (final !== undefined && canonicalJson(completed.standings ?? null) !== canonicalJson(standingsOf(final))
      ? { name: "standings", status: "failed" as const, what, detail: `the standings are not those of the running totals ${JSON.stringify(final)}`, deal } : undefined);
    if (played !== inSet && unseen > 0 && inSet - unseen <= played && played < inSet && played === length)
      out.push(ranked() ?? { name: "standings", status: "skipped", what, detail: "not covered: deals of the set the export does not hold may have been voided", deal });
    else if (played !== inSet) out.push({ name: "standings", status: "failed", what, detail: `deals_played is ${String(played)}, the set has ${inSet} deals that count`, deal });
    else if (final === undefined) out.push({ name: "standings", status: "skipped", what, detail: "no final totals to rank", deal });
    else out.push(ranked() ?? { name: "standings", status: "passed", what, deal });
  }
  return out;
}
