// The lobby: a table created elsewhere (by a bot) is listed and joined; a tournament taking
// registrations is listed and the player registers for it; the sign-up survives a reload.
import { call, expect, expectEveryControlNamed, shot, startBots, stopBots, test } from "./fixtures";

test("join a listed table and register for a tournament", async ({ page, sapsam }) => {
  const tournament = await call<{ tournament: { name: string } }>(
    sapsam,
    "TournamentService/CreateTournament",
    { requestId: crypto.randomUUID(), displayName: "Friday cup", ruleSetPreset: "pagat", seatsPerTable: 4, rounds: 1, dealsPerRound: 2, maxEntrants: 8, registrationCloseTime: new Date(Date.now() + 3_600_000).toISOString() },
    sapsam.operatorToken,
  );
  const host = await call<{ token: string }>(sapsam, "PlayerService/RegisterPlayer", { requestId: crypto.randomUUID(), displayName: "Host" });
  const created = await call<{ table: { name: string } }>(
    sapsam,
    "TableService/CreateTable",
    { requestId: crypto.randomUUID(), ruleSetPreset: "pagat", seatCount: 2, seriesLength: 1 },
    host.token,
  );
  const table = created.table.name;
  const bots = startBots(sapsam, table, 1);
  try {
    await page.goto(`${sapsam.page}/lobby.html`);
    await page.getByLabel("Your name at the table").fill("Bea");
    await page.keyboard.press("Enter");
    await expect(page.locator("#who")).toContainText("Playing as Bea");
    await page.reload();
    await expect(page.locator("#who")).toContainText("Playing as Bea");

    const entry = page.locator("#tournaments li", { hasText: "Friday cup" });
    await entry.getByRole("button", { name: "register for Friday cup" }).click();
    await expect(entry).toContainText("you are registered");
    const listed = await call<{ tournament: { players: string[] } }>(sapsam, "TournamentService/GetTournament", { name: tournament.tournament.name }, host.token);
    expect(listed.tournament.players).toHaveLength(1);

    const row = page.locator("#tables li", { hasText: "1/2 seated" });
    await expect(row.first()).toBeVisible();
    await expectEveryControlNamed(page);
    await shot(page, "lobby-listed");
    await page.getByRole("button", { name: /join the pagat table, 1 of 2 seated/ }).first().click();
    await page.waitForURL(/table\.html\?table=/);
    expect(new URL(page.url()).searchParams.get("table")).toBe(table);
    await expect(page.locator("#seats li.you")).toContainText("Bea (you)");
    // a one-deal series: arrange with the suggestion, then the standings
    await expect(page.locator("#commit")).toBeVisible({ timeout: 60_000 });
    await page.getByRole("button", { name: "Suggest rows" }).click();
    await page.locator("#commit").click();
    await expect(page.getByRole("heading", { name: "Series complete: final standings" })).toBeVisible({ timeout: 60_000 });
    expect(await bots.exited).toBe(0);
  } finally {
    stopBots(bots);
  }
});
