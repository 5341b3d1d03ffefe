// pruneKept (src/api/seat.ts): once a deal is scored or voided, what the seat kept for it and the
// deals before (rows, nonces, discards, Fantasyland settings) leaves localStorage; the current deal's,
// other seats' and everything else stays.
import { describe, expect, it } from "vitest";
import { KEPT_PREFIXES, pruneKept } from "../src/api/seat";

/** localStorage's interface over a Map (Node has none). */
class MemoryStorage implements Storage {
  private readonly items = new Map<string, string>();
  get length(): number {
    return this.items.size;
  }
  key(index: number): string | null {
    return [...this.items.keys()][index] ?? null;
  }
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
  clear(): void {
    this.items.clear();
  }
  keys(): string[] {
    return [...this.items.keys()].sort();
  }
}

const SEAT = "tables/5b0e8c7e-0000-4000-8000-000000000001/seats/1";
const OTHER_SEAT = "tables/5b0e8c7e-0000-4000-8000-000000000001/seats/10";
const OTHER_TABLE = "tables/5b0e8c7e-0000-4000-8000-000000000002/seats/1";

describe("api/seat pruneKept", () => {
  it("forgets the seat's kept secrets of finished deals only", () => {
    const storage = new MemoryStorage();
    for (const prefix of KEPT_PREFIXES) for (const deal of [1, 2, 3, 12]) storage.setItem(`${prefix} ${SEAT} ${deal}`, "{}");
    storage.setItem(`sapsam.kept ${OTHER_SEAT} 1`, "{}");
    storage.setItem(`sapsam.kept ${OTHER_TABLE} 1`, "{}");
    storage.setItem("sapsam.identity http://127.0.0.1:5173", "{}");
    storage.setItem("sapsam.api", "http://x");
    storage.setItem(`sapsam.placing ${SEAT} 1`, "{}");

    expect(pruneKept(SEAT, 2, storage)).toBe(6); // deals 1 and 2, three kinds each
    expect(storage.keys()).toEqual(
      [
        ...KEPT_PREFIXES.flatMap((prefix) => [`${prefix} ${SEAT} 12`, `${prefix} ${SEAT} 3`]),
        `sapsam.kept ${OTHER_SEAT} 1`,
        `sapsam.kept ${OTHER_TABLE} 1`,
        "sapsam.identity http://127.0.0.1:5173",
        "sapsam.api",
        `sapsam.placing ${SEAT} 1`,
      ].sort(),
    );
    expect(pruneKept(SEAT, 2, storage)).toBe(0); // nothing more to forget
    expect(pruneKept(SEAT, 12, storage)).toBe(6);
    expect(storage.keys().filter((k) => k.includes(` ${SEAT} `) && !k.startsWith("sapsam.placing"))).toEqual([]);
  });
});
