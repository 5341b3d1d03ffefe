// pruneKept (src/api/seat.ts): once a deal is scored or voided, what the seat kept for it and the
// deals before (rows, nonces, discards, Fantasyland settings) leaves localStorage; the current deal's,
// other seats' and everything else stays.
import { describe, expect, it } from "vitest";
import { KEPT_PREFIXES, pruneKept, pruneKeptTables } from "../src/api/seat";
import type { Api } from "../src/api/transport";
import { TablePhase } from "../src/gen/sapsam/v1/table_pb";

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

describe("api/seat pruneKeptTables", () => {
  const table = (n: number) => `tables/5b0e8c7e-0000-4000-8000-00000000000${n}`;
  it("forgets the deals that are over at every table kept for, asking each table once", async () => {
    const storage = new MemoryStorage();
    const kept = (n: number, deals: number[]) => deals.forEach((d) => storage.setItem(`sapsam.kept ${table(n)}/seats/0 ${d}`, "{}"));
    kept(1, [2, 3]); // between deals after deal 3: both over
    kept(2, [4, 5]); // deal 5 being arranged: deal 4 over, 5 still needed
    kept(3, [1]); // a table this server does not know (another server's): left alone
    kept(4, [2]); // the series complete after deal 2
    storage.setItem(`sapsam.discards ${table(2)}/seats/0 5`, "[]");
    storage.setItem("sapsam.identity http://x", "{}");
    const asked: string[] = [];
    const tables: Record<string, { phase: TablePhase; dealNumber: number }> = {
      [table(1)]: { phase: TablePhase.BETWEEN_DEALS, dealNumber: 3 },
      [table(2)]: { phase: TablePhase.ARRANGING, dealNumber: 5 },
      [table(4)]: { phase: TablePhase.SERIES_COMPLETE, dealNumber: 2 },
    };
    const api = {
      tables: {
        getTable: async ({ name }: { name: string }) => {
          asked.push(name);
          if (!tables[name]) throw new Error("TABLE_NOT_FOUND");
          return { table: tables[name] };
        },
      },
    } as unknown as Api;
    expect(await pruneKeptTables(api, storage)).toBe(4);
    expect(asked.sort()).toEqual([table(1), table(2), table(3), table(4)]);
    expect(storage.keys()).toEqual(
      [`sapsam.discards ${table(2)}/seats/0 5`, `sapsam.kept ${table(2)}/seats/0 5`, `sapsam.kept ${table(3)}/seats/0 1`, "sapsam.identity http://x"].sort(),
    );
  });
});
