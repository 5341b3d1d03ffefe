// The table page (table.html?table=tables/{uuid}): follows the table with WatchTable and makes every
// move that falls to your seat as the Python SDK's Seat does (draw the dealer, start your deals,
// add entropy, cut, reveal), while you arrange your 13 cards; then shows the reveal and the totals.
// An open-face table (open face, Pineapple) is played by openFaceTable.ts instead.
import { parseCard } from "../cards";
import { refusal } from "../api/errors";
import { type Kept, SeatMoves, loadKept } from "../api/moves";
import { pruneKept } from "../api/seat";
import { Session } from "../api/session";
import { requestId } from "../api/transport";
import { NaturalsTable, RowOrder, SixPairsCounting } from "../gen/sapsam/v1/rule_set_pb";
import { naturalKey, naturalsPlayed } from "../naturals";
import type { TableEvent } from "../gen/sapsam/v1/table_event_pb";
import { type DealResult, type Standing, type Table, TablePhase } from "../gen/sapsam/v1/table_pb";
import { cardRow } from "../ui/cards";
import { Arrangement, handName } from "./arrange";
import { Board } from "./board";
import { askServer, closedHint, hintSaid } from "./suggestion";
import { renderResult, renderStandings } from "./results";
import { $, button, dealOf, heldSeat, onceEach, seatNamer, tableReader, takeSeat, watchTable } from "./play";
import { StatusLine } from "./statusLine";
import { renderHeader, renderSeats } from "./view";

// Refusals that only mean "already done" or "too late" (the SDK's _NOTHING_TO_DO).
const NOTHING_TO_DO = new Set([
  "WRONG_PHASE", "WRONG_DEAL", "ALREADY_CONTRIBUTED", "ALREADY_CONFIRMED", "ALREADY_REVEALED",
  "ALREADY_ANNOUNCED", "NOT_YOUR_TURN", "SEAT_TIMED_OUT", "SERIES_COMPLETE", "ALREADY_DECLARED",
]);

const session = new Session();
const tableName = new URLSearchParams(location.search).get("table") ?? "";

let table: Table | null = null;
let moves: SeatMoves | null = null;
let lastVersion = 0n;
const hands = new Map<number, number[]>();
const results = new Map<number, DealResult>();
let standings: Standing[] = [];
let board: Board | null = null;
let boardDeal = 0;
let sending = false;

const status = new StatusLine((text) => ($("status").textContent = text), () => boardDeal);
const say = (text: string): void => status.say(text);
const sayOfDeal = (deal: number, text: string): void => status.sayOfDeal(deal, text);

const names = seatNamer(() => table);

function placementsKey(deal: number): string {
  return `sapsam.placing ${moves?.seat} ${deal}`;
}

function savePlacements(): void {
  if (board) sessionStorage.setItem(placementsKey(boardDeal), JSON.stringify(board.arrangement.rows()));
}

function restorePlacements(a: Arrangement, deal: number): void {
  const text = sessionStorage.getItem(placementsKey(deal));
  if (!text) return;
  const rows = JSON.parse(text) as { front: number[]; middle: number[]; back: number[] };
  for (const r of ["front", "middle", "back"] as const) for (const c of rows[r]) a.put(c, r);
}

const strict = (): boolean => table?.ruleSet?.rowOrder === RowOrder.STRICTLY_INCREASING;
/** The naturals the rule set plays that these 13 cards hold (what the player may declare). */
function heldNaturals(cards: readonly number[]): string[] {
  const r = table?.ruleSet;
  if (!r || !naturals()) return [];
  const kind = r.naturals === NaturalsTable.EXTENDED ? "extended" : "classic";
  const counting = r.naturalSixPairsCounting === SixPairsCounting.DISTINCT_RANKS ? "distinct_ranks" : "any_group";
  return naturalsPlayed({ naturals: kind, rules_version: r.rulesVersion }).filter((n) => naturalKey(n, cards, counting) !== null);
}

const naturals = (): boolean =>
  table?.ruleSet?.naturals === NaturalsTable.CLASSIC || table?.ruleSet?.naturals === NaturalsTable.EXTENDED;

function take(event: TableEvent): void {
  if (event.version > lastVersion) lastVersion = event.version;
  const p = event.payload;
  if (p.case === "cardsDealt" && p.value.myCards.length) hands.set(dealOf(p.value.deal), p.value.myCards.map(parseCard));
  else if (p.case === "dealScored" && p.value.result) {
    results.set(p.value.result.dealNumber, p.value.result);
    if (moves) pruneKept(moves.seat, p.value.result.dealNumber); // revealed and published: not needed here again
  }
  else if (p.case === "seriesCompleted") standings = p.value.standings;
  else if (p.case === "dealVoided" && moves) {
    pruneKept(moves.seat, dealOf(p.value.deal));
    say(`The operator voided deal ${dealOf(p.value.deal)}: nothing of it counts, and it is not revealed.`);
  }
}

const refresh = tableReader(session, tableName, async (t) => {
  table = t;
  if (t) {
    render();
    await act(t);
  }
});
const onceStep = onceEach(NOTHING_TO_DO, say, refresh);
const once = (step: string, deal: number, move: () => Promise<unknown>): Promise<void> => onceStep(`${step} ${deal}`, move);

/** Every move the table, as read, expects of your seat (the arranging is yours). */
async function act(t: Table): Promise<void> {
  if (!moves) return;
  const m = moves;
  const mine = t.seats[m.position];
  if (!mine) return;
  const deal = t.dealNumber;
  const api = session.api.tables;
  if (mine.timedOut && (t.phase === TablePhase.ARRANGING || t.phase === TablePhase.REVEALING)) return;
  if (t.phase === TablePhase.AWAITING_DEALER && m.position === 0) {
    await once("dealer", 0, () => api.chooseDealer({ requestId: requestId(), table: tableName }));
  } else if (t.phase === TablePhase.BETWEEN_DEALS && t.dealerSeat === m.seat) {
    await once("start", deal + 1, () => api.startDeal({ requestId: requestId(), table: tableName }));
  } else if (t.phase === TablePhase.AWAITING_CUT) {
    if (!mine.entropyContributed) await once("entropy", deal, () => m.contributeEntropy());
    if (t.cutterSeat === m.seat) await once("cut", deal, () => m.cut());
  } else if (t.phase === TablePhase.ARRANGING && !mine.confirmed && !hands.has(deal)) {
    await once("hand", deal, async () => {
      const answer = await api.getMyHand({ seat: m.seat });
      hands.set(dealOf(answer.deal), answer.cards.map(parseCard));
    });
  } else if (t.phase === TablePhase.REVEALING && !mine.revealed) {
    await once("reveal", deal, async () => {
      if (!(await m.reveal(deal))) say("This browser does not hold this deal's rows: it cannot reveal them.");
    });
  }
}

async function joinHere(): Promise<void> {
  const seat = await takeSeat(session, tableName, say);
  if (session.identity && seat) moves = new SeatMoves(session.api, session.identity, seat);
  await refresh();
}

async function commitRows(): Promise<void> {
  if (!board || !moves || sending) return;
  sending = true;
  const deal = boardDeal;
  sayOfDeal(deal, "Committing your rows (only their hash leaves this browser)…");
  try {
    const natural = (document.getElementById("natural") as HTMLSelectElement | null)?.value ?? "none";
    await moves.commit(deal, board.arrangement.rows(), naturals(), natural);
    sayOfDeal(deal, "Committed and confirmed: waiting for the other seats.");
  } catch (error) {
    const r = refusal(error);
    sayOfDeal(deal, `Not committed: ${r.reason || r.code} ${r.message}`);
  } finally {
    sending = false;
    await refresh();
  }
}

function renderArranging(t: Table): void {
  const area = $("arrange");
  const mine = moves ? t.seats[moves.position] : undefined;
  const deal = t.dealNumber;
  const cards = hands.get(deal);
  const arranging = t.phase === TablePhase.ARRANGING && mine && !mine.confirmed && !mine.timedOut && cards;
  if (t.phase === TablePhase.ANNOUNCING && moves && t.announcingSeat === moves.seat) {
    board = null;
    renderAnnouncing(area, deal);
    return;
  }
  if (!arranging) {
    board = null;
    const kept = moves ? loadKept(moves.seat, deal) : null;
    area.replaceChildren();
    if (mine?.timedOut && (t.phase === TablePhase.ARRANGING || t.phase === TablePhase.REVEALING)) {
      const p = document.createElement("p");
      p.className = "foul";
      p.textContent = "Your seat ran out of time this deal: the server settled it as the rules say (a foul, or the solver's rows).";
      area.append(p);
    } else if (!mine && t.phase === TablePhase.SEATING && t.seats.some((s) => !s.player)) {
      area.append(button("Take a seat", "join", () => void joinHere()));
    }
    if (mine?.confirmed && kept && t.phase === TablePhase.ARRANGING) {
      const p = document.createElement("p");
      p.textContent = "Your rows are committed (only their hash is on the server until the reveal):";
      area.append(p, keptRows(kept));
    }
    return;
  }
  if (!board || boardDeal !== deal) {
    status.boardFor(deal);
    const a = new Arrangement(cards);
    restorePlacements(a, deal);
    boardDeal = deal;
    board = new Board(a, { changed: () => (savePlacements(), updateCommit()) }, strict());
    const tools = document.createElement("div");
    tools.className = "tools";
    const hint = button("Suggest rows", "hint", () => {
      sayOfDeal(deal, "Asking the server's solver for rows…");
      const m = moves;
      const ask = () => (m ? askServer(session.api, m.seat, deal) : Promise.reject(new Error("no seat")));
      void closedHint(ask, cards, strict()).then((h) => {
        if (!board || boardDeal !== deal) return; // the deal moved on meanwhile
        board.arrangement.set(h.rows);
        board.render();
        const select = document.getElementById("natural") as HTMLSelectElement | null;
        if (select && h.natural && [...select.options].some((o) => o.value === h.natural)) select.value = h.natural;
        savePlacements();
        updateCommit();
        sayOfDeal(deal, hintSaid(h));
      });
    });
    const clear = button("Clear", "clear", () => {
      board!.arrangement.clear();
      board!.render();
      savePlacements();
      updateCommit();
    });
    const commit = button("Commit rows", "commit", () => void commitRows());
    tools.append(hint, clear, commit);
    const held = heldNaturals(cards);
    if (held.length) {
      const label = document.createElement("label");
      label.htmlFor = "natural";
      label.textContent = "Your hand is a natural: declare it? ";
      const select = document.createElement("select");
      select.id = "natural";
      for (const n of ["none", ...held]) select.append(new Option(n === "none" ? "no, play the rows" : n.replaceAll("_", " "), n));
      select.value = held.at(-1)!;
      label.append(select);
      tools.append(label);
    }
    area.replaceChildren(board.root, tools);
    updateCommit();
  }
}

/** Your turn to announce (docs/rules.md §2.8): play the rows you committed, or surrender. */
function renderAnnouncing(area: HTMLElement, deal: number): void {
  if (area.querySelector("#announce-play")) return;
  const m = moves!;
  const kept = loadKept(m.seat, deal);
  const p = document.createElement("p");
  p.textContent = `Your turn: play${kept ? " these rows" : ""}, or surrender for ${table?.ruleSet?.surrenderPrice ?? 2} units?`;
  const choose = (surrender: boolean) => () =>
    void once("announce", deal, async () => {
      await m.announce(deal, surrender);
      sayOfDeal(deal, surrender ? "You surrendered this deal." : "You play this deal.");
    }).then(() => refresh());
  const tools = document.createElement("div");
  tools.className = "tools";
  tools.append(button("Play", "announce-play", choose(false)), button("Surrender", "announce-surrender", choose(true)));
  area.replaceChildren(p, ...(kept ? [keptRows(kept)] : []), tools);
}

/** The rows this browser committed, as cards with their hands' names. */
function keptRows(kept: Kept): HTMLElement {
  const box = document.createElement("div");
  box.className = "kept-rows";
  for (const r of ["front", "middle", "back"] as const) {
    const cards = kept.rows[r].map(parseCard);
    const line = document.createElement("div");
    line.className = "result-row";
    const label = document.createElement("span");
    label.className = "row-label";
    label.textContent = r;
    const name = document.createElement("span");
    name.className = "hand-name";
    name.textContent = handName(cards);
    line.append(label, cardRow(cards), name);
    box.append(line);
  }
  return box;
}

function updateCommit(): void {
  const b = document.getElementById("commit") as HTMLButtonElement | null;
  if (b && board) b.disabled = !board.arrangement.complete();
}

function render(): void {
  if (!table) return;
  renderHeader($("header"), table, moves?.seat ?? "");
  renderSeats($("seats"), table, moves?.seat ?? "");
  renderArranging(table);
  const out = $("results");
  out.replaceChildren();
  const mySeat = moves?.seat ?? "";
  const latest = [...results.keys()].sort((a, b) => b - a);
  for (const d of latest) out.append(renderResult(results.get(d)!, mySeat, names));
  if (standings.length) out.prepend(renderStandings(standings, mySeat, names));
}

async function main(): Promise<void> {
  if (!session.identity) {
    location.href = `lobby.html?next=${encodeURIComponent(location.pathname.replace(/^\//, "") + location.search)}`;
    return;
  }
  await session.registerKey();
  const answer = await session.api.tables.getTable({ name: tableName });
  table = answer.table ?? null;
  if (table?.openFaceRuleSet) {
    // open face and Pineapple: their own module (street by street, discards, Fantasyland)
    const { playOpenFace } = await import("./openFaceTable");
    table = null;
    return playOpenFace(session, tableName, say);
  }
  const seat = heldSeat(table, session);
  if (seat) moves = new SeatMoves(session.api, session.identity, seat);
  else say("You hold no seat at this table: watching.");
  render();
  setInterval(() => table && renderHeader($("header"), table, moves?.seat ?? ""), 1000);
  await watchTable(session, tableName, () => lastVersion, take, refresh, say);
}

main().catch((error) => say(`Cannot open the table: ${refusal(error).message || String(error)}`));
