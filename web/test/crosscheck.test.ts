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
