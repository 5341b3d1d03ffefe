// The vector files of docs/, read as the spec publishes them.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const docs = (name: string): string => fileURLToPath(new URL(`../../docs/${name}`, import.meta.url));

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const load = (name: string): any => JSON.parse(readFileSync(docs(name), "utf8"));

/** A list of vectors, each an object (for it.each's types). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const list = (x: unknown): Record<string, any>[] => x as Record<string, any>[];
