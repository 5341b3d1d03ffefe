// A human arranges a whole hand with the keyboard alone (issue #21: "keyboard operable"): against one
// bot, Tab reaches the hand, ← → move between the cards, 1/2/3 put the focused card in the front,
// middle or back row (Enter picks a card first for a few, Space for one, 0 takes one back), every
// card button is labelled for a screen reader and shows a visible focus ring, and Tab then Enter
// commits the rows; the deal is scored with them. Rows chosen by the page's own hint.ts from the
// cards shown, so they never foul.
import { suggestRows } from "../src/table/hint";
import { cardShort } from "../src/ui/cards";
import { type Bots, arrowTo, expect, expectEveryControlNamed, focusedCard, shot, startBots, stopBots, tabTo, test } from "./fixtures";

test("a hand arranged with the keyboard alone", async ({ page, sapsam }) => {
  let bots: Bots | undefined;
  try {
    await page.goto(`${sapsam.page}/lobby.html`);
    await page.getByLabel("Your name at the table").fill("Kim");
    await page.getByRole("button", { name: "Register and play" }).click();
    await page.getByLabel("Rules", { exact: true }).selectOption("pagat");
    await page.getByLabel("Seats").selectOption("2");
    await page.getByLabel("Deals in the series").fill("1");
    await page.getByRole("button", { name: "Create and sit down" }).click();
    await page.waitForURL(/table\.html\?table=/);
    bots = startBots(sapsam, new URL(page.url()).searchParams.get("table")!, 1);
    await expect(page.locator("#commit")).toBeVisible({ timeout: 60_000 });

    const hand = page.locator(".hand .card-button");
    await expect(hand).toHaveCount(13);
    await expect(page.getByRole("button", { name: /press 1, 2 or 3 for the front, middle or back row/ })).toHaveCount(13);
    await expectEveryControlNamed(page);
    const cards = await hand.evaluateAll((bs) => bs.map((b) => (b as HTMLElement).dataset.card!));
    const indices = Array.from({ length: 52 }, (_, i) => i).filter((i) => cards.includes(cardShort(i)));
    expect(indices).toHaveLength(13);
    const rows = suggestRows(indices);
    const plan: [number, string][] = [
      ...rows.front.map((c): [number, string] => [c, "1"]),
      ...rows.middle.map((c): [number, string] => [c, "2"]),
      ...rows.back.map((c): [number, string] => [c, "3"]),
    ];

    await tabTo(page, ".hand .card-button");
    // The focus is visible: the ring of ui/play.css.
    const ring = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(ring).toBe("solid");
    await shot(page, "keyboard-focus");
    for (const [index, [card, key]] of plan.entries()) {
      await arrowTo(page, cardShort(card));
      if (index < 3) await page.keyboard.press("Enter"); // pick it first, then the row's key
      if (index === 3) await page.keyboard.press(" ");
      if (index < 4) await expect(page.locator(".card-button.picked")).toHaveCount(1);
      await page.keyboard.press(key);
      if (index === 0) {
        // 0 takes a placed card back to the hand; then it goes where it should
        await expect(page.locator(".row-zone.front .card-button")).toHaveCount(1);
        // the board moved the focus on to the hand's first card: ← goes back to the placed one
        await page.keyboard.press("ArrowLeft");
        expect(await focusedCard(page)).toBe(cardShort(card));
        await page.keyboard.press("0");
        await expect(hand).toHaveCount(13);
        await arrowTo(page, cardShort(card));
        await page.keyboard.press(key);
      }
    }
    await expect(hand).toHaveCount(0);
    for (const [row, want] of Object.entries(rows)) {
      const placed = await page.locator(`.row-zone.${row} .card-button`).evaluateAll((bs) => bs.map((b) => (b as HTMLElement).dataset.card!));
      expect(placed.sort()).toEqual((want as number[]).map(cardShort).sort());
    }
    await expect(page.locator(".foul-warning")).toHaveText("");
    await expectEveryControlNamed(page);
    await shot(page, "keyboard-arranged");
    await tabTo(page, "#commit");
    await page.keyboard.press("Enter");
    await expect(page.locator('section.result[data-deal="1"]')).toBeVisible({ timeout: 60_000 });
    await expect(page.locator('section.result[data-deal="1"] .seat-result.you')).not.toContainText(/Timed out|Fouled/);
    expect(await bots.exited).toBe(0);
  } finally {
    if (bots) stopBots(bots);
  }
});
