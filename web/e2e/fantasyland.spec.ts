// A human earns Fantasyland at an open-face table and sets the Fantasyland hand through the page,
// against one bot. Its first deal is dealt from a seed chosen so that the human's seat can earn it
// (e2e/serve_fantasyland.py: `sapsam serve` with deal 1 of an ofc_classic table seeded as
// `sapsam demo --preset ofc_classic` seeds it, started here on its own ports and reached with
// ?api=URL, through CORS), the page's cut pinned where that seed expects it; the human places deal
// 1's streets into the rows that earn it by keyboard alone (Tab, → to a card, 1/2/3), sets the Fantasyland hand of
// deal 2 at once with the server solver's setting ("Suggest", GetSuggestion), which is committed
// face down and opened automatically at the end; every other street by "Suggest" (or "Fill in
// order" if the suggestion is refused). The set ends with its standings; the server's verifier
// accepts the Fantasyland deal with the page's key pinned; nothing kept is left in localStorage.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Page } from "@playwright/test";
import { parseCard } from "../src/cards";
import { cardShort } from "../src/ui/cards";
import { type Bots, type Sapsam, arrowTo, browserPlayer, expect, expectFitsWidth, shot, shotOf, startBots, stopBots, tabTo, test, verifyDeal } from "./fixtures";
import { freePort, sapsamBin, stop, waitFor } from "./global-setup";

interface Chosen {
  sapsam: Sapsam;
  server: ChildProcess;
  rowsFile: string;
}

/** serve_fantasyland.py on fresh ports and its own embedded database; `sapsam` with its addresses. */
async function chosenServer(sapsam: Sapsam): Promise<Chosen> {
  const [grpcPort, httpPort] = [await freePort(), await freePort()];
  const scratch = join(sapsam.scratch, "fantasyland");
  const rowsFile = join(sapsam.scratch, "fantasyland-rows.jsonl");
  const args = [
    join(import.meta.dirname, "serve_fantasyland.py"),
    "--listen", `127.0.0.1:${grpcPort}`,
    "--http", `127.0.0.1:${httpPort}`,
    "--http-allowed-origins", sapsam.page,
    "--log-format", "json",
    "--data-dir", join(scratch, "data"),
  ];
  const env: NodeJS.ProcessEnv = { ...process.env, SAPSAM_OPERATOR_TOKEN: sapsam.operatorToken, SAPSAM_E2E_CHOSEN_ROWS: rowsFile };
  delete env.DATABASE_URL;
  const log = openSync(join(sapsam.scratch, "fantasyland-server.log"), "a");
  const server = spawn(sapsamBin("python"), args, { env, stdio: ["ignore", log, log] });
  const listRuleSets = { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" };
  await waitFor("serve_fantasyland.py", `http://127.0.0.1:${httpPort}/sapsam.v1.TableService/ListRuleSets`, listRuleSets, server, 120);
  return { sapsam: { ...sapsam, grpc: `127.0.0.1:${grpcPort}`, http: `127.0.0.1:${httpPort}` }, server, rowsFile };
}

/** The rows the chosen seed lets seat 0 earn Fantasyland with, once deal 1 has started. */
async function chosenRows(file: string, table: string): Promise<string[][]> {
  for (let i = 0; i < 240; i++) {
    if (existsSync(file)) {
      const line = readFileSync(file, "utf-8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { table: string; rows: string[][] }).find((l) => l.table === table);
      if (line) return line.rows;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("deal 1 was not dealt from a chosen seed");
}

const handCards = (page: Page): Promise<string[]> =>
  page.locator("#arrange .hand .card-button").evaluateAll((bs) => bs.map((b) => (b as HTMLElement).dataset.card!));

/** The server's suggestion, or, if it is refused (the limit per player), "Fill in order". */
async function suggested(page: Page): Promise<void> {
  const hand = page.locator("#arrange .hand .card-button");
  await page.locator("#hint").click();
  try {
    await expect(hand).toHaveCount(0, { timeout: 10_000 });
  } catch {
    await expect(page.locator("#status")).toContainText("No suggestion from the server");
    await page.locator("#fill").click();
  }
}

test("Fantasyland earned and its hand set through the page", async ({ page, sapsam: shared }) => {
  test.setTimeout(360_000);
  const chosen = await chosenServer(shared);
  const sapsam = chosen.sapsam;
  let bots: Bots | undefined;
  try {
    // The page cuts at a random position 1..51 (one Uint32 from crypto.getRandomValues); pinned at 2,
    // where the chosen seed expects the deck cut (and where the bot cuts deal 1 too).
    await page.addInitScript(() => {
      const random = crypto.getRandomValues.bind(crypto);
      crypto.getRandomValues = (<T extends ArrayBufferView | null>(array: T): T => {
        if (array instanceof Uint32Array && array.length === 1) {
          array[0] = 1;
          return array;
        }
        return random(array as never) as T;
      }) as typeof crypto.getRandomValues;
    });
    await page.goto(`${sapsam.page}/lobby.html?api=http://${sapsam.http}`);
    await page.getByLabel("Your name at the table").fill("Fay");
    await page.getByRole("button", { name: "Register and play" }).click();
    await expect(page.locator("#who")).toContainText("Playing as Fay");
    await page.getByLabel("Rules", { exact: true }).selectOption("ofc_classic");
    await page.getByLabel("Seats").selectOption("2");
    await page.getByRole("button", { name: "Create and sit down" }).click();
    await page.waitForURL(/table\.html\?table=/);
    const table = new URL(page.url()).searchParams.get("table")!;
    bots = startBots(sapsam, table, 1);
    const rows = await chosenRows(chosen.rowsFile, table);
    const rowKey = new Map<string, string>();
    rows.forEach((row, index) => row.forEach((card) => rowKey.set(cardShort(parseCard(card)), String(index + 1))));

    const standings = page.getByRole("heading", { name: "Series complete: final standings" });
    const place = page.locator("#place");
    let plannedLeft = 13; // deal 1: every card into the rows that earn Fantasyland
    let fantasylands = 0;
    let fantasylandDeal = 0;
    while (!(await standings.isVisible())) {
      try {
        await place.waitFor({ state: "visible", timeout: 2_000 });
      } catch {
        continue;
      }
      const heading = (await page.locator("#arrange > p").first().textContent()) ?? "";
      if (heading.startsWith("Fantasyland")) {
        plannedLeft = 0; // deal 1's last streets may have been placed by the server (no choice left: rules.md §8.6)
        // The first one's deal, read while its hand is shown: once it is set, the deal may be
        // opened, scored and the next one started before #phase is read (the bot's streets are done
        // by then if the suggestion took a while). A Fantasyland hand that qualifies again (the
        // suggestion's rows may) plays the next deal in Fantasyland too.
        if (!fantasylandDeal) fantasylandDeal = Number(/deal (\d+)/.exec((await page.locator("#phase").textContent()) ?? "")?.[1]);
        expect(await handCards(page)).toHaveLength(13); // ofc_classic: a Fantasyland hand of 13
        await suggested(page);
        await expect(page.locator("#arrange .dead-warning")).toHaveText("");
        await expectFitsWidth(page);
        await shot(page, "fantasyland-hand");
        await place.click();
        await expect(page.locator("#status")).toContainText(/Fantasyland hand is set/, { timeout: 30_000 });
        fantasylands++;
        await shot(page, "fantasyland-set");
        continue;
      }
      const cards = await handCards(page);
      if (plannedLeft > 0) {
        // by the keyboard alone: Tab into the street's cards, → to each, 1/2/3 into its row
        await tabTo(page, "#arrange .hand .card-button");
        for (const card of cards) {
          const key = rowKey.get(card);
          expect(key, `deal 1's card ${card} is not in the chosen rows`).toBeDefined();
          await arrowTo(page, card);
          await page.keyboard.press(key!);
        }
        plannedLeft -= cards.length;
      } else await suggested(page);
      await expect(page.locator("#arrange .hand .card-button")).toHaveCount(0);
      await place.click();
      await expect(page.locator("#status")).toContainText(/Street \d+ placed|does not hold this deal/, { timeout: 30_000 });
    }
    expect(fantasylands).toBeGreaterThanOrEqual(1);
    expect(fantasylandDeal).toBe(2);
    await expect(page.locator(".standings li")).toHaveCount(2);
    const result = page.locator(`section.ofc-result[data-deal="${fantasylandDeal}"]`);
    await expect(result.locator(".seat-result.you svg")).toHaveCount(13); // the Fantasyland hand, opened
    await shotOf(result, "fantasyland-scored");
    await shot(page, "fantasyland-complete");
    const kept = await page.evaluate(() => Object.keys(localStorage).filter((k) => /^sapsam\.(kept|discards|fantasyland) /.test(k)));
    expect(kept).toEqual([]);
    // The server's verifier accepts what the page committed, signed and opened in Fantasyland.
    const who = await browserPlayer(page);
    const report = await verifyDeal(sapsam, `${table}/deals/${fantasylandDeal}`, who);
    expect(report.failed).toEqual([]);
    expect(report.ok).toBe(true);
    const pinned = report.checks.find((c) => c.name.startsWith("pinned_player_key"));
    expect(pinned?.status, JSON.stringify(report.checks.map((c) => [c.name, c.status]))).toBe("CHECK_STATUS_PASSED");
    expect(await bots.exited).toBe(0);
  } finally {
    if (bots) stopBots(bots);
    await stop(chosen.server);
  }
});
