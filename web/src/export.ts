// Verifying an audit export (docs/audit.md §2-§4.5) as far as the page goes so far: format, chain,
// anchor, coverage, dealer_lot, every finished deal's fair-dealing checks (docs/fairness.md §13,
// through src/verify.ts), player_signature, checkpoint and inclusion; then the three verdicts of §4.5.
// Also header, opening, dealer_rotation, reveal_fouls, scored_arrangements (src/recordChecks.ts).
// Also decode (src/decode.ts), each deal's sequence (src/sequence.ts), voided deals (src/voided.ts), the
// series (src/series.ts), pinned player keys, --checkpoint's consistency and kept receipts (§4.6).
// Not yet: open-face deals.
import { type Bytes, concat, hex, unhex } from "./bytes";
import { type Json, canonicalJson, parseStrictJson } from "./canonical";
import { formatCards, parseCards } from "./cards";
import { sha256 } from "./crypto";
import { type DealId, announceMessage, commitMessage, declareMessage, lot, revealMessage } from "./fairness";
import { decodeCheck } from "./decode";
import { dealOutcome, sequenceCheck } from "./sequence";
import { type SeriesDeal, seriesChecks } from "./series";
import { voidedDealCheck } from "./voided";
import { ed25519Verify } from "./crypto";
import { naturalsPlayed } from "./naturals";
import { dealerRotation, headerCheck, openingCheck, revealFouls, scoredArrangements } from "./recordChecks";
import { checkLimits } from "./limits";
import type { OfcRuleSet } from "./openface";
import { openFaceExportChecks } from "./openfaceExport";
import { checkReceipt, parseReceipt } from "./receipts";
import * as T from "./transparency";
import { type Check, type PublishedDeal, type Verdict, verifyDeal } from "./verify";

type Obj = { [key: string]: Json };

export interface ExportEvent {
  version: number;
  type: string;
  schema_version: number;
  data: Obj;
  metadata: Obj;
  hash: string;
  inclusion?: { leaf_index: number; proof: string };
}

interface Segment {
  anchor: { version: number; hash: string };
  first_version: number;
  last_version: number;
  last_hash: string;
}

/** What anchors an ANCHORED verdict (audit.md §4.5, `--json`'s `anchor`). */
export interface Anchor {
  origin: string;
  tree_size: number;
  root: string;
  /** The pinned server key that signed the checkpoint, `name+keyid`. */
  signed_by: string;
  /** The pinned witnesses that cosigned a tree holding every event. */
  witnessed_by: string[];
  checkpoint: "export" | "reader";
}

export interface ExportReport {
  checks: (Check & { deal?: number })[];
  verdict: Verdict;
  /** Set when the verdict is ANCHORED. */
  anchor?: Anchor;
  /** Why the verdict is not ANCHORED, or the failed checks in words. */
  reasons: string[];
}

const GENESIS = "0".repeat(64);

/** §3: hash(v) = SHA-256(hash(v-1) || canonical JSON of the event's hashed fields). */
export async function chainHash(previous: Bytes, streamId: string, e: ExportEvent): Promise<Bytes> {
  const hashed: Json = {
    data: e.data, metadata: e.metadata, schema_version: e.schema_version,
    stream: streamId, type: e.type, version: e.version,
  };
  return sha256(concat(previous, new TextEncoder().encode(canonicalJson(hashed))));
}

const rowString = (cards: Json): string => (cards as string[]).join(" ");

/** §4.2's mapping from a finished deal's events (and the table's opening) to fairness.md §14. */
function publishedDeal(tableId: string, ruleSet: Obj, seatCount: number, players: string[], events: ExportEvent[]): PublishedDeal {
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

/** An export's header and event lines (blank lines ignored), read with the strict JSON; throws at the first line that is not one. */
export function readExport(text: string): { header: Obj; events: ExportEvent[] } {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
  const header = parseStrictJson(lines[0] ?? "") as Obj;
  if (header.format !== "sapsam-audit-export" || header.format_version !== 1) throw new Error("not a sapsam-audit-export of format version 1");
  const events = lines.slice(1).map((l, i) => {
    const e = parseStrictJson(l) as unknown as ExportEvent;
    const ok = Number.isInteger(e.version) && typeof e.type === "string" && Number.isInteger(e.schema_version)
      && typeof e.data === "object" && typeof e.metadata === "object" && /^[0-9a-f]{64}$/.test(String(e.hash));
    if (!ok) throw new Error(`line ${i + 2}: not an event line`);
    return e;
  });
  return { header, events };
}

/**
 * Verifies an export's text. `serverKeys` and `witnessKeys` are the verifier keys (vkey text) the
 * reader pins; with none, the verdict is at best INTERNALLY CONSISTENT ONLY. An export beyond
 * docs/audit.md §2.4's limits throws ExportLimitError.
 */
export interface ExportOptions {
  /** audit.md §4.2's `--player-key PLAYER=KEY`: per player id, the Ed25519 public keys (64 hex digits) pinned for it. */
  playerKeys?: Record<string, string[]>;
  /** audit.md §4.5's `--checkpoint`: a signed checkpoint the reader got itself (needs a server key). */
  checkpoint?: string;
  /** audit.md §4.6's `--receipts`: kept receipts, each the text of one (transparency.md §9). */
  receipts?: { name: string; text: string }[];
}

export async function verifyExport(text: string, serverKeys: string[] = [], witnessKeys: string[] = [], options: ExportOptions = {}): Promise<ExportReport> {
  checkLimits(text); // beyond §2.4's limits: refused unread (ExportLimitError), no report
  const checks: ExportReport["checks"] = [];
  const add = (name: string, status: Check["status"], what: string, detail?: string, deal?: number) =>
    checks.push({ name, status, what, ...(detail === undefined ? {} : { detail }), ...(deal === undefined ? {} : { deal }) });

  // format: the header and every event line parse, with the fields the checks below read.
  let header: Obj;
  let events: ExportEvent[];
  try {
    ({ header, events } = readExport(text));
  } catch (e) {
    add("format", "failed", "the file is an export", e instanceof Error ? e.message : String(e));
    return finish(checks, []);
  }
  add("format", "passed", "the file is an export");

  // chain, anchor, coverage (§4.1): segment after segment, in file order.
  const streamId = header.stream_id as string;
  const segments = header.segments as unknown as Segment[];
  let chainError: string | undefined;
  let anchorError: string | undefined;
  let coverageError: string | undefined;
  let at = 0;
  const segmentsToCheck: { seg: Segment; events: ExportEvent[] }[] = [];
  segments.forEach((seg, k) => {
    if (k === 0 && (seg.anchor.version !== 0 || seg.anchor.hash !== GENESIS || seg.first_version !== 1))
      anchorError ??= "the first segment does not start the stream from the genesis";
    if (seg.anchor.version !== seg.first_version - 1) anchorError ??= `segment ${k + 1}'s anchor is not the version before its first`;
    const previous = segments[k - 1];
    if (previous !== undefined) {
      if (seg.anchor.version < previous.last_version) anchorError ??= `segment ${k + 1} does not lie after segment ${k}`;
      if (seg.anchor.version === previous.last_version && seg.anchor.hash !== previous.last_hash)
        anchorError ??= `segment ${k + 1}'s anchor hash is not segment ${k}'s last hash`;
    }
    const count = seg.last_version - seg.first_version + 1;
    const mine = events.slice(at, at + count);
    at += count;
    if (mine.length !== count || mine.at(-1)?.version !== seg.last_version || mine.at(-1)?.hash !== seg.last_hash)
      coverageError ??= `segment ${k + 1} does not hold exactly versions ${seg.first_version}..${seg.last_version} ending on its last hash`;
    segmentsToCheck.push({ seg, events: mine });
  });
  if (at !== events.length) coverageError ??= `${events.length - at} events lie outside every segment`;
  for (const { seg, events: mine } of segmentsToCheck) {
    let previous = unhex(seg.anchor.hash);
    let version = seg.anchor.version;
    for (const e of mine) {
      if (chainError !== undefined) break;
      try {
        if (e.version !== ++version) throw new Error(`version ${e.version} where ${version} belongs`);
        previous = await chainHash(previous, streamId, e);
        if (hex(previous) !== e.hash) throw new Error(`the event of version ${e.version} (${e.type}) does not hold: altered, or events before it removed, added or reordered`);
      } catch (err) {
        chainError = err instanceof Error ? err.message : String(err);
      }
    }
  }
  add("chain", chainError ? "failed" : "passed", "every event is chained to the one before it", chainError);
  add("anchor", anchorError ? "failed" : "passed", "the segments hang on the genesis or on the events before them", anchorError);
  add("coverage", coverageError ? "failed" : "passed", "each segment holds exactly its events", coverageError);
  const decodeError = decodeCheck(events);
  add("decode", decodeError ? "failed" : "passed", "every event is a known type and schema version with well-formed fields", decodeError);

  // What this page does not check yet keeps the verdict below ANCHORED, and says so.
  const reasons: string[] = [];
  // header, opening, dealer_lot (§4.1) and each finished deal (§4.2).
  const verdictOf = (name: string, what: string, failure: string | undefined, deal?: number) =>
    add(name, failure === undefined ? "passed" : "failed", what, failure, deal);
  verdictOf("header", "the header says what the log says", headerCheck(header, events));
  if (events[0]?.version === 1) verdictOf("opening", "the table opened as the protocol says", openingCheck(events));
  const created = events.find((e) => e.type === "TableCreated")?.data;
  const chosen = events.find((e) => e.type === "DealerChosen")?.data;
  const seatCount = created?.seat_count as number;
  const tableId = streamId.replace(/^table-/, "");
  const players: string[] = [];
  for (const e of events) if (e.type === "PlayerSeated") players[e.data.seat as number] = e.data.player_id as string;
  if (created && chosen) {
    try {
      const drawn = await lot(tableId, unhex(chosen.lot_seed as string), seatCount);
      const ok = hex(drawn.commitment) === created.lot_commitment && drawn.dealer === chosen.dealer
        && formatCards(drawn.cards) === (chosen.lot_cards as string[]).join(" ");
      add("dealer_lot", ok ? "passed" : "failed", "the first dealer was drawn by the committed lot", ok ? undefined : "the lot seed does not give the recorded commitment, cards or dealer");
    } catch (e) {
      add("dealer_lot", "failed", "the first dealer was drawn by the committed lot", String(e));
    }
  }
  const family = (created?.rule_set as Obj | undefined)?.family ?? "closed";
  if (family !== "closed" && family !== "open_face") {
    add("family", "skipped", "the deals are of a game this page checks", `not covered: this page does not check ${String(family)} deals yet`);
    reasons.push(`this page does not check ${String(family)} deals yet`);
  }
  if (family === "open_face") {
    // §4.3.1: each finished or voided deal re-decided as far as this page goes (src/openfaceExport.ts);
    // what it cannot settle is named and keeps the verdict below ANCHORED.
    const notCovered = new Set<string>();
    checks.push(...await openFaceExportChecks(tableId, created!.rule_set as unknown as OfcRuleSet, seatCount, header.scope === "table", events, notCovered));
    if (notCovered.size > 0) {
      add("family", "skipped", "every open-face rule is re-decided", `not covered: ${[...notCovered].join("; ")}`);
      reasons.push(...notCovered);
    }
  }
  const starts = family !== "closed" ? [] : events.flatMap((e, i) => (e.type === "DealStarted" ? [i] : []));
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
  for (const c of pinnedPlayerKeys(events, seatCount, options.playerKeys ?? {})) checks.push(c);

  // checkpoint and inclusion (§4.5).
  let checkpoint: T.Checkpoint | undefined;
  let anchor: Anchor | undefined;
  const note = (header.transparency as Obj | undefined)?.checkpoint as string | undefined;
  if (note === undefined) {
    add("checkpoint", "skipped", "a checkpoint signed by the pinned key covers the events", "not covered: the export carries no checkpoint");
    reasons.push("the export carries no checkpoint");
  } else if (serverKeys.length === 0) {
    checkpoint = T.parseCheckpoint(note.slice(0, note.lastIndexOf("\n\n") + 1));
    add("checkpoint", "skipped", "a checkpoint signed by the pinned key covers the events", "not covered: no server key pinned");
    reasons.push("no server key pinned");
  } else {
    try {
      const servers = await Promise.all(serverKeys.map(T.parseVerifierKey));
      const witnesses = await Promise.all(witnessKeys.map(T.parseVerifierKey));
      const opened = await T.openNote(note, [...servers, ...witnesses]);
      checkpoint = T.parseCheckpoint(opened.text);
      const signer = opened.verified.find((k) => k.type === 1 && k.name === checkpoint!.origin && servers.includes(k));
      if (signer === undefined) throw new Error("no pinned key of this log signed the checkpoint");
      anchor = {
        origin: checkpoint.origin, tree_size: checkpoint.size, root: hex(checkpoint.root), signed_by: T.keyLabel(signer),
        witnessed_by: opened.verified.filter((k) => witnesses.includes(k)).map(T.keyLabel), checkpoint: "export",
      };
      add("checkpoint", "passed", "a checkpoint signed by the pinned key covers the events");
    } catch (e) {
      checkpoint = undefined;
      add("checkpoint", "failed", "a checkpoint signed by the pinned key covers the events", e instanceof Error ? e.message : String(e));
    }
  }
  if (checkpoint !== undefined) {
    const missing = events.filter((e) => e.inclusion === undefined).map((e) => e.version);
    let failure: string | undefined;
    let last = -1;
    for (const e of events) {
      if (e.inclusion === undefined) continue;
      const { leaf_index: index, proof } = e.inclusion;
      const hashes = (proof.match(/.{64}/g) ?? []).map(unhex);
      const ok = index > last && proof.length % 64 === 0
        && await T.verifyInclusion(index, checkpoint.size, await T.leafHash(unhex(e.hash)), hashes, checkpoint.root);
      last = index;
      if (!ok) { failure = `the event of version ${e.version} is not at leaf ${index} of the checkpoint's tree`; break; }
    }
    if (failure !== undefined) add("inclusion", "failed", "every event is in the checkpoint's tree", failure);
    else if (missing.length > 0) {
      add("inclusion", "skipped", "every event is in the checkpoint's tree", `not covered: versions ${missing.join(", ")} not yet under a checkpoint`);
      reasons.push("events not yet under the checkpoint");
    } else add("inclusion", "passed", "every event is in the checkpoint's tree");
  }
  if (options.checkpoint !== undefined) {
    const { check, reader } = await consistencyCheck(options.checkpoint, checkpoint, header, serverKeys, witnessKeys);
    checks.push(check);
    // Yours anchors when it is the larger tree and linked; its witnesses count when it holds every event.
    const leaves = 1 + Math.max(-1, ...events.map((e) => e.inclusion?.leaf_index ?? -1));
    if (check.status === "passed" && reader !== undefined && anchor !== undefined) {
      const witnessed = reader.size >= leaves ? reader.witnessedBy : [];
      if (reader.checkpoint.size > anchor.tree_size)
        anchor = { origin: anchor.origin, tree_size: reader.checkpoint.size, root: hex(reader.checkpoint.root), signed_by: reader.signedBy,
          witnessed_by: [...new Set([...anchor.witnessed_by, ...witnessed])], checkpoint: "reader" };
      else anchor.witnessed_by = [...new Set([...anchor.witnessed_by, ...witnessed])];
    }
  }
  if (options.receipts !== undefined) checks.push(await receiptsCheck(options.receipts, header, events, serverKeys));
  const report = finish(checks, reasons);
  return report.verdict === "ANCHORED" && anchor !== undefined ? { ...report, anchor } : report;
}

function finish(checks: ExportReport["checks"], reasons: string[]): ExportReport {
  const failed = checks.filter((c) => c.status === "failed" || (c.status === "skipped" && c.detail?.startsWith("needs")));
  if (failed.length > 0)
    return {
      checks, verdict: "FAILED",
      // A check skipped because one it relies on failed counts as failed (audit.md §4.5), said as such.
      reasons: failed.map((c) => `${c.deal !== undefined ? `deal ${c.deal} · ` : ""}${c.name} ${c.status === "failed"
        ? `does not hold: ${c.what}${c.detail ? ` (${c.detail})` : ""}`
        : `not checked, as a check it relies on failed (${c.detail}): ${c.what}`}`),
    };
  const anchored = reasons.length === 0 && checks.some((c) => c.name === "inclusion" && c.status === "passed");
  return { checks, verdict: anchored ? "ANCHORED" : "INTERNALLY CONSISTENT ONLY", reasons };
}

const SIGNED = ["NaturalDeclared", "ArrangementCommitted", "SurrenderAnnounced", "ArrangementRevealed"];

/**
 * player_signature[s] (fairness.md §19, audit.md §4.2) for each seat with a signed move in the deal:
 * every recorded signature verifies for the message rebuilt from the event and the seated player; a
 * key comes with a signature and the reverse; a player who signed a move signs every later one.
 */
async function signatureChecks(id: DealId, players: string[], events: ExportEvent[], signers: Set<string>): Promise<Check[]> {
  const checks: Check[] = [];
  for (let seat = 0; seat < players.length; seat++) {
    const player = players[seat]!;
    const moves = events.filter((e) => SIGNED.includes(e.type) && e.data.seat === seat);
    if (!signers.has(player) && !moves.some((e) => e.data.signature != null || e.data.player_key != null)) continue;
    let failure: string | undefined;
    for (const e of moves) {
      const { player_key: key, signature } = e.data as { player_key?: string | null; signature?: string | null };
      if ((key == null) !== (signature == null)) { failure = `version ${e.version}: a key without a signature or the reverse`; break; }
      // An announcement of signing_scheme 1 (schema 1) and the server's for a missed turn are unsigned.
      if (e.type === "SurrenderAnnounced" && (e.data.signing_scheme !== 2 || e.data.timed_out === true)) {
        if (key != null) { failure = `version ${e.version}: a signature on an announcement that is never signed (${e.data.timed_out === true ? "a missed turn" : "signing scheme 1"})`; break; }
        continue;
      }
      if (key == null) {
        if (signers.has(player)) { failure = `version ${e.version}: unsigned, after the player signed an earlier move`; break; }
        continue;
      }
      const d = e.data;
      let message: Bytes;
      try {
        message = e.type === "ArrangementCommitted"
          ? commitMessage(id, seat, player, (d.scheme as number | undefined) ?? 1, unhex(d.commitment as string))
          : e.type === "SurrenderAnnounced"
            ? announceMessage(id, seat, player, d.surrender === true)
          : e.type === "NaturalDeclared"
            ? declareMessage(id, seat, player, unhex(d.commitment as string))
              : revealMessage(id, seat, player, {
                front: parseCards((d.front as string[]).join(" ")),
                middle: parseCards((d.middle as string[]).join(" ")),
                back: parseCards((d.back as string[]).join(" ")),
              }, unhex(d.nonce as string));
      } catch (err) {
        failure = `version ${e.version}: ${err instanceof Error ? err.message : String(err)}`;
        break;
      }
      if (!(await ed25519Verify(unhex(key), unhex(signature!), message))) { failure = `version ${e.version} (${e.type}): the signature does not verify for ${player}`; break; }
      signers.add(player);
    }
    checks.push({
      name: `player_signature[${seat}]`, status: failure ? "failed" : "passed",
      what: "every signed move was signed by the player seated there", ...(failure ? { detail: failure } : {}),
    });
  }
  return checks;
}

// Open face's signed moves too (fairness.md §19): pins cover them, as `sapsam audit verify`'s do.
const PINNED_MOVES = [
  "NaturalDeclared", "ArrangementCommitted", "SurrenderAnnounced", "ArrangementRevealed",
  "CardsPlaced", "FantasylandCommitted", "FantasylandRevealed", "DiscardsRevealed",
];

/**
 * pinned_player_key[<player>] (audit.md §4.2) for each pinned player: every move of a seat the player
 * holds in that deal (PlayerSeated, then each SeatReplaced) is signed by a key pinned for it; not
 * covered when the player signed no move in the export.
 */
export function pinnedPlayerKeys(events: readonly ExportEvent[], seatCount: number, pins: Record<string, string[]>): (Check & { deal?: number })[] {
  const checks: (Check & { deal?: number })[] = [];
  const what = "the player's moves were signed by a key pinned for it";
  for (const [pinned, keys] of Object.entries(pins)) {
    const player = pinned.replace(/^players\//, "");
    const allowed = new Set(keys.map((k) => k.toLowerCase()));
    const holder: (string | undefined)[] = Array.from({ length: seatCount }, () => undefined);
    let deal: number | undefined;
    let signed = 0;
    const wrong: string[] = [];
    for (const e of events) {
      if (e.type === "PlayerSeated" || e.type === "SeatReplaced") holder[e.data.seat as number] = e.data.player_id as string;
      if (e.type === "DealStarted") deal = e.data.deal_number as number;
      if (!PINNED_MOVES.includes(e.type) || holder[e.data.seat as number] !== player) continue;
      const key = e.data.player_key;
      if (typeof key !== "string") continue;
      signed++;
      if (!allowed.has(key)) wrong.push(`deal ${deal}, seat ${String(e.data.seat)}, version ${e.version}, key ${key}`);
    }
    const name = `pinned_player_key[${player}]`;
    if (wrong.length > 0) checks.push({ name, status: "failed", what, detail: `signed by a key not pinned for ${player}: ${wrong.join("; ")}` });
    else if (signed > 0) checks.push({ name, status: "passed", what });
    else checks.push({ name, status: "skipped", what, detail: `not covered: ${player} holds no seat in the export or signed none of its moves` });
  }
  return checks;
}

/**
 * consistency (audit.md §4.5, with `--checkpoint`): the reader's own checkpoint opens under the
 * pinned keys with the export's origin, and either is the export checkpoint's tree (the same size
 * with another root is a fork) or a `consistency` entry of the export links the smaller tree to the
 * larger (transparency.md §4.2); not covered when no entry links them, or nothing is pinned.
 */
interface ReaderCheckpoint { checkpoint: T.Checkpoint; size: number; signedBy: string; witnessedBy: string[] }

async function consistencyCheck(
  mine: string, theirs: T.Checkpoint | undefined, header: Obj, serverKeys: string[], witnessKeys: string[],
): Promise<{ check: Check; reader?: ReaderCheckpoint }> {
  const what = "your checkpoint and the export's are of one log";
  let held: ReaderCheckpoint | undefined;
  const result = (status: Check["status"], detail?: string) => ({
    check: { name: "consistency", status, what, ...(detail === undefined ? {} : { detail }) } as Check,
    ...(held === undefined ? {} : { reader: held }),
  });
  if (serverKeys.length === 0) return result("skipped", "not covered: your checkpoint needs a pinned server key");
  if (theirs === undefined) return result("skipped", "needs checkpoint");
  let reader: T.Checkpoint;
  try {
    const servers = await Promise.all(serverKeys.map(T.parseVerifierKey));
    const witnesses = await Promise.all(witnessKeys.map(T.parseVerifierKey));
    const opened = await T.openNote(mine, [...servers, ...witnesses]);
    reader = T.parseCheckpoint(opened.text);
    if (reader.origin !== theirs.origin) return result("failed", `your checkpoint is of ${reader.origin}, the export's of ${theirs.origin}`);
    const signer = opened.verified.find((k) => k.type === 1 && k.name === reader.origin && servers.includes(k));
    if (signer === undefined) return result("failed", "no pinned key of this log signed your checkpoint");
    held = { checkpoint: reader, size: reader.size, signedBy: T.keyLabel(signer), witnessedBy: opened.verified.filter((k) => witnesses.includes(k)).map(T.keyLabel) };
  } catch (e) {
    return result("failed", `your checkpoint: ${e instanceof Error ? e.message : String(e)}`);
  }
  const same = (a: Bytes, b: Bytes) => hex(a) === hex(b);
  if (reader.size === theirs.size)
    return same(reader.root, theirs.root) ? result("passed") : result("failed", `a fork: two roots for a tree of ${reader.size} leaves`);
  const [small, large] = reader.size < theirs.size ? [reader, theirs] : [theirs, reader];
  const entries = ((header.transparency as Obj | undefined)?.consistency ?? []) as Obj[];
  const entry = Array.isArray(entries) ? entries.find((c) => c.old_size === small.size && c.new_size === large.size) : undefined;
  if (entry === undefined) return result("skipped", `not covered: no consistency proof in the export links ${small.size} and ${large.size} leaves (the export's own checkpoint is the anchor)`);
  const proof = String(entry.proof);
  const hashes = proof.length % 64 === 0 ? (proof.match(/.{64}/g) ?? []).map((h) => unhex(h.toLowerCase())) : [];
  const ok = hashes.length > 0 && await T.verifyConsistency(small.size, large.size, hashes, small.root, large.root);
  return ok ? result("passed") : result("failed", `the consistency proof from ${small.size} to ${large.size} leaves does not verify`);
}

/**
 * The receipts of kept files (audit.md §4.6): a file is one bare signed note, or JSON lines each
 * holding one under `signed_note` (the SDK's folder); named `file` or `file:line`.
 */
type Kept = { source: string; note?: string; problem?: string };
export function keptReceipts(name: string, text: string): Kept[] {
  if (text.startsWith("sapsam receipt v1\n")) return [{ source: name, note: text }];
  return text.split("\n").flatMap((line, i): Kept[] => {
    if (line.trim() === "") return [];
    const source = `${name}:${i + 1}`;
    try {
      const value = JSON.parse(line) as { signed_note?: unknown };
      return typeof value?.signed_note === "string" ? [{ source, note: value.signed_note }] : [{ source, problem: "no signed_note" }];
    } catch {
      return [{ source, problem: "not a JSON line" }];
    }
  });
}

/**
 * receipts (audit.md §4.6, transparency.md §9.2): every kept receipt of the export's stream is
 * signed by a pinned server key, and each event it names is in the export with the same version,
 * position, type and hash; for a deal export, only receipts starting inside its segments.
 */
async function receiptsCheck(files: { name: string; text: string }[], header: Obj, events: ExportEvent[], serverKeys: string[]): Promise<Check> {
  const what = "every kept receipt's events are in the export as the server acknowledged them";
  const stream = header.stream_id as string;
  const wholeTable = header.scope === "table";
  const segments = header.segments as unknown as Segment[];
  const byVersion = new Map(events.map((e) => [e.version, e]));
  const problems: string[] = [];
  const seen = new Set<string>();
  let checked = 0;
  let notCovered = 0;
  for (const file of files) {
    for (const kept of keptReceipts(file.name, file.text)) {
      if (kept.note === undefined) { problems.push(`${kept.source}: ${kept.problem}`); continue; }
      let receipt;
      try {
        receipt = parseReceipt(kept.note.slice(0, kept.note.lastIndexOf("\n\n") + 1));
      } catch (e) {
        problems.push(`receipt ${kept.source}: not a signed receipt (${e instanceof Error ? e.message : String(e)})`);
        continue;
      }
      if (receipt.stream !== stream || seen.has(kept.note)) continue; // another stream's, or a retry's same bytes
      seen.add(kept.note);
      const name = `receipt ${kept.source} (request ${receipt.requestId}, versions ${receipt.events[0]!.version}..${receipt.events.at(-1)!.version}, recorded ${receipt.time})`;
      try {
        await checkReceipt(kept.note, serverKeys);
      } catch (e) {
        problems.push(`${name}: the signature does not verify (${e instanceof Error ? e.message : String(e)})`);
        continue;
      }
      const first = receipt.events[0]!.version;
      if (!wholeTable && !segments.some((s) => s.first_version <= first && first <= s.last_version)) { notCovered++; continue; }
      checked++;
      for (const r of receipt.events) {
        const found = byVersion.get(r.version) as (ExportEvent & { position?: number }) | undefined;
        const text = (x: { type: string; position?: number; hash: string }) => `${x.type} at position ${String(x.position)}, hash ${x.hash}`;
        if (found === undefined) problems.push(`${name}: version ${r.version} (${text(r)}) is missing from the export`);
        else if (found.position !== r.position || found.type !== r.type || found.hash !== r.hash)
          problems.push(`${name}: version ${r.version} was ${text(r)}; the export has ${text(found)}`);
      }
    }
  }
  if (problems.length > 0) return { name: "receipts", status: "failed", what, detail: problems.join("; ") };
  if (checked > 0) return { name: "receipts", status: "passed", what, detail: `${checked} receipt(s) of this stream hold${notCovered ? `; ${notCovered} of other deals not in this export` : ""}` };
  return { name: "receipts", status: "skipped", what, detail: `not covered: no kept receipt of this export${notCovered ? ` (${notCovered} of other deals)` : ""}` };
}
