// The table page at an open-face table (issues #18, #19, #21): chosen by table/page.ts when the
// table has an open-face rule set. It follows the table with WatchTable and GetTable's public
// `open_face` view and makes every move that falls to your seat as the Python SDK's OpenFaceBot
// does (draw the dealer, start the deals, cut, open Pineapple discards and Fantasyland hands),
// while you place each street's cards (tap a card, then a row; or focus it, ← → between cards,
// and press 1/2/3, x to discard; "Suggest" asks the server's solver), set a Fantasyland hand, and see every seat's rows
// fill, the scores and the totals.
import { arrowBetweenCards, cardLabel, cardShort, cardSvg } from "../ui/cards";
import { parseCard } from "../cards";
import { refusal } from "../api/errors";
import { OpenFaceMoves, loadSetting } from "../api/openFaceMoves";
import { pruneKept } from "../api/seat";
import type { Session } from "../api/session";
import { requestId } from "../api/transport";
import { OpenFaceDealPhase } from "../gen/sapsam/v1/open_face_pb";
import type { OpenFaceScore, TableEvent } from "../gen/sapsam/v1/table_event_pb";
import { type Standing, type Table, TablePhase } from "../gen/sapsam/v1/table_pb";
import { partialName } from "./arrange";
import { CAPACITY, ROWS, type Spot, StreetPlan, deadRows, ofcRules, spotForKey, streetDiscards, toPlace } from "./openFaceStreet";
import { renderOfcHeader, renderOfcScore, renderOfcSeats, rowsOf } from "./openFaceView";
import { $, button, dealOf, heldSeat, onceEach, seatNamer, tableReader, takeSeat, watchTable } from "./play";
import { renderStandings } from "./results";
import { askServer } from "./suggestion";

const NOTHING_TO_DO = new Set(["WRONG_PHASE", "WRONG_DEAL", "WRONG_STREET", "NOT_YOUR_TURN", "ALREADY_PLACED", "ALREADY_COMMITTED", "ALREADY_REVEALED", "SEAT_TIMED_OUT", "SERIES_COMPLETE"]);

export async function playOpenFace(session: Session, tableName: string, say: (text: string) => void): Promise<void> {
  let table: Table | null = null;
  let moves: OpenFaceMoves | null = null;
  let lastVersion = 0n;
  const scores = new Map<number, OpenFaceScore>();
  let standings: Standing[] = [];
  let plan: StreetPlan | null = null;
  let planKey = "";
  let picked: number | null = null;
  let sending = false;

  const names = seatNamer(() => table);
  const rules = () => ofcRules(table!.openFaceRuleSet!);

  function take(event: TableEvent): void {
    if (event.version > lastVersion) lastVersion = event.version;
    const p = event.payload;
    if (p.case === "dealScored" && p.value.openFace) {
      scores.set(dealOf(p.value.openFace.deal), p.value.openFace);
      if (moves) pruneKept(moves.seat, dealOf(p.value.openFace.deal)); // opened and published: not needed here again
    } else if (p.case === "dealVoided" && moves) pruneKept(moves.seat, dealOf(p.value.deal));
    else if (p.case === "seriesCompleted") standings = p.value.standings;
  }

  const refresh = tableReader(session, tableName, async (t) => {
    table = t;
    if (t) {
      render();
      await act(t);
    }
  });
  const once = onceEach(NOTHING_TO_DO, say, refresh);

  /** The moves the table expects of your seat (the placing and the setting are yours). */
  async function act(t: Table): Promise<void> {
    if (!moves) return;
    const m = moves;
    const api = session.api.tables;
    const deal = t.dealNumber;
    if (t.phase === TablePhase.AWAITING_DEALER && m.position === 0) {
      await once("dealer", () => api.chooseDealer({ requestId: requestId(), table: tableName }));
    } else if (t.phase === TablePhase.BETWEEN_DEALS && (m.position === 0 || t.dealerSeat === m.seat)) {
      await once(`start ${deal + 1}`, () => api.startDeal({ requestId: requestId(), table: tableName }));
    } else if (t.phase === TablePhase.AWAITING_CUT && t.cutterSeat === m.seat) {
      await once(`cut ${deal}`, () => m.cut());
    } else if (t.phase === TablePhase.PLAYING && t.openFace) {
      const d = t.openFace;
      const me = d.seats[m.position];
      if (!me) return;
      const n = d.dealNumber;
      if (d.phase === OpenFaceDealPhase.DISCARDS && me.discardsMade && !me.discards.length) {
        await once(`discards ${n}`, async () => {
          if (await m.revealDiscards(n)) say("Your discards are opened.");
          else say("This browser does not hold this deal's discards: the server opens them at its deadline.");
        });
      } else if (me.fantasyland && me.committed && d.phase === OpenFaceDealPhase.FANTASYLAND && !me.revealed) {
        await once(`fantasyland-reveal ${n}`, async () => {
          if (!(await m.revealFantasyland(n))) say("This browser does not hold this deal's Fantasyland setting.");
        });
      } else if (me.fantasyland && !me.committed && loadSetting(m.seat, n)) {
        await once(`fantasyland-commit ${n}`, () => m.commitFantasyland(n, { front: [], middle: [], back: [] }));
      } else if ((me.fantasyland && !me.committed) || (d.phase === OpenFaceDealPhase.PLACING && d.turnSeat === m.seat)) {
        const key = me.fantasyland ? `fl ${n}` : `${n} ${d.street ?? 0}`;
        if (planKey === key) return;
        await once(`hand ${key}`, async () => {
          const answer = await api.getMyHand({ seat: m.seat });
          const view = answer.openFace ?? d;
          const mine = view.seats[m.position];
          const board = rowsOf(mine?.rows);
          const dealt = toPlace(answer.cards.map(parseCard), board, answer.myDiscards.map(parseCard));
          const discards = mine?.fantasyland ? Math.max(0, dealt.length - 13) : streetDiscards(view.street ?? 0, rules().street_discards as number);
          plan = new StreetPlan(board, dealt, discards);
          planKey = key;
          picked = null;
          restorePlan();
          renderPlan();
        });
      }
    }
  }

  const storageKey = () => `sapsam.placing ${moves?.seat} ${planKey}`;
  function savePlan(): void {
    if (plan) sessionStorage.setItem(storageKey(), JSON.stringify(plan.dealt.map((c) => plan!.spotOf(c) ?? "")));
  }
  function restorePlan(): void {
    const text = sessionStorage.getItem(storageKey());
    if (!plan || !text) return;
    const spots = JSON.parse(text) as string[];
    plan.dealt.forEach((c, i) => spots[i] && plan!.put(c, spots[i] as Spot));
  }

  async function send(): Promise<void> {
    if (!plan || !moves || !table?.openFace || sending || !plan.complete()) return;
    sending = true;
    const p = plan;
    const fl = planKey.startsWith("fl ");
    const n = table.openFace.dealNumber;
    try {
      if (fl) {
        say("Setting your Fantasyland hand face down (only its hash leaves this browser)…");
        await moves.commitFantasyland(n, p.placement());
        say("Your Fantasyland hand is set: it opens once every other hand is complete.");
      } else {
        const street = table.openFace.street ?? 0;
        say(p.discarded().length ? "Placing your cards (your discard sent as a hash only)…" : "Placing your cards…");
        await moves.place(n, street, p.placement(), p.discarded());
        say(`Street ${street + 1} placed.`);
      }
      sessionStorage.removeItem(storageKey());
      plan = null;
      $("arrange").replaceChildren();
    } catch (error) {
      const r = refusal(error);
      say(`Not placed: ${r.reason || r.code} ${r.message}`);
    } finally {
      sending = false;
      await refresh();
    }
  }

  /** The server's solver's suggestion (GetSuggestion) put on the plan, to change or send. */
  async function suggest(): Promise<void> {
    if (!plan || !moves || !table?.openFace) return;
    const p = plan;
    const key = planKey;
    say("Asking the server's solver…");
    try {
      const s = await askServer(session.api, moves.seat, table.openFace.dealNumber);
      if (plan !== p || planKey !== key) return; // the street moved on meanwhile
      p.clear();
      for (const row of ROWS) for (const c of s.rows[row]) p.put(c, row);
      for (const c of s.discards) p.put(c, "discard");
      savePlan();
      renderPlan();
      say(`The server's solver suggests this ${key.startsWith("fl ") ? "setting" : "placement"}: change any card you like before sending it.`);
    } catch (error) {
      const r = refusal(error);
      say(`No suggestion from the server (${r.reason || r.code}): place the cards yourself, or Fill in order.`);
    }
  }

  function put(card: number, spot: Spot | undefined): void {
    if (!plan) return;
    if (spot === undefined) plan.take(card);
    else if (!plan.put(card, spot)) return say(`The ${spot === "discard" ? "discard" : `${spot} row`} has no room left.`);
    picked = null;
    savePlan();
    renderPlan();
  }

  function cardButton(card: number, spot: Spot | undefined): HTMLButtonElement {
    const b = document.createElement("button");
    b.type = "button";
    b.className = `card-button${picked === card ? " picked" : ""}`;
    b.dataset.card = cardShort(card);
    b.setAttribute("aria-pressed", String(picked === card));
    b.setAttribute("aria-label", `${cardLabel(card)}${spot ? `, ${spot === "discard" ? "discarded" : `in the ${spot} row`}: press to take it back` : ": press 1, 2, 3 for the front, middle or back row, x to discard, or press to pick it; arrows move between cards"}`);
    b.append(cardSvg(card));
    b.addEventListener("click", () => {
      if (spot) return put(card, undefined);
      picked = picked === card ? null : card;
      renderPlan();
      document.querySelector<HTMLButtonElement>(`#arrange button[data-card="${cardShort(card)}"]`)?.focus();
    });
    b.addEventListener("keydown", (e) => {
      // ← → move between the cards (the street's and those placed this street)
      if (arrowBetweenCards(e, [...document.querySelectorAll<HTMLButtonElement>("#arrange button.card-button")], b)) return;
      const to = spotForKey(e.key);
      if (!spot && to && plan && plan.room(to) > 0) {
        e.preventDefault();
        put(card, to);
        document.querySelector<HTMLButtonElement>("#arrange .hand button.card-button")?.focus();
      }
    });
    return b;
  }

  function renderPlan(): void {
    const area = $("arrange");
    if (!plan) return;
    const p = plan;
    const fl = planKey.startsWith("fl ");
    const after = p.after();
    const head = document.createElement("p");
    head.textContent = fl
      ? `Fantasyland: set all ${p.dealt.length} cards at once${p.discards ? ` (${p.discards} left off)` : ""}.`
      : `Your street: place ${p.dealt.length - p.discards}${p.discards ? `, discard ${p.discards} (face down: the others see only that you discarded)` : ""}.`;
    const zones = ROWS.map((row) => {
      const zone = document.createElement("div");
      zone.className = `row-zone ${row}`;
      zone.setAttribute("role", "group");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "row-head";
      b.dataset.row = row;
      const cards = after[row];
      b.textContent = `${row[0]!.toUpperCase()}${row.slice(1)} (${ROWS.indexOf(row) + 1}): ${cards.length}/${CAPACITY[row]}${cards.length ? `, ${partialName(cards)}` : ""}`;
      b.disabled = picked === null || p.room(row) <= 0;
      b.addEventListener("click", () => picked !== null && put(picked, row));
      const line = document.createElement("div");
      line.className = "row-cards";
      for (const c of p.board[row]) {
        const old = cardSvg(c);
        old.classList.add("placed-before");
        line.append(old);
      }
      for (const c of p.placement()[row]) line.append(cardButton(c, row));
      zone.append(b, line);
      return zone;
    });
    const parts: HTMLElement[] = [head, ...zones];
    if (p.discards) {
      const zone = document.createElement("div");
      zone.className = "row-zone discard";
      const b = document.createElement("button");
      b.type = "button";
      b.className = "row-head";
      b.dataset.row = "discard";
      b.textContent = `Discard (x): ${p.discarded().length}/${p.discards}`;
      b.disabled = picked === null || p.room("discard") <= 0;
      b.addEventListener("click", () => picked !== null && put(picked, "discard"));
      const line = document.createElement("div");
      line.className = "row-cards";
      for (const c of p.discarded()) line.append(cardButton(c, "discard"));
      zone.append(b, line);
      parts.push(zone);
    }
    const hand = document.createElement("div");
    hand.className = "hand";
    hand.setAttribute("role", "group");
    hand.setAttribute("aria-label", `your cards to place, ${p.unplaced().length}`);
    for (const c of p.unplaced()) hand.append(cardButton(c, undefined));
    const warn = document.createElement("p");
    warn.className = "dead-warning foul-warning";
    warn.setAttribute("role", "status");
    warn.textContent = deadRows(after) ? "Dead hand: these rows can no longer end in order (it scores as a foul)." : "";
    const tools = document.createElement("div");
    tools.className = "tools";
    const hint = button("Suggest", "hint", () => void suggest());
    const fill = button("Fill in order", "fill", () => (p.fill(), savePlan(), renderPlan()));
    const clear = button("Clear", "clear", () => (p.clear(), savePlan(), renderPlan()));
    const go = button(fl ? "Set hand" : "Place cards", "place", () => void send());
    go.disabled = !p.complete();
    tools.append(hint, fill, clear, go);
    area.replaceChildren(...parts, hand, warn, tools);
  }

  async function joinHere(): Promise<void> {
    const seat = await takeSeat(session, tableName, say);
    if (session.identity && seat) moves = new OpenFaceMoves(session.api, session.identity, seat);
    await refresh();
  }

  function render(): void {
    if (!table) return;
    const t = table;
    const mySeat = moves?.seat ?? "";
    renderOfcHeader($("header"), t, mySeat);
    renderOfcSeats($("seats"), t, mySeat, names);
    const d = t.openFace;
    const stillMine = plan && d && t.phase === TablePhase.PLAYING && (planKey.startsWith("fl ") ? planKey === `fl ${d.dealNumber}` && !d.seats[moves!.position]?.committed : planKey === `${d.dealNumber} ${d.street ?? 0}` && d.turnSeat === mySeat);
    if (plan && !stillMine) {
      plan = null;
      $("arrange").replaceChildren();
    }
    if (!moves && t.phase === TablePhase.SEATING && t.seats.some((s) => !s.player) && !document.getElementById("join")) {
      $("arrange").replaceChildren(button("Take a seat", "join", () => void joinHere()));
    }
    const out = $("results");
    out.replaceChildren();
    for (const n of [...scores.keys()].sort((a, b) => b - a)) out.append(renderOfcScore(n, scores.get(n)!, rules(), mySeat, names));
    if (standings.length) out.prepend(renderStandings(standings, mySeat, names));
  }

  table = (await session.api.tables.getTable({ name: tableName })).table ?? null;
  const seat = heldSeat(table, session);
  if (seat && session.identity) moves = new OpenFaceMoves(session.api, session.identity, seat);
  else say("You hold no seat at this table: watching.");
  render();
  setInterval(() => table && renderOfcHeader($("header"), table, moves?.seat ?? ""), 1000);
  await watchTable(session, tableName, () => lastVersion, take, refresh, say);
}
