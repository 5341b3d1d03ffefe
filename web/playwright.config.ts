// Browser tests (make web-test): Playwright driving the machine's Chromium (CHROMIUM, default
// /usr/bin/chromium: Debian's `chromium` package; nothing is downloaded) against the built page
// (web/dist/, `vite preview`) and a real `sapsam serve --http` on a fresh embedded PostgreSQL
// (or DATABASE_URL's server), both started once by e2e/global-setup.ts. Screenshots go to
// web/e2e-artifacts/ (gitignored), traces of failures to web/test-results/.
import { defineConfig } from "@playwright/test";

export default defineConfig({
  testDir: "e2e",
  testMatch: "**/*.spec.ts",
  globalSetup: "./e2e/global-setup.ts",
  timeout: 240_000,
  expect: { timeout: 20_000 },
  workers: 1,
  retries: 0,
  reporter: [["list"]],
  outputDir: "test-results",
  use: {
    browserName: "chromium",
    launchOptions: { executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox"] },
    viewport: { width: 390, height: 844 },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
});
