// npm run bench: the service under load from wrk in another process, next to a bare Bun.serve
// TLS endpoint (the machine's ceiling), measured in one run. Embedded database first, then the
// real PostgreSQL server when DATABASE_URL is given. Writes bench/results/<date>.{json,md}.
//
//   npm run bench                          # embedded only
//   DATABASE_URL=postgres://... npm run bench
//   BENCH_SECONDS=10 BENCH_CONNECTIONS=64 BENCH_ONLY=simulate,protect npm run bench
import { spawnSync } from "node:child_process";
import { ensureWrk } from "./bench/wrk.ts";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "./free-port.ts";
import { parseStat, postgresTicks, rssMb, TICKS_PER_SECOND } from "./bench/proc.ts";

const ROOT = join(import.meta.dir, "..");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const THREADS = Number(process.env.BENCH_THREADS ?? 2);
const ONLY = process.env.BENCH_ONLY?.split(",");
const TENANTS = Number(process.env.BENCH_TENANTS ?? 16);
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

interface WrkResult {
  requests: number;
  duration_us: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  errors: Record<string, number>;
}

interface Row {
  database: string;
  scenario: string;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  errors: number;
  rss_mb: number;
  ratio_to_ceiling: number;
  /** Cores used on average during the timed run: by the service, and by PostgreSQL. */
  service_cpu: number;
  postgres_cpu: number;
  /** Cores busy on the whole machine during the timed run (wrk and the kernel included), of its cores. */
  machine_cpu: number;
  /** CPU time per answered request, in microseconds: the service's, and the whole machine's. */
  service_us_per_request: number;
  machine_us_per_request: number;
}

interface Ceiling {
  rps: number;
  p99_ms: number;
  machine_cpu: number;
  machine_us_per_request: number;
}

type Shape = { method?: string; body?: unknown; headers?: Record<string, string>; keys?: string[]; pair?: boolean; connections?: number; timeout?: string };

async function wrk(url: string, shape: Shape, seconds: number): Promise<WrkResult> {
  const env = {
    ...process.env,
    BENCH_METHOD: shape.method ?? "GET",
    BENCH_BODY: shape.body === undefined ? "" : JSON.stringify(shape.body),
    BENCH_HEADERS: Object.entries({ ...(shape.body !== undefined ? { "Content-Type": "application/json" } : {}), ...shape.headers })
      .map(([k, v]) => `${k}: ${v}`)
      .join("\n"),
    BENCH_PAIR: shape.pair ? "1" : "0",
    BENCH_KEYS: (shape.keys ?? []).join(","),
  };
  const connections = shape.connections ?? CONNECTIONS;
  const proc = Bun.spawn(["wrk", "-t", String(Math.min(THREADS, connections)), "-c", String(connections), "-d", `${seconds}s`, "--timeout", shape.timeout ?? "2s", "--latency", "-s", join(ROOT, "scripts/bench/request.lua"), url], { env, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const line = out.split("\n").find((l) => l.startsWith("BENCH_JSON "));
  if (!line) throw new Error(`wrk gave no summary: ${out} ${err}`);
  return JSON.parse(line.slice("BENCH_JSON ".length));
}

/** CPU seconds used so far by a process (user + system), from /proc. */
function cpuSeconds(pid: number): number {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "utf8")).ticks / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** CPU seconds of every PostgreSQL server process on this machine (0 when there is none). */
function postgresCpuSeconds(): number {
  let total = 0;
  for (const ticks of postgresTicks().values()) total += ticks;
  return total / TICKS_PER_SECOND;
}

/** Busy CPU seconds of the whole machine so far (all cores; idle and iowait left out), from /proc/stat. */
function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = ticks;
  return (user + nice + system + irq + softirq + steal) / 100;
}

/** Cores as reported: two decimals. */
const cores2 = (cores: number) => Math.round(cores * 100) / 100;

/** Per-request CPU cost in microseconds from cores busy and requests per second. */
const usPerRequest = (cores: number, rps: number) => (rps > 0 ? Math.round((cores * 1e6) / rps) : 0);

async function waitHealthy(url: string, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if (await fetch(`${url}/health`, insecure).then((r) => r.ok, () => false)) return performance.now() - started;
    await Bun.sleep(20);
  }
  throw new Error(`${url} not healthy after ${timeoutMs} ms`);
}

function startService(env: Record<string, string>): { proc: Subprocess; url: string } {
  const port = freePort();
  const flags = process.env.BENCH_BUN_FLAGS?.split(" ").filter(Boolean) ?? [];
  const proc = Bun.spawn([process.execPath, ...flags, "src/cli/main.ts", "serve"], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info" },
    stdout: "ignore",
    stderr: "inherit",
  });
  return { proc, url: `https://127.0.0.1:${port}` };
}

async function stopService(proc: Subprocess) {
  proc.kill("SIGTERM");
  await proc.exited;
}

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url + path, { ...insecure, method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const json = (await res.json()) as Record<string, any>;
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

function cliOps(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, ["src/cli/main.ts", "ops", ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`ops ${args.join(" ")}: ${r.stdout} ${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function benchDatabase(label: string, dbEnv: Record<string, string>, ceilingRps: number): Promise<{ rows: Row[]; startup_ms: number; correctness: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "warden-bench-"));
  const env = {
    ...dbEnv,
    DATA_DIR: dataDir,
    BCRYPT_COST: process.env.BENCH_BCRYPT_COST ?? "12",
    // The login scenario measures login, not the brute-force limiter (which would answer 429).
    RATE_LIMIT_AUTH_ADDRESS: "100000000/60",
    RATE_LIMIT_LOGIN_EMAIL: "100000000/60",
  };

  // Deterministic set-up through the public API: TENANTS tenants on enterprise (no quota in the
  // way), their sessions and keys. The upgrades are approved by the operator CLI, with the service
  // stopped on the embedded database (one process holds it).
  let { proc, url } = startService(env);
  await waitHealthy(url, 30_000);
  const password = "bench passphrase, long enough";
  const accounts: { email: string; token: string; api_key: string; tenant_id: string }[] = [];
  const upgrades: string[] = [];
  for (let i = 0; i < TENANTS; i++) {
    const email = `bench.${Date.now()}.${i}@example.com`;
    const account = await post(url, "/auth/signup", { email, password });
    accounts.push({ email, token: account.token, api_key: account.api_key, tenant_id: account.tenant_id });
    upgrades.push((await post(url, "/customer/upgrades/request", { requested_plan: "enterprise", reason: "benchmark" }, { authorization: `Bearer ${account.token}` })).request_id);
  }
  const account = accounts[0];
  const email = account.email;
  await stopService(proc);
  for (const id of upgrades) cliOps(["upgrades", "approve", id, "--reviewer", "bench"], env);

  // Start-up on an existing data directory, to a ready /health.
  ({ proc, url } = startService(env));
  const startup_ms = Math.round(await waitHealthy(url, 30_000));
  const key = { "X-API-Key": account.api_key };
  // Many tenants, as in service: each wrk connection keeps one tenant's key (round robin).
  const keys = accounts.map((a) => `${a.tenant_id}=${a.api_key}`);
  const scenarios: Record<string, Shape & { path: string }> = {
    simulate: { path: "/v1/simulate", method: "POST", body: { preset: "small_payment" }, headers: key },
    protect: { path: "/v1/protect", method: "POST", body: { action: "payment.send", resource: "vendor/acme", amount: 120, currency: "USD" }, keys },
    protect_one_tenant: { path: "/v1/protect", method: "POST", body: { action: "payment.send", resource: "vendor/acme", amount: 120, currency: "USD" }, headers: key },
    protect_execute: { path: "/v1/protect", method: "POST", body: { action: "document.read", resource: "docs/handbook.pdf" }, keys, pair: true },
    key_list: { path: "/customer/keys", method: "GET", headers: { Authorization: `Bearer ${account.token}` } },
    // One caller, one request at a time: the latency a bot sees when warden is not busy.
    simulate_one_caller: { path: "/v1/simulate", method: "POST", body: { preset: "small_payment" }, headers: key, connections: 1 },
    protect_one_caller: { path: "/v1/protect", method: "POST", body: { action: "payment.send", resource: "vendor/acme", amount: 120, currency: "USD" }, headers: key, connections: 1 },
    // Last, and with 8 connections: bcrypt (cost 12, ~250 ms of CPU each) is slow on purpose, and
    // 64 waiting logins would only measure the queue. Its backlog must not spill into others.
    login: { path: "/auth/login", method: "POST", body: { email, password }, connections: 8, timeout: "10s" },
  };
  const rows: Row[] = [];
  for (const [name, shape] of Object.entries(scenarios)) {
    if (ONLY && !ONLY.includes(name)) continue;
    await wrk(url + shape.path, shape, WARMUP); // warm-up, not counted
    const cpu0 = { service: cpuSeconds(proc.pid), pg: postgresCpuSeconds(), machine: machineBusySeconds() };
    const r = await wrk(url + shape.path, shape, SECONDS);
    const wall = r.duration_us / 1e6;
    const service_cores = (cpuSeconds(proc.pid) - cpu0.service) / wall;
    const service_cpu = cores2(service_cores);
    const postgres_cpu = cores2((postgresCpuSeconds() - cpu0.pg) / wall);
    const machine_cores = (machineBusySeconds() - cpu0.machine) / wall;
    const machine_cpu = cores2(machine_cores);
    const rps = r.requests / (r.duration_us / 1e6);
    const errors = Object.values(r.errors).reduce((a, b) => a + b, 0);
    rows.push({
      database: label,
      scenario: shape.connections ? `${name} (${shape.connections} conn.)` : name,
      rps: Math.round(rps),
      p50_ms: r.p50 / 1000,
      p99_ms: r.p99 / 1000,
      max_ms: r.max / 1000,
      errors,
      rss_mb: Math.round(rssMb(proc.pid)),
      ratio_to_ceiling: Math.round((rps / ceilingRps) * 1000) / 1000,
      service_cpu,
      postgres_cpu,
      machine_cpu,
      service_us_per_request: usPerRequest(service_cores, rps),
      machine_us_per_request: usPerRequest(machine_cores, rps),
    });
    console.log(`bench: ${label} ${name}: ${Math.round(rps)} req/s, p99 ${r.p99 / 1000} ms, ${errors} errors, cores: service ${service_cpu}, postgres ${postgres_cpu}, machine ${machine_cpu}`);
  }
  const correctness = await checkUnderLoad(url, accounts);
  await stopService(proc);
  // Every tenant's chain re-walked by the operator command (the service is stopped: on the
  // embedded database only one process may hold it).
  for (const a of accounts) cliOps(["receipts", "check", a.tenant_id], env);
  console.log(`bench: ${label} correctness: ${correctness}; ${accounts.length} chains verified`);
  rmSync(dataDir, { recursive: true, force: true });
  return { rows, startup_ms, correctness: `${correctness}; ${accounts.length} chains verified by ops receipts check` };
}

/**
 * Correctness under load: a bounded run of protect (and execute of every third allowed receipt)
 * whose every answer this process counts, then the stored receipts and the quota counters must
 * have grown by exactly the number of 200s. (wrk cannot prove this: requests in flight when it
 * stops still complete on the server.)
 */
async function checkUnderLoad(url: string, accounts: { token: string; api_key: string }[]): Promise<string> {
  const CALLS = Number(process.env.BENCH_CHECK_CALLS ?? 3000);
  const totals = async () => {
    let stored = 0;
    let counted = 0;
    for (const a of accounts) {
      const d = (await (await fetch(`${url}/customer/dashboard`, { ...insecure, headers: { authorization: `Bearer ${a.token}` } })).json()) as { usage: { protect_today: number; execute_today: number; receipts_stored: number } };
      stored += d.usage.receipts_stored;
      counted += d.usage.protect_today + d.usage.execute_today;
    }
    return { stored, counted };
  };
  await Bun.sleep(500); // what wrk left in flight finishes first
  const before = await totals();
  let sent = 0;
  let ok = 0;
  let refused = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, lane) => {
      while (sent < CALLS) {
        const n = sent++;
        const headers = { "content-type": "application/json", "x-api-key": accounts[(lane + n) % accounts.length].api_key };
        const res = await fetch(`${url}/v1/protect`, { ...insecure, method: "POST", headers, body: JSON.stringify({ action: "document.read", resource: `docs/${n}` }) });
        const body = (await res.json()) as { receipt_id?: string; decision?: string };
        if (res.status !== 200) {
          refused++;
          continue;
        }
        ok++;
        if (n % 3 === 0 && body.decision === "ALLOWED") {
          const ex = await fetch(`${url}/v1/execute`, { ...insecure, method: "POST", headers, body: JSON.stringify({ receipt_id: body.receipt_id }) });
          await ex.arrayBuffer();
          if (ex.status === 200) ok++;
          else refused++;
        }
      }
    }),
  );
  const after = await totals();
  const summary = `${ok} answered 200 (${refused} refused); stored receipts +${after.stored - before.stored}, quota counters +${after.counted - before.counted}`;
  if (after.stored - before.stored !== ok || after.counted - before.counted !== ok || refused !== 0) throw new Error(`correctness under load failed: ${summary}`);
  return summary;
}

function table(rows: Row[], ceiling: Ceiling, startups: Record<string, number>, checks: Record<string, string>): string {
  const lines = [
    ...Object.entries(checks).map(([db, c]) => `Correctness under load (${db}): ${c}.`),
    `Bare Bun.serve TLS ceiling: ${ceiling.rps} req/s, p99 ${ceiling.p99_ms} ms (${CONNECTIONS} connections, ${THREADS} wrk threads, ${SECONDS} s); ` +
      `machine ${ceiling.machine_cpu} of ${cpus().length} cores busy, ${ceiling.machine_us_per_request} µs of machine CPU per request.`,
    "When the machine's cores are all busy in both runs, a scenario's ratio to the ceiling is about the ceiling's machine CPU per request over the scenario's; the last columns say how busy it was and where that CPU went.",
    `Start-up to a ready /health on an existing data directory: ${Object.entries(startups).map(([k, v]) => `${k} ${v} ms`).join(", ")}.`,
    `protect and protect_execute spread ${TENANTS} tenants over the connections; protect_one_tenant is one tenant's log, whose appends take turns.`,
    "Rows marked (1 conn.) are one caller sending one request at a time: their latency is what a bot sees when warden is otherwise idle, and their ratio to the ceiling means nothing.",
    "",
    "| database | scenario | req/s | p50 ms | p99 ms | max ms | errors | RSS MB | ratio to ceiling | cores: service | cores: PostgreSQL | cores: machine | µs CPU per request: service / machine |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map((r) => `| ${r.database} | ${r.scenario} | ${r.rps} | ${r.p50_ms} | ${r.p99_ms} | ${r.max_ms} | ${r.errors} | ${r.rss_mb} | ${r.ratio_to_ceiling} | ${r.service_cpu} | ${r.postgres_cpu} | ${r.machine_cpu} | ${r.service_us_per_request} / ${r.machine_us_per_request} |`),
  ];
  return lines.join("\n");
}

ensureWrk();
const certDir = mkdtempSync(join(tmpdir(), "warden-ceiling-"));
const ceilingProc = Bun.spawn([process.execPath, "scripts/bench/ceiling.ts", certDir], { cwd: ROOT, stdout: "pipe", stderr: "inherit" });
const reader = ceilingProc.stdout.getReader();
const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
await wrk(`https://127.0.0.1:${port}/`, {}, WARMUP);
const machine0 = machineBusySeconds();
const c = await wrk(`https://127.0.0.1:${port}/`, {}, SECONDS);
const ceilingCores = (machineBusySeconds() - machine0) / (c.duration_us / 1e6);
const ceilingRps = c.requests / (c.duration_us / 1e6);
const ceiling: Ceiling = {
  rps: Math.round(ceilingRps),
  p99_ms: c.p99 / 1000,
  machine_cpu: cores2(ceilingCores),
  machine_us_per_request: usPerRequest(ceilingCores, ceilingRps),
};
ceilingProc.kill();
rmSync(certDir, { recursive: true, force: true });
console.log(`bench: ceiling ${ceiling.rps} req/s, machine ${ceiling.machine_cpu} cores busy`);

const rows: Row[] = [];
const startups: Record<string, number> = {};
const checks: Record<string, string> = {};
// BENCH_DATABASES=postgres skips the embedded database (profiling one side only).
const DATABASES = process.env.BENCH_DATABASES?.split(",") ?? ["embedded", "postgres"];
if (DATABASES.includes("embedded")) {
  const embedded = await benchDatabase("embedded", { DATABASE_URL: "" }, ceiling.rps);
  rows.push(...embedded.rows);
  startups.embedded = embedded.startup_ms;
  checks.embedded = embedded.correctness;
}
if (process.env.DATABASE_URL && DATABASES.includes("postgres")) {
  const pg = await benchDatabase("postgres", { DATABASE_URL: process.env.DATABASE_URL }, ceiling.rps);
  rows.push(...pg.rows);
  startups.postgres = pg.startup_ms;
  checks.postgres = pg.correctness;
}

const stamp = new Date().toISOString().replace(/[:]/g, "-").replace(/\..+/, "");
// A partial run (some scenarios or databases only) is a working measurement: it goes to
// bench/results/scratch/, which git ignores; full runs are the record.
const partial = ONLY !== undefined || process.env.BENCH_DATABASES !== undefined;
const resultsDir = join(ROOT, partial ? "bench/results/scratch" : "bench/results");
mkdirSync(resultsDir, { recursive: true });
const md = table(rows, ceiling, startups, checks);
writeFileSync(join(resultsDir, `${stamp}.json`), JSON.stringify({ date: new Date().toISOString(), connections: CONNECTIONS, threads: THREADS, seconds: SECONDS, ceiling, startup_ms: startups, correctness: checks, rows }, null, 2) + "\n");
writeFileSync(join(resultsDir, `${stamp}.md`), md + "\n");
console.log("\n" + md);
