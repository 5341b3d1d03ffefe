// The lobby (lobby.html): register (a token and an Ed25519 key kept in this browser), list and join
// tables, create one with a preset, and register for tournaments.
import { refusal } from "../api/errors";
import { Session } from "../api/session";
import { requestId } from "../api/transport";
import { TableStatus } from "../gen/sapsam/v1/table_pb";
import type { Table } from "../gen/sapsam/v1/table_pb";
import { TournamentStatus } from "../gen/sapsam/v1/tournament_pb";
import { pruneKeptTables } from "../api/seat";

const $ = <E extends HTMLElement>(id: string) => document.getElementById(id) as E;
const session = new Session();
const next = new URLSearchParams(location.search).get("next");

function say(text: string): void {
  $("status").textContent = text;
}

function failed(what: string, error: unknown): void {
  const r = refusal(error);
  say(`${what}: ${r.reason || r.code}${r.message ? ` (${r.message})` : ""}`);
}

const tablePage = (table: string): string => `table.html?table=${encodeURIComponent(table)}`;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text = "", attrs: Record<string, string> = {}): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text) e.textContent = text;
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

function renderWho(): void {
  const who = $("who");
  const form = $<HTMLFormElement>("register");
  const identity = session.identity;
  form.hidden = identity !== null;
  $("play").hidden = identity === null;
  who.replaceChildren();
  if (identity) {
    const out = el("button", "Sign out", { type: "button" });
    out.addEventListener("click", () => {
      if (!confirm("Sign out? This browser forgets your token and key: you cannot come back as this player.")) return;
      session.signOut();
      renderWho();
    });
    who.append(el("span", `Playing as ${identity.displayName} (${identity.player}). `), out);
  }
}

async function join(table: string, seat?: number): Promise<void> {
  try {
    await session.api.tables.joinTable({ requestId: requestId(), table, seat });
  } catch (error) {
    if (refusal(error).reason !== "ALREADY_SEATED") return failed("Not joined", error);
  }
  location.href = tablePage(table);
}

function tableLine(t: Table): HTMLLIElement {
  const li = el("li");
  const taken = t.seats.filter((s) => s.player).length;
  const mine = session.identity && t.seats.some((s) => s.player === session.identity!.player);
  const series = t.ruleSet?.seriesLength || t.openFaceRuleSet?.seriesLength;
  li.append(el("span", `${t.ruleSet?.name || t.openFaceRuleSet?.name || "?"} · ${taken}/${t.seatCount} seated${series ? ` · ${series} deal${series === 1 ? "" : "s"}` : ""} · ${t.status === TableStatus.OPEN ? "open" : "playing"} `));
  if (mine) li.append(el("a", "Go to your seat", { href: tablePage(t.name) }));
  else if (taken < t.seatCount && t.status === TableStatus.OPEN) {
    const b = el("button", "Join", { type: "button", "aria-label": `join the ${t.ruleSet?.name ?? t.openFaceRuleSet?.name ?? ""} table, ${taken} of ${t.seatCount} seated` });
    b.addEventListener("click", () => void join(t.name));
    li.append(b);
  } else li.append(el("a", "Watch", { href: tablePage(t.name) }));
  return li;
}

async function loadTables(): Promise<void> {
  const list = $("tables");
  try {
    const [open, playing] = await Promise.all([
      session.api.tables.listTables({ pageSize: 50, status: TableStatus.OPEN }),
      session.api.tables.listTables({ pageSize: 50, status: TableStatus.PLAYING }),
    ]);
    const tables = [...open.tables, ...playing.tables];
    // redrawn only when something changed, so a focused button is not pulled from under the keyboard
    const seen = JSON.stringify(tables.map((t) => [t.name, t.status, t.seats.map((s) => s.player)]));
    if (seen === list.dataset.seen) return;
    list.dataset.seen = seen;
    list.replaceChildren(...tables.map(tableLine));
    if (!tables.length) list.replaceChildren(el("li", "No open tables: create one."));
  } catch (error) {
    failed("Cannot list the tables", error);
  }
}

// The presets as listed (an open-face set has as many deals as seats: no series length is sent).
let presets: { name: string; openFaceRuleSet?: unknown }[] = [];

async function loadPresets(): Promise<void> {
  const select = $<HTMLSelectElement>("preset");
  const answer = await session.api.tables.listRuleSets({ pageSize: 100 });
  // The table page plays every preset: the closed game's, open face's and Pineapple's.
  presets = answer.presets;
  select.replaceChildren(...presets.map((p) => el("option", `${p.name.replaceAll("_", " ")}${p.openFaceRuleSet ? " (open face)" : ""}`, { value: p.name })));
  const describe = () => {
    const p = answer.presets.find((x) => x.name === select.value);
    $("preset-description").textContent = `${p?.description ?? ""}${p?.openFaceRuleSet ? " (Open face: a set has as many deals as seats.)" : ""}`;
  };
  select.addEventListener("change", describe);
  describe();
}

async function loadTournaments(): Promise<void> {
  const list = $("tournaments");
  try {
    const answer = await session.api.tournaments.listTournaments({ pageSize: 50, status: TournamentStatus.REGISTRATION });
    list.replaceChildren(
      ...answer.tournaments.map((t) => {
        const li = el("li", `${t.displayName || t.name} · ${t.players.length}${t.maxEntrants ? `/${t.maxEntrants}` : ""} registered · ${t.rounds} round${t.rounds === 1 ? "" : "s"} of ${t.dealsPerRound} deal${t.dealsPerRound === 1 ? "" : "s"} `);
        const registered = session.identity && t.players.includes(session.identity.player);
        if (registered) li.append(el("span", "(you are registered)"));
        else {
          const b = el("button", "Register", { type: "button", "aria-label": `register for ${t.displayName || t.name}` });
          b.addEventListener("click", async () => {
            try {
              await session.api.tournaments.registerTournamentPlayer({ requestId: requestId(), tournament: t.name });
              say(`Registered for ${t.displayName || t.name}: your seat comes when it starts.`);
              await loadTournaments();
            } catch (error) {
              failed("Not registered", error);
            }
          });
          li.append(b);
        }
        return li;
      }),
    );
    if (!answer.tournaments.length) list.replaceChildren(el("li", "No tournament is taking registrations."));
  } catch (error) {
    failed("Cannot list the tournaments", error);
  }
}

$<HTMLFormElement>("register").addEventListener("submit", async (e) => {
  e.preventDefault();
  const name = $<HTMLInputElement>("name").value.trim();
  if (!name) return;
  try {
    say("Registering…");
    await session.register(name);
    say(`Welcome, ${name}. Your token and signing key are kept in this browser only.`);
    if (next) location.href = next;
    renderWho();
    await Promise.all([loadTables(), loadTournaments()]);
  } catch (error) {
    failed("Not registered", error);
  }
});

$<HTMLFormElement>("create").addEventListener("submit", async (e) => {
  e.preventDefault();
  const preset = $<HTMLSelectElement>("preset").value;
  const openFace = Boolean(presets.find((p) => p.name === preset)?.openFaceRuleSet);
  const seriesLength = openFace ? 0 : Number($<HTMLInputElement>("series").value);
  try {
    const answer = await session.api.tables.createTable({
      requestId: requestId(),
      rules: { case: "ruleSetPreset", value: preset },
      seatCount: Number($<HTMLSelectElement>("seats").value),
      seriesLength: seriesLength > 0 ? seriesLength : undefined,
    });
    await join(answer.table!.name, 0);
  } catch (error) {
    failed("Not created", error);
  }
});

$("refresh").addEventListener("click", () => void Promise.all([loadTables(), loadTournaments()]));

renderWho();
// what this browser kept for deals now over at tables it may not open again (the table page
// forgets a deal's as it ends; this catches the tables left before the end)
if (session.identity) void pruneKeptTables(session.api).catch(() => undefined);
// the tables' list follows the server every few seconds (seats taken, tables opened and started)
const LIST_EVERY_MS = 4000;
setInterval(() => document.visibilityState === "visible" && void loadTables(), LIST_EVERY_MS);
void loadPresets().catch((error) => failed("Cannot list the rule sets", error));
void loadTables();
void loadTournaments();
