// The player this browser plays as, per server: its name, bearer token and Ed25519 key, kept in
// localStorage ("sapsam.identity <api base>"). As the Python SDK does (sapsam_client.player_calls
// and player_key): RegisterPlayer gives the token; the page makes a key pair with Web Crypto,
// registers its public half with a proof (RegisterPlayerKey, docs/fairness.md §19), and signs every
// commit, reveal, declaration and announcement with it. The private key never leaves this browser.
import { type Bytes, hex, unhex } from "../bytes";
import { ed25519Sign } from "../crypto";
import { registrationMessage } from "../fairness";
import { type Api, connect, requestId } from "./transport";

export interface Identity {
  /** players/{id} */
  player: string;
  displayName: string;
  token: string;
  /** Ed25519 secret key (32 bytes) and public key, hex. */
  secretKey: string;
  publicKey: string;
  keyRegistered: boolean;
}

const storageKey = (base: string): string => `sapsam.identity ${base}`;

export function loadIdentity(base: string): Identity | null {
  const text = localStorage.getItem(storageKey(base));
  if (!text) return null;
  try {
    return JSON.parse(text) as Identity;
  } catch {
    return null;
  }
}

export function saveIdentity(base: string, identity: Identity): void {
  localStorage.setItem(storageKey(base), JSON.stringify(identity));
}

export function forgetIdentity(base: string): void {
  localStorage.removeItem(storageKey(base));
}

/** A new Ed25519 key pair from Web Crypto: (secret key, public key), 32 bytes each. */
export async function newKeyPair(): Promise<[Bytes, Bytes]> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  return [pkcs8.slice(pkcs8.length - 32), raw];
}

export const playerId = (identity: Identity): string => identity.player.replace(/^players\//, "");

/** Sign `message` with the identity's key. */
export const sign = (identity: Identity, message: Bytes): Promise<Bytes> => ed25519Sign(unhex(identity.secretKey), message);

/** A session: the API clients authenticated as the identity (if any) and the identity itself. */
export class Session {
  readonly api: Api;
  identity: Identity | null;

  constructor(base?: string) {
    this.api = connect(() => this.identity?.token, base);
    this.identity = loadIdentity(this.api.base);
  }

  /** Register a new player named `displayName`, make its key and register that too. */
  async register(displayName: string): Promise<Identity> {
    const answer = await this.api.players.registerPlayer({ requestId: requestId(), displayName });
    const [secret, pub] = await newKeyPair();
    const player = answer.player?.name ?? "";
    this.identity = {
      player,
      displayName: answer.player?.displayName ?? displayName,
      token: answer.token,
      secretKey: hex(secret),
      publicKey: hex(pub),
      keyRegistered: false,
    };
    saveIdentity(this.api.base, this.identity);
    await this.registerKey();
    return this.identity;
  }

  /** Register the identity's public key (idempotent on the server; once per identity here). */
  async registerKey(): Promise<void> {
    const identity = this.identity;
    if (!identity || identity.keyRegistered) return;
    const pub = unhex(identity.publicKey);
    const proof = await sign(identity, registrationMessage(playerId(identity), pub));
    await this.api.players.registerPlayerKey({ requestId: requestId(), publicKey: pub, proof });
    identity.keyRegistered = true;
    saveIdentity(this.api.base, identity);
  }

  signOut(): void {
    forgetIdentity(this.api.base);
    this.identity = null;
  }
}
