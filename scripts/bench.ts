// npm run bench: the service under load from wrk in another process, next to a bare Bun.serve
// TLS endpoint (the machine's ceiling), measured in one run. Embedded database first, then the
// real PostgreSQL server when DATABASE_URL is given (in a fresh database made beside it). Throughput is wrk's at saturation; latency is
// measured apart, at a fixed offered rate of about half that throughput (open loop:
// scripts/bench/fixed-rate.ts), since latency at saturation is only the length of the queue.
// Writes bench/results/<date>.{json,md}.
//
//   npm run bench                          # embedded only
//   DATABASE_URL=postgres://... npm run bench
//   BENCH_SECONDS=10 BENCH_CONNECTIONS=64 BENCH_ONLY=simulate,protect npm run bench
//   BENCH_RATE_FRACTION=0.5 BENCH_RATE_SECONDS=12 BENCH_RATE_SCENARIOS=simulate,protect npm run bench
//   BENCH_RATE_FLOOR=0 npm run bench       # without the fixed-rate runs' floor (the generator against a bare TLS server)
//   SCALE_RECEIPTS=20000 npm run bench     # the receipt log at scale (scripts/bench/scale.ts); BENCH_SCALE=0 skips it
//   BENCH_PEERS=0 npm run bench            # without warden beside Cerbos, Cedar and Casbin (scripts/bench/peers.ts, last)
//   BENCH_ONLY=protect_growing npm run bench   # one tenant's log growing on a new database, 3 minutes (scripts/bench/growing.ts)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import type { FixedRateResult } from "./bench/fixed-rate.ts";
import { policyImpact, type ImpactResult } from "./bench/impact.ts";
import { cpuSeconds, machineBusySeconds, postgresCpuSeconds, rssMb } from "./bench/proc.ts";
import { sampledFixedRate, type SchedSummary } from "./bench/sampled.ts";
import { growingScenario, type GrowingResult, growingTable } from "./bench/growing.ts";
import { peersOptions, type PeersResult, peersTable, runPeers } from "./bench/peers.ts";
import { scaleScenario, scaleTable, type ScaleResult } from "./bench/scale.ts";
import { BUDGET_POLICY, loadEntityTenant, scenarios } from "./bench/scenarios.ts";
import { remoteMcpLatency, remoteMcpLine, startBenchUpstream, type BenchUpstream } from "./bench/remote-mcp.ts";
import { cliOps, freshPostgresDatabase, insecure, type Account, startWithTenants, stopService } from "./bench/service.ts";
import { alternateTwins, twinRatios, type TwinRun } from "./bench/twins.ts";
import { ensureWrk, type Shape, wrk as runWrk } from "./bench/wrk.ts";

const ROOT = join(import.meta.dir, "..");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const THREADS = Number(process.env.BENCH_THREADS ?? 2);
const ONLY = process.env.BENCH_ONLY?.split(",");
const TENANTS = Number(process.env.BENCH_TENANTS ?? 16);
const RATE_FRACTION = Number(process.env.BENCH_RATE_FRACTION ?? 0.5);
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 12);
const RATE_SCENARIOS = (process.env.BENCH_RATE_SCENARIOS ?? "simulate,protect").split(",");
const RATE_FLOOR = process.env.BENCH_RATE_FLOOR !== "0";
const SCALE = process.env.BENCH_SCALE !== "0";
const PEERS = process.env.BENCH_PEERS !== "0" && (!ONLY || ONLY.includes("peers"));
// protect_growing runs on a service and a new database of its own, after the others of its database.
const GROWING = !ONLY || ONLY.includes("protect_growing");
const MAIN = !ONLY || ONLY.some((name) => name !== "protect_growing" && name !== "peers");

interface Row {
  database: string;
  scenario: string;
  rps: number;
  /** wrk's latency at saturation: the queue's length more than the service's speed; the report shows FixedRateRow's. */
  p50_ms: number;
  p99_ms: number;
  p999_ms: number;
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

/** A scenario at a fixed offered rate, a fraction of its throughput at saturation in the same run. */
interface FixedRateRow extends Omit<FixedRateResult, "worst_ms_per_100ms" | "window_start_epoch_ms"> {
  database: string;
  scenario: string;
  fraction_of_saturation: number;
  /** What the scheduler saw meanwhile (scripts/bench/sampled.ts): cores and run-queue waits of the service, the generator, PostgreSQL, other work. */
  sched: SchedSummary;
  /** The same generator at the same rate against a bare Bun.serve TLS server: the floor under any server's percentiles on this machine then. */
  floor?: { p50_ms: number; p99_ms: number; p999_ms: number; max_ms: number; sched: SchedSummary };
}

interface Ceiling {
  rps: number;
  p99_ms: number;
  machine_cpu: number;
  machine_us_per_request: number;
}

const wrk = (url: string, shape: Shape, seconds: number) => runWrk(url, shape, { seconds, connections: CONNECTIONS, threads: THREADS });
/** The entity twins in alternating runs, per database: their lines for the table (alternateEntityTwins()). */
const entityAlternating: string[] = [];
/** What a remote MCP gateway adds to a tool call, per database (scripts/bench/remote-mcp.ts). */
const remoteMcp: string[] = [];
/** The remote gateways' upstream, for every database's service (it trusts its certificate). */
let benchUpstream: BenchUpstream | undefined;

/** Cores as reported: two decimals. */
const cores2 = (cores: number) => Math.round(cores * 100) / 100;

/** Per-request CPU cost in microseconds from cores busy and requests per second. */
const usPerRequest = (cores: number, rps: number) => (rps > 0 ? Math.round((cores * 1e6) / rps) : 0);

/**
 * The fixed-rate generator at `rate` against a bare Bun.serve TLS server (ceiling.ts): what the
 * generator and the machine, as busy as they are now, put under any server's percentiles.
 */
async function floorRun(rate: number): Promise<FixedRateRow["floor"]> {
  const certDir = mkdtempSync(join(tmpdir(), "warden-floor-"));
  const server = Bun.spawn([process.execPath, "scripts/bench/ceiling.ts", certDir], { cwd: ROOT, stdout: "pipe", stderr: "inherit" });
  try {
    const port = Number(new TextDecoder().decode((await server.stdout.getReader().read()).value).trim());
    const run = await sampledFixedRate(`https://127.0.0.1:${port}`, { path: "/" }, { rate, seconds: RATE_SECONDS, warmup: 2, connections: CONNECTIONS, serverPid: server.pid, postgres: false });
    return { p50_ms: run.fixed.p50_ms, p99_ms: run.fixed.p99_ms, p999_ms: run.fixed.p999_ms, max_ms: run.fixed.max_ms, sched: run.sched };
  } finally {
    server.kill();
    await server.exited;
    rmSync(certDir, { recursive: true, force: true });
  }
}

async function benchDatabase(
  label: "embedded" | "postgres",
  dbEnv: Record<string, string>,
  ceilingRps: number,
): Promise<{ rows: Row[]; fixed: FixedRateRow[]; impact?: ImpactResult & { database: string }; startup_ms: number; correctness: string; scale?: ScaleResult }> {
  const dataDir = mkdtempSync(join(tmpdir(), "warden-bench-"));
  const env = {
    ...dbEnv,
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info",
    BCRYPT_COST: process.env.BENCH_BCRYPT_COST ?? "12",
    // The login scenario measures login, not the brute-force limiter (which would answer 429).
    RATE_LIMIT_AUTH_ADDRESS: "100000000/60",
    RATE_LIMIT_LOGIN_EMAIL: "100000000/60",
    RATE_LIMIT_LOGIN_PAIR: "100000000/60",
    RATE_LIMIT_AUTH_NETWORK: "100000000/60",
    // Nor the cap on concurrent hashes (which would answer 503 beyond it).
    PASSWORD_HASH_CONCURRENCY: "1024",
    // The remote gateway's upstream is on the loopback, with a certificate of its own.
    WEBHOOK_ALLOW_PRIVATE: "1",
    ...(benchUpstream ? { NODE_EXTRA_CA_CERTS: benchUpstream.cert } : {}),
  };

  // Deterministic set-up through the public API: TENANTS tenants on enterprise, their sessions
  // and keys; the start-up measured is the second, on an existing data directory. One more
  // tenant, kept out of the other scenarios, holds the scale scenario's big log.
  const password = "bench passphrase, long enough";
  const flags = process.env.BENCH_BUN_FLAGS?.split(" ").filter(Boolean) ?? [];
  const started = await startWithTenants(ROOT, env, { tenants: TENANTS + 4 + (SCALE ? 1 : 0), name: "bench", password, flags });
  const { service, startup_ms } = started;
  const accounts = started.accounts.slice(0, TENANTS);
  const { proc, url } = service;
  // One more tenant, with a per-key daily budget that never binds: protect_budget beside protect_one_tenant.
  const budget = started.accounts[TENANTS + (SCALE ? 1 : 0)];
  const published = await fetch(`${url}/customer/policy`, { ...insecure, method: "PUT", headers: { "content-type": "application/json", authorization: `Bearer ${budget.token}` }, body: JSON.stringify({ document: BUDGET_POLICY }) });
  if (!published.ok) throw new Error(`the budget policy: ${published.status} ${await published.text()}`);
  // Two more: one with 10,000 entities and a policy that reads them (the *_entities scenarios), one
  // with the same rules reading none (their *_no_entities twins).
  const entityTenant = { tenant: started.accounts[TENANTS + (SCALE ? 1 : 0) + 1], twin: started.accounts[TENANTS + (SCALE ? 1 : 0) + 2] };
  await loadEntityTenant(url, entityTenant.tenant, entityTenant.twin);
  const rows: Row[] = [];
  const fixed: FixedRateRow[] = [];
  for (const [name, shape] of Object.entries(scenarios(accounts, password, budget, entityTenant))) {
    if (ONLY && !ONLY.includes(name)) continue;
    await wrk(url, shape, WARMUP); // warm-up, not counted
    const cpu0 = { service: cpuSeconds(proc.pid), pg: postgresCpuSeconds(), machine: machineBusySeconds() };
    const r = await wrk(url, shape, SECONDS);
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
      p999_ms: r.p999 / 1000,
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
    console.log(`bench: ${label} ${name}: ${Math.round(rps)} req/s, ${errors} errors, cores: service ${service_cpu}, postgres ${postgres_cpu}, machine ${machine_cpu}`);
    if (RATE_SCENARIOS.includes(name) && rps > 0) {
      const rate = Math.max(1, Math.round(rps * RATE_FRACTION));
      const run = await sampledFixedRate(url, shape, { rate, seconds: RATE_SECONDS, warmup: 2, connections: CONNECTIONS, serverPid: proc.pid, postgres: label === "postgres" });
      const { worst_ms_per_100ms: _w, window_start_epoch_ms: _s, ...f } = run.fixed;
      const floor = RATE_FLOOR ? await floorRun(rate) : undefined;
      fixed.push({ database: label, scenario: name, fraction_of_saturation: RATE_FRACTION, ...f, sched: run.sched, floor });
      console.log(
        `bench: ${label} ${name} at ${f.offered_rps} req/s offered (${f.achieved_rps} achieved): p50 ${f.p50_ms} ms, p99 ${f.p99_ms} ms, p99.9 ${f.p999_ms} ms, ${f.errors} errors; ` +
          `service ${run.sched.server_cores} cores, its main thread waited ${run.sched.server_main_wait_ms_per_s} ms/s for a core; other work ${run.sched.other_cores} cores` +
          (floor ? `; floor p99 ${floor.p99_ms} ms, p99.9 ${floor.p999_ms} ms` : ""),
      );
    }
  }
  entityAlternating.push(...(await alternateEntityTwins(url, proc.pid, scenarios(accounts, password, budget, entityTenant), label)));
  // One more tenant: a remote MCP gateway in front of the bench's upstream, one caller.
  if (benchUpstream && (!ONLY || ONLY.includes("remote_mcp"))) {
    const line = remoteMcpLine(await remoteMcpLatency(url, started.accounts[TENANTS + (SCALE ? 1 : 0) + 3]!, benchUpstream, label));
    console.log(`bench: ${line}`);
    remoteMcp.push(line);
  }
  const scale = SCALE ? await scaleScenario(service, started.accounts[TENANTS], accounts[1], label) : undefined;
  const correctness = await checkUnderLoad(url, accounts);
  // After the check: its 10,000 protects would otherwise count in the check's totals.
  let impact: (ImpactResult & { database: string }) | undefined;
  if (!ONLY || ONLY.includes("policy_impact")) {
    impact = { database: label, ...(await policyImpact(url, accounts[0])) };
    console.log(`bench: ${label} policy_impact: ${impact.evaluated} receipts in p50 ${impact.p50_ms} ms, max ${impact.max_ms} ms`);
  }
  await stopService(service);
  // Every tenant's chain re-walked by the operator command (the service is stopped: on the
  // embedded database only one process may hold it).
  for (const a of accounts) cliOps(ROOT, ["receipts", "check", a.tenant_id], env);
  console.log(`bench: ${label} correctness: ${correctness}; ${accounts.length} chains verified`);
  rmSync(dataDir, { recursive: true, force: true });
  return { rows, fixed, impact, startup_ms, correctness: `${correctness}; ${accounts.length} chains verified by ops receipts check`, scale };
}

/**
 * Correctness under load: a bounded run of protect (and execute of every third allowed receipt)
 * whose every answer this process counts, then the stored receipts and the quota counters must
 * have grown by exactly the number of 200s. (wrk cannot prove this: requests in flight when it
 * stops still complete on the server.)
 */
async function checkUnderLoad(url: string, accounts: Account[]): Promise<string> {
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

function table(rows: Row[], fixed: FixedRateRow[], impacts: (ImpactResult & { database: string })[], ceiling: Ceiling, startups: Record<string, number>, checks: Record<string, string>, scale: Record<string, ScaleResult>): string {
  const oneCaller = rows.filter((r) => r.scenario.endsWith("(1 conn.)"));
  const lines = [
    ...Object.entries(checks).map(([db, c]) => `Correctness under load (${db}): ${c}.`),
    `Bare Bun.serve TLS ceiling: ${ceiling.rps} req/s, p99 ${ceiling.p99_ms} ms (${CONNECTIONS} connections, ${THREADS} wrk threads, ${SECONDS} s); ` +
      `machine ${ceiling.machine_cpu} of ${cpus().length} cores busy, ${ceiling.machine_us_per_request} µs of machine CPU per request.`,
    "When the machine's cores are all busy in both runs, a scenario's ratio to the ceiling is about the ceiling's machine CPU per request over the scenario's; the last columns say how busy it was and where that CPU went.",
    `Start-up to a ready /health on an existing data directory: ${Object.entries(startups).map(([k, v]) => `${k} ${v} ms`).join(", ")}.`,
    `protect and protect_execute spread ${TENANTS} tenants over the connections; protect_one_tenant is one tenant's log, whose appends take turns.`,
    "Rows marked (1 conn.) are one caller sending one request at a time: their ratio to the ceiling means nothing.",
    "",
    `Throughput at saturation (wrk, ${CONNECTIONS} connections, closed loop):`,
    "",
    "| database | scenario | req/s | errors | RSS MB | ratio to ceiling | cores: service | cores: PostgreSQL | cores: machine | µs CPU per request: service / machine |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map((r) => `| ${r.database} | ${r.scenario} | ${r.rps} | ${r.errors} | ${r.rss_mb} | ${r.ratio_to_ceiling} | ${r.service_cpu} | ${r.postgres_cpu} | ${r.machine_cpu} | ${r.service_us_per_request} / ${r.machine_us_per_request} |`),
    ...entityRatios(rows),
    ...(remoteMcp.length ? ["", ...remoteMcp] : []),
    "",
    `Latency where users feel it: each scenario offered a constant ${Math.round(RATE_FRACTION * 100)}% of its own throughput above for ${RATE_SECONDS} s (open loop over at most ${CONNECTIONS} connections, ` +
      "each request timed from when it was due, so a stall counts against every request it delays; the generator is a Bun process on the same cores, its lag column says how late its timer sent); " +
      "then one caller at a time (wrk, 1 connection), the latency a bot sees when warden is otherwise idle. The ratios are to that one caller's p99 in this run. " +
      "Beside each, what the scheduler saw (scripts/bench/sampled.ts): the service's cores and how long its main thread waited on a run queue for a core, the generator's, and the cores other work on the machine took; " +
      "and the floor: right after, the same generator at the same rate against a bare Bun.serve TLS server, what the generator and the machine put under any server's percentiles (when other work's cores differ between the two, so may the floor).",
    "",
    "| database | scenario | offered req/s | achieved req/s | p50 ms | p99 ms | p99.9 ms | max ms | errors | p99 / p99.9 ÷ one caller's p99 | service: cores / main thread's run-queue wait ms/s | generator: cores / wait ms/s / lag p99 ms | other work: cores | floor: p99 / p99.9 ms (other work: cores) |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|---|",
    ...fixed.map((f) => {
      const one = oneCaller.find((r) => r.database === f.database && r.scenario.startsWith(`${f.scenario}_one_caller`));
      const ratio = one ? `${(f.p99_ms / one.p99_ms).toFixed(1)}x / ${(f.p999_ms / one.p99_ms).toFixed(1)}x` : "—";
      const s = f.sched;
      return (
        `| ${f.database} | ${f.scenario} | ${f.offered_rps} | ${f.achieved_rps} | ${f.p50_ms} | ${f.p99_ms} | ${f.p999_ms} | ${f.max_ms} | ${f.errors} | ${ratio} | ` +
        `${s.server_cores} / ${s.server_main_wait_ms_per_s} | ${s.generator_cores} / ${s.generator_wait_ms_per_s} / ${f.send_lag_p99_ms} | ${s.other_cores} | ${f.floor ? `${f.floor.p99_ms} / ${f.floor.p999_ms} (${f.floor.sched.other_cores})` : "—"} |`
      );
    }),
    ...oneCaller.map((r) => `| ${r.database} | ${r.scenario} | — | ${r.rps} | ${r.p50_ms} | ${r.p99_ms} | ${r.p999_ms} | ${r.max_ms} | ${r.errors} | | | | | |`),
    ...(Object.keys(scale).length === 0
      ? []
      : [
          "",
          "The receipt log at scale: one tenant's log filled through POST /v1/protect; checkpoint and proof latency one request at a time at 1,000 receipts and at full size (consistency proofs and level-0 tiles at full size); " +
            "the CPU per log read (service and PostgreSQL, the loops alone); another tenant's simulate at a fixed rate, quiet and beside loops of the big log's checkpoints and proofs, in alternating pairs (medians; each pair in the JSON); " +
            "the export's time and peak RSS; the service's RSS after.",
          "",
          scaleTable(scale),
        ]),
    ...(impacts.length
      ? [
          "",
          "policy_impact: one tenant's latest stored protect receipts decided again under a draft (POST /customer/policy/impact), one request at a time after a warm-up; budget 2 s for 10,000.",
          "",
          "| database | receipts | rounds | p50 ms | max ms | changed |",
          "|---|---:|---:|---:|---:|---:|",
          ...impacts.map((i) => `| ${i.database} | ${i.receipts} | ${i.rounds} | ${i.p50_ms} | ${i.max_ms} | ${i.changed} |`),
        ]
      : []),
  ];
  return lines.join("\n");
}

ensureWrk();
const certDir = mkdtempSync(join(tmpdir(), "warden-ceiling-"));
const ceilingProc = Bun.spawn([process.execPath, "scripts/bench/ceiling.ts", certDir], { cwd: ROOT, stdout: "pipe", stderr: "inherit" });
const reader = ceilingProc.stdout.getReader();
const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
await wrk(`https://127.0.0.1:${port}`, { path: "/" }, WARMUP);
const machine0 = machineBusySeconds();
const c = await wrk(`https://127.0.0.1:${port}`, { path: "/" }, SECONDS);
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
const fixed: FixedRateRow[] = [];
const impacts: (ImpactResult & { database: string })[] = [];
const startups: Record<string, number> = {};
const checks: Record<string, string> = {};
const scale: Record<string, ScaleResult> = {};
const growing: GrowingResult[] = [];
// BENCH_DATABASES=postgres skips the embedded database (profiling one side only).
const DATABASES = process.env.BENCH_DATABASES?.split(",") ?? ["embedded", "postgres"];
if (MAIN) benchUpstream = await startBenchUpstream();
if (DATABASES.includes("embedded")) {
  if (MAIN) {
    const embedded = await benchDatabase("embedded", { DATABASE_URL: "" }, ceiling.rps);
    rows.push(...embedded.rows);
    fixed.push(...embedded.fixed);
    if (embedded.impact) impacts.push(embedded.impact);
    startups.embedded = embedded.startup_ms;
    checks.embedded = embedded.correctness;
    if (embedded.scale) scale.embedded = embedded.scale;
  }
  if (GROWING) growing.push(await growingScenario(ROOT, "embedded", { DATABASE_URL: "" }));
}
if (process.env.DATABASE_URL && DATABASES.includes("postgres")) {
  if (MAIN) {
    // A database of its own beside DATABASE_URL's, dropped after: the run never writes into that one.
    const database = await freshPostgresDatabase(process.env.DATABASE_URL, "warden_bench");
    const pg = await benchDatabase("postgres", { DATABASE_URL: database.url }, ceiling.rps).finally(() => database.drop());
    rows.push(...pg.rows);
    fixed.push(...pg.fixed);
    if (pg.impact) impacts.push(pg.impact);
    startups.postgres = pg.startup_ms;
    checks.postgres = pg.correctness;
    if (pg.scale) scale.postgres = pg.scale;
  }
  if (GROWING) {
    const database = await freshPostgresDatabase(process.env.DATABASE_URL, "warden_growing");
    growing.push(await growingScenario(ROOT, "postgres", { DATABASE_URL: database.url }).finally(() => database.drop()));
  }
}

// Last, on the embedded database unless PEERS_DATABASE=postgres: a service of its own.
const peers: PeersResult | undefined = PEERS ? await runPeers(peersOptions()) : undefined;

const stamp = new Date().toISOString().replace(/[:]/g, "-").replace(/\..+/, "");
// A partial run (some scenarios or databases only) is a working measurement: it goes to
// bench/results/scratch/, which git ignores; full runs are the record.
const partial = ONLY !== undefined || process.env.BENCH_DATABASES !== undefined;
const resultsDir = join(ROOT, partial ? "bench/results/scratch" : "bench/results");
mkdirSync(resultsDir, { recursive: true });
// A run of protect_growing (or the peers) alone has no rows for the main tables.
const md = [...(MAIN ? [table(rows, fixed, impacts, ceiling, startups, checks, scale)] : []), ...(growing.length ? [growingTable(growing)] : []), ...(peers ? [peersTable(peers)] : [])].join("\n\n");
writeFileSync(join(resultsDir, `${stamp}.json`), JSON.stringify({ date: new Date().toISOString(), connections: CONNECTIONS, threads: THREADS, seconds: SECONDS, ceiling, startup_ms: startups, correctness: checks, rows, fixed_rate: fixed, policy_impact: impacts, scale, protect_growing: growing, peers }, null, 2) + "\n");
writeFileSync(join(resultsDir, `${stamp}.md`), md + "\n");
console.log("\n" + md);
// The remote gateways' upstream would keep the process up.
benchUpstream?.stop();

/**
 * Each *_entities scenario and its *_no_entities twin again, in five alternating pairs of half the
 * usual length (scripts/bench/twins.ts): one pair moves by more than the entities cost on a shared
 * machine. The ratio of the medians, of throughput and of the service's CPU a request (all its
 * threads; the steadier of the two).
 */
async function alternateEntityTwins(url: string, pid: number, shapes: Record<string, Shape>, label: string): Promise<string[]> {
  const lines: string[] = [];
  for (const name of ["simulate", "protect"]) {
    const plain = shapes[`${name}_no_entities`];
    const entities = shapes[`${name}_entities`];
    if (!plain || !entities || (ONLY && !ONLY.includes(`${name}_entities`))) continue;
    const runs = await alternateTwins(pid, (shape) => wrk(url, shape, Math.max(2, SECONDS / 2)), { plain, entities }, 5);
    const r = twinRatios(runs);
    const rps = (xs: TwinRun[]) => xs.map((x) => Math.round(x.rps)).join(", ");
    const pct = (x: number) => Math.round(x * 1000) / 10;
    const us = (x: number) => Math.round(x * 10) / 10;
    const line =
      `Entities (${label}, alternating): ${name}_entities ${rps(runs.entities)} req/s against ${name}_no_entities ${rps(runs.plain)}: ${pct(r.rps)}% (medians); ` +
      `service CPU a request ${us(r.us.entities)} µs against ${us(r.us.plain)} µs: ${pct(r.cpu)}%.`;
    console.log(`bench: ${line}`);
    lines.push(line);
  }
  return lines;
}

/** The entities' cost: each *_entities scenario's req/s over its *_no_entities twin's, per database (the target: at least 90%). */
function entityRatios(rows: Row[]): string[] {
  const out: string[] = [...entityAlternating];
  for (const r of rows.filter((x) => x.scenario.endsWith("_entities") && !x.scenario.endsWith("_no_entities"))) {
    const twin = rows.find((x) => x.database === r.database && x.scenario === r.scenario.replace(/_entities$/, "_no_entities"));
    if (twin && twin.rps > 0) out.push(`${out.length === 0 ? "\n" : ""}Entities (${r.database}): ${r.scenario} ${r.rps} req/s, ${Math.round((r.rps / twin.rps) * 1000) / 10}% of ${twin.scenario} (${twin.rps}).`);
  }
  return out;
}
