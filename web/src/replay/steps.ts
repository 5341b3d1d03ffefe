// A deal's replay, step by step, from an audit export (docs/audit.md §2) read with the verifier's
// own code: the lines read as the verifier reads them (src/export.ts's readExport), the events'
// fields judged by src/decode.ts, the deck from the revealed seed (src/fairness.ts: shuffle, cut,
// deal; src/openface.ts: the streets), hand names and royalties from src/hands.ts, src/rules.ts and
// src/openface.ts. Nothing here is trusted: the replay shows what the log says happened; the verify
// page says whether it holds.
import type { Json } from "../canonical";
import { type Bytes, unhex } from "../bytes";
import { parseCard } from "../cards";
import { decodeCheck } from "../decode";
import { readExport } from "../export";
import * as F from "../fairness";
import { categoryOf } from "../hands";
import { type OfcRuleSet, dealStreets, ofcRoyalty, schedule } from "../openface";
import { inOrder } from "../openfaceMoves";
import { readRuleSet, rowRoyalty } from "../rules";

type Obj = { [key: string]: Json };
export interface ReplayEvent { version: number; type: string; schema_version: number; data: Obj }

export const ROWS = ["front", "middle", "back"] as const;
export type RowName = (typeof ROWS)[number];
export type Board = Record<RowName, number[]>;

export interface SeatState {
  seat: number;
  player: string;
  /** Cards dealt to the seat so far (face up in the replay: the deal is over, the seed public). */
  dealt: number[];
  /** Dealt and not yet shown in rows, placed or discarded. */
  inHand: number[];
  /** Closed game: the revealed rows; open face: the rows placed so far. */
  rows: Board | null;
  /** Pineapple: the discards, once revealed; `hiddenDiscards` committed but not yet opened. */
  discards: number[];
  hiddenDiscards: number;
  /** Short facts shown by the seat: "dealer", "committed", "confirmed", "foul: …", "Fantasyland", … */
  marks: string[];
  /** After scoring: each row's hand name and royalty, the deal's delta and the series' total. */
  names?: string[];
  royalties?: number[];
  delta?: number;
  seriesTotal?: number;
}

export interface Step {
  /** The event's version in the stream (none for a card of the deal shown one at a time). */
  version?: number;
  kind: string;
  title: string;
  lines: string[];
  seats: SeatState[];
  /** The seat the step is about, if one. */
  focus?: number;
  /** After scoring: each pair's row results (+1 a wins, -1 b wins) and delta, from seat a's side. */
  pairs?: { a: number; b: number; rows: number[]; delta: number }[];
}

export interface DealReplay {
  dealNumber: number;
  family: "closed" | "open_face";
  outcome: "scored" | "voided" | "running";
  seatCount: number;
  steps: Step[];
  /** What in the file the replay could not read (it still shows what it could). */
  warnings: string[];
}

const words = (s: string) => s.replaceAll("_", " ");
const cardsOf = (v: Json | undefined): number[] => (Array.isArray(v) ? v.map((c) => parseCard(String(c))) : []);
const short = (h: Json | undefined) => (typeof h === "string" ? `${h.slice(0, 12)}…` : "—");
const emptyBoard = (): Board => ({ front: [], middle: [], back: [] });

/** Every deal of an export, each as its steps (the table's opening first, then the deal's events). */
export async function replayExport(text: string): Promise<DealReplay[]> {
  const { header, events } = readExport(text);
  const decodeError = decodeCheck(events);
  const tableId = String(header.table_id ?? String(header.stream_id).replace(/^table-/, ""));
  const starts = events.flatMap((e, i) => (e.type === "DealStarted" ? [i] : []));
  const opening = events.slice(0, starts[0] ?? events.length);
  const replays: DealReplay[] = [];
  for (const [k, start] of starts.entries()) {
    const end = starts[k + 1] ?? events.length;
    // Table events between deals (a seat replaced, a series started) belong to the next deal's replay.
    const between = events.slice(starts[k - 1] ?? 0, start).filter((e) => e.type === "SeatReplaced");
    const replay = await replayDeal(tableId, events, [...opening, ...(k > 0 ? between : [])], events.slice(start, end));
    if (decodeError !== undefined) replay.warnings.unshift(`decode: ${decodeError}`);
    replays.push(replay);
  }
  return replays;
}

async function replayDeal(tableId: string, all: ReplayEvent[], opening: ReplayEvent[], deal: ReplayEvent[]): Promise<DealReplay> {
  const created = all.find((e) => e.type === "TableCreated")?.data ?? {};
  const ruleSet = (created.rule_set ?? {}) as Obj;
  const family = ruleSet.family === "open_face" ? "open_face" : "closed";
  const n = Number(created.seat_count);
  const started = deal[0]!.data;
  const dealNumber = Number(started.deal_number);
  const dealer = Number(started.dealer);
  const id: F.DealId = { tableId, dealNumber };
  const warnings: string[] = [];
  const players: string[] = Array.from({ length: n }, (_, s) => `seat ${s}`);
  const seats: SeatState[] = players.map((player, seat) => ({ seat, player, dealt: [], inHand: [], rows: null, discards: [], hiddenDiscards: 0, marks: [] }));
  const steps: Step[] = [];
  const snapshot = (): SeatState[] => seats.map((s) => ({
    ...s, dealt: [...s.dealt], inHand: [...s.inHand], discards: [...s.discards], marks: [...s.marks],
    rows: s.rows && { front: [...s.rows.front], middle: [...s.rows.middle], back: [...s.rows.back] },
  }));
  const push = (step: Omit<Step, "seats">) => steps.push({ ...step, seats: snapshot() });
  const mark = (s: number, text: string) => { const m = seats[s]?.marks; if (m && !m.includes(text)) m.push(text); };
  const unmark = (s: number, prefix: string) => { const st = seats[s]; if (st) st.marks = st.marks.filter((m) => !m.startsWith(prefix)); };

  for (const e of opening) {
    const d = e.data;
    if (e.type === "TableCreated")
      push({ version: e.version, kind: e.type, title: "The table", lines: [
        `${String(ruleSet.name ?? "a rule set")} (${family === "open_face" ? "open face" : "closed Chinese poker"}), ${n} seats`,
        `lot commitment ${short(d.lot_commitment)}: the first dealer's draw was fixed before anyone sat`,
      ] });
    else if (e.type === "PlayerSeated" || e.type === "SeatReplaced") {
      const s = Number(d.seat);
      if (seats[s]) seats[s].player = String(d.player_id);
      push({ version: e.version, kind: e.type, focus: s, title: e.type === "PlayerSeated" ? `${String(d.player_id)} sits at seat ${s}` : `Seat ${s} replaced: ${String(d.player_id)} for ${String(d.previous_player_id)}`, lines: [] });
    } else if (e.type === "DealerChosen") {
      const lot = (d.lot_cards as string[]) ?? [];
      push({ version: e.version, kind: e.type, focus: Number(d.dealer), title: `The lot: seat ${String(d.dealer)} deals first`, lines: [
        `each seat drew a card from the lot seed's deck: ${lot.map((c, s) => `seat ${s} ${c}`).join(", ")}; the highest deals`,
        `lot seed ${short(d.lot_seed)} (it opens the lot commitment: the verify page checks it)`,
      ] });
    }
  }

  // The cards, from the revealed seed (or the voided deal's), as the verifier recomputes them.
  const seedHex = (deal.find((e) => e.type === "SeedRevealed") ?? deal.find((e) => e.type === "DealVoided"))?.data.seed;
  let hands: number[][] | null = null;
  let streets: number[][][] | null = null;
  if (typeof seedHex === "string") {
    try {
      const seed = unhex(seedHex);
      const contributions: (Bytes | null)[] = Array.from({ length: n }, () => null);
      for (const e of deal) if (e.type === "EntropyContributed") contributions[Number(e.data.seat)] = unhex(String(e.data.entropy));
      const position = Number(deal.find((e) => e.type === "DeckCut")?.data.position);
      const cutDeck = F.cut(await F.shuffle(await F.shuffleKey(id, seed, contributions)), position);
      if (family === "closed") hands = F.deal(cutDeck, dealer, n);
      else {
        const first = deal.find((e) => e.type === "StreetDealt")?.data.card_counts as number[] | undefined;
        const rules = ruleSet as unknown as OfcRuleSet;
        const fantasyland = Array.from({ length: n }, (_, s) => (first !== undefined && first[s] !== rules.street_cards[0] ? first[s]! : null));
        streets = dealStreets(cutDeck, schedule(rules, fantasyland), dealer);
      }
    } catch (err) {
      warnings.push(`the cards cannot be recomputed from the seed: ${err instanceof Error ? err.message : String(err)}`);
    }
  } else warnings.push("the seed is not revealed (a running deal): the cards stay face down");

  const outcome = deal.some((e) => e.type === "DealVoided") ? "voided" : deal.some((e) => e.type === "DealScored") ? "scored" : "running";
  for (const e of deal) {
    const d = e.data;
    const s = Number(d.seat);
    const at = { version: e.version, kind: e.type };
    switch (e.type) {
      case "DealStarted":
        for (const x of seats) x.marks = [];
        mark(dealer, "dealer");
        push({ ...at, focus: dealer, title: `Deal ${dealNumber}: seat ${dealer} deals`, lines: [
          `seed commitment ${short(d.seed_commitment)}: the deck is fixed now, and stays secret until the seed is revealed`,
        ] });
        break;
      case "EntropyContributed":
        push({ ...at, focus: s, title: `Seat ${s} mixes in its own entropy`, lines: [`${String(d.entropy)}: the shuffle depends on it too, so the server alone could not choose the deck`] });
        break;
      case "DeckCut":
        mark(s, "cut");
        push({ ...at, focus: s, title: `Seat ${s} cuts at ${String(d.position)}`, lines: ["the cutter sits on the dealer's right and chose the place after the commitment"] });
        break;
      case "CardsDealt": {
        push({ ...at, title: "The deal", lines: ["13 cards to each seat, one at a time, clockwise from the dealer's left", "the record: digests of the deck, the cut deck and each hand"] });
        if (hands !== null)
          for (let k = 0; k < 13 * n; k++) {
            const to = (dealer + 1 + k) % n;
            const card = hands[to]![Math.floor(k / n)]!;
            seats[to]!.dealt.push(card);
            seats[to]!.inHand.push(card);
            push({ kind: "card", focus: to, title: `Card ${k + 1} of ${13 * n} to seat ${to}`, lines: [] });
          }
        break;
      }
      case "StreetDealt": {
        const t = Number(d.street);
        const counts = (d.card_counts as number[]) ?? [];
        if (streets !== null) streets[t]?.forEach((cards, seat) => { seats[seat]!.dealt.push(...cards); seats[seat]!.inHand.push(...cards); });
        const first = (ruleSet.street_cards as number[] | undefined)?.[0];
        counts.forEach((c, seat) => { if (t === 0 && c !== first) mark(seat, "Fantasyland"); });
        push({ ...at, title: `Street ${t + 1} dealt`, lines: [counts.map((c, seat) => `seat ${seat}: ${c} card${c === 1 ? "" : "s"}`).join(", ")] });
        break;
      }
      case "CardsPlaced": {
        const st = seats[s]!;
        st.rows ??= emptyBoard();
        for (const r of ROWS) st.rows[r].push(...cardsOf(d[r]));
        const placedCards = new Set(ROWS.flatMap((r) => cardsOf(d[r])));
        st.inHand = st.inHand.filter((c) => !placedCards.has(c));
        const placed = ROWS.filter((r) => cardsOf(d[r]).length > 0).map((r) => `${r} ${(d[r] as string[]).join(" ")}`);
        push({ ...at, focus: s, title: `Seat ${s} places, street ${Number(d.street) + 1}`, lines: [placed.join("; ") || "nothing", ...(d.automatic ? [`placed for it: ${words(String(d.automatic))}`] : [])] });
        break;
      }
      case "DiscardCommitted":
        seats[s]!.hiddenDiscards += Math.max(1, seats[s]!.inHand.length);
        seats[s]!.inHand = [];
        push({ ...at, focus: s, title: `Seat ${s} discards face down, street ${Number(d.street) + 1}`, lines: [`commitment ${short(d.commitment)}: the card stays hidden until the deal's end`] });
        break;
      case "DiscardsRevealed":
        seats[s]!.discards = cardsOf(d.cards);
        seats[s]!.hiddenDiscards = 0;
        push({ ...at, focus: s, title: `Seat ${s}'s discards revealed`, lines: [`${(d.cards as string[]).join(" ")} (streets ${(d.streets as number[]).map((x) => x + 1).join(", ")})`] });
        break;
      case "FantasylandCommitted":
        mark(s, "Fantasyland"); mark(s, "committed");
        push({ ...at, focus: s, title: `Seat ${s} (Fantasyland) commits its rows`, lines: [`commitment ${short(d.commitment)}`] });
        break;
      case "FantasylandRevealed":
        seats[s]!.rows = { front: cardsOf(d.front), middle: cardsOf(d.middle), back: cardsOf(d.back) };
        seats[s]!.discards = cardsOf(d.discards);
        seats[s]!.inHand = [];
        if (d.dead === true) mark(s, "dead hand");
        push({ ...at, focus: s, title: `Seat ${s} (Fantasyland) reveals its rows`, lines: [`discards: ${(d.discards as string[] | undefined)?.join(" ") || "none"}`] });
        break;
      case "FantasylandTimedOut": case "FantasylandRevealsOpened":
        push({ ...at, focus: Number.isInteger(d.seat) ? s : undefined, title: e.type === "FantasylandTimedOut" ? `Seat ${s}'s Fantasyland timed out` : "Fantasyland reveals opened", lines: [] });
        break;
      case "ArrangementCommitted":
        mark(s, "committed");
        push({ ...at, focus: s, title: `Seat ${s} commits an arrangement`, lines: [`commitment ${short(d.commitment)} (scheme ${String(d.scheme ?? 1)}${d.signature ? ", signed by the player" : ""}): a hash of the rows and a secret nonce`] });
        break;
      case "SeatConfirmed":
        unmark(s, "committed"); mark(s, "confirmed");
        push({ ...at, focus: s, title: `Seat ${s} confirms`, lines: [`locked: ${short(d.commitment)}`] });
        break;
      case "NaturalDeclared":
        mark(s, "natural declared");
        push({ ...at, focus: s, title: `Seat ${s} declares a natural (sealed)`, lines: [`commitment ${short(d.commitment)}`] });
        break;
      case "NaturalRevealed":
        if (d.natural !== "none") mark(s, `natural: ${words(String(d.natural))}`);
        push({ ...at, focus: s, title: `Seat ${s}'s declaration opened: ${words(String(d.natural))}`, lines: [] });
        break;
      case "AnnouncementsOpened":
        push({ ...at, title: "Surrender announcements open", lines: [`in turn: seats ${(d.order as number[]).join(", ")}`] });
        break;
      case "SurrenderAnnounced":
        if (d.surrender === true) mark(s, "surrendered");
        push({ ...at, focus: s, title: `Seat ${s} ${d.surrender === true ? "surrenders" : "plays on"}${d.timed_out === true ? " (missed its turn)" : ""}`, lines: [] });
        break;
      case "RevealsOpened":
        push({ ...at, title: "Every seat confirmed: reveals open", lines: [] });
        break;
      case "ArrangementRevealed": {
        seats[s]!.rows = { front: cardsOf(d.front), middle: cardsOf(d.middle), back: cardsOf(d.back) };
        seats[s]!.inHand = [];
        if (d.foul === true) mark(s, `foul${d.foul_reason ? `: ${words(String(d.foul_reason)).toLowerCase()}` : ""}`);
        push({ ...at, focus: s, title: `Seat ${s} reveals`, lines: [`nonce ${short(d.nonce)}: rows and nonce must hash to the confirmed commitment`] });
        break;
      }
      case "SeatTimedOut":
        mark(s, `timed out (${words(String(d.consequence))})`);
        push({ ...at, focus: s, title: `Seat ${s} timed out while ${words(String(d.stage))}`, lines: [`consequence: ${words(String(d.consequence))}`] });
        break;
      case "DeadlinesExtended":
        push({ ...at, title: `Deadlines extended (${words(String(d.stage))})`, lines: [words(String(d.reason))] });
        break;
      case "SeedRevealed":
        push({ ...at, title: "The seed is revealed", lines: [`${short(d.seed)}: anyone can now recompute the deck and check every card dealt`] });
        break;
      case "DealVoided":
        push({ ...at, title: `Deal ${dealNumber} voided`, lines: [`reason: ${String(d.reason)}`, `seed ${short(d.seed)} published: the deal record can still be checked`] });
        break;
      case "DealScored":
        scored(d, ruleSet, family, seats, push, e.version);
        break;
      case "SeriesCompleted":
        push({ ...at, title: `The series is over after ${String(d.deals_played)} deal${d.deals_played === 1 ? "" : "s"}`, lines: (d.standings as Obj[]).map((x) => `${String(x.place)}. seat ${String(x.seat)}: ${String(x.total)}`) });
        break;
      case "SeriesStarted":
        push({ ...at, title: `Series ${String(d.series_number)} starts`, lines: [] });
        break;
      default:
        push({ ...at, title: e.type, lines: [] });
    }
  }
  return { dealNumber, family, outcome, seatCount: n, steps, warnings };
}

function scored(d: Obj, ruleSet: Obj, family: string, seats: SeatState[], push: (s: Omit<Step, "seats">) => void, version: number): void {
  const arrangements = (d.arrangements as (string | null)[]) ?? [];
  const fouls = (d.fouls as boolean[]) ?? [];
  const totals = (d.totals as number[]) ?? [];
  const series = (d.series_totals as number[]) ?? [];
  const scoring = family === "closed" ? readRuleSet(ruleSet) : null;
  // Open face's royalties (rules.md §8.3; a 2-7 lowball middle earns none, §8.12).
  const ofcRows = (r: (typeof ROWS)[number], rows: Board) => ofcRoyalty(r, rows[r], ruleSet as unknown as OfcRuleSet);
  for (const st of seats) {
    const text = arrangements[st.seat];
    if (typeof text === "string" && text.includes("|")) {
      const [front, middle, back] = text.split("|").map((r) => r.trim().split(/\s+/).filter(Boolean).map(parseCard));
      st.rows = { front: front!, middle: middle!, back: back! };
      st.inHand = [];
    }
    const rows = st.rows;
    if (rows !== null && rows.front.length === 3 && rows.middle.length === 5 && rows.back.length === 5) {
      st.names = ROWS.map((r) => words(categoryOf(rows[r])));
      if (!fouls[st.seat])
        st.royalties = ROWS.map((r) => (scoring ? (scoring.royalties === "none" ? 0 : rowRoyalty(r, rows[r], scoring)) : ofcRows(r, rows)));
      // rules.md §8.2, §8.12: out of order under the rule set's order rule (2-7's included).
      if (family === "open_face" && !inOrder(ruleSet as unknown as OfcRuleSet, rows)) { if (!st.marks.includes("dead hand")) st.marks.push("dead hand"); }
    }
    if (fouls[st.seat] && family === "closed" && !st.marks.some((m) => m.startsWith("foul"))) st.marks.push("foul");
    if (fouls[st.seat] && family === "open_face" && !st.marks.includes("dead hand")) st.marks.push("dead hand");
    st.delta = totals[st.seat];
    st.seriesTotal = series[st.seat];
  }
  const pairs = ((d.pairs as Obj[]) ?? []).map((p) => ({ a: Number(p.seat_a), b: Number(p.seat_b), rows: p.rows as number[], delta: Number(p.delta) }));
  const won = (p: { rows: number[] }) => p.rows.map((r) => (r > 0 ? "W" : r < 0 ? "L" : "=")).join("");
  push({
    version, kind: "DealScored", title: "Scored", pairs,
    lines: [
      ...pairs.map((p) => `seat ${p.a} v seat ${p.b}: rows ${won(p)} (front, middle, back, from seat ${p.a}) → ${p.delta > 0 ? "+" : ""}${p.delta} to seat ${p.a}`),
      `deal: ${totals.map((t, s) => `seat ${s} ${t > 0 ? "+" : ""}${t}`).join(", ")}`,
      ...(series.length ? [`series so far: ${series.map((t, s) => `seat ${s} ${t}`).join(", ")}`] : []),
    ],
  });
}
