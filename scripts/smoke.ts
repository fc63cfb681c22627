// Smoke test as a new user would run it: start the service as a separate process (embedded
// database in a temp DATA_DIR, or DATABASE_URL when set), sign up, simulate a preset with the
// CLI, verify the result offline, make one live decision and re-walk the receipt log with
// `ops receipts check`. Exits non-zero on the first thing that is wrong.
//
// SMOKE_CMD runs warden another way (split on spaces, run from the repository root): the single
// binary, SMOKE_CMD=./dist/warden, or Deno, SMOKE_CMD="deno run ... src/cli/main.ts". The script
// itself needs only Bun and node: modules, so it runs with node_modules moved away.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.ts";

const root = join(import.meta.dir, "..");
const dataDir = mkdtempSync(join(tmpdir(), "warden-smoke-"));
const port = freePort();
const url = `https://127.0.0.1:${port}`;
const metricsUrl = `http://127.0.0.1:${freePort()}`;
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;
const warden = process.env.SMOKE_CMD?.trim() ? process.env.SMOKE_CMD.trim().split(/\s+/) : [process.execPath, "src/cli/main.ts"];

const server = Bun.spawn([...warden, "serve"], {
  cwd: root,
  env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, BCRYPT_COST: "4", METRICS_ADDR: metricsUrl.slice("http://".length) },
  stdout: "pipe",
  stderr: "inherit",
});

function fail(message: string): never {
  console.error(`smoke: FAILED: ${message}`);
  server.kill();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
}

async function cli(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn([...warden, ...args], { cwd: root, env: { ...process.env, WARDEN_URL: url, WARDEN_INSECURE: "1", ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { code, json: JSON.parse(stdout) };
}

const started = performance.now();
let healthy = false;
// Deno's first start on a fresh embedded database (initdb in WebAssembly) takes several seconds.
// SMOKE_START_SECONDS (default 30) gives a busy machine longer.
const startSeconds = Number(process.env.SMOKE_START_SECONDS) || 30;
for (let i = 0; i < startSeconds * 10 && !healthy; i++) {
  healthy = await fetch(`${url}/health`, insecure).then((r) => r.ok, () => false);
  if (!healthy) await Bun.sleep(100);
}
if (!healthy) fail(`the service did not become healthy within ${startSeconds} s`);
const health = await (await fetch(`${url}/health`, insecure)).json();
console.log(`smoke: ${warden.join(" ")}: healthy after ${Math.round(performance.now() - started)} ms on the ${health.database} database`);

// The web console: the binary carries its own build (SMOKE_CONSOLE=1 makes its absence a failure).
const consolePage = await fetch(`${url}/console`, insecure);
const consoleHtml = await consolePage.text();
if (consolePage.status === 200) {
  const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(consoleHtml)?.[1];
  const asset = script ? await fetch(url + script, insecure) : undefined;
  if (!asset?.ok || !asset.headers.get("content-type")?.startsWith("text/javascript")) fail(`the console's script ${script} answered ${asset?.status}`);
} else if (process.env.SMOKE_CONSOLE === "1") fail(`GET /console answered ${consolePage.status}`);

const email = `smoke.${Date.now()}@example.com`;
const signup = await fetch(`${url}/auth/signup`, { ...insecure, method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: "smoke test passphrase" }) });
const account = await signup.json();
if (signup.status !== 201 || !account.api_key) fail(`signup answered ${signup.status} ${JSON.stringify(account)}`);

const simulated = await cli(["simulate", "--preset", "large_payment", "--verify", "--request-id", "smoke-1"], { WARDEN_API_KEY: account.api_key });
if (simulated.code !== 0 || simulated.json.verified !== true || simulated.json.decision !== "DENIED") fail(`simulate --verify: exit ${simulated.code} ${JSON.stringify(simulated.json)}`);

const file = join(dataDir, "result.json");
writeFileSync(file, JSON.stringify(simulated.json));
const verified = await cli(["verify", file], {});
if (verified.code !== 0 || verified.json.verified !== true) fail(`verify: exit ${verified.code} ${JSON.stringify(verified.json)}`);

writeFileSync(file, JSON.stringify({ ...simulated.json, decision: "ALLOWED", payload: { ...simulated.json.payload, decision: "ALLOWED" } }));
const tampered = await cli(["verify", file], {});
if (tampered.code !== 1 || tampered.json.verified !== false) fail(`a tampered result verified: ${JSON.stringify(tampered.json)}`);

const protect = await fetch(`${url}/v1/protect`, { ...insecure, method: "POST", headers: { "content-type": "application/json", "x-api-key": account.api_key }, body: JSON.stringify({ action: "payment.send", amount: 25, currency: "USD" }) });
const decision = await protect.json();
if (protect.status !== 200 || !decision.receipt_id) fail(`protect answered ${protect.status} ${JSON.stringify(decision)}`);

// Metrics and probes (prom-client) run on this runtime too: the two decisions above are counted.
const scraped = await fetch(`${metricsUrl}/metrics`).then((r) => r.text(), (err) => fail(`GET /metrics: ${err}`));
for (const series of [`warden_decisions_total{kind="simulate",decision="DENIED"} 1`, `warden_decisions_total{kind="protect",decision="${decision.decision}"} 1`]) {
  if (!scraped.split("\n").includes(series)) fail(`/metrics has no line ${series}`);
}
if (!/^process_resident_memory_bytes [1-9]/m.test(scraped)) fail("/metrics has no resident memory");
for (const probe of [`${metricsUrl}/readyz`, `${url}/readyz`]) {
  const ready = await fetch(probe, insecure);
  if (ready.status !== 200) fail(`${probe} answered ${ready.status}`);
}

// The operator command while the service runs (on the embedded database, through its socket).
const checked = await cli(["ops", "receipts", "check", account.tenant_id], { DATA_DIR: dataDir, BCRYPT_COST: "4" });
// Two receipts: the signup's key.created event, then the protect.
if (checked.code !== 0 || checked.json.ok !== true || checked.json.receipts !== 2) fail(`ops receipts check: exit ${checked.code} ${JSON.stringify(checked.json)}`);
server.kill("SIGTERM");
if ((await server.exited) !== 0) fail(`the service exited with ${server.exitCode} on SIGTERM`);

rmSync(dataDir, { recursive: true, force: true });
console.log(`smoke: signup, simulate --verify, verify, tamper detection, protect, /metrics, /readyz and ops receipts check all behave (${Math.round(performance.now() - started)} ms)`);
