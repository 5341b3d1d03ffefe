// The tournament seating draw (docs/fairness.md §17, docs/tournaments.md "Seating").
import { type Bytes, concat, lp, u64, utf8, uuid } from "./bytes";
import { sha256 } from "./crypto";
import { WordStream } from "./fairness";

const body = (tournamentId: string, round: number, seed: Bytes) => concat(uuid(tournamentId), u64(round), lp(seed));

export const seatingCommitment = (tournamentId: string, round: number, seed: Bytes): Promise<Bytes> =>
  sha256(concat(lp("sapsam/tournament/v1/seating-commitment"), body(tournamentId, round, seed)));

export const seatingKey = (tournamentId: string, round: number, seed: Bytes): Promise<Bytes> =>
  sha256(concat(lp("sapsam/tournament/v1/seating-key"), body(tournamentId, round, seed)));

function byUtf8(a: string, b: string): number {
  const [x, y] = [utf8(a), utf8(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/** The entrants sorted by their ids' UTF-8 bytes, then shuffled by the deck's Fisher-Yates loop. */
export async function drawOrder(entrants: readonly string[], key: Bytes): Promise<string[]> {
  const order = [...entrants].sort(byUtf8);
  const stream = new WordStream(key);
  for (let i = order.length - 1; i >= 1; i--) {
    const j = await stream.draw(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** ceil(n / k) tables, one fewer while a table would hold fewer than 2; sizes within one, larger first. */
export function tableSizes(n: number, seatsPerTable: number): number[] {
  let tables = Math.ceil(n / seatsPerTable);
  while (tables > 1 && Math.floor(n / tables) < 2) tables--;
  return Array.from({ length: tables }, (_, t) => Math.floor(n / tables) + (t < n % tables ? 1 : 0));
}

/** Players dealt into tables in order: table 0 takes the first, seat 0 first. */
export function seat(players: readonly string[], sizes: readonly number[]): string[][] {
  let at = 0;
  return sizes.map((size) => players.slice(at, (at += size)));
}

/** By standings: by total, highest first; equal totals in the round's draw order. */
export const byStandings = (order: readonly string[], totals: Record<string, number>): string[] =>
  [...order].sort((a, b) => totals[b]! - totals[a]! || order.indexOf(a) - order.indexOf(b));
