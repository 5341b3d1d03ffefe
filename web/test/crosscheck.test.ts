// The page's verdicts against sapsam's (test/data/make_exports.py): every sample export, and every
// re-chained forgery of test/data/tampered.json, gets the verdict `sapsam audit verify` gave it and
// fails exactly the checks it failed (`name@deal`; failed, or skipped because one it relies on failed).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { verifyExport } from "../src/export";

const data = (name: string) => readFileSync(fileURLToPath(new URL(`data/${name}`, import.meta.url)), "utf8");
const serverKey = data("server.vkey").trim();
const asPython = (v: string) => v.toLowerCase().replaceAll(" ", "_");
const tampered: Record<string, { file: string; verdict: string; failed: string[] }> = JSON.parse(data("tampered.json"));

const failedNames = async (text: string, keys: string[] = []) => {
  const report = await verifyExport(text, keys);
  const failed = report.checks
    .filter((c) => c.status === "failed" || (c.status === "skipped" && c.detail?.startsWith("needs")))
    .map((c) => `${c.name}${c.deal === undefined ? "" : `@${c.deal}`}`);
  return { verdict: asPython(report.verdict), failed: failed.sort() };
};

describe("re-chained forgeries: sapsam's verdict and failed checks", () => {
  it.each(Object.entries(tampered))("%s", async (_, { file, verdict, failed }) => {
    expect(await failedNames(data(file))).toEqual({ verdict, failed: [...failed].sort() });
  });
});

describe("the series sample (surrender, a voided deal, SeriesCompleted)", () => {
  it("every check of the whole series passes, anchored", async () => {
    const report = await verifyExport(data("series.jsonl"), [serverKey]);
    expect(report.checks.filter((c) => c.status !== "passed")).toEqual([]);
    expect(report.verdict).toBe("ANCHORED");
    const names = report.checks.map((c) => `${c.name}${c.deal === undefined ? "" : `@${c.deal}`}`);
    expect(names).toEqual(expect.arrayContaining(["decode", "sequence@3", "voided_deal@2", "series_totals@1", "series_totals@3", "series_totals@4", "standings@4"]));
  });
  it("its last deal alone: series_totals and standings not covered, still anchored", async () => {
    const report = await verifyExport(data("series_deal4.jsonl"), [serverKey]);
    const status = (name: string) => report.checks.find((c) => c.name === name)?.status;
    expect(status("series_totals")).toBe("skipped");
    expect(status("standings")).toBe("skipped");
    expect(report.verdict).toBe("ANCHORED");
  });
});

describe("--checkpoint's consistency (audit.md §4.5): sapsam's verdict and status", () => {
  const cases: Record<string, { verdict: string; consistency: string }> = JSON.parse(data("consistency.json"));
  const file = data("consistency/deal2.jsonl");
  const statusOf = (s: string, detail?: string) => (s === "skipped" && detail?.startsWith("not covered") ? "not_covered" : s);
  it.each(Object.entries(cases))("%s", async (note, expected) => {
    const report = await verifyExport(file, [serverKey], [], { checkpoint: data(`consistency/${note}`) });
    const check = report.checks.find((c) => c.name === "consistency")!;
    expect({ verdict: asPython(report.verdict), consistency: statusOf(check.status, check.detail), anchor: report.anchor ?? null }).toEqual(expected);
  });
  it("a consistency proof altered: fails", async () => {
    const altered = file.replace(/("consistency":\[\{"new_size":\d+,"old_size":\d+,"proof":")(.)/, (_, head: string, c: string) => `${head}${c === "0" ? "1" : "0"}`);
    expect(altered).not.toBe(file);
    const report = await verifyExport(altered, [serverKey], [], { checkpoint: data("consistency/older.note") });
    expect(report.checks.find((c) => c.name === "consistency")?.status).toBe("failed");
    expect(report.verdict).toBe("FAILED");
  });
});

describe("the anchor (audit.md §4.5): the checkpoint, who signed it and the witnesses, as sapsam names them", () => {
  const cases: Record<string, { file: string; witness: boolean; reader: boolean; verdict: string; anchor: unknown }> = JSON.parse(data("witnessed.json"));
  const witnessKey = data("witnessed/witness.vkey").trim();
  it.each(Object.entries(cases))("%s", async (_, c) => {
    const report = await verifyExport(data(c.file), [serverKey], c.witness ? [witnessKey] : [], c.reader ? { checkpoint: data("witnessed/reader.note") } : {});
    expect({ verdict: asPython(report.verdict), anchor: report.anchor ?? null }).toEqual({ verdict: c.verdict, anchor: c.anchor });
  });
  it("every sample export with the key pinned names the export's checkpoint, not witnessed", async () => {
    const report = await verifyExport(data("table.jsonl"), [serverKey]);
    expect(report.anchor).toMatchObject({ checkpoint: "export", witnessed_by: [], signed_by: expect.stringMatching(/^sapsam\/web-tests.example\+[0-9a-f]{8}$/) });
  });
});

describe("kept receipts (audit.md §4.6): sapsam's verdict and status", async () => {
  const { readdirSync } = await import("node:fs");
  const cases: Record<string, { verdict: string; receipts: string }> = JSON.parse(data("receipts.json"));
  const kept = (path: string) => (path === "receipts"
    ? readdirSync(fileURLToPath(new URL("data/receipts", import.meta.url))).map((f) => ({ name: `receipts/${f}`, text: data(`receipts/${f}`) }))
    : [{ name: path, text: data(path) }]);
  const statusOf = (s: string, detail?: string) => (s === "skipped" && detail?.startsWith("not covered") ? "not_covered" : s);
  it.each(Object.entries(cases))("%s", async (name, expected) => {
    const [file, receipts] = name.split(" ") as [string, string];
    const report = await verifyExport(data(file), [serverKey], [], { receipts: kept(receipts) });
    const check = report.checks.find((c) => c.name === "receipts")!;
    expect({ verdict: asPython(report.verdict), receipts: statusOf(check.status, check.detail) }).toEqual(expected);
  });
  it("a receipt's event missing from a whole-table export (a deleted deal) is named", async () => {
    const text = data("series.jsonl");
    const report = await verifyExport(text, [serverKey], [], { receipts: kept("receipts") });
    expect(report.checks.find((c) => c.name === "receipts")?.status).toBe("passed");
    const lines = text.trim().split("\n");
    const cut = lines.slice(0, -3).join("\n"); // the last events gone (coverage fails too)
    const failed = await verifyExport(cut, [serverKey], [], { receipts: kept("receipts") });
    expect(failed.checks.find((c) => c.name === "receipts")?.detail).toMatch(/is missing from the export/);
  });
});

describe("the page's pins (src/pins.ts)", async () => {
  const { parseKeyLines, parsePlayerKeys } = await import("../src/pins");
  it("key lines: comments and a leading word skipped", () => {
    expect(parseKeyLines(`# pinned\ncurrent ${serverKey}\n\nretired a+b+c # old\n`)).toEqual([serverKey, "a+b+c"]);
  });
  it("player keys: PLAYER=KEY, players/<id> read as the id; anything else is refused", () => {
    expect(parsePlayerKeys(`players/ann=${"AB".repeat(32)}\nann = ${"cd".repeat(32)}`)).toEqual({ ann: ["ab".repeat(32), "cd".repeat(32)] });
    expect(() => parsePlayerKeys("ann=12")).toThrow("player key line 1");
  });
  it("an anchored verdict on a key the link filled in, left as it came, says so", async () => {
    const { linkKeyWarning } = await import("../src/pins");
    expect(linkKeyWarning("ANCHORED", ` ${serverKey}`, serverKey)).toMatch(/filled in by this page's link/);
    expect(linkKeyWarning("ANCHORED", serverKey, "")).toBeUndefined(); // typed by the reader
    expect(linkKeyWarning("ANCHORED", serverKey, "sapsam/other+00000000+AA")).toBeUndefined(); // changed
    expect(linkKeyWarning("FAILED", serverKey, serverKey)).toBeUndefined();
  });
});

describe("open-face sets played by sapsam's domain (timeouts, forced moves, a Fantasyland timeout, 2-7 included): every check of §4.3.1 passes", () => {
  const verdicts: Record<string, string> = JSON.parse(data("open_face.json"));
  it.each(Object.entries(verdicts))("%s: %s", async (name, verdict) => {
    const report = await verifyExport(data(`open_face/${name}`));
    expect(report.checks.filter((c) => c.status === "failed")).toEqual([]);
    expect(asPython(report.verdict)).toBe(verdict);
    // Every deal re-decided, Fantasyland entries and the set's end included: only the missing
    // checkpoint keeps it below ANCHORED, as it keeps sapsam's.
    expect(report.reasons).toEqual(["the export carries no checkpoint"]);
    const scored = (data(`open_face/${name}`).match(/"type":"SeedRevealed"/g) ?? []).length;
    const voided = (data(`open_face/${name}`).match(/"type":"DealVoided"/g) ?? []).length;
    for (const check of ["seed", "streets", "placements", "fantasyland", "discards", "scores", "series_totals"]) {
      const deals = new Set(report.checks.filter((c) => c.name === check && c.status === "passed").map((c) => c.deal));
      // ran and passed for every finished deal, and up to the voiding for a voided one (no running totals)
      expect(deals.size, check).toBe(scored + (check === "series_totals" ? 0 : voided));
    }
  });
  // Timeouts, moves made for a seat and a Fantasyland hand set by the service, re-decided by the
  // page (rules.md §8.6-§8.7): nothing left not covered, so a pinned key anchors them as sapsam does.
  const anchored: Record<string, { with_key: string; without_key: string }> = JSON.parse(data("open_face_anchored.json"));
  it.each(Object.entries(anchored))("%s with and without the key: sapsam's verdicts", async (name, expected) => {
    const text = data(`open_face/${name}`);
    const [pinned, bare] = [await verifyExport(text, [serverKey]), await verifyExport(text)];
    expect({ with_key: asPython(pinned.verdict), without_key: asPython(bare.verdict) }).toEqual(expected);
    expect(pinned.reasons).toEqual([]);
    // A deal export of deal 2 re-decides nothing of its play (deal 1 decided where it starts): its
    // checks are not covered, which, as in sapsam, is no bar to the anchor; every other passes.
    const open = pinned.checks.filter((c) => c.status !== "passed");
    if (name.startsWith("anchored_deal2")) expect(open.every((c) => c.status === "skipped" && c.detail?.startsWith("not covered"))).toBe(true);
    else expect(open).toEqual([]);
  });
  const forged: Record<string, { file: string; verdict: string; failed: string[] }> = JSON.parse(data("open_face_tampered.json"));
  it.each(Object.entries(forged))("re-chained forgery %s: sapsam's verdict and failed checks", async (_, { file, verdict, failed }) => {
    expect(await failedNames(data(file))).toEqual({ verdict, failed: [...failed].sort() });
  });
  it("a street's digest changed and re-chained: streets fails, FAILED", async () => {
    const { chainHash } = await import("../src/export");
    const { hex, unhex } = await import("../src/bytes");
    const [headerLine, ...lines] = data("open_face/ofc_classic.jsonl").trim().split("\n");
    const header = JSON.parse(headerLine!);
    const events = lines.map((l) => JSON.parse(l));
    const street = events.find((e) => e.type === "StreetDealt" && e.data.street === 2);
    street.data.digests[1] = "00".repeat(32);
    let previous = unhex(header.segments[0].anchor.hash);
    for (const e of events) e.hash = hex((previous = await chainHash(previous, header.stream_id, e)));
    header.segments[0].last_hash = hex(previous);
    const report = await verifyExport([header, ...events].map((x) => JSON.stringify(x)).join("\n"));
    expect(report.checks.filter((c) => c.status === "failed").map((c) => `${c.name}@${c.deal}`)).toEqual([`streets@${street.data.deal_number}`]);
    expect(report.checks.filter((c) => c.deal === street.data.deal_number && c.status === "skipped").map((c) => c.name))
      .toEqual(["placements", "fantasyland", "discards", "scores", "series_totals"]);
    expect(report.verdict).toBe("FAILED");
  });
});
