// Starts, once for all specs, a real `sapsam serve --http` (gRPC for the bots, Connect for the page)
// on a fresh database, and `vite preview` of the built page, which passes /sapsam.v1.* to it; the
// addresses and the operator's token reach the specs as SAPSAM_E2E_* variables (e2e/fixtures.ts
// reads them). Returns the teardown, which stops both.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, openSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const WEB = resolve(import.meta.dirname, "..");

/** The `sapsam` command: SAPSAM_BIN, else the repository's .venv. */
export const sapsamBin = (name = "sapsam"): string =>
  join(process.env.SAPSAM_BIN ?? resolve(WEB, "..", ".venv", "bin"), name);

function bindable(port: number): Promise<boolean> {
  return new Promise((answer) => {
    const probe = createServer();
    probe.once("error", () => answer(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => answer(true)));
  });
}

// Ports for the servers these tests start: a port-0 probe's port is one the kernel hands out again
// to anyone (pytest's in-process servers and clients run beside these tests), between the probe
// and the child's own bind (seconds: a Python start). So they come from below the kernel's
// ephemeral range (32768 up here), which it never hands out by itself, and below
// tests/free_ports.py's slices (20000 up); in turn from a random start, each checked free by a bind.
const LOWEST_PORT = 10_000;
const PORT_COUNT = 10_000;
let nextPort = Math.floor(Math.random() * PORT_COUNT);

export async function freePort(): Promise<number> {
  for (let tried = 0; tried < PORT_COUNT; tried++) {
    const port = LOWEST_PORT + (nextPort++ % PORT_COUNT);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${LOWEST_PORT}..${LOWEST_PORT + PORT_COUNT - 1}`);
}

export async function waitFor(what: string, url: string, init: RequestInit, child: ChildProcess, seconds: number): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}) before it served`);
    try {
      const answer = await fetch(url, init);
      if (answer.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not serve ${url} within ${seconds} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return Promise.resolve();
  return new Promise((done) => {
    const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.once("exit", () => {
      clearTimeout(killer);
      done();
    });
    child.kill("SIGTERM");
  });
}

export default async function globalSetup(): Promise<() => Promise<void>> {
  const scratch = mkdtempSync(join(tmpdir(), "sapsam-web-test-"));
  const [grpcPort, httpPort, pagePort] = [await freePort(), await freePort(), await freePort()];
  const database = process.env.SAPSAM_E2E_DATABASE_URL;
  const serveArgs = [
    "serve",
    "--listen", `127.0.0.1:${grpcPort}`,
    "--http", `127.0.0.1:${httpPort}`,
    // The page's origin may also call the server directly (?api=URL), through CORS.
    "--http-allowed-origins", `http://127.0.0.1:${pagePort}`,
    "--log-format", "json",
    ...(database ? ["--database-url", database] : ["--data-dir", join(scratch, "data")]),
  ];
  const serverLog = openSync(join(scratch, "server.log"), "a");
  const operatorToken = randomBytes(24).toString("base64url");
  const env: NodeJS.ProcessEnv = { ...process.env, SAPSAM_OPERATOR_TOKEN: operatorToken };
  delete env.DATABASE_URL; // the embedded server unless SAPSAM_E2E_DATABASE_URL names one
  const server = spawn(sapsamBin(), serveArgs, { env, stdio: ["ignore", serverLog, serverLog] });
  const preview = spawn(
    resolve(WEB, "node_modules", ".bin", "vite"),
    ["preview", "--strictPort", "--host", "127.0.0.1", "--port", String(pagePort)],
    { cwd: WEB, env: { ...process.env, SAPSAM_HTTP: `127.0.0.1:${httpPort}` }, stdio: "ignore" },
  );
  const teardown = async (keep = Boolean(process.env.SAPSAM_E2E_KEEP)) => {
    await Promise.all([stop(preview), stop(server)]);
    if (!keep) rmSync(scratch, { recursive: true, force: true });
  };
  try {
    const listRuleSets = { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" };
    await waitFor("sapsam serve", `http://127.0.0.1:${httpPort}/sapsam.v1.TableService/ListRuleSets`, listRuleSets, server, 120);
    await waitFor("vite preview", `http://127.0.0.1:${pagePort}/sapsam.v1.TableService/ListRuleSets`, listRuleSets, preview, 30);
  } catch (error) {
    await teardown(true);
    throw new Error(`${String(error)} (server log: ${join(scratch, "server.log")})`);
  }
  process.env.SAPSAM_E2E_PAGE = `http://127.0.0.1:${pagePort}`;
  process.env.SAPSAM_E2E_GRPC = `127.0.0.1:${grpcPort}`;
  process.env.SAPSAM_E2E_HTTP = `127.0.0.1:${httpPort}`;
  process.env.SAPSAM_E2E_SCRATCH = scratch;
  process.env.SAPSAM_E2E_OPERATOR_TOKEN = operatorToken;
  return () => teardown();
}
