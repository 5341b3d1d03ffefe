// Canonical JSON (docs/fairness.md §18): RFC 8785 restricted to what events hold, and the refusals.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The canonical JSON text of a value; throws (saying what and where) for a value outside §18. */
export function canonicalJson(value: Json, where = "$"): string {
  if (value === null || typeof value === "boolean") return String(value);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new Error(`${where}: ${value} is not an integer within ±(2^53 - 1)`);
    return String(value);
  }
  if (typeof value === "string") return canonicalString(value, where);
  if (Array.isArray(value)) return `[${value.map((v, i) => canonicalJson(v, `${where}[${i}]`)).join(",")}]`;
  // Default sort compares UTF-16 code units, which is §18's key order.
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${canonicalString(k, where)}:${canonicalJson(value[k]!, `${where}.${k}`)}`).join(",")}}`;
}

function canonicalString(s: string, where: string): string {
  if (s.includes("\u0000")) throw new Error(`${where}: a string holds NUL`);
  if (LONE_SURROGATE.test(s)) throw new Error(`${where}: a string holds a lone surrogate`);
  // JSON.stringify escapes exactly ", \, \b \f \n \r \t and \u00xx (lower case) for other controls.
  return JSON.stringify(s);
}

/**
 * JSON.parse with what §2 of docs/audit.md refuses: a number with a fraction or an exponent (JSON.parse
 * would read 1.0 as 1), NaN and Infinity (not JSON anyway); out-of-range integers fail in canonicalJson.
 */
export function parseStrictJson(line: string): Json {
  // Outside strings, a number token with '.', 'e' or 'E' is a float.
  const outsideStrings = line.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  if (/[0-9][.eE]|[.][0-9]/.test(outsideStrings)) throw new Error("a float (only integers are allowed)");
  return JSON.parse(line) as Json;
}
