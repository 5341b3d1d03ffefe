// The replay and the verify page in the browser: a deal finished on the real server (two bots, one
// of them playing as a player the test registered) is exported with that player's token, dropped on
// the page, verified there and replayed step by step (buttons, keyboard, slider); a tampered copy
// fails, naming the check that does not hold. Screenshots in web/e2e-artifacts/.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sapsamBin } from "./global-setup";
import { type Sapsam, call, expect, expectEveryControlNamed, expectFitsWidth, shot, test } from "./fixtures";

const DATA = join(import.meta.dirname, "..", "test", "data");

/** A 2-seat, 1-deal table played to its end by bots, seat 0 as a player the test holds the token of. */
async function finishedDeal(sapsam: Sapsam): Promise<{ table: string; token: string; player: string; exportText: string }> {
  const me = await call<{ token: string; player: { name: string } }>(sapsam, "PlayerService/RegisterPlayer", { requestId: crypto.randomUUID(), displayName: "Replayer" });
  const created = await call<{ table: { name: string } }>(sapsam, "TableService/CreateTable", { requestId: crypto.randomUUID(), ruleSetPreset: "pagat", seatCount: 2, seriesLength: 1 }, me.token);
  const table = created.table.name;
  // Each bot its own seat (two joining at once would race for the lowest free one).
  const bot = (seat: number, ...args: string[]) => {
    const child = spawn(sapsamBin("sapsam-bot"), ["--server", sapsam.grpc, "--table", table, "--seat", String(seat), "--strategy", "solver", "--no-state", "--quiet", ...args], { stdio: "ignore" });
    return { child, exited: new Promise<number | null>((done) => child.once("exit", done)) };
  };
  const bots = [bot(0, "--token", me.token), bot(1, "--name", "bot")];
  try {
    expect(await Promise.all(bots.map((b) => b.exited)), "the bots' exit codes").toEqual([0, 0]);
  } finally {
    for (const b of bots) if (b.child.exitCode === null) b.child.kill("SIGTERM");
  }
  const exported = await call<{ export: string; finished: boolean }>(sapsam, "AuditService/ExportDeal", { requestId: crypto.randomUUID(), name: `${table}/deals/1` }, me.token);
  expect(exported.finished).toBe(true);
  return { table, token: me.token, player: me.player.name, exportText: exported.export };
}

test("a finished deal from your deals verifies and replays step by step", async ({ page, sapsam }) => {
  const { table, token, player, exportText } = await finishedDeal(sapsam);
  // This browser plays as the test's player (the identity the lobby would have registered).
  await page.goto(`${sapsam.page}/lobby.html`);
  await page.evaluate(([origin, identity]) => localStorage.setItem(`sapsam.identity ${origin}`, identity!), [sapsam.page, JSON.stringify({
    player, displayName: "Replayer", token, secretKey: "00".repeat(32), publicKey: "00".repeat(32), keyRegistered: true,
  })]);
  await page.goto(`${sapsam.page}/history.html`);
  const deals = page.getByRole("table", { name: /Every scored deal you played/ });
  await expect(deals.locator("tbody tr")).toHaveCount(1);
  await expect(deals).toContainText("pagat, 2 seats");
  await expect(deals.locator("tbody time.when")).toHaveCount(1); // when it was scored, under the deal
  await expectEveryControlNamed(page);
  await expectFitsWidth(page);
  await shot(page, "history-your-deals");
  await deals.getByRole("link", { name: /Verify and replay deal 1/ }).click();
  await expect(page).toHaveURL(new RegExp(`index\\.html\\?deal=${encodeURIComponent(`${table}/deals/1`)}`));
  // Exported with the token, offered as a file, verified in the page: no key pinned, so every
  // check holds but the file is not anchored to the published log.
  const keep = page.getByRole("link", { name: /Download this deal's export/ });
  await expect(keep).toBeVisible();
  const download = await Promise.all([page.waitForEvent("download"), keep.click()]).then(([d]) => d);
  expect(readFileSync((await download.path())!, "utf8")).toBe(exportText);
  await expect(page.locator(".verdict-level")).toHaveText(/Internally consistent only/);
  await expect(page.getByText("Every check:")).toContainText("0 failed");
  const replay = page.getByRole("region", { name: "Replay of the deal" });
  await expect(replay.getByRole("heading", { name: "The table" })).toBeVisible();
  await shot(page, "replay-1-start");

  // Step with the buttons through the lot and the seed commitment to the cut.
  const next = replay.getByRole("button", { name: "Next ▶" });
  const title = replay.locator("h3");
  for (let k = 0; k < 20 && !/cuts at/.test((await title.textContent()) ?? ""); k++) await next.click();
  await expect(title).toHaveText(/Seat \d cuts at \d+/);
  await next.click();
  await expect(title).toHaveText("The deal");
  // The deal card by card: the first card goes to the dealer's left; each seat's hand grows.
  await next.click();
  await expect(title).toHaveText(/Card 1 of 26 to seat \d/);
  await expect(replay.locator(".replay-seat.focus svg.card")).toHaveCount(1);
  await shot(page, "replay-2-first-card");

  // The keyboard: End jumps to the score, ← steps back, Home to the start.
  await replay.locator(".replay").focus();
  await page.keyboard.press("End");
  await expect(title).toHaveText("The series is over after 1 deal");
  await page.keyboard.press("ArrowLeft");
  await expect(title).toHaveText("Scored");
  await expect(replay.locator(".replay-seat")).toHaveCount(2);
  await expect(replay.getByRole("table")).toContainText("0 v 1");
  for (const seat of await replay.locator(".replay-seat").all()) {
    await expect(seat.locator(".replay-row")).toHaveCount(3);
    await expect(seat.locator("svg.card")).toHaveCount(13);
    await expect(seat.locator(".replay-total")).toHaveText(/this deal [+-]?\d+ · series -?\d+/);
  }
  await expectEveryControlNamed(page);
  await expectFitsWidth(page);
  await shot(page, "replay-3-scored");
  await page.keyboard.press("ArrowLeft");
  await expect(title).toHaveText("The seed is revealed");
  await page.keyboard.press("Home");
  await expect(title).toHaveText("The table");
  // The slider goes anywhere.
  await replay.getByRole("slider", { name: "Step" }).fill("10");
  await expect(replay.locator(".replay-counter")).toContainText("step 11 of");
});

test("a tampered export fails, naming the check", async ({ page, sapsam }) => {
  await page.goto(`${sapsam.page}/`);
  // The dealer moved after the fact, the chain re-made (a forgery sapsam's own tamper tests make):
  // the page names every check sapsam audit verify names (test/data/tampered.json).
  await page.getByLabel("Export file (.jsonl)").setInputFiles(join(DATA, "tampered", "dealer_moved.jsonl"));
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page.locator(".verdict-level")).toHaveText(/Failed/);
  const sapsamSays = JSON.parse(readFileSync(join(DATA, "tampered.json"), "utf8")) as Record<string, { failed: string[] }>;
  for (const failed of sapsamSays.dealer_moved!.failed) {
    const [name, deal] = failed.split("@");
    await expect(page.locator(".verdict")).toContainText(new RegExp(`deal ${deal} · ${name!.replace(/[[\]]/g, "\\$&")} (does not hold|not checked, as a check it relies on failed)`));
  }
  await expect(page.locator("ul.checks li.failed").first()).toBeVisible();
  await shot(page, "verify-tampered-failed");
  // The replay goes to the event that does not hold, and says so.
  const replay = page.getByRole("region", { name: "Replay of the deal" });
  await replay.getByRole("button", { name: "Go to the first failure" }).click();
  await expect(replay.locator("h3")).toHaveText(/Seat \d cuts at \d+/);
  await expect(replay.getByRole("alert")).toContainText("This event does not hold: sequence");
  await expectEveryControlNamed(page);
  await expectFitsWidth(page);
  await shot(page, "replay-tampered-failure");

  // An event altered without re-making the chain: the chain check says so, in words.
  const lines = readFileSync(join(DATA, "deal2.jsonl"), "utf8").trimEnd().split("\n");
  const at = lines.findIndex((l) => l.includes('"ArrangementRevealed"'));
  lines[at] = lines[at]!.replace(/"front":\["(\w\w)"/, (_m, card: string) => `"front":["${card === "As" ? "Ks" : "As"}"`);
  const altered = join(sapsam.scratch, "deal2-altered.jsonl");
  writeFileSync(altered, `${lines.join("\n")}\n`);
  await page.getByLabel("Export file (.jsonl)").setInputFiles(altered);
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page.locator(".verdict-level")).toHaveText(/Failed/);
  await expect(page.locator(".verdict")).toContainText("chain does not hold: every event is chained to the one before it");
  await shot(page, "verify-altered-chain");
});

test("a Pineapple set replays street by street, its discards face down until revealed", async ({ page, sapsam }) => {
  await page.goto(`${sapsam.page}/`);
  // Dropped on the page (issue #21: "an export file dropped on the page"), not chosen: verified at once.
  const text = readFileSync(join(DATA, "open_face", "pineapple.jsonl"), "utf8");
  const dropped = await page.evaluateHandle((t) => {
    const files = new DataTransfer();
    files.items.add(new File([t], "pineapple.jsonl"));
    return files;
  }, text);
  await page.dispatchEvent("main", "dragover", { dataTransfer: dropped });
  await expect(page.locator("main.dragging")).toHaveCount(1);
  await page.dispatchEvent("main", "drop", { dataTransfer: dropped });
  await expect(page.locator("main.dragging")).toHaveCount(0);
  // Every open-face check passes; only the missing checkpoint keeps it from anchored.
  await expect(page.locator(".verdict-level")).toHaveText(/Internally consistent only/);
  await expect(page.locator(".verdict")).toContainText("the export carries no checkpoint");
  await expect(page.getByText("Every check:")).toContainText("0 failed");
  const replay = page.getByRole("region", { name: "Replay of the deal" });
  await expect(replay.getByRole("combobox", { name: "Deal to replay" })).toHaveValue("0");
  const title = replay.locator("h3");
  const next = replay.getByRole("button", { name: "Next ▶" });
  for (let k = 0; k < 60 && (await title.textContent()) !== "Street 2 dealt"; k++) await next.click();
  await expect(replay.locator(".replay-seat").first().locator(".replay-row", { hasText: "in hand" }).locator("svg.card")).toHaveCount(3);
  for (let k = 0; k < 10 && !/discards face down/.test((await title.textContent()) ?? ""); k++) await next.click();
  await expect(replay.locator(".replay-seat.focus").getByRole("img", { name: "a card face down" })).toHaveCount(1);
  await shot(page, "replay-pineapple-discard-face-down");
  // The score: each seat's discards are open, every row named.
  for (let k = 0; k < 60 && (await title.textContent()) !== "Scored"; k++) await next.click();
  for (const seat of await replay.locator(".replay-seat").all()) {
    await expect(seat.getByRole("img", { name: "a card face down" })).toHaveCount(0);
    await expect(seat.getByRole("group", { name: /^discards: / })).toBeVisible();
  }
  await shot(page, "replay-pineapple-scored");
});

test("an open-face set with a timeout and a Fantasyland hand set by the service is anchored with the key pinned", async ({ page, sapsam }) => {
  // rules.md §8.6-§8.7 re-decided in the browser: nothing is left not covered, so the pinned key anchors it.
  await page.goto(`${sapsam.page}/`);
  await page.getByLabel("Export file (.jsonl)").setInputFiles(join(DATA, "open_face", "anchored_fantasyland_timeout.jsonl"));
  await page.getByLabel(/Server key you trust/).fill(readFileSync(join(DATA, "server.vkey"), "utf8").trim());
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page.locator(".verdict-level")).toHaveText(/Anchored/);
  await expect(page.getByText("Every check:")).toContainText("0 failed");
  await shot(page, "verify-open-face-timeout-anchored");
});
