// The verify page: an export dropped or chosen, verified in the browser, every check and the verdict.
import { type ExportOptions, type ExportReport, verifyExport } from "./export";
import { refusal } from "./api/errors";
import { Session } from "./api/session";
import { requestId } from "./api/transport";
import { readLimited } from "./limits";
import { linkKeyWarning, parseKeyLines, parsePlayerKeys } from "./pins";
import { replayExport } from "./replay/steps";
import { mountReplay } from "./replay/view";

const $ = <E extends HTMLElement>(id: string) => document.getElementById(id) as E;
const form = $<HTMLFormElement>("form");
const fileInput = $<HTMLInputElement>("file");
const keyInput = $<HTMLInputElement>("key");
const keysInput = $<HTMLTextAreaElement>("keys");
const witnessInput = $<HTMLTextAreaElement>("witnesses");
const playersInput = $<HTMLTextAreaElement>("players");
const checkpointInput = $<HTMLInputElement>("checkpoint");
const receiptsInput = $<HTMLInputElement>("receipts");
const result = $<HTMLElement>("result");
const replay = $<HTMLElement>("replay");
const main = document.querySelector("main")!;

/** The server key a link (?key=) filled in; a verdict anchored to it unchanged says so. */
let keyFromLink = "";

const MARK = { passed: "✓", failed: "✗", skipped: "·" } as const;

/** audit.md §4.5's three levels, each said in words a player can act on. */
const LEVELS = {
  ANCHORED: ["✓", "Anchored", "every check holds, and every event is in a checkpoint signed by a server key you pinned: this is the log the server published, and it cannot be rewritten without that showing."],
  "INTERNALLY CONSISTENT ONLY": ["≈", "Internally consistent only", "every check this page makes holds, but nothing ties the file to the server's published log:"],
  FAILED: ["✗", "Failed", "the file does not hold together. What does not hold:"],
} as const;

function render(report: ExportReport): void {
  result.replaceChildren();
  const [icon, level, meaning] = LEVELS[report.verdict];
  const verdict = document.createElement("div");
  verdict.className = `verdict ${report.verdict.split(" ")[0]}`;
  verdict.setAttribute("role", "status");
  const head = document.createElement("p");
  head.className = "verdict-level";
  head.textContent = `${icon} ${level}`;
  const what = document.createElement("p");
  const a = report.anchor;
  const anchorLine = a === undefined ? "" : ` Anchor: ${a.checkpoint === "reader" ? "your" : "the export's"} checkpoint of ${a.tree_size} leaves, signed by ${a.signed_by}, ${a.witnessed_by.length ? `witnessed by ${a.witnessed_by.join(", ")}` : "not witnessed"}.`;
  what.textContent = `This deal's verdict: ${meaning}${anchorLine}`;
  verdict.append(head, what);
  const fromLink = linkKeyWarning(report.verdict, keyInput.value, keyFromLink);
  const notes = fromLink === undefined ? report.reasons : [...report.reasons, fromLink];
  if (notes.length > 0) {
    const reasons = document.createElement("ul");
    for (const r of report.verdict === "INTERNALLY CONSISTENT ONLY" && keyInput.value.trim() === "" && !notes.some((x) => x.includes("key"))
      ? [...notes, "no server key pinned: paste the key the server publishes (sapsam keys show) to anchor the file"]
      : notes) {
      const li = document.createElement("li");
      li.textContent = r;
      reasons.append(li);
    }
    verdict.append(reasons);
  }
  const details = document.createElement("details");
  details.open = report.verdict === "FAILED";
  const summary = document.createElement("summary");
  const count = (status: string) => report.checks.filter((c) => c.status === status).length;
  summary.textContent = `Every check: ${count("passed")} passed, ${count("failed")} failed, ${count("skipped")} not made`;
  const list = document.createElement("ul");
  list.className = "checks";
  for (const c of report.checks) {
    const li = document.createElement("li");
    li.className = c.status;
    const where = c.deal !== undefined ? `deal ${c.deal} · ` : "";
    const text = c.status === "failed" ? `does not hold: ${c.what}` : c.what;
    li.textContent = `${MARK[c.status]} ${where}${c.name} — ${text}${c.detail ? ` (${c.detail})` : ""}`;
    li.setAttribute("aria-label", `${c.status}: ${where}${c.name}`);
    list.append(li);
  }
  details.append(summary, list);
  result.append(verdict, details);
}

async function verify(file: Blob): Promise<void> {
  result.textContent = "Verifying…";
  try {
    const keys = [...parseKeyLines(keyInput.value), ...parseKeyLines(keysInput.value)];
    const options: ExportOptions = { playerKeys: parsePlayerKeys(playersInput.value) };
    const checkpoint = checkpointInput.files?.[0];
    if (checkpoint) options.checkpoint = await readLimited(checkpoint);
    const receipts = [...(receiptsInput.files ?? [])];
    if (receipts.length > 0) options.receipts = await Promise.all(receipts.map(async (f) => ({ name: f.name, text: await readLimited(f) })));
    const text = await readLimited(file);
    const report = await verifyExport(text, keys, parseKeyLines(witnessInput.value), options);
    render(report);
    await showReplay(text, failedEvents(report));
  } catch (e) {
    result.textContent = `Could not verify: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/** The events the failed checks name ("version N" in their detail), each with what does not hold. */
function failedEvents(report: ExportReport): Map<number, string> {
  const marks = new Map<number, string>();
  for (const c of report.checks) {
    const version = c.status === "failed" ? /version (\d+)/.exec(c.detail ?? "")?.[1] : undefined;
    if (version !== undefined && !marks.has(Number(version))) marks.set(Number(version), `${c.name} — ${c.what} (${c.detail})`);
  }
  return marks;
}

/** The replay of every deal in the file, step by step, below the verdict. */
async function showReplay(text: string, failures: Map<number, string>): Promise<void> {
  try {
    const deals = await replayExport(text);
    replay.hidden = false;
    const heading = document.createElement("h2");
    heading.textContent = "Replay";
    const body = document.createElement("div");
    replay.replaceChildren(heading, body);
    mountReplay(body, deals, failures);
  } catch (e) {
    replay.hidden = false;
    replay.textContent = `Could not replay: ${e instanceof Error ? e.message : String(e)}`;
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const file = fileInput.files?.[0];
  if (file) void verify(file);
  else result.textContent = "Choose an export file first.";
});
main.addEventListener("dragover", (event) => { event.preventDefault(); main.classList.add("dragging"); });
main.addEventListener("dragleave", () => main.classList.remove("dragging"));
main.addEventListener("drop", (event) => {
  event.preventDefault();
  main.classList.remove("dragging");
  const file = event.dataTransfer?.files[0];
  if (file) void verify(file);
});

// ?export=URL[&key=VKEY]: fetch an export (same origin, or one that allows it) and verify it at once.
const params = new URLSearchParams(location.search);
const exportUrl = params.get("export");
if (exportUrl !== null) {
  keyInput.value = keyFromLink = params.get("key") ?? "";
  fetch(exportUrl)
    .then((response) => (response.ok ? response.blob() : Promise.reject(new Error(`${response.status} ${response.statusText}`))))
    .then(verify, (e: Error) => { result.textContent = `Could not fetch ${exportUrl}: ${e.message}`; });
}

// ?deal=tables/{uuid}/deals/{n} (from "Your deals"): exported with this browser's player token
// (ExportDeal), offered as a file to keep, then verified and replayed like a dropped file.
const dealName = params.get("deal");
if (dealName !== null) {
  keyInput.value = keyFromLink = params.get("key") ?? "";
  result.textContent = `Exporting ${dealName}…`;
  const session = new Session();
  session.api.audit.exportDeal({ requestId: requestId(), name: dealName })
    .then((answer) => {
      const file = new Blob([answer.export], { type: "application/jsonl" });
      const keep = document.createElement("a");
      keep.href = URL.createObjectURL(file);
      keep.download = `${dealName.replace(/^tables\//, "").replaceAll("/", "-")}.jsonl`;
      keep.textContent = `Download this deal's export (${answer.eventCount} events) to keep it`;
      keep.className = "keep";
      form.after(keep);
      return verify(file);
    }, (e: unknown) => {
      const r = refusal(e);
      result.textContent = `Could not export ${dealName}: ${r.reason || r.code} ${r.message}`;
    });
}
