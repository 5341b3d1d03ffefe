// An open-face export's `seed` and `streets` checks (docs/audit.md §4.3.1, fairness.md §22): the
// seed opens the deal's commitment, and each StreetDealt's digests are the HMACs of the cards the
// seed dealt each seat on that street, for the counts the deal's schedule gives (a Fantasyland seat
// gets all its cards on street 0). Which seats play Fantasyland, and who deals, is decided by the
// deals before (src/openfaceSet.ts): when the export holds them, street 0's counts and the dealer
// must be what they decide; otherwise the page reads the Fantasylands from street 0's counts (not
// covered). Then the play: placements, fantasyland, discards and scores (src/openfacePlay.ts), and
// the set's end (rules.md §8.11) judged with `scores`.
import type { Json } from "./canonical";
import { type Bytes, hex, unhex } from "./bytes";
import { parseCard } from "./cards";
import * as F from "./fairness";
import { type OfcRuleSet, dealStreets, schedule, streetDigest } from "./openface";
import { type Board, openFacePlayChecks, reaches } from "./openfacePlay";
import { nextFantasyland } from "./openfaceSet";
import type { Check } from "./verify";

type Obj = { [key: string]: Json };

/** What the deals before decide for this one (null: not in the export, so not checked). */
export interface DealContext {
  players: string[];
  previousSeriesTotals: number[] | null;
  dealer: number | null;
  fantasyland: (number | null)[] | null;
}

export interface DealOutcome {
  checks: Check[];
  /** Set when the deal was scored and its boards hold (the set's next deal follows from them). */
  boards?: Board[];
  dead?: boolean[];
  fantasyland?: (number | null)[];
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
    checks.push({ name: "series_totals", status: "skipped", what: "the running totals are the sums of the verified deal results", detail: "needs scores" });
    return { checks };
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
  if (events.some((e) => e.type === "DealVoided")) return { checks }; // voided: no play to judge
  if (failure !== undefined || play === undefined) {
    for (const name of ["placements", "fantasyland", "discards", "scores", "series_totals"])
      checks.push({ name, status: "skipped", what: `the deal's ${name.replace("_", " ")}`, detail: "needs streets" });
    return { checks };
  }
  const judged = await openFacePlayChecks({
    tableId, rules, players, dealer: started.dealer as number, fantasyland: play.fantasyland, streets: play.streets, previousSeriesTotals,
  }, events);
  for (const x of judged.notCovered) notCovered.add(x);
  const stopped = judged.stoppedAt;
  if (stopped !== undefined && reaches(events, "streets", stopped.at))
    checks[1] = { ...checks[1]!, status: "skipped", detail: `needs ${stopped.name}: the replay stopped there` };
  // audit.md §4.3: the running totals, judged once the deal's result holds (scores judges them too).
  const scoresPassed = judged.checks.find((c) => c.name === "scores")?.status === "passed";
  const totals: Check = { name: "series_totals", status: "passed", what: "the running totals are the sums of the verified deal results" };
  if (!scoresPassed) Object.assign(totals, { status: "skipped", detail: "needs scores" });
  else if (previousSeriesTotals === null) Object.assign(totals, { status: "skipped", detail: "not covered: the deals before this one are not in the export" });
  const outcome: DealOutcome = { checks: [...checks, ...judged.checks, totals] };
  return judged.boards === undefined ? outcome : { ...outcome, boards: judged.boards, dead: judged.dead!, fantasyland: play.fantasyland };
}

/**
 * Every deal of an open-face export (audit.md §4.3.1), deal after deal, carrying what each decides
 * for the next: the running totals, the button, the Fantasylands and the set's end. What the page
 * cannot settle is added to `notCovered`.
 */
export async function openFaceExportChecks(
  tableId: string, rules: OfcRuleSet, seatCount: number, wholeTable: boolean,
  events: readonly { version: number; type: string; data: Obj }[], notCovered: Set<string>,
): Promise<(Check & { deal?: number })[]> {
  const out: (Check & { deal?: number })[] = [];
  const starts = events.flatMap((e, i) => (e.type === "DealStarted" ? [i] : []));
  const seated: string[] = [];
  const fresh = () => Array.from({ length: seatCount }, () => 0);
  // What the deals before decide; null while the export does not hold them.
  let running: number[] | null = wholeTable ? fresh() : null;
  let dealer: number | null = null;
  let fantasyland: (number | null)[] | null = null;
  let inARow = fresh();
  let buttonMoves: number | null = null;
  const unknown = () => { dealer = null; fantasyland = null; buttonMoves = null; };
  let last = -1; // the deal number the context above follows from (0: the lot)
  for (const [k, start] of starts.entries()) {
    for (const e of events.slice(starts[k - 1] ?? 0, start)) {
      if (e.type === "PlayerSeated" || e.type === "SeatReplaced") seated[e.data.seat as number] = e.data.player_id as string;
      if (e.type === "DealerChosen") { dealer = e.data.dealer as number; fantasyland = Array.from({ length: seatCount }, () => null); buttonMoves = 0; last = 0; }
    }
    const dealEvents = events.slice(start, starts[k + 1] ?? events.length);
    const number = dealEvents[0]!.data.deal_number as number;
    if (number !== last + 1) unknown(); // the deals before are not all in the export
    last = number;
    if (dealer === null) notCovered.add("who plays Fantasyland and deals, and the set's end, are decided by deals this export does not hold (or a timeout's consequence)");
    if (number === 1) running = fresh();
    if (!dealEvents.some((e) => e.type === "SeedRevealed" || e.type === "DealVoided")) continue;
    const voided = dealEvents.some((e) => e.type === "DealVoided");
    let outcome: DealOutcome;
    try {
      outcome = await openFaceDealChecks(tableId, rules, seatCount, dealEvents, { players: [...seated], previousSeriesTotals: running, dealer, fantasyland }, notCovered);
    } catch (e) {
      outcome = { checks: [{ name: "seed", status: "failed", what: "the seed revealed opens the deal's commitment", detail: e instanceof Error ? e.message : String(e) }] };
    }
    const scored = dealEvents.find((e) => e.type === "DealScored");
    if (scored !== undefined) running = scored.data.series_totals as number[];
    // The set after this deal (§8.5, §8.11): a voided deal changes nothing, the same dealer deals again.
    if (!voided) {
      // The next deal follows from what this one recorded, whether or not it held (as sapsam's
      // replay folds the recorded events): its boards and dead hands, its Fantasylands, its dealer.
      const recorded = recordedBoards(scored?.data, rules, seatCount, dealEvents);
      const boards = outcome.boards ?? recorded?.boards;
      const dead = outcome.dead ?? recorded?.dead;
      if (boards === undefined || dead === undefined || buttonMoves === null || notCoveredScores(outcome)) unknown();
      else {
        const played = outcome.fantasyland ?? recorded!.fantasyland;
        dealer = dealEvents[0]!.data.dealer as number;
        inARow = inARow.map((x, s) => (played[s] !== null ? x + 1 : 0));
        fantasyland = boards.map((b, s) => nextFantasyland(rules, b, dead[s]!, inARow[s]!));
        if (fantasyland.every((x) => x === null)) { buttonMoves = buttonMoves + 1; dealer = (dealer + 1) % seatCount; }
        const ends = buttonMoves >= seatCount;
        const completed = dealEvents.some((e) => e.type === "SeriesCompleted");
        const scores = outcome.checks.find((c) => c.name === "scores");
        if (ends !== completed && scores?.status === "passed") {
          const totals = outcome.checks.find((c) => c.name === "series_totals");
          if (totals !== undefined) Object.assign(totals, { status: "skipped", detail: "needs scores" });
          Object.assign(scores, { status: "failed", detail: ends
            ? `the button has moved ${buttonMoves} times at ${seatCount} seats: the set ends after this deal, and no SeriesCompleted says so`
            : `SeriesCompleted after ${buttonMoves} button moves at ${seatCount} seats (rules.md §8.11)` });
        }
        if (ends) { unknown(); running = null; inARow = fresh(); }
      }
    }
    out.push(...outcome.checks.map((c) => ({ ...c, deal: number })));
  }
  return out;
}

const notCoveredScores = (o: DealOutcome) => o.checks.some((c) => c.name === "scores" && c.detail?.startsWith("not covered"));

/** A scored deal's boards and dead hands as DealScored records them, and its Fantasylands by street 0's counts. */
function recordedBoards(scored: Obj | undefined, rules: OfcRuleSet, n: number, events: readonly { type: string; data: Obj }[]) {
  if (scored === undefined) return undefined;
  try {
    const boards = (scored.arrangements as string[]).map((text): Board => {
      const [front, middle, back] = text.split("|").map((r) => r.trim().split(/\s+/).filter(Boolean).map(parseCard));
      return { front: front!, middle: middle!, back: back! };
    });
    const counts = events.find((e) => e.type === "StreetDealt")?.data.card_counts as number[] | undefined;
    const fantasyland = Array.from({ length: n }, (_, s) => (counts !== undefined && counts[s] !== rules.street_cards[0] ? counts[s]! : null));
    return boards.length === n ? { boards, dead: scored.fouls as boolean[], fantasyland } : undefined;
  } catch {
    return undefined;
  }
}
