// The harness itself: the built page is served, and its origin reaches the server over Connect.
import { expect, shot, test } from "./fixtures";

test("the page's origin serves the page and passes the API to the server", async ({ page, sapsam }) => {
  await page.goto(`${sapsam.page}/`);
  await expect(page.getByRole("heading", { name: "Verify a deal" })).toBeVisible();
  const presets = await page.evaluate(async () => {
    const answer = await fetch("/sapsam.v1.TableService/ListRuleSets", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    return ((await answer.json()) as { presets: { name: string }[] }).presets.map((p) => p.name);
  });
  expect(presets).toContain("pagat");
  await shot(page, "smoke-verify-page");
});
