// The players' signatures in an export (docs/fairness.md §19, docs/audit.md §4.2): each seat's
// signed moves verify for the player seated there, and the keys the reader pins for a player are
// the ones that signed its moves (open face's placements and Fantasyland moves included).
import { type Bytes, unhex } from "./bytes";
import { parseCards } from "./cards";
import { ed25519Verify } from "./crypto";
import type { ExportEvent } from "./exportFormat";
import {
  type DealId, type Rows, announceMessage, commitMessage, declareMessage, discardsRevealMessage, fantasylandCommitMessage,
  fantasylandRevealMessage, placeMessage, revealMessage,
} from "./fairness";
import type { Check } from "./verify";

/** The rows an event records (front, middle, back: card names). */
const eventRows = (d: ExportEvent["data"]): Rows => ({
  front: parseCards((d.front as string[]).join(" ")),
  middle: parseCards((d.middle as string[]).join(" ")),
  back: parseCards((d.back as string[]).join(" ")),
});

const SIGNED = ["NaturalDeclared", "ArrangementCommitted", "SurrenderAnnounced", "ArrangementRevealed"];

/**
 * player_signature[s] (fairness.md §19, audit.md §4.2) for each seat with a signed move in the deal:
 * every recorded signature verifies for the message rebuilt from the event and the seated player; a
 * key comes with a signature and the reverse; a player who signed a move signs every later one.
 */
export async function signatureChecks(id: DealId, players: string[], events: ExportEvent[], signers: Set<string>): Promise<Check[]> {
  const checks: Check[] = [];
  for (let seat = 0; seat < players.length; seat++) {
    const player = players[seat]!;
    const moves = events.filter((e) => SIGNED.includes(e.type) && e.data.seat === seat);
    if (!signers.has(player) && !moves.some((e) => e.data.signature != null || e.data.player_key != null)) continue;
    let failure: string | undefined;
    for (const e of moves) {
      const { player_key: key, signature } = e.data as { player_key?: string | null; signature?: string | null };
      if ((key == null) !== (signature == null)) { failure = `version ${e.version}: a key without a signature or the reverse`; break; }
      // An announcement of signing_scheme 1 (schema 1) and the server's for a missed turn are unsigned.
      if (e.type === "SurrenderAnnounced" && (e.data.signing_scheme !== 2 || e.data.timed_out === true)) {
        if (key != null) { failure = `version ${e.version}: a signature on an announcement that is never signed (${e.data.timed_out === true ? "a missed turn" : "signing scheme 1"})`; break; }
        continue;
      }
      if (key == null) {
        if (signers.has(player)) { failure = `version ${e.version}: unsigned, after the player signed an earlier move`; break; }
        continue;
      }
      const d = e.data;
      let message: Bytes;
      try {
        message = e.type === "ArrangementCommitted"
          ? commitMessage(id, seat, player, (d.scheme as number | undefined) ?? 1, unhex(d.commitment as string))
          : e.type === "SurrenderAnnounced"
            ? announceMessage(id, seat, player, d.surrender === true)
          : e.type === "NaturalDeclared"
            ? declareMessage(id, seat, player, unhex(d.commitment as string))
              : revealMessage(id, seat, player, eventRows(d), unhex(d.nonce as string));
      } catch (err) {
        failure = `version ${e.version}: ${err instanceof Error ? err.message : String(err)}`;
        break;
      }
      if (!(await ed25519Verify(unhex(key), unhex(signature!), message))) { failure = `version ${e.version} (${e.type}): the signature does not verify for ${player}`; break; }
      signers.add(player);
    }
    checks.push({
      name: `player_signature[${seat}]`, status: failure ? "failed" : "passed",
      what: "every signed move was signed by the player seated there", ...(failure ? { detail: failure } : {}),
    });
  }
  return checks;
}

// Open face's signed moves too (fairness.md §19): pins cover them, as `sapsam audit verify`'s do.
const PINNED_MOVES = [
  "NaturalDeclared", "ArrangementCommitted", "SurrenderAnnounced", "ArrangementRevealed",
  "CardsPlaced", "FantasylandCommitted", "FantasylandRevealed", "DiscardsRevealed",
];

/**
 * pinned_player_key[<player>] (audit.md §4.2) for each pinned player: every move of a seat the player
 * holds in that deal (PlayerSeated, then each SeatReplaced) is signed by a key pinned for it; not
 * covered when the player signed no move in the export.
 */
export function pinnedPlayerKeys(events: readonly ExportEvent[], seatCount: number, pins: Record<string, string[]>): (Check & { deal?: number })[] {
  const checks: (Check & { deal?: number })[] = [];
  const what = "the player's moves were signed by a key pinned for it";
  for (const [pinned, keys] of Object.entries(pins)) {
    const player = pinned.replace(/^players\//, "");
    const allowed = new Set(keys.map((k) => k.toLowerCase()));
    const holder: (string | undefined)[] = Array.from({ length: seatCount }, () => undefined);
    let deal: number | undefined;
    let signed = 0;
    const wrong: string[] = [];
    for (const e of events) {
      if (e.type === "PlayerSeated" || e.type === "SeatReplaced") holder[e.data.seat as number] = e.data.player_id as string;
      if (e.type === "DealStarted") deal = e.data.deal_number as number;
      if (!PINNED_MOVES.includes(e.type) || holder[e.data.seat as number] !== player) continue;
      const key = e.data.player_key;
      if (typeof key !== "string") continue;
      signed++;
      if (!allowed.has(key)) wrong.push(`deal ${deal}, seat ${String(e.data.seat)}, version ${e.version}, key ${key}`);
    }
    const name = `pinned_player_key[${player}]`;
    if (wrong.length > 0) checks.push({ name, status: "failed", what, detail: `signed by a key not pinned for ${player}: ${wrong.join("; ")}` });
    else if (signed > 0) checks.push({ name, status: "passed", what });
    else checks.push({ name, status: "skipped", what, detail: `not covered: ${player} holds no seat in the export or signed none of its moves` });
  }
  return checks;
}

const OPEN_FACE_MOVES: Record<string, string> = {
  CardsPlaced: "placement", FantasylandCommitted: "Fantasyland commitment",
  FantasylandRevealed: "Fantasyland reveal", DiscardsRevealed: "discards' opening",
};

/** What the service made, if it made this open-face move (never signed), else undefined. */
function servicesMove(e: ExportEvent): string | undefined {
  const d = e.data;
  if (e.type === "CardsPlaced" && d.automatic != null) return `the service's placement (${String(d.automatic)})`;
  if (e.type === "FantasylandRevealed" && d.nonce === "") return "the Fantasyland hand the service set and opened after a timeout";
  if (e.type === "DiscardsRevealed" && Array.isArray(d.nonces) && d.nonces.every((x) => x === "")) return "the discards the service opened after a timeout";
  return undefined;
}

/** fairness.md §19: the message an open-face move signs (a placement with the discard commitment recorded right after it, if any). */
function openFaceMessage(id: DealId, seat: number, player: string, e: ExportEvent, next: ExportEvent | undefined): Bytes {
  const d = e.data;
  if (e.type === "CardsPlaced") {
    const discard = next?.type === "DiscardCommitted" && next.data.seat === d.seat && next.data.street === d.street ? unhex(String(next.data.commitment)) : undefined;
    return placeMessage(id, seat, player, Number(d.street), eventRows(d), discard);
  }
  if (e.type === "FantasylandCommitted") return fantasylandCommitMessage(id, seat, player, 2, unhex(String(d.commitment)));
  if (e.type === "FantasylandRevealed") return fantasylandRevealMessage(id, seat, player, eventRows(d), unhex(String(d.nonce)));
  const streets = d.streets as number[];
  const cards = d.cards as string[];
  const nonces = d.nonces as string[];
  if (streets.length !== cards.length || streets.length !== nonces.length) throw new Error("streets, cards and nonces differ in length");
  return discardsRevealMessage(id, seat, player, streets.map((street, k) => ({ street, cards: parseCards(String(cards[k])), nonce: unhex(String(nonces[k])) })));
}

/**
 * player_signature[s] at an open-face table (fairness.md §19, audit.md §4.2), deal by deal over the
 * whole export as sapsam checks it: each seat with a signed move in a deal gets one check; every
 * signature verifies for the player seated there; a player who signed a move signs every later one
 * of signing scheme 2 it made itself; the service's moves (an automatic placement, a Fantasyland
 * hand or discards opened with empty nonces) and moves of signing scheme 1 are never signed.
 */
export async function openFaceSignatureChecks(tableId: string, events: readonly ExportEvent[]): Promise<(Check & { deal: number })[]> {
  const what = "every signed move was signed by the player seated there";
  const players: (string | undefined)[] = [];
  const starts = events.flatMap((e, i) => (e.type === "DealStarted" ? [i] : []));
  for (const e of events.slice(0, starts[0] ?? events.length)) if (e.type === "PlayerSeated") players[Number(e.data.seat)] = String(e.data.player_id);
  const signers = new Set<string>();
  const checks: (Check & { deal: number })[] = [];
  for (const [k, start] of starts.entries()) {
    const deal = events.slice(start, starts[k + 1] ?? events.length);
    const number = Number(deal[0]!.data.deal_number);
    const problems = new Map<number, string[]>();
    const signed = new Set<number>();
    const replaced: ExportEvent[] = [];
    const note = (seat: number, problem: string) => problems.set(seat, [...(problems.get(seat) ?? []), problem]);
    for (const [i, e] of deal.entries()) {
      if (e.type === "SeatReplaced") { replaced.push(e); continue; }
      const kind = OPEN_FACE_MOVES[e.type];
      if (kind === undefined) continue;
      const seat = Number(e.data.seat);
      const player = players[seat];
      const { player_key: key, signature } = e.data as { player_key?: string | null; signature?: string | null };
      const scheme = (e.data.signing_scheme as number | undefined) ?? 1;
      if (key == null && signature == null) {
        if (player !== undefined && signers.has(player) && scheme >= 2 && servicesMove(e) === undefined)
          note(seat, `the ${kind} is unsigned, but player ${player} signed an earlier move`);
        continue;
      }
      signed.add(seat);
      let problem = "";
      if (player === undefined) problem = "no player is seated there";
      else if (key == null || signature == null) problem = "a key without a signature, or a signature without its key";
      else if (servicesMove(e) !== undefined) problem = `${servicesMove(e)} is never signed, and this one carries a signature`;
      else if (scheme < 2) problem = "a move of signing scheme 1 (recorded before open face's were signed) is signed";
      else {
        try {
          const message = openFaceMessage({ tableId, dealNumber: number }, seat, player, e, deal[i + 1]);
          if (!(await ed25519Verify(unhex(key), unhex(signature), message))) problem = `the signature by key ${key} does not verify for player ${player}`;
        } catch (err) {
          problem = `cannot be read: ${err instanceof Error ? err.message : String(err)}`;
        }
      }
      if (problem !== "") note(seat, `the ${kind}: ${problem}`);
      else if (player !== undefined) signers.add(player);
    }
    for (const seat of [...new Set([...signed, ...problems.keys()])].sort((a, b) => a - b)) {
      const found = problems.get(seat);
      checks.push({ name: `player_signature[${seat}]`, deal: number, what, ...(found ? { status: "failed", detail: `seat ${seat} (player ${String(players[seat])}): ${found.join("; ")}` } : { status: "passed" }) });
    }
    for (const e of replaced) players[Number(e.data.seat)] = String(e.data.player_id);
  }
  return checks;
}
