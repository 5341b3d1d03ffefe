// The table page's hint (src/table/suggestion.ts): the server's solver's answer read into rows, and
// a closed hand's fallback to the browser's heuristic when the call fails, said as such.
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { Api } from "../src/api/transport";
import { parseCards } from "../src/cards";
import { suggestRows } from "../src/table/hint";
import { askServer, closedHint, hintSaid } from "../src/table/suggestion";

const HAND = parseCards("As Ad Kc Kd Qh Jh Th 9h 2h 5c 6d 7s 8s");
const SEAT = "tables/5b0e8c7e-0000-4000-8000-000000000001/seats/1";

function fakeApi(answer: unknown, asked: unknown[] = []): Api {
  return { tables: { getSuggestion: async (request: unknown) => (asked.push(request), answer) } } as unknown as Api;
}

/** ErrorInfo{reason} on the wire: field 1, a string. */
function errorInfo(reason: string): Uint8Array {
  const text = new TextEncoder().encode(reason);
  return Uint8Array.from([0x0a, text.length, ...text]);
}

describe("table/suggestion", () => {
  it("asks for the seat's own deal and reads a closed hand's rows and natural", async () => {
    const asked: unknown[] = [];
    const answer = { suggestion: { case: "arrangement", value: { front: ["2h", "5c", "6d"], middle: ["Kc", "Kd", "7s", "8s", "Qh"], back: ["As", "Ad", "Jh", "Th", "9h"] } }, discards: [], natural: "none" };
    const s = await askServer(fakeApi(answer, asked), SEAT, 3);
    expect(asked).toEqual([{ seat: SEAT, dealNumber: 3n }]);
    expect(s.kind).toBe("whole");
    expect(s.rows.front).toEqual(parseCards("2h 5c 6d"));
    expect(s.rows.back).toEqual(parseCards("As Ad Jh Th 9h"));
    expect(s.natural).toBe("none");
  });
  it("reads an open-face street's placement and discard", async () => {
    const answer = { suggestion: { case: "placement", value: { front: [], middle: ["Kc"], back: ["As"] } }, discards: ["2h"], natural: "", street: 1 };
    const s = await askServer(fakeApi(answer), SEAT, 1);
    expect(s.kind).toBe("street");
    expect(s.rows).toEqual({ front: [], middle: parseCards("Kc"), back: parseCards("As") });
    expect(s.discards).toEqual(parseCards("2h"));
  });
  it("takes the server's rows when it answers", async () => {
    const rows = { front: parseCards("2h 5c 6d"), middle: parseCards("Kc Kd 7s 8s Qh"), back: parseCards("As Ad Jh Th 9h") };
    const hint = await closedHint(async () => ({ kind: "whole", rows, discards: [], natural: "" }), HAND, false);
    expect(hint).toEqual({ rows, natural: "", source: "server", failed: "" });
    expect(hintSaid(hint)).toContain("server's solver");
  });
  // two exhaustive searches of the heuristic (see table.test.ts): a longer limit on a loaded machine
  it("falls back to the browser's heuristic when the call fails, and says why", { timeout: 60_000 }, async () => {
    const limited = new ConnectError("too many suggestions", Code.ResourceExhausted);
    // as received from a server: the detail's type name and its wire bytes
    (limited.details as unknown[]).push({ type: "google.rpc.ErrorInfo", value: errorInfo("RATE_LIMITED"), debug: undefined });
    const hint = await closedHint(() => Promise.reject(limited), HAND, false);
    expect(hint.source).toBe("browser");
    expect(hint.failed).toBe("RATE_LIMITED");
    expect(hint.rows).toEqual(suggestRows(HAND, false));
    expect(hintSaid(hint)).toBe("The server's suggestion failed (RATE_LIMITED): these rows are this browser's own simple heuristic instead, not the solver's.");
    const offline = await closedHint(() => Promise.reject(new TypeError("Failed to fetch")), HAND, true);
    expect(offline.source).toBe("browser");
    expect(offline.rows).toEqual(suggestRows(HAND, true));
  });
});
