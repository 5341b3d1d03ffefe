// The page against sapsam on each mutation sapsam's own tamper tests make (tests/audit/
// test_audit_tampering.py), applied to deal2.jsonl and re-chained (test/data/make_tamper_mutations.py):
// the verdict `sapsam audit verify` gave, and exactly the checks it failed (`name@deal`; failed, or
// skipped because one it relies on failed), except where tamper_mutations.json records that the
// two name other checks (checks_differ: the verdict must still be the same). That the file holds
// every mutation of those tests, and sapsam's answers today, tests/audit/test_web_sample_verdicts.py.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { verifyExport } from "../src/export";

const data = (name: string) => readFileSync(fileURLToPath(new URL(`data/${name}`, import.meta.url)), "utf8");
const cases: Record<string, { file: string; verdict: string; failed: string[]; checks_differ?: string }> = JSON.parse(data("tamper_mutations.json"));

describe("sapsam's tamper tests' mutations, re-chained: sapsam's verdict and failed checks", () => {
  it.each(Object.entries(cases))("%s", async (_, { file, verdict, failed, checks_differ }) => {
    const report = await verifyExport(data(file), []);
    const named = report.checks
      .filter((c) => c.status === "failed" || (c.status === "skipped" && c.detail?.startsWith("needs")))
      .map((c) => `${c.name}${c.deal === undefined ? "" : `@${c.deal}`}`);
    expect(report.verdict.toLowerCase().replaceAll(" ", "_")).toBe(verdict);
    if (checks_differ === undefined) expect(named.sort()).toEqual([...failed].sort());
    else expect(named.length, checks_differ).toBeGreaterThan(0);
  });
});
