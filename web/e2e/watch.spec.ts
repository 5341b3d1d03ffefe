// Watching a table (issue #21: "play, watch"): a registered browser that holds no seat opens a table
// before anyone sits, and follows it live over WatchTable as two bots take the seats and play the
// series: the seats fill, each reveal and the final standings appear, all without a reload, and
// nothing is shown as its own (no hand, no "you won/lost").
import { type Bots, call, expect, expectEveryControlNamed, expectFitsWidth, shot, startBots, stopBots, test } from "./fixtures";

test("a table watched live from its start to its standings", async ({ page, sapsam }) => {
  let bots: Bots | undefined;
  try {
    const host = await call<{ token: string }>(sapsam, "PlayerService/RegisterPlayer", { requestId: crypto.randomUUID(), displayName: "Host" });
    const created = await call<{ table: { name: string } }>(sapsam, "TableService/CreateTable", { requestId: crypto.randomUUID(), ruleSetPreset: "pagat", seatCount: 2, seriesLength: 2 }, host.token);
    const table = created.table.name;
    await page.goto(`${sapsam.page}/lobby.html`);
    await page.getByLabel("Your name at the table").fill("Wes");
    await page.getByRole("button", { name: "Register and play" }).click();
    await expect(page.locator("#who")).toContainText("Playing as Wes");

    await page.goto(`${sapsam.page}/table.html?table=${encodeURIComponent(table)}`);
    await expect(page.locator("#status")).toHaveText("You hold no seat at this table: watching.");
    await expect(page.getByRole("button", { name: "Take a seat" })).toBeVisible();
    await expect(page.locator("#seats li")).toHaveText([/^—: 0 · empty$/, /^—: 0 · empty$/]);

    bots = startBots(sapsam, table, 2);
    // Everything below arrives over the stream the page opened before the bots sat down.
    await expect(page.getByRole("heading", { name: "Series complete: final standings" })).toBeVisible({ timeout: 90_000 });
    await expect(page.locator("#seats li")).toHaveText([/^bot.*: [+-]?\d+$/, /^bot.*: [+-]?\d+$/]);
    await expect(page.locator("section.result")).toHaveCount(2);
    await expect(page.locator(".standings li")).toHaveCount(2);
    await expect(page.getByRole("button", { name: "Take a seat" })).toHaveCount(0);
    await expect(page.locator("#seats li.you, .seat-result.you, .outcome, .hand .card-button")).toHaveCount(0);
    await expect(page.locator("#status")).toHaveText("You hold no seat at this table: watching.");
    await expectEveryControlNamed(page);
    await expectFitsWidth(page);
    await shot(page, "watch-series-complete");
    expect(await bots.exited).toBe(0);
  } finally {
    if (bots) stopBots(bots);
  }
});
