// Your deals (history.html): the scored deals of the player this browser plays as (ListMyDeals, the
// identity the lobby registered, src/api/session.ts), newest first; each opens on the verify page
// (index.html?deal=…), which exports it with your token (ExportDeal), verifies it and replays it.
import { refusal } from "../api/errors";
import { Session } from "../api/session";
import type { PlayedDeal } from "../gen/sapsam/v1/table_service_pb";

const $ = (id: string) => document.getElementById(id)!;
const session = new Session();
const status = $("status");
const body = document.querySelector("#deals tbody")!;
const more = $("more") as HTMLButtonElement;
let pageToken = "";

const cell = (text: string) => {
  const td = document.createElement("td");
  td.textContent = text;
  return td;
};
const signed = (x: bigint) => `${x > 0n ? "+" : ""}${x}`;

function row(d: PlayedDeal): HTMLTableRowElement {
  const tr = document.createElement("tr");
  const seat = /\/seats\/(\d+)$/.exec(d.seat)?.[1] ?? "?";
  const open = document.createElement("a");
  open.href = `index.html?deal=${encodeURIComponent(d.deal)}`;
  open.textContent = "Verify and replay";
  open.setAttribute("aria-label", `Verify and replay deal ${d.dealNumber} of table ${d.deal.split("/")[1]?.slice(0, 8)}`);
  const action = document.createElement("td");
  action.append(open);
  // When it was scored goes under the deal, not in a column of its own: six columns do not fit a
  // phone's width (e2e/replay.spec.ts checks the page at 390 px).
  const dealCell = cell(`${d.dealNumber} · table ${d.deal.split("/")[1]?.slice(0, 8)}…`);
  if (d.scoreTime) {
    const scored = new Date(Number(d.scoreTime.seconds) * 1000);
    const when = document.createElement("time");
    when.className = "when";
    when.dateTime = scored.toISOString();
    when.textContent = scored.toLocaleString();
    dealCell.append(when);
  }
  tr.append(
    dealCell,
    cell(`${d.ruleSetName}, ${d.seatCount} seats`),
    cell(`seat ${seat}: ${signed(d.delta)}${d.fouled ? " (foul)" : ""}`),
    cell(signed(d.seriesTotal)),
    action,
  );
  return tr;
}

async function load(): Promise<void> {
  try {
    const answer = await session.api.tables.listMyDeals({ pageSize: 50, pageToken });
    body.append(...answer.deals.map(row));
    pageToken = answer.nextPageToken;
    more.hidden = pageToken === "";
    ($("deals") as HTMLTableElement).hidden = body.children.length === 0;
    status.textContent = body.children.length === 0 ? "No scored deal yet: play one from the lobby." : "";
  } catch (e) {
    const r = refusal(e);
    status.textContent = `Could not list your deals: ${r.reason || r.code} ${r.message}`;
  }
}

if (session.identity === null) {
  status.innerHTML = 'This browser plays as nobody yet: register in the <a href="lobby.html">lobby</a>, or <a href="index.html">verify an export file</a>.';
} else {
  $("who").textContent = `Playing as ${session.identity.displayName} (${session.identity.player}).`;
  more.addEventListener("click", () => void load());
  void load();
}
