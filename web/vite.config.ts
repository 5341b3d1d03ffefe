// The page's build: one Vite multi-page app (the verify page, the lobby, the table, your deals). `vite` and
// `vite preview` pass the API's paths (/sapsam.v1.*) to `sapsam serve --http` at SAPSAM_HTTP
// (default 127.0.0.1:8080), so the page calls its own origin.
import { resolve } from "node:path";
import { defineConfig } from "vitest/config";

const api = `http://${process.env.SAPSAM_HTTP ?? "127.0.0.1:8080"}`;
const proxy = { "^/sapsam\\.v1\\.": { target: api } };
const page = (file: string): string => resolve(import.meta.dirname, file);

export default defineConfig({
  build: { rollupOptions: { input: { verify: page("index.html"), lobby: page("lobby.html"), table: page("table.html"), history: page("history.html") } } },
  server: { proxy },
  preview: { proxy },
  test: { include: ["test/**/*.test.ts"] },
});
