// pinned_player_key (audit.md §4.2) over open face's signed moves (fairness.md §19): a placement or
// a Fantasyland move signed by a key pinned for the player passes, one by another key fails, as in
// `sapsam audit verify --player-key` (service/sapsam/audit/pinned_player_keys.py).
import { describe, expect, it } from "vitest";
import { type ExportEvent, pinnedPlayerKeys } from "../src/export";

const KEY = "aa".repeat(32);
const event = (version: number, type: string, data: Record<string, unknown>): ExportEvent =>
  ({ version, type, schema_version: 2, data, metadata: {}, hash: "" }) as ExportEvent;

const events = (type: string): ExportEvent[] => [
  event(1, "PlayerSeated", { seat: 0, player_id: "ann" }),
  event(2, "PlayerSeated", { seat: 1, player_id: "bob" }),
  event(3, "DealStarted", { deal_number: 1 }),
  event(4, type, { deal_number: 1, seat: 0, player_key: KEY, signature: "bb".repeat(64) }),
  event(5, "CardsPlaced", { deal_number: 1, seat: 1, automatic: null, player_key: null, signature: null }),
];

describe("pinned_player_key over open face's moves", () => {
  it.each(["CardsPlaced", "FantasylandCommitted", "FantasylandRevealed"])("%s", (type) => {
    const status = (pins: Record<string, string[]>) => pinnedPlayerKeys(events(type), 2, pins).map((c) => `${c.name} ${c.status}`);
    expect(status({ ann: [KEY] })).toEqual(["pinned_player_key[ann] passed"]);
    expect(status({ ann: ["11".repeat(32)] })).toEqual(["pinned_player_key[ann] failed"]);
    expect(status({ bob: [KEY] })).toEqual(["pinned_player_key[bob] skipped"]);
  });
});
