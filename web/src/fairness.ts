// The constructions of docs/fairness.md §5-§12, §19, §21, byte for byte.
import { type Bytes, concat, lp, u8, u64, utf8, uuid } from "./bytes";
import { sortedCards } from "./cards";
import { hmac, sha256 } from "./crypto";

const TAG = {
  seedCommitment: "sapsam/fairness/v1/seed-commitment",
  shuffleKey: "sapsam/fairness/v1/shuffle-key",
  recordKey: "sapsam/fairness/v1/record-key",
  deck: "sapsam/fairness/v1/deck",
  cutDeck: "sapsam/fairness/v1/cut-deck",
  hand: "sapsam/fairness/v1/hand",
  lotCommitment: "sapsam/fairness/v1/lot-commitment",
  lotKey: "sapsam/fairness/v1/lot-key",
  arrangement1: "sapsam/fairness/v1/arrangement-commitment",
  arrangement2: "sapsam/fairness/v2/arrangement-commitment",
  declaration: "sapsam/fairness/v1/natural-declaration",
  registration: "sapsam/player-key/v1/registration",
  signCommit: "sapsam/player-signature/v1/commit",
  signReveal: "sapsam/player-signature/v1/reveal",
  signDeclare: "sapsam/player-signature/v1/declare",
  signAnnounce: "sapsam/player-signature/v1/announce",
  signPlace: "sapsam/player-signature/v1/place",
  signFantasylandCommit: "sapsam/player-signature/v1/fantasyland-commit",
  signFantasylandReveal: "sapsam/player-signature/v1/fantasyland-reveal",
  signDiscardsReveal: "sapsam/player-signature/v1/discards-reveal",
} as const;

/** What identifies a deal in every per-deal hash: uuid(table_id) || u64(deal_number). */
export interface DealId {
  tableId: string;
  dealNumber: number;
}

const dealBytes = (d: DealId): Bytes => concat(uuid(d.tableId), u64(d.dealNumber));

function checkSeed(seed: Bytes): void {
  if (seed.length !== 32) throw new Error(`the seed is ${seed.length} bytes, not 32`);
}

/** §5 */
export async function seedCommitment(d: DealId, seed: Bytes): Promise<Bytes> {
  checkSeed(seed);
  return sha256(concat(lp(TAG.seedCommitment), dealBytes(d), lp(seed)));
}

/** §6: u8(n) || per seat 0x00 (nothing) or 0x01 || lp(contribution). */
export function contributionsEncoding(contributions: readonly (Bytes | null)[]): Bytes {
  const entries = contributions.map((c, s) => {
    if (c === null) return u8(0);
    if (c.length < 1 || c.length > 64) throw new Error(`seat ${s}'s contribution is ${c.length} bytes, not 1 to 64`);
    return concat(u8(1), lp(c));
  });
  return concat(u8(contributions.length), ...entries);
}

/** §6 */
export async function shuffleKey(d: DealId, seed: Bytes, contributions: readonly (Bytes | null)[]): Promise<Bytes> {
  checkSeed(seed);
  return sha256(concat(lp(TAG.shuffleKey), dealBytes(d), lp(seed), contributionsEncoding(contributions)));
}

/** §7: limit(m) = 2^32 - (2^32 mod m). */
export const limit = (m: number): number => 2 ** 32 - (2 ** 32 % m);

/** §7: the uniform index a word gives for bound m, or null when the word is rejected. */
export const sample = (m: number, word: number): number | null => (word < limit(m) ? word % m : null);

/** §7: the counter stream's words, block[c] = HMAC(key, u64(c)), 8 big-endian words a block. */
export class WordStream {
  private block = new Uint8Array(0);
  private counter = 0;
  private at = 32;
  constructor(private readonly key: Bytes) {}

  async next(): Promise<number> {
    if (this.at === 32) {
      this.block = await hmac(this.key, u64(this.counter++));
      this.at = 0;
    }
    const w = new DataView(this.block.buffer).getUint32(this.at);
    this.at += 4;
    return w;
  }

  async draw(m: number): Promise<number> {
    for (;;) {
      const j = sample(m, await this.next());
      if (j !== null) return j;
    }
  }
}

/** §8: Fisher-Yates from position 51 down over the canonical deck (position 0 = top). */
export async function shuffle(key: Bytes): Promise<number[]> {
  const deck = Array.from({ length: 52 }, (_, i) => i);
  const stream = new WordStream(key);
  for (let i = 51; i >= 1; i--) {
    const j = await stream.draw(i + 1);
    [deck[i], deck[j]] = [deck[j]!, deck[i]!];
  }
  return deck;
}

/** §9: the cut, 1 <= p <= 51; the top p cards go to the bottom. */
export function cut(deck: readonly number[], p: number): number[] {
  if (!Number.isInteger(p) || p < 1 || p > 51) throw new Error(`the cut position ${p} is not an integer 1 to 51`);
  return [...deck.slice(p), ...deck.slice(0, p)];
}

/** §4: the cutter sits on the dealer's right. */
export const cutter = (dealer: number, n: number): number => (dealer - 1 + n) % n;

/** §9: 13 cards to each seat, one at a time, clockwise from the dealer's left. */
export function deal(cutDeck: readonly number[], dealer: number, n: number): number[][] {
  if (!Number.isInteger(n) || n < 2 || n > 4) throw new Error(`${n} seats: a table has 2 to 4`);
  if (!Number.isInteger(dealer) || dealer < 0 || dealer >= n) throw new Error(`dealer ${dealer} is not a seat`);
  const hands: number[][] = Array.from({ length: n }, () => []);
  for (let k = 0; k < 13 * n; k++) hands[(dealer + 1 + k) % n]!.push(cutDeck[k]!);
  return hands;
}

/** §10 */
export async function recordKey(d: DealId, seed: Bytes): Promise<Bytes> {
  checkSeed(seed);
  return sha256(concat(lp(TAG.recordKey), dealBytes(d), lp(seed)));
}

export const deckDigest = (key: Bytes, deck: readonly number[]): Promise<Bytes> =>
  hmac(key, concat(lp(TAG.deck), Uint8Array.from(deck)));

export const cutDigest = (key: Bytes, cutDeck: readonly number[]): Promise<Bytes> =>
  hmac(key, concat(lp(TAG.cutDeck), Uint8Array.from(cutDeck)));

export const handDigest = (key: Bytes, seat: number, hand: readonly number[]): Promise<Bytes> =>
  hmac(key, concat(lp(TAG.hand), u8(seat), lp(Uint8Array.from(hand))));

/** §11: the lot commitment, the lot key, each seat's card and the first dealer (highest index). */
export async function lot(tableId: string, lotSeed: Bytes, n: number) {
  checkSeed(lotSeed);
  const body = concat(uuid(tableId), lp(lotSeed));
  const commitment = await sha256(concat(lp(TAG.lotCommitment), body));
  const key = await sha256(concat(lp(TAG.lotKey), body));
  const cards = (await shuffle(key)).slice(0, n);
  const dealer = cards.indexOf(Math.max(...cards));
  return { commitment, key, cards, dealer };
}

export interface Rows {
  front: readonly number[];
  middle: readonly number[];
  back: readonly number[];
}

/** §12: lp(sorted front) || lp(sorted middle) || lp(sorted back). */
export const rowsEncoding = (r: Rows): Bytes =>
  concat(...[r.front, r.middle, r.back].map((row) => lp(Uint8Array.from(sortedCards(row)))));

function checkNonce(nonce: Bytes): void {
  if (nonce.length < 16 || nonce.length > 64) throw new Error(`the nonce is ${nonce.length} bytes, not 16 to 64`);
}

function playerBytes(playerId: string): Bytes {
  const b = utf8(playerId);
  if (b.length < 1 || b.length > 128) throw new Error(`the player id is ${b.length} bytes, not 1 to 128`);
  return lp(b);
}

const seatBytes = (d: DealId, seat: number): Bytes => concat(dealBytes(d), u8(seat));

/** §12 (scheme 1) and §12.1 (scheme 2, bound to the seated player's id). */
export async function arrangementCommitment(
  d: DealId,
  seat: number,
  rows: Rows,
  nonce: Bytes,
  scheme: 1 | 2 = 1,
  playerId?: string,
): Promise<Bytes> {
  checkNonce(nonce);
  if (scheme === 1) return sha256(concat(lp(TAG.arrangement1), seatBytes(d, seat), rowsEncoding(rows), lp(nonce)));
  if (playerId === undefined) throw new Error("scheme 2 needs the seated player's id");
  return sha256(
    concat(lp(TAG.arrangement2), seatBytes(d, seat), playerBytes(playerId), rowsEncoding(rows), lp(nonce)),
  );
}

/** §21 */
export async function declarationCommitment(
  d: DealId,
  seat: number,
  playerId: string,
  declaration: string,
  nonce: Bytes,
): Promise<Bytes> {
  checkNonce(nonce);
  return sha256(
    concat(lp(TAG.declaration), seatBytes(d, seat), playerBytes(playerId), lp(declaration), lp(nonce)),
  );
}

/** §19: the messages a player signs. */
export const registrationMessage = (playerId: string, publicKey: Bytes): Bytes =>
  concat(lp(TAG.registration), playerBytes(playerId), lp(publicKey));

export const commitMessage = (d: DealId, seat: number, playerId: string, scheme: number, commitment: Bytes): Bytes =>
  concat(lp(TAG.signCommit), seatBytes(d, seat), playerBytes(playerId), u8(scheme), lp(commitment));

export function revealMessage(d: DealId, seat: number, playerId: string, rows: Rows, nonce: Bytes): Bytes {
  checkNonce(nonce);
  return concat(lp(TAG.signReveal), seatBytes(d, seat), playerBytes(playerId), rowsEncoding(rows), lp(nonce));
}

export const declareMessage = (d: DealId, seat: number, playerId: string, commitment: Bytes): Bytes =>
  concat(lp(TAG.signDeclare), seatBytes(d, seat), playerBytes(playerId), lp(commitment));

/** §19: play (00) or surrender (01), announced on the seat's turn (§20). */
export const announceMessage = (d: DealId, seat: number, playerId: string, surrender: boolean): Bytes =>
  concat(lp(TAG.signAnnounce), seatBytes(d, seat), playerBytes(playerId), u8(surrender ? 1 : 0));

/** §19: an open-face placement: the street, what each row gains, a discard commitment or empty. */
export const placeMessage = (
  d: DealId,
  seat: number,
  playerId: string,
  street: number,
  placement: Rows,
  discardCommitment: Bytes = new Uint8Array(0),
): Bytes =>
  concat(
    lp(TAG.signPlace),
    seatBytes(d, seat),
    playerBytes(playerId),
    u8(street),
    rowsEncoding(placement),
    lp(discardCommitment),
  );

/** §19: an open-face Fantasyland hand set face down: `commit` under its own tag. */
export const fantasylandCommitMessage = (
  d: DealId,
  seat: number,
  playerId: string,
  scheme: number,
  commitment: Bytes,
): Bytes =>
  concat(lp(TAG.signFantasylandCommit), seatBytes(d, seat), playerBytes(playerId), u8(scheme), lp(commitment));

/** §19: an open-face Fantasyland hand opened: `reveal` under its own tag. */
export function fantasylandRevealMessage(d: DealId, seat: number, playerId: string, rows: Rows, nonce: Bytes): Bytes {
  checkNonce(nonce);
  return concat(
    lp(TAG.signFantasylandReveal),
    seatBytes(d, seat),
    playerBytes(playerId),
    rowsEncoding(rows),
    lp(nonce),
  );
}

/** One opened Pineapple discard (§23): its street, its cards and its nonce. */
export interface DiscardOpening {
  street: number;
  cards: readonly number[];
  nonce: Bytes;
}

/** §19: a Pineapple seat opens its discards: u8(n), then each opening's street, cards and nonce. */
export function discardsRevealMessage(d: DealId, seat: number, playerId: string, openings: readonly DiscardOpening[]): Bytes {
  const body = openings.map((o) => {
    checkNonce(o.nonce);
    return concat(u8(o.street), lp(new Uint8Array(sortedCards(o.cards))), lp(o.nonce));
  });
  return concat(lp(TAG.signDiscardsReveal), seatBytes(d, seat), playerBytes(playerId), u8(openings.length), ...body);
}
