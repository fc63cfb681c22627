// One scenario under wrk against a service of its own (for scripts/bench/profile.ts, threads.ts
// and rss.ts): the bench's tenants and request shapes (service.ts, scenarios.ts), the service
// started again with the given flags, and wrk started against it. With DATABASE_URL, the service
// gets a fresh database made beside that one and dropped when it stops.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadEntityTenant, scenarios } from "./scenarios.ts";
import { startWithTenants, stopService, toolDatabase } from "./service.ts";
import { ensureWrk, startWrk } from "./wrk.ts";

// BENCH_ROOT: the tree whose service is started (default this one), e.g. /work/base to profile it.
const ROOT = process.env.BENCH_ROOT ?? join(import.meta.dir, "../..");
const TENANTS = Number(process.env.BENCH_TENANTS ?? 16);

/** The service (started with flags, e.g. a profiler's) and wrk driving `scenario` for `seconds`. */
export async function runScenario(scenario: string, opts: { seconds: number; flags?: (dir: string) => string[]; name: string }) {
  ensureWrk();
  const dir = mkdtempSync(join(tmpdir(), `warden-${opts.name}-`));
  const database = await toolDatabase(`warden_${opts.name}`);
  const env = { DATA_DIR: join(dir, "data"), DATABASE_URL: database.url, LOG_LEVEL: "warn", BCRYPT_COST: "4" };
  const password = `${opts.name} passphrase, long enough`;
  const { service, accounts } = await startWithTenants(ROOT, env, { tenants: TENANTS, name: opts.name, password, flags: opts.flags?.(dir) });
  const stop = async () => {
    await stopService(service);
    await database.drop();
  };
  // The *_entities scenarios' tenant: one more, with 10,000 entities and a policy that reads them.
  const entityTenant = scenario.endsWith("entities") ? { tenant: accounts.pop()!, twin: accounts.pop()! } : undefined;
  if (entityTenant) await loadEntityTenant(service.url, entityTenant.tenant, entityTenant.twin);
  const shapes = scenarios(accounts, password, undefined, entityTenant);
  const shape = shapes[scenario];
  if (!shape) {
    await stop();
    throw new Error(`unknown scenario ${scenario}: ${Object.keys(shapes).join(", ")}`);
  }
  const wrk = startWrk(service.url, shape, { seconds: opts.seconds, connections: 64, threads: 2 });
  /** wrk's requests per second, once it has finished. */
  const requestsPerSecond = async () => {
    const r = await wrk.result;
    return `Requests/sec: ${(r.requests / (r.duration_us / 1e6)).toFixed(2)}`;
  };
  return { dir, service: service.proc, wrk: wrk.proc, requestsPerSecond, stop };
}
