// Byte encodings of docs/fairness.md §1: hex, u8/u32/u64 big-endian, lp(), uuid(), utf8().

export type Bytes = Uint8Array<ArrayBuffer>;

export function hex(b: Bytes): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

export function unhex(s: string): Bytes {
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) throw new Error(`not hex: ${s}`);
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function concat(...parts: Bytes[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function u8(n: number): Bytes {
  if (!Number.isInteger(n) || n < 0 || n > 0xff) throw new Error(`u8 out of range: ${n}`);
  return Uint8Array.of(n);
}

export function u32(n: number): Bytes {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n);
  return out;
}

export function u64(n: number | bigint): Bytes {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(n));
  return out;
}

export const utf8 = (s: string): Bytes => new TextEncoder().encode(s);

/** lp(b) = u32(len(b)) || b; a string is its ASCII/UTF-8 bytes (domain tags). */
export function lp(b: Bytes | string): Bytes {
  const bytes = typeof b === "string" ? utf8(b) : b;
  return concat(u32(bytes.length), bytes);
}

/** uuid(t): the 16 bytes of the canonical text form, read as 32 hex digits. */
export function uuid(t: string): Bytes {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(t))
    throw new Error(`not a uuid: ${t}`);
  return unhex(t.replaceAll("-", ""));
}

export function equal(a: Bytes, b: Bytes): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
