// docs/fairness.md §18's table, and its refusals.
import { describe, expect, it } from "vitest";
import { canonicalJson, parseStrictJson } from "../src/canonical";

describe("canonical JSON (§18)", () => {
  it("sorts keys and writes no spaces", () => {
    expect(canonicalJson({ b: [1, true, null], a: "♠é" })).toBe('{"a":"♠é","b":[1,true,null]}');
  });
  it("escapes exactly the characters §18 names", () => {
    const s = "a\tb\"c\\d\u001fe\u007f/";
    expect(canonicalJson({ s })).toBe('{"s":"a\\tb\\"c\\\\d\\u001fe\u007f/"}');
    expect(canonicalJson("\u2028\u2029😀")).toBe('"\u2028\u2029😀"');
  });
  it("orders keys by UTF-16 code units (RFC 8785 §3.2.3)", () => {
    const keys = ["€", "\r", "\ufb33", "1", "😀", "\u0080", "ö"];
    const value = Object.fromEntries(keys.map((k) => [k, 0]));
    const expected = ["\r", "1", "\u0080", "ö", "€", "😀", "\ufb33"];
    // (not via JSON.parse: a JS object lists integer-like keys such as "1" first)
    expect(canonicalJson(value)).toBe(`{${expected.map((k) => `${JSON.stringify(k)}:0`).join(",")}}`);
  });
  it("RFC 8785 §3.2.4 without its numbers", () => {
    const v = { literals: [null, true, false], string: "€$\u000f\nA'B\"\\\\\"/" };
    expect(canonicalJson(v)).toBe('{"literals":[null,true,false],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });
  it("refuses what §18 refuses", () => {
    expect(() => canonicalJson(9007199254740992)).toThrow("within ±(2^53 - 1)");
    expect(() => canonicalJson(1.5)).toThrow();
    expect(() => canonicalJson("a\u0000")).toThrow("NUL");
    expect(() => canonicalJson({ k: "\ud800" })).toThrow("lone surrogate");
    expect(() => parseStrictJson('{"a": 1.0}')).toThrow("float");
    expect(() => parseStrictJson('{"a": 1e3}')).toThrow("float");
    expect(parseStrictJson('{"a": "1.0e3", "b": -7}')).toEqual({ a: "1.0e3", b: -7 });
  });
});
