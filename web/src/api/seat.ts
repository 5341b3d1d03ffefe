// What every seat's moves share (api/moves.ts for Chinese poker, api/openFaceMoves.ts for open
// face and Pineapple): the seat's name read into its table and position, the deal's id, the
// player's id, each move's signature with the player's key (docs/fairness.md §19), fresh nonces,
// the cut, and what a seat keeps in localStorage per deal (rows as card names, nonces).
import { type Bytes, unhex } from "../bytes";
import { cardName, parseCard } from "../cards";
import type { DealId, Rows } from "../fairness";
import { type Identity, playerId, sign } from "./session";
import { TablePhase } from "../gen/sapsam/v1/table_pb";
import { type Api, requestId } from "./transport";

/** Arrangements (and Fantasyland settings) are committed as scheme 2 (docs/fairness.md §12.1). */
export const COMMITMENT_SCHEME = 2;

/** Rows as kept in localStorage and sent: card names. */
export interface NamedRows {
  front: string[];
  middle: string[];
  back: string[];
}

export const rowNames = (r: Rows): NamedRows => ({ front: r.front.map(cardName), middle: r.middle.map(cardName), back: r.back.map(cardName) });
export const parseRows = (r: NamedRows): Rows => ({ front: r.front.map(parseCard), middle: r.middle.map(parseCard), back: r.back.map(parseCard) });
export const freshNonce = (length = 32): Bytes => crypto.getRandomValues(new Uint8Array(length));

/** The prefixes keptStore is used under (moves.ts: rows and nonces; openFaceMoves.ts: discards, Fantasyland settings). */
export const KEPT_PREFIXES = ["sapsam.kept", "sapsam.discards", "sapsam.fantasyland"] as const;

/** What a seat keeps in localStorage per deal under `prefix` (one of KEPT_PREFIXES) before sending its commitment, so a reloaded page still opens it; pruneKept forgets it once the deal is over. */
export function keptStore<T>(prefix: (typeof KEPT_PREFIXES)[number]) {
  const key = (seat: string, deal: number) => `${prefix} ${seat} ${deal}`;
  return {
    load(seat: string, deal: number): T | null {
      const text = localStorage.getItem(key(seat, deal));
      return text ? (JSON.parse(text) as T) : null;
    },
    save: (seat: string, deal: number, value: T): void => localStorage.setItem(key(seat, deal), JSON.stringify(value)),
    forget: (seat: string, deal: number): void => localStorage.removeItem(key(seat, deal)),
  };
}

/** A key keptStore wrote ("<prefix> <seat> <deal>") read back; undefined for any other key. */
function keptEntry(key: string | null): { seat: string; deal: number } | undefined {
  const parts = key?.split(" ");
  if (parts?.length !== 3 || !(KEPT_PREFIXES as readonly string[]).includes(parts[0]!)) return undefined;
  return { seat: parts[1]!, deal: Number(parts[2]) };
}

/**
 * Forget what `seat` kept for its deals up to `deal`, once that deal is scored or voided: its
 * rows, nonces, discards and settings were opened (or never will be) and the server publishes
 * them with the result, so nothing here needs them again (receipts are not kept in the browser,
 * and the replay reads the server's export). Without this every deal's nonces stayed in
 * localStorage for good (a reveal that landed but whose answer was lost, a seat timed out, the
 * server opening discards at its deadline). Returns how many entries were removed.
 */
export function pruneKept(seat: string, deal: number, storage: Storage = localStorage): number {
  const gone: string[] = [];
  for (let i = 0; i < storage.length; i++) {
    const key = storage.key(i);
    const entry = keptEntry(key);
    if (key && entry?.seat === seat && Number.isInteger(entry.deal) && entry.deal <= deal) gone.push(key);
  }
  for (const key of gone) storage.removeItem(key);
  return gone.length;
}

/** Tables looked at by one pruneKeptTables (each is a GetTable call). */
export const PRUNE_TABLES_AT_ONCE = 20;

/**
 * pruneKept for the tables this browser kept something for but may never open again (the lobby
 * runs it): each is asked for with GetTable, and the seat's deals that are over are forgotten,
 * every deal before the current one and the current one too between deals or once the series is
 * complete. A table this server does not know (one of another server: the keys do not name it)
 * or cannot answer for is left alone. Returns how many entries were removed.
 */
export async function pruneKeptTables(api: Api, storage: Storage = localStorage): Promise<number> {
  const seats = new Set<string>();
  for (let i = 0; i < storage.length; i++) {
    const entry = keptEntry(storage.key(i));
    if (entry && SEAT_NAME.test(entry.seat)) seats.add(entry.seat);
  }
  let removed = 0;
  for (const seat of [...seats].slice(0, PRUNE_TABLES_AT_ONCE)) {
    let table;
    try {
      table = (await api.tables.getTable({ name: seatParts(seat).table })).table;
    } catch {
      continue;
    }
    if (!table) continue;
    const over = table.phase === TablePhase.BETWEEN_DEALS || table.phase === TablePhase.SERIES_COMPLETE;
    removed += pruneKept(seat, over ? table.dealNumber : table.dealNumber - 1, storage);
  }
  return removed;
}

/** tables/{uuid}/seats/{n} -> its table's uuid and the seat's number. */
const SEAT_NAME = /^(tables\/([0-9a-f-]{36}))\/seats\/(\d+)$/;

export function seatParts(seat: string): { table: string; tableId: string; position: number } {
  const m = SEAT_NAME.exec(seat);
  if (!m) throw new Error(`not a seat: ${seat}`);
  return { table: m[1]!, tableId: m[2]!, position: Number(m[3]) };
}

/** One seat held by the identity's player: what its signed moves are made with. */
export class SignedSeat {
  readonly table: string;
  readonly tableId: string;
  readonly position: number;

  constructor(
    protected readonly api: Api,
    protected readonly identity: Identity,
    readonly seat: string,
  ) {
    const parts = seatParts(seat);
    this.table = parts.table;
    this.tableId = parts.tableId;
    this.position = parts.position;
  }

  protected dealId(deal: number): DealId {
    return { tableId: this.tableId, dealNumber: deal };
  }

  protected get player(): string {
    return playerId(this.identity);
  }

  protected async signature(message: Bytes) {
    return { publicKey: unhex(this.identity.publicKey), signature: await sign(this.identity, message) };
  }

  /** Cut at a random position 1..51 (as the SDK does). */
  cut(): Promise<unknown> {
    const position = 1 + (crypto.getRandomValues(new Uint32Array(1))[0]! % 51);
    return this.api.tables.cutDeck({ requestId: requestId(), seat: this.seat, position });
  }
}
