// A human plays a whole series through the page against three bots (sapsam-bot over gRPC): registers
// in the lobby, creates a 4-seat table, arranges by keyboard, a drag and a tap in deal 1, reloads
// mid-arrangement in deal 2 and continues where it was, takes the server's solver's rows (the
// hint, GetSuggestion), loses its first reveal of deal 3 and reloads (the reveal comes from the
// rows and nonce kept in the browser), sees every reveal and the final standings; then the
// server's verifier checks each deal with the browser's player key pinned, and the page's own
// verifier gives each exported deal the server's verdict. On the way: the countdown, the seats'
// states, every row of the reveal named and won or lost from your seat, every control named.
import { type Page } from "@playwright/test";
import { type Bots, browserPlayer, expect, expectEveryControlNamed, expectFitsWidth, shot, shotOf, startBots, stopBots, test, verifyDeal } from "./fixtures";

const DEALS = 3;

async function waitForHand(page: Page, deal: number): Promise<void> {
  await expect(page.locator("#phase")).toContainText(`deal ${deal} of ${DEALS}`, { timeout: 60_000 });
  await expect(page.locator("#commit")).toBeVisible({ timeout: 60_000 });
}

async function committed(page: Page, deal: number): Promise<void> {
  await page.locator("#commit").click();
  await expect(page.locator(`section.result[data-deal="${deal}"]`)).toBeVisible({ timeout: 60_000 });
}

test("a series against three bots, with reloads mid-deal", async ({ page, sapsam }) => {
  let bots: Bots | undefined;
  try {
    await page.goto(`${sapsam.page}/lobby.html`);
    await page.getByLabel("Your name at the table").fill("Ann");
    await page.getByRole("button", { name: "Register and play" }).click();
    await expect(page.locator("#who")).toContainText("Playing as Ann");
    await page.getByLabel("Rules", { exact: true }).selectOption("pagat");
    await page.getByLabel("Seats").selectOption("4");
    await page.getByLabel("Deals in the series").fill(String(DEALS));
    await expectFitsWidth(page);
    await shot(page, "lobby");
    await page.getByRole("button", { name: "Create and sit down" }).click();
    await page.waitForURL(/table\.html\?table=/);
    const table = new URL(page.url()).searchParams.get("table")!;
    bots = startBots(sapsam, table, 3);

    // Deal 1: cards by keyboard (Enter picks, 1/2/3 puts it in a row), one dragged, one tapped.
    await waitForHand(page, 1);
    // The countdown of the arranging deadline, and every seat's state (yours: arranging).
    await expect(page.getByRole("timer")).toHaveText(/^\d+ s left to arrange$/);
    const seats = page.locator("#seats li");
    await expect(seats).toHaveCount(4);
    await expect(page.locator("#seats li.you")).toHaveText(/^Ann \(you\)( \[dealer\])?: 0 · arranging$/);
    for (const seat of await seats.all()) await expect(seat).toHaveText(/: 0 · (arranging|committed|confirmed)$/);
    await expect(page.locator("#seats")).toContainText("[dealer]");
    await shot(page, "deal1-dealt");
    const hand = page.locator(".hand .card-button");
    await expect(hand).toHaveCount(13);
    for (const row of ["1", "1", "1", "2", "2", "2", "2", "2", "3", "3", "3"]) {
      await hand.first().focus();
      await page.keyboard.press("Enter");
      await page.keyboard.press(row);
    }
    await hand.first().dragTo(page.locator(".row-zone.back")); // one dragged onto the back row
    await expect(page.locator(".row-zone.back .card-button")).toHaveCount(4);
    await hand.first().click(); // the last card by tapping it, then the back row's button
    await page.locator('.row-head[data-row="back"]').click();
    await expect(hand).toHaveCount(0);
    await expect(page.locator(".row-zone.front .card-button")).toHaveCount(3);
    await expectFitsWidth(page);
    await shot(page, "deal1-arranged");
    await committed(page, 1);
    // The reveal from your seat: every row of every seat named, and each other seat's won or lost.
    const deal1Reveal = page.locator('section.result[data-deal="1"]');
    await expect(deal1Reveal.locator(".seat-result")).toHaveCount(4);
    await expect(deal1Reveal.locator(".result-row .hand-name")).toHaveCount(12);
    await expect(deal1Reveal.locator(".seat-result:not(.you) .outcome")).toHaveCount(9);
    for (const o of await deal1Reveal.locator(".outcome").all()) await expect(o).toHaveText(/^you (won|lost|tied)$/);
    await shot(page, "deal1-reveal");

    // Deal 2: four cards placed, the page reloaded, the same four still placed; then the hint.
    await waitForHand(page, 2);
    // Deal 1's "Committed and confirmed" is not said of deal 2's hand.
    await expect(page.locator("#status")).not.toContainText("Committed");
    for (const row of ["1", "2", "3", "3"]) {
      await hand.first().focus();
      await page.keyboard.press("Enter");
      await page.keyboard.press(row);
    }
    await expect(hand).toHaveCount(9);
    await page.reload();
    await waitForHand(page, 2);
    await expect(page.locator(".hand .card-button")).toHaveCount(9);
    await page.getByRole("button", { name: "Suggest rows" }).click();
    await expect(hand).toHaveCount(0);
    await expect(page.locator("#status")).toContainText("The server's solver suggests these rows");
    await expect(page.locator(".foul-warning")).toHaveText("");
    await shot(page, "deal2-suggested");
    await committed(page, 2);

    // Deal 3: committed, its first reveal lost on the way (the request aborted), then the page
    // reloaded: the reveal is made again from the rows and nonce this browser kept.
    await waitForHand(page, 3);
    await page.getByRole("button", { name: "Suggest rows" }).click();
    let revealsLost = 0;
    const reveal = "**/sapsam.v1.TableService/RevealArrangement";
    await page.route(reveal, (route) => (revealsLost++, route.abort()));
    await page.locator("#commit").click();
    await expect(page.locator("#status")).toContainText("reveal refused", { timeout: 30_000 });
    await page.unroute(reveal);
    expect(revealsLost).toBeGreaterThan(0);
    await page.reload();
    await expect(page.getByRole("heading", { name: "Series complete: final standings" })).toBeVisible({ timeout: 90_000 });
    await expect(page.locator("section.result")).toHaveCount(DEALS);
    await expect(page.locator(".standings li")).toHaveCount(4);
    await expect(page.locator(".standings")).toContainText("Ann (you)");
    await expect(page.locator('section.result[data-deal="3"] .seat-result.you')).not.toContainText(/Timed out|Fouled/);
    // Every deal is scored: the rows and nonces this browser kept for them are gone (pruneKept).
    const kept = await page.evaluate(() => Object.keys(localStorage).filter((k) => /^sapsam\.(kept|discards|fantasyland) /.test(k)));
    expect(kept).toEqual([]);
    await expectFitsWidth(page);
    await expectEveryControlNamed(page);
    await shot(page, "series-complete");
    await shotOf(page.locator('section.result[data-deal="1"]'), "deal1-result");
    // The server's own verifier agrees with what the browser committed, signed and revealed; the
    // page's verifier, given the same export and the same key, gives the same verdict.
    const who = await browserPlayer(page);
    const reports = [];
    for (let deal = 1; deal <= DEALS; deal++) {
      const report = await verifyDeal(sapsam, `${table}/deals/${deal}`, who);
      reports.push(report);
      expect(report.failed, `deal ${deal}`).toEqual([]);
      expect(report.ok, `deal ${deal}`).toBe(true);
      expect(report.verdict, `deal ${deal}`).toBe("VERIFY_VERDICT_ANCHORED");
      const pinned = report.checks.find((c) => c.name.startsWith("pinned_player_key"));
      expect(pinned?.status, `deal ${deal}: ${JSON.stringify(report.checks.map((c) => c.name))}`).toBe("CHECK_STATUS_PASSED");
    }
    for (const [index, report] of reports.entries()) {
      await page.goto(`${sapsam.page}/index.html`); // afresh: no earlier verdict left to match
      await page.getByLabel("Export file (.jsonl)").setInputFiles({ name: `deal${index + 1}.jsonl`, mimeType: "application/jsonl", buffer: Buffer.from(report.exportText) });
      await page.getByLabel(/Server key you trust/).fill(report.serverKey);
      await page.getByRole("button", { name: "Verify" }).click();
      await expect(page.locator(".verdict-level"), `deal ${index + 1} in the page`).toHaveText(/Anchored/);
      await expect(page.getByText("Every check:")).toContainText(" 0 failed");
    }
    await shot(page, "series-deal3-verified-in-the-page");
    expect(await bots.exited).toBe(0);
  } finally {
    if (bots) stopBots(bots);
  }
});
