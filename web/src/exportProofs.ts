// What ties an export to the published log (docs/audit.md §4.5, §4.6): the checkpoint under the
// pinned keys and each event's inclusion proof, the reader's own checkpoint linked by a consistency
// proof (--checkpoint), and kept receipts (--receipts); the anchor an ANCHORED verdict names.
import { type Bytes, hex, unhex } from "./bytes";
import type { ExportEvent, Obj, Segment } from "./exportFormat";
import { checkReceipt, parseReceipt } from "./receipts";
import * as T from "./transparency";
import type { Check } from "./verify";

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

/**
 * checkpoint and inclusion (§4.5), then --checkpoint's consistency and the kept receipts (§4.6):
 * their checks, why the verdict cannot be ANCHORED (`reasons`), and the anchor when it can.
 */
export async function proofChecks(
  header: Obj, events: readonly ExportEvent[], serverKeys: string[], witnessKeys: string[],
  options: { checkpoint?: string; receipts?: { name: string; text: string }[] },
): Promise<{ checks: Check[]; reasons: string[]; anchor?: Anchor }> {
  const checks: Check[] = [];
  const reasons: string[] = [];
  const add = (name: string, status: Check["status"], what: string, detail?: string) =>
    checks.push({ name, status, what, ...(detail === undefined ? {} : { detail }) });
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
  return { checks, reasons, ...(anchor === undefined ? {} : { anchor }) };
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
async function receiptsCheck(files: { name: string; text: string }[], header: Obj, events: readonly ExportEvent[], serverKeys: string[]): Promise<Check> {
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