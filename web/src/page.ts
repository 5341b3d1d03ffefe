// The verify page: an export dropped or chosen, verified in the browser, every check and the verdict.
import { type ExportOptions, type ExportReport, verifyExport } from "./export";
import { parseKeyLines, parsePlayerKeys } from "./pins";

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
const main = document.querySelector("main")!;

const MARK = { passed: "✓", failed: "✗", skipped: "·" } as const;

function render(report: ExportReport): void {
  result.replaceChildren();
  const verdict = document.createElement("p");
  verdict.className = `verdict ${report.verdict.split(" ")[0]}`;
  const a = report.anchor;
  const anchorLine = a === undefined ? "" : ` — ${a.checkpoint === "reader" ? "your" : "the export's"} checkpoint of ${a.tree_size} leaves, signed by ${a.signed_by}, ${a.witnessed_by.length ? `witnessed by ${a.witnessed_by.join(", ")}` : "not witnessed"}`;
  verdict.textContent = report.verdict + anchorLine + (report.reasons.length ? ` — ${report.reasons.join("; ")}` : "");
  const list = document.createElement("ul");
  list.className = "checks";
  for (const c of report.checks) {
    const li = document.createElement("li");
    const where = c.deal !== undefined ? `deal ${c.deal} · ` : "";
    const text = c.status === "failed" ? `does not hold: ${c.what}` : c.what;
    li.textContent = `${MARK[c.status]} ${where}${c.name} — ${text}${c.detail ? ` (${c.detail})` : ""}`;
    li.setAttribute("aria-label", `${c.status}: ${where}${c.name}`);
    list.append(li);
  }
  result.append(verdict, list);
}

async function verify(file: Blob): Promise<void> {
  result.textContent = "Verifying…";
  try {
    const keys = [...parseKeyLines(keyInput.value), ...parseKeyLines(keysInput.value)];
    const options: ExportOptions = { playerKeys: parsePlayerKeys(playersInput.value) };
    const checkpoint = checkpointInput.files?.[0];
    if (checkpoint) options.checkpoint = await checkpoint.text();
    const receipts = [...(receiptsInput.files ?? [])];
    if (receipts.length > 0) options.receipts = await Promise.all(receipts.map(async (f) => ({ name: f.name, text: await f.text() })));
    render(await verifyExport(await file.text(), keys, parseKeyLines(witnessInput.value), options));
  } catch (e) {
    result.textContent = `Could not verify: ${e instanceof Error ? e.message : String(e)}`;
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
  keyInput.value = params.get("key") ?? "";
  fetch(exportUrl)
    .then((response) => (response.ok ? response.blob() : Promise.reject(new Error(`${response.status} ${response.statusText}`))))
    .then(verify, (e: Error) => { result.textContent = `Could not fetch ${exportUrl}: ${e.message}`; });
}
