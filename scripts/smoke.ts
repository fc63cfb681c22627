// Smoke test as a new user would run it: start the service as a separate process (embedded
// database in a temp DATA_DIR, or DATABASE_URL when set), sign up, simulate a preset with the
// CLI and verify the result offline. Exits non-zero on the first thing that is wrong.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const dataDir = mkdtempSync(join(tmpdir(), "warden-smoke-"));
const port = 20000 + Math.floor(Math.random() * 20000);
const url = `https://127.0.0.1:${port}`;
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;
const bun = process.execPath;

const server = Bun.spawn([bun, "src/cli/main.ts", "serve"], {
  cwd: root,
  env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, BCRYPT_COST: "4" },
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
  const proc = Bun.spawn([bun, "src/cli/main.ts", ...args], { cwd: root, env: { ...process.env, WARDEN_URL: url, WARDEN_INSECURE: "1", ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { code, json: JSON.parse(stdout) };
}

const started = performance.now();
let healthy = false;
for (let i = 0; i < 100 && !healthy; i++) {
  healthy = await fetch(`${url}/health`, insecure).then((r) => r.ok, () => false);
  if (!healthy) await Bun.sleep(100);
}
if (!healthy) fail("the service did not become healthy within 10 s");
const health = await (await fetch(`${url}/health`, insecure)).json();
console.log(`smoke: healthy after ${Math.round(performance.now() - started)} ms on the ${health.database} database`);

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

server.kill("SIGTERM");
await server.exited;
rmSync(dataDir, { recursive: true, force: true });
console.log("smoke: signup, simulate --verify, verify and tamper detection all behave");
