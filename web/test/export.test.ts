// Sample exports made by sapsam (test/data/make_exports.py): the page's verdict must be the one
// `sapsam audit verify` gave (test/data/verdicts.json), and tampered copies must fail.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { verifyExport } from "../src/export";

const data = (name: string) => readFileSync(fileURLToPath(new URL(`data/${name}`, import.meta.url)), "utf8");
const serverKey = data("server.vkey").trim();
const expected: Record<string, { with_key: string; without_key: string }> = JSON.parse(data("verdicts.json"));
const asPython = (v: string) => v.toLowerCase().replaceAll(" ", "_");

/** The export with one event's data changed by `change` (the chain not recomputed). */
function tamper(text: string, type: string, change: (data: Record<string, unknown>) => void): string {
  const lines = text.split("\n");
  const i = lines.findIndex((l) => l.includes(`"type":"${type}"`));
  const event = JSON.parse(lines[i]!);
  change(event.data);
  lines[i] = JSON.stringify(event);
  return lines.join("\n");
}

describe("sample exports: the same verdict as sapsam audit verify", () => {
  for (const [name, verdicts] of Object.entries(expected)) {
    it(`${name} with the server key pinned: ${verdicts.with_key}`, async () => {
      const report = await verifyExport(data(name), [serverKey]);
      expect(report.checks.filter((c) => c.status === "failed")).toEqual([]);
      expect(asPython(report.verdict)).toBe(verdicts.with_key);
    });
    it(`${name} without a key: ${verdicts.without_key}`, async () => {
      const report = await verifyExport(data(name));
      expect(asPython(report.verdict)).toBe(verdicts.without_key);
      expect(report.reasons).toEqual(["no server key pinned"]);
    });
  }
  it("every deal's fair-dealing checks ran", async () => {
    const report = await verifyExport(data("table.jsonl"), [serverKey]);
    const dealChecks = report.checks.filter((c) => c.deal !== undefined && c.status === "passed");
    expect(new Set(dealChecks.map((c) => c.deal))).toEqual(new Set([1, 2]));
    expect(dealChecks.map((c) => c.name)).toContain("scores");
  });
});

describe("tampered copies fail", () => {
  const cases: [string, string, (d: Record<string, unknown>) => void][] = [
    ["a cut moved", "DeckCut", (d) => { d.position = (d.position as number) % 51 + 1; }],
    ["a score changed", "DealScored", (d) => { (d.totals as number[])[0]! += 1; }],
    ["a player renamed", "PlayerSeated", (d) => { d.player_id = "mallory"; }],
  ];
  it.each(cases)("%s: chain fails, FAILED", async (_, type, change) => {
    const report = await verifyExport(tamper(data("deal2.jsonl"), type, change), [serverKey]);
    expect(report.verdict).toBe("FAILED");
    expect(report.checks.find((c) => c.name === "chain")?.status).toBe("failed");
  });
  it("a wrong server key: checkpoint fails", async () => {
    const other = "sapsam/vectors.example+691f8a87+AV6rrlY9MqXcZNeAdAUYVvmfKpH49uVbv+HdvvwIaLlF";
    const report = await verifyExport(data("deal2.jsonl"), [other]);
    expect(report.verdict).toBe("FAILED");
    expect(report.reasons[0]).toMatch(/^checkpoint does not hold/);
  });
  it("a proof's hash flipped: inclusion fails", async () => {
    const text = data("deal2.jsonl").replace(/"proof":"(.)/, (_, c: string) => `"proof":"${c === "0" ? "1" : "0"}`);
    const report = await verifyExport(text, [serverKey]);
    expect(report.checks.find((c) => c.name === "inclusion")?.status).toBe("failed");
    expect(report.verdict).toBe("FAILED");
  });
});
