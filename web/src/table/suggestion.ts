// The hint on request: the server's solver's choice for your own seat (TableService.GetSuggestion:
// a closed hand's rows and natural, an open-face street's placement and discard, a Fantasyland
// hand set whole). It records nothing and is limited per player (docs/api.md, "Limits"). When the
// call fails (refused, rate limited, the server out of reach), a closed hand falls back to this
// browser's own simple heuristic (hint.ts), and the page says so; an open-face street has none.
import { refusal } from "../api/errors";
import { parseRows } from "../api/seat";
import type { Api } from "../api/transport";
import { parseCard } from "../cards";
import type { Rows } from "../fairness";
import { suggestRows } from "./hint";

/** What the server's solver suggests, read into card indices. */
export interface ServerSuggestion {
  /** "whole": every card in 3/5/5 rows (a closed hand, a Fantasyland hand); "street": what one open-face street adds to each row. */
  kind: "whole" | "street";
  rows: Rows;
  discards: number[];
  /** A closed table with naturals: the natural to declare, or "none"; "" elsewhere. */
  natural: string;
}

/** GetSuggestion for `seat` in deal `deal`. */
export async function askServer(api: Api, seat: string, deal: number): Promise<ServerSuggestion> {
  const answer = await api.tables.getSuggestion({ seat, dealNumber: BigInt(deal) });
  const s = answer.suggestion;
  if (!s.case) throw new Error("the server sent no suggestion");
  return { kind: s.case === "arrangement" ? "whole" : "street", rows: parseRows(s.value), discards: answer.discards.map(parseCard), natural: answer.natural };
}

/** A closed hand's hint: the server's, or when that fails this browser's heuristic and why. */
export interface ClosedHint {
  rows: Rows;
  natural: string;
  /** "server": the server's solver; "browser": the fallback, with the failure in `failed`. */
  source: "server" | "browser";
  failed: string;
}

export async function closedHint(ask: () => Promise<ServerSuggestion>, cards: readonly number[], strict: boolean): Promise<ClosedHint> {
  try {
    const s = await ask();
    if (s.kind !== "whole") throw new Error("not a whole hand");
    return { rows: s.rows, natural: s.natural, source: "server", failed: "" };
  } catch (error) {
    const r = refusal(error);
    return { rows: suggestRows(cards, strict), natural: "", source: "browser", failed: r.reason || r.message || r.code };
  }
}

/** The status line for a closed hand's hint. */
export function hintSaid(hint: ClosedHint): string {
  if (hint.source === "server") {
    const declare = hint.natural && hint.natural !== "none" ? ` It would declare ${hint.natural.replaceAll("_", " ")}.` : "";
    return `The server's solver suggests these rows: move any card you like before committing.${declare}`;
  }
  return `The server's suggestion failed (${hint.failed}): these rows are this browser's own simple heuristic instead, not the solver's.`;
}
