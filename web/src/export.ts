// Verifying an audit export (docs/audit.md §2-§4.6) and the three verdicts of §4.5: the record as
// a whole (src/exportFormat.ts: format, chain, anchor, coverage; decode, header, opening,
// dealer_lot), each deal by its game family (src/closedExport.ts for the closed game, with the
// series; src/openfaceExport.ts for open face, §4.3.1), the pinned player keys
// (src/playerSignatures.ts), then what ties the file to the published log (src/exportProofs.ts:
// checkpoint, inclusion, --checkpoint's consistency, kept receipts).
import { hex, unhex } from "./bytes";
import { formatCards } from "./cards";
import { closedDealChecks } from "./closedExport";
import { decodeCheck } from "./decode";
import { type ExportEvent, type Obj, readExport, segmentChecks } from "./exportFormat";
import { type Anchor, proofChecks } from "./exportProofs";
import { lot } from "./fairness";
import { checkLimits } from "./limits";
import type { OfcRuleSet } from "./openface";
import { openFaceExportChecks } from "./openfaceExport";
import { openFaceSignatureChecks, pinnedPlayerKeys } from "./playerSignatures";
import { headerCheck, openingCheck } from "./recordChecks";
import type { Check, Verdict } from "./verify";

export { type ExportEvent, chainHash, readExport } from "./exportFormat";
export { type Anchor, keptReceipts } from "./exportProofs";
export { pinnedPlayerKeys } from "./playerSignatures";

export interface ExportReport {
  checks: (Check & { deal?: number })[];
  verdict: Verdict;
  /** Set when the verdict is ANCHORED. */
  anchor?: Anchor;
  /** Why the verdict is not ANCHORED, or the failed checks in words. */
  reasons: string[];
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
  checks.push(...await segmentChecks(header, events));
  const streamId = header.stream_id as string;
  const decodeError = decodeCheck(events);
  add("decode", decodeError ? "failed" : "passed", "every event is a known type and schema version with well-formed fields", decodeError);

  // Why the verdict cannot be ANCHORED beyond the proofs (a deal still being played), said in words.
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
    // §4.3.1: each finished or voided deal re-decided (src/openfaceExport.ts). What the export
    // cannot settle (a deal export's earlier deals) is named; like any check not covered but the
    // proofs, it does not bar ANCHORED (§4.5), as in sapsam audit verify. A deal still being
    // played keeps the verdict below ANCHORED, as for the closed game.
    const notCovered = new Set<string>();
    const pending: string[] = [];
    checks.push(...await openFaceExportChecks(tableId, created!.rule_set as unknown as OfcRuleSet, seatCount, header.scope === "table", events, notCovered, pending));
    checks.push(...await openFaceSignatureChecks(tableId, events));
    if (notCovered.size > 0) add("family", "skipped", "every open-face rule is re-decided", `not covered: ${[...notCovered].join("; ")}`);
    reasons.push(...pending);
  }
  if (family === "closed") {
    const closed = await closedDealChecks(tableId, created, chosen, seatCount, players, events);
    checks.push(...closed.checks);
    reasons.push(...closed.reasons);
  }
  // the pinned player keys (§4.2), then the proofs (§4.5, §4.6).
  checks.push(...pinnedPlayerKeys(events, seatCount, options.playerKeys ?? {}));
  const proofs = await proofChecks(header, events, serverKeys, witnessKeys, options);
  checks.push(...proofs.checks);
  reasons.push(...proofs.reasons);
  const report = finish(checks, reasons);
  return report.verdict === "ANCHORED" && proofs.anchor !== undefined ? { ...report, anchor: proofs.anchor } : report;
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
