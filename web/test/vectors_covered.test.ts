// Issue #21: the page's verifier runs every vector in docs/. Each vector file's sections are listed
// here with the test that runs them; a section docs/ gains fails this test until a test of the
// page runs it and it is listed (the descriptive fields, spec/version/about, hold no vectors).
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { load } from "./vectors";

const RUN_BY: Record<string, Record<string, string>> = {
  "fairness-vectors.json": {
    sampler: "fairness.test.ts",
    deals: "fairness.test.ts",
    worked_example_trace: "fairness.test.ts",
    lots: "fairness.test.ts",
    arrangement_commitments: "fairness.test.ts",
    player_signatures: "fairness.test.ts",
    published_deals: "verify.test.ts",
    open_face_deals: "openface.test.ts, openface_play.test.ts",
  },
  "rules-examples.json": {
    row_values: "rules.test.ts",
    row_comparisons: "rules.test.ts",
    arrangements: "rules.test.ts",
    deals: "rules.test.ts",
    series: "rules.test.ts",
    special_deals: "rules.test.ts",
    open_face_moves: "openface_rules.test.ts",
  },
  "transparency-vectors.json": {
    hashing: "transparency.test.ts",
    leaves: "transparency.test.ts",
    leaf_hashes: "transparency.test.ts",
    roots: "transparency.test.ts",
    inclusion: "transparency.test.ts",
    consistency: "transparency.test.ts",
    refused: "transparency.test.ts",
    checkpoint: "transparency.test.ts",
    cosignature: "transparency.test.ts",
    receipts: "transparency.test.ts",
  },
  "tournament-vectors.json": {
    random: "tournament.test.ts",
    standings: "tournament.test.ts",
  },
};
const DESCRIPTIVE = new Set(["spec", "version", "rules_version", "about", "description"]);

describe("every vector file of docs/ and every section of it is run by a test of the page", () => {
  it("the vector files are the ones listed", () => {
    const docs = readdirSync(fileURLToPath(new URL("../../docs/", import.meta.url))).filter((f) => f.endsWith(".json"));
    expect(docs.sort()).toEqual(Object.keys(RUN_BY).sort());
  });
  it.each(Object.entries(RUN_BY))("%s", (file, sections) => {
    const present = Object.keys(load(file) as object).filter((k) => !DESCRIPTIVE.has(k));
    expect(present.sort()).toEqual(Object.keys(sections).sort());
    for (const [section, tests] of Object.entries(sections)) {
      for (const test of tests.split(", ")) {
        const text = readFileSync(fileURLToPath(new URL(test, import.meta.url)), "utf8");
        expect(text, `${test} reads ${file}'s ${section}`).toMatch(new RegExp(`\\.${section}\\b|"${section}"`));
      }
    }
  });
});
