// The page's build (Vite). `vite` and `vite preview` pass the API's paths (/sapsam.v1.*) to
// `sapsam serve --http` at SAPSAM_HTTP (default 127.0.0.1:8080), so the page calls its own origin.
import { defineConfig } from "vitest/config";

const api = `http://${process.env.SAPSAM_HTTP ?? "127.0.0.1:8080"}`;
const proxy = { "^/sapsam\\.v1\\.": { target: api } };

export default defineConfig({
  server: { proxy },
  preview: { proxy },
  test: { include: ["test/**/*.test.ts"] },
});
