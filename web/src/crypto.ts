// SHA-256, HMAC-SHA256 and Ed25519 from Web Crypto (globalThis.crypto.subtle: browsers, Node >= 20).
import type { Bytes } from "./bytes";

const subtle = globalThis.crypto.subtle;

export async function sha256(m: Bytes): Promise<Bytes> {
  return new Uint8Array(await subtle.digest("SHA-256", m));
}

export async function hmac(key: Bytes, m: Bytes): Promise<Bytes> {
  const k = await subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await subtle.sign("HMAC", k, m));
}

/** RFC 8032 Ed25519 verification (Web Crypto's "Ed25519"); false for a malformed key or signature. */
export async function ed25519Verify(publicKey: Bytes, signature: Bytes, m: Bytes): Promise<boolean> {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    const k = await subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
    return await subtle.verify("Ed25519", k, signature, m);
  } catch {
    return false; // not a curve point
  }
}

// PKCS#8 wrapping of a raw 32-byte Ed25519 secret key (RFC 8410): a fixed 16-byte prefix.
const PKCS8_PREFIX = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

/** RFC 8032 Ed25519 signing from a raw 32-byte secret key (the page's players sign with it later). */
export async function ed25519Sign(secretKey: Bytes, m: Bytes): Promise<Bytes> {
  const pkcs8 = Uint8Array.from([...PKCS8_PREFIX, ...secretKey]);
  const k = await subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, false, ["sign"]);
  return new Uint8Array(await subtle.sign("Ed25519", k, m));
}
