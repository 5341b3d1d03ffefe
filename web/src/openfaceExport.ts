// An open-face export's `seed` and `streets` checks (docs/audit.md §4.3.1, fairness.md §22): the
// seed opens the deal's commitment, and each StreetDealt's digests are the HMACs of the cards the
// seed dealt each seat on that street, for the counts the deal's schedule gives (a Fantasyland seat
// gets all its cards on street 0). Which seats play Fantasyland is decided by earlier deals, which
// the page does not re-decide: it reads them from street 0's counts and checks the rest of the
// schedule against them. Then the play: placements, fantasyland, discards and scores
// (src/openfacePlay.ts).
import type { Json } from "./canonical";
import { type Bytes, hex, unhex } from "./bytes";
import * as F from "./fairness";
import { type OfcRuleSet, dealStreets, schedule, streetDigest } from "./openface";
import { openFacePlayChecks, reaches } from "./openfacePlay";
import type { Check } from "./verify";

type Obj = { [key: string]: Json };

export async function openFaceDealChecks(
  tableId: string, rules: OfcRuleSet, seatCount: number, events: readonly { version: number; type: string; data: Obj }[],
  players: string[] = [], previousSeriesTotals: number[] | null = null, notCovered: Set<string> = new Set(),
): Promise<Check[]> {
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
    if (cut === undefined || cut.seat !== F.cutter(started.dealer as number, seatCount)) throw new Error("the cut is not the dealer's right's");
    if (hex(await F.seedCommitment(id, seed)) !== started.seed_commitment) throw new Error("the seed does not open the deal's commitment");
  } catch (e) {
    checks.push({ name: "seed", status: "failed", what: seedWhat, detail: e instanceof Error ? e.message : String(e) });
    checks.push({ name: "streets", status: "skipped", what: streetsWhat, detail: "needs seed" });
    return checks;
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
    const fantasyland = Array.from({ length: seatCount }, (_, s) =>
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
  if (events.some((e) => e.type === "DealVoided")) return checks; // voided: no play to judge
  if (failure !== undefined || play === undefined) {
    for (const name of ["placements", "fantasyland", "discards", "scores", "series_totals"])
      checks.push({ name, status: "skipped", what: `the deal's ${name.replace("_", " ")}`, detail: "needs streets" });
    return checks;
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
  return [...checks, ...judged.checks, totals];
}
