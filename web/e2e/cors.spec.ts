// A page on another origin than the server's Connect port (`?api=URL`): the browser's preflight and
// the answers pass only because the server allows the page's origin (--http-allowed-origins).
import { expect, shot, test } from "./fixtures";

test("the lobby calls the server's own origin directly, through CORS", async ({ page, sapsam }) => {
  const api = `http://${sapsam.http}`;
  const crossOrigin: string[] = [];
  page.on("request", (r) => { if (r.url().startsWith(api)) crossOrigin.push(`${r.method()} ${new URL(r.url()).pathname}`); });
  await page.goto(`${sapsam.page}/lobby.html?api=${encodeURIComponent(api)}`);
  await page.getByLabel("Your name at the table").fill("Cora");
  await page.keyboard.press("Enter");
  await expect(page.locator("#who")).toContainText("Playing as Cora");
  // Registering, its key and the lists went to the server's origin, not the page's.
  expect(crossOrigin).toContain("POST /sapsam.v1.PlayerService/RegisterPlayer");
  expect(crossOrigin.some((r) => r.includes("ListTables") || r.includes("ListRuleSets"))).toBe(true);
  await shot(page, "lobby-cross-origin");
});
