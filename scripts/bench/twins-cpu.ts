// The entity twins' CPU a request, in alternating rounds on one service: simulate_entities and
// simulate_no_entities (or the protect pair with `protect`) under wrk, the service's CPU seconds
// (all its threads) per request answered. CPU a request is steadier than throughput on a shared
// machine, and the two share one service, so its warm-up and the machine's drift fall on both.
//
//   bun scripts/bench/twins-cpu.ts [simulate|protect] [rounds]      TWINS_SECONDS (5)
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuSeconds } from "./proc.ts";
import { loadEntityTenant, scenarios } from "./scenarios.ts";
import { startWithTenants, stopService, toolDatabase } from "./service.ts";
import { ensureWrk, startWrk } from "./wrk.ts";

const ROOT = process.env.BENCH_ROOT ?? join(import.meta.dir, "../..");
const kind = process.argv[2] ?? "simulate";
const ROUNDS = Number(process.argv[3] ?? 6);
const SECONDS = Number(process.env.TWINS_SECONDS ?? 5);

ensureWrk();
const dir = mkdtempSync(join(tmpdir(), "warden-twins-"));
const database = await toolDatabase("warden_twins");
const password = "twins passphrase, long enough";
const env = { DATA_DIR: join(dir, "data"), DATABASE_URL: database.url, LOG_LEVEL: "warn", BCRYPT_COST: "4" };
const { service, accounts } = await startWithTenants(ROOT, env, { tenants: 4, name: "twins", password });
const entities = { tenant: accounts.pop()!, twin: accounts.pop()! };
await loadEntityTenant(service.url, entities.tenant, entities.twin);
const shapes = scenarios(accounts, password, undefined, entities);
const names = [`${kind}_entities`, `${kind}_no_entities`];

async function round(name: string, seconds: number) {
  const before = cpuSeconds(service.proc.pid);
  const r = await startWrk(service.url, shapes[name]!, { seconds, connections: 32, threads: 1 }).result;
  const cpu = cpuSeconds(service.proc.pid) - before;
  return { rps: r.requests / (r.duration_us / 1e6), us: (cpu / r.requests) * 1e6 };
}

try {
  for (const name of names) await round(name, 3); // warm-up
  const got: Record<string, { rps: number; us: number }[]> = { [names[0]!]: [], [names[1]!]: [] };
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const r = await round(name, SECONDS);
      got[name]!.push(r);
      console.log(`${name}: ${r.rps.toFixed(0)} req/s, ${r.us.toFixed(1)} µs CPU a request`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const [e, t] = names.map((n) => got[n]!);
  console.log(`medians: ${names[0]} ${median(e!.map((r) => r.rps)).toFixed(0)} req/s ${median(e!.map((r) => r.us)).toFixed(1)} µs; ${names[1]} ${median(t!.map((r) => r.rps)).toFixed(0)} req/s ${median(t!.map((r) => r.us)).toFixed(1)} µs`);
  console.log(`ratio (req/s, medians): ${((median(e!.map((r) => r.rps)) / median(t!.map((r) => r.rps))) * 100).toFixed(1)}%; CPU: ${((median(t!.map((r) => r.us)) / median(e!.map((r) => r.us))) * 100).toFixed(1)}%`);
} finally {
  await stopService(service);
  await database.drop();
}
