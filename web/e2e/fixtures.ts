// What the browser specs share: the addresses global-setup.ts started, bots (`sapsam-bot`) to play
// against, Connect calls from the test itself, and screenshots kept as artefacts.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, openSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Locator, type Page, test as base, expect } from "@playwright/test";
import { sapsamBin } from "./global-setup";

export { expect };

/** Where screenshots go (gitignored): web/e2e-artifacts/. */
export const ARTEFACTS = resolve(import.meta.dirname, "..", "e2e-artifacts");

export interface Sapsam {
  /** The page's origin (`vite preview` of web/dist/, which passes /sapsam.v1.* to the server). */
  page: string;
  /** The server's gRPC address (host:port), for bots. */
  grpc: string;
  /** The server's Connect address (host:port). */
  http: string;
  /** A folder for this run's files (logs, bot state). */
  scratch: string;
  /** The server's operator token (for calls only the operator may make: CreateTournament, ...). */
  operatorToken: string;
}

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the specs through playwright.config.ts (make web-test)`);
  return value;
}

export const test = base.extend<object, { sapsam: Sapsam }>({
  sapsam: [
    async ({}, use) => {
      await use({
        page: env("SAPSAM_E2E_PAGE"),
        grpc: env("SAPSAM_E2E_GRPC"),
        http: env("SAPSAM_E2E_HTTP"),
        scratch: env("SAPSAM_E2E_SCRATCH"),
        operatorToken: env("SAPSAM_E2E_OPERATOR_TOKEN"),
      });
    },
    { scope: "worker" },
  ],
});

/** A Connect call in JSON from the test (not the page), as `curl` would make it. */
export async function call<T = Record<string, unknown>>(
  sapsam: Sapsam,
  method: string,
  body: Record<string, unknown>,
  token?: string,
): Promise<T> {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const answer = await fetch(`http://${sapsam.http}/sapsam.v1.${method}`, { method: "POST", headers, body: JSON.stringify(body) });
  const json = (await answer.json()) as T;
  if (!answer.ok) throw new Error(`${method}: ${answer.status} ${JSON.stringify(json)}`);
  return json;
}

export interface Bots {
  process: ChildProcess;
  /** The bots' exit code, once they stopped (0: the series was played to the end). */
  exited: Promise<number | null>;
  log: string;
}

/** `count` bots (one `sapsam-bot` process, a player a seat) joining `table` over gRPC. */
export function startBots(sapsam: Sapsam, table: string, count: number, strategy = "random"): Bots {
  const log = join(sapsam.scratch, `bots-${table.replace(/\W/g, "_")}.log`);
  const out = openSync(log, "a");
  const args = ["--server", sapsam.grpc, "--table", table, "--seats-here", String(count), "--strategy", strategy, "--no-state", "--name", "bot"];
  const child = spawn(sapsamBin("sapsam-bot"), args, { stdio: ["ignore", out, out] });
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  return { process: child, exited, log };
}

export function stopBots(bots: Bots): void {
  if (bots.process.exitCode === null) bots.process.kill("SIGTERM");
}

/** A full-page screenshot saved as web/e2e-artifacts/<name>.png. */
export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTEFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTEFACTS, `${name}.png`), fullPage: true });
}

export interface BrowserPlayer {
  player: string;
  token: string;
  publicKey: string;
}

/** The player the page registered (kept in its localStorage: name, token, public key in hex). */
export async function browserPlayer(page: Page): Promise<BrowserPlayer> {
  const identity = await page.evaluate(() => {
    const key = Object.keys(localStorage).find((k) => k.startsWith("sapsam.identity "));
    return key ? localStorage.getItem(key) : null;
  });
  if (!identity) throw new Error("the page holds no identity");
  return JSON.parse(identity) as BrowserPlayer;
}

interface Check {
  name: string;
  status: string;
  dealNumber?: number;
  detail?: string;
}

/**
 * A deal exported with the player's token (ExportDeal) and verified as sent by the server's own
 * verifier (VerifyDeal), the server's key and the page's player's key pinned (`pinned_player_key`):
 * what the browser committed, signed and revealed must hold. The verdict, the failed checks, all;
 * and the export and the server key, for the page's own verifier to judge the same file.
 */
export async function verifyDeal(
  sapsam: Sapsam,
  deal: string,
  who: BrowserPlayer,
): Promise<{ ok: boolean; verdict: string; failed: Check[]; checks: Check[]; exportText: string; serverKey: string }> {
  const exported = await call<{ export: string }>(sapsam, "AuditService/ExportDeal", { requestId: crypto.randomUUID(), name: deal }, who.token);
  const publicKey = Buffer.from(who.publicKey, "hex").toString("base64");
  const server = await call<{ verifierKey: string }>(sapsam, "TransparencyService/GetServerKey", {}, who.token);
  const verified = await call<{ ok?: boolean; verdict?: string; checks?: Check[] }>(
    sapsam,
    "AuditService/VerifyDeal",
    {
      requestId: crypto.randomUUID(),
      export: exported.export,
      serverKeys: [server.verifierKey],
      playerKeys: [{ player: who.player, publicKeys: [publicKey] }],
    },
    who.token,
  );
  const checks = verified.checks ?? [];
  const failed = checks.filter((c) => c.status === "CHECK_STATUS_FAILED");
  return { ok: verified.ok ?? false, verdict: verified.verdict ?? "", failed, checks, exportText: exported.export, serverKey: server.verifierKey };
}

/** The page fits its viewport's width (phone width: nothing to scroll sideways). */
export async function expectFitsWidth(page: Page): Promise<void> {
  const [scroll, width] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  expect(scroll, "the page is wider than the screen").toBeLessThanOrEqual(width);
}

/** A screenshot of one element, saved as web/e2e-artifacts/<name>.png. */
export async function shotOf(locator: Locator, name: string): Promise<void> {
  mkdirSync(ARTEFACTS, { recursive: true });
  await locator.screenshot({ path: join(ARTEFACTS, `${name}.png`) });
}

/** Tab until the focused element matches `selector` (at most 80 presses): the keyboard's way in. */
export async function tabTo(page: Page, selector: string): Promise<void> {
  for (let i = 0; i < 80; i++) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
    await page.keyboard.press("Tab");
  }
  throw new Error(`Tab never reached ${selector}`);
}

/** The focused card button's card as shown (`data-card`, ui/cards.ts's cardShort). */
export const focusedCard = (page: Page): Promise<string | undefined> =>
  page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.card);

/** → until the card shown as `name` has the focus (the table pages' arrows move between cards). */
export async function arrowTo(page: Page, name: string): Promise<void> {
  for (let i = 0; i < 30; i++) {
    if ((await focusedCard(page)) === name) return;
    await page.keyboard.press("ArrowRight");
  }
  throw new Error(`the arrows never reached ${name}`);
}

/** The roles a keyboard or a screen reader acts on or reads as one thing: each needs a name. */
const NAMED_ROLES = new Set(["button", "link", "textbox", "searchbox", "combobox", "listbox", "slider", "spinbutton", "checkbox", "radio", "switch", "tab", "menuitem", "img"]);

interface AXNode {
  ignored: boolean;
  role?: { value: string };
  name?: { value: string };
  backendDOMNodeId?: number;
}

/**
 * Every control on the page, and every card, has an accessible name (issue #21: "accessible
 * labels"), as Chromium's own accessibility tree, the one a screen reader is given, computes it
 * (labels, aria-label, text, alt). Fails listing each unnamed one with its element.
 */
export async function expectEveryControlNamed(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { nodes } = (await cdp.send("Accessibility.getFullAXTree")) as { nodes: AXNode[] };
    const unnamed = nodes.filter((n) => !n.ignored && NAMED_ROLES.has(n.role?.value ?? "") && !(n.name?.value ?? "").trim());
    const described = await Promise.all(
      unnamed.map(async (n) => {
        if (n.backendDOMNodeId === undefined) return `${n.role?.value} (no element)`;
        const { node } = (await cdp.send("DOM.describeNode", { backendNodeId: n.backendDOMNodeId })) as { node: { localName: string; attributes?: string[] } };
        return `${n.role?.value}: <${node.localName} ${(node.attributes ?? []).join(" ")}>`;
      }),
    );
    expect(described, `controls without an accessible name on ${page.url()}`).toEqual([]);
  } finally {
    await cdp.detach();
  }
}
