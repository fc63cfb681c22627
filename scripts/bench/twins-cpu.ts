// The entity twins' CPU a request, in alternating rounds on one service: simulate_entities and
// simulate_no_entities (or the protect pair with `protect`) under wrk, the service's CPU seconds
// (all its threads) per request answered. CPU a request is steadier than throughput on a shared
// machine, and the two share one service, so its warm-up and the machine's drift fall on both.
//
//   bun scripts/bench/twins-cpu.ts [simulate|protect] [rounds]      TWINS_SECONDS (5)
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadEntityTenant, scenarios } from "./scenarios.ts";
import { startWithTenants, stopService, toolDatabase } from "./service.ts";
import { alternateTwins, twinRatios } from "./twins.ts";
import { ensureWrk, type Shape, wrk } from "./wrk.ts";

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

const run = (seconds: number) => (shape: Shape) => wrk(service.url, shape, { seconds, connections: 32, threads: 1 });
const twins = { plain: shapes[`${kind}_no_entities`]!, entities: shapes[`${kind}_entities`]! };

try {
  await alternateTwins(service.proc.pid, run(3), twins, 1); // warm-up
  const runs = await alternateTwins(service.proc.pid, run(SECONDS), twins, ROUNDS, (which, r) =>
    console.log(`${kind}_${which === "plain" ? "no_entities" : "entities"}: ${r.rps.toFixed(0)} req/s, ${r.us.toFixed(1)} µs CPU a request`),
  );
  const r = twinRatios(runs);
  console.log(`medians: ${kind}_entities ${r.medianRps.entities.toFixed(0)} req/s ${r.us.entities.toFixed(1)} µs; ${kind}_no_entities ${r.medianRps.plain.toFixed(0)} req/s ${r.us.plain.toFixed(1)} µs`);
  console.log(`ratio (req/s, medians): ${(r.rps * 100).toFixed(1)}%; CPU: ${(r.cpu * 100).toFixed(1)}%`);
} finally {
  await stopService(service);
  await database.drop();
}
