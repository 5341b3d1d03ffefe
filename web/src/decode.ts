// The `decode` check (docs/audit.md §4.1): every event is a known type and schema version with
// well-formed fields. Types, schema versions and fields from docs/events.md; a field an event's
// type does not define is ignored (events.md: it is hashed, not read), and a field added by a later
// schema version may be absent from an older one (it reads as its default).
import type { Json } from "./canonical";

type Kind = "int" | "str" | "hex" | "bool" | "cards" | "list" | "obj" | "int?" | "str?" | "hex?" | "list?" | "obj?" | "bool?" | "any";

const is = (kind: Kind, v: Json | undefined): boolean => {
  if (kind.endsWith("?") && v === null) return true;
  switch (kind.replace("?", "")) {
    case "int": return Number.isInteger(v);
    case "str": return typeof v === "string";
    case "hex": return typeof v === "string" && /^([0-9a-f]{2})*$/.test(v);
    case "bool": return typeof v === "boolean";
    case "cards": return Array.isArray(v) && v.every((c) => typeof c === "string" && /^[2-9TJQKA][cdhs]$/.test(c));
    case "list": return Array.isArray(v);
    case "obj": return typeof v === "object" && v !== null && !Array.isArray(v);
    default: return true;
  }
};

/** type -> [highest schema version, fields every version holds, fields later versions added]. */
const CLOSED: Record<string, [number, Record<string, Kind>, Record<string, Kind>?]> = {
  TableCreated: [2, { table_id: "str", rule_set: "obj", seat_count: "int", lot_commitment: "hex", created_by: "str" }, { after_series: "str" }],
  PlayerSeated: [1, { seat: "int", player_id: "str" }],
  DealerChosen: [1, { dealer: "int", lot_seed: "hex", lot_cards: "cards" }],
  DealStarted: [1, { deal_number: "int", dealer: "int", seed_commitment: "hex" }],
  EntropyContributed: [1, { deal_number: "int", seat: "int", entropy: "hex" }],
  DeckCut: [1, { deal_number: "int", seat: "int", position: "int" }],
  CardsDealt: [1, { deal_number: "int", deck_digest: "hex", cut_deck_digest: "hex", hand_digests: "list", arrange_deadline_ms: "int?" }],
  ArrangementCommitted: [3, { deal_number: "int", seat: "int", commitment: "hex" }, { scheme: "int", player_key: "hex?", signature: "hex?" }],
  SeatConfirmed: [2, { deal_number: "int", seat: "int", commitment: "hex" }, { scheme: "int" }],
  RevealsOpened: [1, { deal_number: "int", reveal_deadline_ms: "int?" }],
  ArrangementRevealed: [2, { deal_number: "int", seat: "int", front: "cards", middle: "cards", back: "cards", nonce: "hex", foul: "bool", foul_reason: "str?" }, { player_key: "hex?", signature: "hex?" }],
  SeatTimedOut: [1, { deal_number: "int", seat: "int", stage: "str", consequence: "str" }],
  SeedRevealed: [1, { deal_number: "int", seed: "hex" }],
  DealScored: [2, { deal_number: "int", pairs: "list", totals: "list", fouls: "list", arrangements: "list", series_totals: "list" }, { solver_arrangements: "list?" }],
  SeriesCompleted: [1, { deals_played: "int", standings: "list" }],
  SeriesStarted: [1, { series_number: "int", first_deal_number: "int" }],
  DeadlinesExtended: [1, { deal_number: "int", stage: "str", seats: "list", previous_deadline_ms: "int?", deadline_ms: "int", reason: "str" }],
  DealVoided: [1, { deal_number: "int", reason: "str", seed: "hex" }],
  SeatReplaced: [1, { seat: "int", previous_player_id: "str", player_id: "str" }],
  NaturalDeclared: [1, { deal_number: "int", seat: "int", commitment: "hex" }, { player_key: "hex?", signature: "hex?" }],
  NaturalRevealed: [1, { deal_number: "int", seat: "int", natural: "str", nonce: "hex" }],
  AnnouncementsOpened: [1, { deal_number: "int", order: "list", deadline_ms: "int?" }],
  SurrenderAnnounced: [2, { deal_number: "int", seat: "int", surrender: "bool", timed_out: "bool" }, { deadline_ms: "int?", player_key: "hex?", signature: "hex?", signing_scheme: "int" }],
};

/** Open face's own events (docs/events.md, docs/architecture.md); their fields and schema versions are
 * not checked here: this page does not check open-face deals yet. */
const OPEN_FACE = ["StreetDealt", "CardsPlaced", "FantasylandCommitted", "FantasylandTimedOut", "FantasylandRevealsOpened", "FantasylandRevealed", "DiscardCommitted", "DiscardsRevealed"];

/** Undefined when every event decodes, else what is wrong with the first that does not. */
export function decodeCheck(events: readonly { version: number; type: string; schema_version: number; data: { [k: string]: Json } }[]): string | undefined {
  for (const e of events) {
    const where = `version ${e.version} (${e.type}, schema ${e.schema_version})`;
    if (OPEN_FACE.includes(e.type)) continue;
    const spec = CLOSED[e.type];
    if (spec === undefined) return `${where}: not a known event type`;
    const [highest, fields, added = {}] = spec;
    if (e.schema_version < 1 || e.schema_version > highest) return `${where}: not a known schema version of ${e.type} (1 to ${highest})`;
    for (const [name, kind] of Object.entries(fields))
      if (!is(kind, e.data[name])) return `${where}: ${name} is missing or not ${kind.replace("?", " or null")}`;
    for (const [name, kind] of Object.entries(added))
      if (name in e.data && !is(kind, e.data[name])) return `${where}: ${name} is not ${kind.replace("?", " or null")}`;
  }
  return undefined;
}
