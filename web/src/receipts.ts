// Signed receipts (docs/transparency.md §9): open, parse, and compare with an export's events.
import { openNote, parseVerifierKey } from "./transparency";

export interface Receipt {
  log: string;
  stream: string;
  requestId: string;
  time: string;
  events: { version: number; position: number; type: string; hash: string }[];
}

const INT = "(0|[1-9][0-9]*)";
const MAX = 2n ** 63n - 1n;

function int(s: string): number {
  if (!new RegExp(`^${INT}$`).test(s) || BigInt(s) > MAX) throw new Error(`not a number of 0..2^63-1: "${s}"`);
  return Number(s);
}

/** §9.1: the receipt text, refusing anything else. */
export function parseReceipt(text: string): Receipt {
  const lines = text.split("\n");
  if (lines.pop() !== "") throw new Error("a receipt ends with a newline");
  const field = (i: number, name: string, pattern = "(\\S+)"): string => {
    const m = new RegExp(`^${name} ${pattern}$`).exec(lines[i] ?? "");
    if (m === null) throw new Error(`line ${i + 1} is not "${name} …"`);
    return m[1]!;
  };
  if (lines[0] !== "sapsam receipt v1") throw new Error('the first line is not "sapsam receipt v1"');
  const log = field(1, "log");
  const stream = field(2, "stream");
  const [first, last] = field(3, "versions", `(${INT} ${INT})`).split(" ").map(int) as [number, number];
  const requestId = field(4, "request", "([^\\u0000-\\u001f]+)");
  const time = field(5, "time");
  const events = lines.slice(6).map((line) => {
    const m = new RegExp(`^event ${INT} ${INT} ([A-Za-z][A-Za-z0-9_.]*) ([0-9a-f]{64})$`).exec(line);
    if (m === null) throw new Error(`not an event line: "${line}"`);
    return { version: int(m[1]!), position: int(m[2]!), type: m[3]!, hash: m[4]! };
  });
  if (first < 1 || events.length === 0 || events.length > 256 || last - first + 1 !== events.length)
    throw new Error(`the versions line ${first} ${last} does not match ${events.length} event lines`);
  events.forEach((e, i) => {
    if (e.version !== first + i) throw new Error(`event line ${i + 1} is not version ${first + i}`);
    if (e.position < 1 || (i > 0 && e.position <= events[i - 1]!.position)) throw new Error("positions do not increase");
  });
  return { log, stream, requestId, time, events };
}

/** §9.2 steps 1-2: the receipt, if signed by a pinned Ed25519 server key named as its log. */
export async function checkReceipt(note: string, serverKeys: readonly string[]): Promise<Receipt> {
  const keys = await Promise.all(serverKeys.map(parseVerifierKey));
  const opened = await openNote(note, keys);
  const receipt = parseReceipt(opened.text);
  const byLog = keys.some((k) => k.type === 1 && k.name === receipt.log && opened.signers.includes(k.name));
  if (!byLog) throw new Error(`no pinned Ed25519 key named ${receipt.log} signed the receipt`);
  return receipt;
}
