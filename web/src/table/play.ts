// What both table pages share (table/page.ts for Chinese poker, table/openFaceTable.ts for open
// face and Pineapple): moves made once each (a refusal that only means "done already" kept quiet,
// one without an answer tried again), the table read again after every event (one read at a time),
// the watch that reconnects, taking a seat, seats' names and the page's buttons.
import { refusal } from "../api/errors";
import type { Session } from "../api/session";
import { requestId } from "../api/transport";
import type { TableEvent } from "../gen/sapsam/v1/table_event_pb";
import type { Table } from "../gen/sapsam/v1/table_pb";

export const RETRY_MS = 2000;
export const $ = (id: string) => document.getElementById(id)!;
export const dealOf = (deal: string): number => Number(/\/deals\/(\d+)$/.exec(deal)?.[1] ?? 0);

/** A seat's name as shown: its player's display name, or "seat n". */
export const seatNamer =
  (table: () => Table | null) =>
  (seat: string): string => {
    const s = table()?.seats.find((x) => x.name === seat);
    return s?.displayName || seat.replace(/^.*\/seats\//, "seat ");
  };

export function button(text: string, id: string, onClick: () => void): HTMLButtonElement {
  const b = document.createElement("button");
  b.type = "button";
  b.id = id;
  b.textContent = text;
  b.addEventListener("click", onClick);
  return b;
}

/** Runs each step (named "what deal…") once: a refusal outside `nothingToDo` is said; with no
 * answer from the server (the network, a restart) the step is tried again shortly. */
export function onceEach(nothingToDo: ReadonlySet<string>, say: (text: string) => void, refresh: () => Promise<void>) {
  const done = new Set<string>();
  return async (step: string, move: () => Promise<unknown>): Promise<void> => {
    if (done.has(step)) return;
    done.add(step);
    try {
      await move();
    } catch (error) {
      const r = refusal(error);
      if (!nothingToDo.has(r.reason)) say(`${step.split(" ")[0]} refused: ${r.reason || r.code} ${r.message}`);
      if (!r.reason) {
        done.delete(step);
        setTimeout(() => void refresh(), RETRY_MS);
      }
    }
  };
}

/** Reads the table and hands it to `show`; a call while a read runs makes one more read after it. */
export function tableReader(session: Session, tableName: string, show: (table: Table | null) => Promise<void>): () => Promise<void> {
  let refreshing: Promise<void> | null = null;
  let again = false;
  return async function refresh(): Promise<void> {
    if (refreshing) {
      again = true;
      return refreshing;
    }
    refreshing = (async () => {
      do {
        again = false;
        await show((await session.api.tables.getTable({ name: tableName })).table ?? null);
      } while (again);
    })().finally(() => (refreshing = null));
    return refreshing;
  };
}

/** Follows the table's events for ever (reconnecting after a second when the watch breaks). */
export async function watchTable(
  session: Session,
  tableName: string,
  since: () => bigint,
  take: (event: TableEvent) => void,
  refresh: () => Promise<void>,
  say: (text: string) => void,
): Promise<never> {
  for (;;) {
    try {
      const stream = session.api.tables.watchTable({ table: tableName, afterVersion: since(), batchEvents: true });
      for await (const answer of stream) {
        for (const e of answer.events.length ? answer.events : answer.event ? [answer.event] : []) take(e);
        void refresh();
      }
    } catch (error) {
      const r = refusal(error);
      say(`The watch broke (${r.reason || r.code}); reconnecting…`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Join the table: the seat taken, or null (the refusal said). */
export async function takeSeat(session: Session, tableName: string, say: (text: string) => void): Promise<string | null> {
  try {
    const answer = await session.api.tables.joinTable({ requestId: requestId(), table: tableName });
    say("You took a seat.");
    return answer.seat || null;
  } catch (error) {
    const r = refusal(error);
    say(`No seat: ${r.reason || r.code} ${r.message}`);
    return null;
  }
}

/** The seat the session's player holds at `table`, if any. */
export const heldSeat = (table: Table | null, session: Session): string | undefined =>
  table?.seats.find((s) => s.player === session.identity?.player)?.name;
