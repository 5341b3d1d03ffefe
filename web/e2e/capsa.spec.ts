// A table with naturals and surrender (capsa_susun): every arrangement goes with a declaration
// (DeclareNatural, signed, its nonce kept in the browser), and on its turn the player announces
// play or surrender with the page's buttons; the series ends with every deal scored.
import { browserPlayer, expect, shot, startBots, stopBots, test, verifyDeal } from "./fixtures";

const DEALS = 2;

test("naturals declared and a surrender announced at a capsa_susun table", async ({ page, sapsam }) => {
  await page.goto(`${sapsam.page}/lobby.html`);
  await page.getByLabel("Your name at the table").fill("Cy");
  await page.getByRole("button", { name: "Register and play" }).click();
  await expect(page.locator("#who")).toContainText("Playing as Cy");
  await page.getByLabel("Rules", { exact: true }).selectOption("capsa_susun");
  await page.getByLabel("Seats").selectOption("4");
  await page.getByLabel("Deals in the series").fill(String(DEALS));
  await page.getByRole("button", { name: "Create and sit down" }).click();
  await page.waitForURL(/table\.html\?table=/);
  const table = new URL(page.url()).searchParams.get("table")!;
  const bots = startBots(sapsam, table, 3);
  try {
    const standings = page.getByRole("heading", { name: "Series complete: final standings" });
    const commit = page.locator("#commit");
    const play = page.locator("#announce-play");
    const surrender = page.locator("#announce-surrender");
    let commits = 0;
    let announcements = 0;
    while (!(await standings.isVisible())) {
      await expect(commit.or(play).or(standings).first()).toBeVisible({ timeout: 90_000 });
      if (await commit.isVisible()) {
        await page.getByRole("button", { name: "Suggest rows" }).click();
        await commit.click();
        await expect(commit).toBeHidden({ timeout: 30_000 });
        commits++;
      } else if (await play.isVisible()) {
        await shot(page, `capsa-announce-${announcements + 1}`);
        await (announcements === 0 ? surrender : play).click();
        await expect(play).toBeHidden({ timeout: 30_000 });
        announcements++;
      }
    }
    expect(commits).toBe(DEALS);
    expect(announcements).toBe(DEALS);
    await expect(page.locator("section.result")).toHaveCount(DEALS);
    await shot(page, "capsa-series-complete");
    // The server's own verifier agrees with what the browser committed, signed and revealed.
    const who = await browserPlayer(page);
    for (let deal = 1; deal <= DEALS; deal++) {
      const report = await verifyDeal(sapsam, `${table}/deals/${deal}`, who);
      expect(report.failed, `deal ${deal}`).toEqual([]);
      expect(report.ok, `deal ${deal}`).toBe(true);
      expect(report.verdict, `deal ${deal}`).toBe("VERIFY_VERDICT_ANCHORED");
      const pinned = report.checks.find((c) => c.name.startsWith("pinned_player_key"));
      expect(pinned?.status, `deal ${deal}: ${JSON.stringify(report.checks.map((c) => c.name))}`).toBe("CHECK_STATUS_PASSED");
    }
    expect(await bots.exited).toBe(0);
  } finally {
    stopBots(bots);
  }
});
