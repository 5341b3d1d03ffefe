// An audit export's format and its record as a whole (docs/audit.md §2, §3, §4.1): the header and
// event lines read strictly, the hash chain, and the segments' chain, anchor and coverage checks.
import { type Bytes, concat, hex, unhex } from "./bytes";
import { type Json, canonicalJson, parseStrictJson } from "./canonical";
import { sha256 } from "./crypto";
import type { Check } from "./verify";

export type Obj = { [key: string]: Json };

export interface ExportEvent {
  version: number;
  type: string;
  schema_version: number;
  data: Obj;
  metadata: Obj;
  hash: string;
  inclusion?: { leaf_index: number; proof: string };
}

export interface Segment {
  anchor: { version: number; hash: string };
  first_version: number;
  last_version: number;
  last_hash: string;
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

/** chain, anchor, coverage (§4.1): segment after segment, in file order. */
export async function segmentChecks(header: Obj, events: readonly ExportEvent[]): Promise<Check[]> {
  const streamId = header.stream_id as string;
  const segments = header.segments as unknown as Segment[];
  let chainError: string | undefined;
  let anchorError: string | undefined;
  let coverageError: string | undefined;
  let at = 0;
  const segmentsToCheck: { seg: Segment; events: readonly ExportEvent[] }[] = [];
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
  const check = (name: string, what: string, detail: string | undefined): Check =>
    ({ name, status: detail ? "failed" : "passed", what, ...(detail ? { detail } : {}) });
  return [
    check("chain", "every event is chained to the one before it", chainError),
    check("anchor", "the segments hang on the genesis or on the events before them", anchorError),
    check("coverage", "each segment holds exactly its events", coverageError),
  ];
}
