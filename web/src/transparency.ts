// docs/transparency.md: RFC 9162 Merkle hashing and proofs (§3-§4), checkpoints and signed notes
// with Ed25519 signatures and witness cosignatures (§5).
import { type Bytes, concat, equal, u64, utf8 } from "./bytes";
import { ed25519Sign, ed25519Verify, sha256 } from "./crypto";

export const leafHash = (leaf: Bytes): Promise<Bytes> => sha256(concat(Uint8Array.of(0), leaf));
export const nodeHash = (l: Bytes, r: Bytes): Promise<Bytes> => sha256(concat(Uint8Array.of(1), l, r));

const largestPowerOfTwoBelow = (n: number): number => 2 ** Math.floor(Math.log2(n - 1));

/** MTH(D[n]) over the leaves' hashes (already leaf-hashed). */
export async function treeRoot(leafHashes: readonly Bytes[]): Promise<Bytes> {
  if (leafHashes.length === 0) return sha256(new Uint8Array());
  if (leafHashes.length === 1) return leafHashes[0]!;
  const k = largestPowerOfTwoBelow(leafHashes.length);
  return nodeHash(await treeRoot(leafHashes.slice(0, k)), await treeRoot(leafHashes.slice(k)));
}

/** PATH(m, D[n]), deepest sibling first (§4.1). */
export async function inclusionProof(m: number, leafHashes: readonly Bytes[]): Promise<Bytes[]> {
  const n = leafHashes.length;
  if (n <= 1) return [];
  const k = largestPowerOfTwoBelow(n);
  return m < k
    ? [...(await inclusionProof(m, leafHashes.slice(0, k))), await treeRoot(leafHashes.slice(k))]
    : [...(await inclusionProof(m - k, leafHashes.slice(k))), await treeRoot(leafHashes.slice(0, k))];
}

const MAX_PROOF = 128;

/** §4.1's verification (RFC 9162 §2.1.3.2); sizes as numbers (exact below 2^53). */
export async function verifyInclusion(
  index: number, size: number, leaf: Bytes, proof: readonly Bytes[], root: Bytes,
): Promise<boolean> {
  if (!(index >= 0 && index < size) || proof.length > MAX_PROOF) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
    } else r = await nodeHash(r, p);
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 && equal(r, root);
}

/** §4.2's verification (RFC 9162 §2.1.4.2), for 0 < m < n. */
export async function verifyConsistency(
  m: number, n: number, proof: readonly Bytes[], oldRoot: Bytes, newRoot: Bytes,
): Promise<boolean> {
  if (!(m > 0 && m < n) || proof.length === 0 || proof.length > MAX_PROOF) return false;
  const path = (m & (m - 1)) === 0 ? [oldRoot, ...proof] : [...proof];
  let fn = m - 1;
  let sn = n - 1;
  while (fn % 2 === 1) [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
    } else sr = await nodeHash(sr, c);
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 && equal(fr, oldRoot) && equal(sr, newRoot);
}

export const base64 = (b: Bytes): string => btoa(String.fromCharCode(...b));
export function unbase64(s: string): Bytes {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) throw new Error(`not base64: ${s}`);
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}

/** §5.1 */
export interface Checkpoint {
  origin: string;
  size: number;
  root: Bytes;
  time: number;
}

export function parseCheckpoint(text: string): Checkpoint {
  const lines = text.split("\n");
  if (lines.length !== 5 || lines[4] !== "") throw new Error("a checkpoint is 4 lines, each ending in a newline");
  const [origin, size, root, time] = lines as [string, string, string, string];
  if (origin === "" || /[ +]/.test(origin)) throw new Error(`bad origin "${origin}"`);
  if (!/^(0|[1-9][0-9]*)$/.test(size) || Number(size) > Number.MAX_SAFE_INTEGER) throw new Error(`bad tree size "${size}"`);
  const rootBytes = unbase64(root);
  if (rootBytes.length !== 32 || base64(rootBytes) !== root) throw new Error(`the root "${root}" is not canonical base64 of 32 bytes`);
  const t = /^time (0|[1-9][0-9]*)$/.exec(time);
  if (t === null) throw new Error(`bad extension line "${time}"`);
  return { origin, size: Number(size), root: rootBytes, time: Number(t[1]) };
}

/** A verifier key (§5.2): name, key id, type (1 = Ed25519, 4 = cosignature) and public key. */
export interface VerifierKey {
  name: string;
  keyId: Bytes;
  type: number;
  publicKey: Bytes;
}

const keyId = async (name: string, type: number, publicKey: Bytes): Promise<Bytes> =>
  (await sha256(concat(utf8(name), Uint8Array.of(0x0a, type), publicKey))).slice(0, 4);

export async function parseVerifierKey(vkey: string): Promise<VerifierKey> {
  const m = /^([^+]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(vkey);
  if (m === null) throw new Error(`not a verifier key: ${vkey}`);
  const [, name, id, key] = m as unknown as [string, string, string, string];
  const bytes = unbase64(key);
  const type = bytes[0]!;
  const publicKey = bytes.slice(1);
  if ((type !== 1 && type !== 4) || publicKey.length !== 32) throw new Error(`not an Ed25519 key: ${vkey}`);
  const expected = await keyId(name, type, publicKey);
  if (Array.from(expected, (x) => x.toString(16).padStart(2, "0")).join("") !== id)
    throw new Error(`the key id ${id} is not the hash of the key's name, type and key`);
  return { name, keyId: expected, type, publicKey };
}

/** A signing key's 32-byte Ed25519 seed and its verifier key's fields (for tests and the page's own keys). */
export async function parseSigningKey(skey: string): Promise<{ name: string; seed: Bytes; keyId: string }> {
  const m = /^PRIVATE\+KEY\+([^+]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(skey);
  if (m === null) throw new Error("not a signing key");
  const bytes = unbase64(m[3]!);
  return { name: m[1]!, keyId: m[2]!, seed: bytes.slice(1) };
}

export const cosignedMessage = (time: bigint, text: string): Bytes => utf8(`cosignature/v1\ntime ${time}\n${text}`);

/** Does one signature line ("— name base64") verify for the text under the key? */
export async function verifyLine(text: string, line: string, key: VerifierKey): Promise<boolean> {
  const m = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
  if (m === null || m[1] !== key.name) return false;
  const sig = unbase64(m[2]!);
  if (!equal(sig.slice(0, 4), key.keyId)) return false;
  if (key.type === 1) return sig.length === 68 && ed25519Verify(key.publicKey, sig.slice(4), utf8(text));
  if (sig.length !== 4 + 8 + 64) return false;
  const time = new DataView(sig.buffer, 4, 8).getBigUint64(0);
  return ed25519Verify(key.publicKey, sig.slice(12), cosignedMessage(time, text));
}

/** §5.3: open a signed note with the trusted keys: the text and the names of the keys that verified. */
export async function openNote(note: string, keys: readonly VerifierKey[]): Promise<{ text: string; signers: string[]; verified: VerifierKey[] }> {
  if (note.length > 65536 || /[\u0000-\u0009\u000b-\u001f]/.test(note)) throw new Error("malformed note");
  const split = note.lastIndexOf("\n\n");
  if (split < 0 || !note.endsWith("\n")) throw new Error("malformed note: no blank line before the signatures");
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split("\n");
  if (lines.length === 0 || lines.length > 100) throw new Error("malformed note: 1 to 100 signature lines");
  const signers: string[] = [];
  const verified: VerifierKey[] = [];
  for (const line of lines) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (m === null) throw new Error(`malformed signature line: ${line}`);
    const id = unbase64(m[2]!).slice(0, 4);
    const candidates = keys.filter((k) => k.name === m[1] && equal(k.keyId, id));
    if (candidates.length === 0) continue;
    if (candidates.length > 1) throw new Error(`two trusted keys for ${m[1]}`);
    if (!(await verifyLine(text, line, candidates[0]!))) throw new Error(`the signature of ${m[1]} does not verify`);
    signers.push(m[1]!);
    verified.push(candidates[0]!);
  }
  if (signers.length === 0) throw new Error("no trusted signature");
  return { text, signers, verified };
}

/** §5.2: a note signed by the server's key (what the page needs to reproduce the vectors). */
export async function signNote(text: string, name: string, seed: Bytes, id: Bytes): Promise<string> {
  const sig = await ed25519Sign(seed, utf8(text));
  return `${text}\n\u2014 ${name} ${base64(concat(id, sig))}\n`;
}

/** §5.2: a witness's cosignature line at a time. */
export async function cosignLine(text: string, name: string, seed: Bytes, id: Bytes, time: number): Promise<string> {
  const sig = await ed25519Sign(seed, cosignedMessage(BigInt(time), text));
  return `\u2014 ${name} ${base64(concat(id, u64(time), sig))}`;
}

/** A verifier key's label, `name+keyid` (as sapsam prints who signed). */
export const keyLabel = (k: VerifierKey): string => `${k.name}+${Array.from(k.keyId, (x) => x.toString(16).padStart(2, "0")).join("")}`;
