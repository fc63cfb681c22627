// protect_growing: one tenant on a new database, the way a new customer starts, protecting at
// saturation for GROWING_SECONDS (180) while its log grows, the throughput of each GROWING_WINDOW
// (30 s) reported. The database keeps a session's plans, made while the tables were empty; one that
// reads the tenant's log shows as a decay from window to window (docs/performance.md, "Plans and a
// growing log"). The verdict: the last window within 10% of the first. A warm-up of BENCH_WARMUP
// (3 s) first, not counted.
// Part of `npm run bench` (BENCH_ONLY=protect_growing runs it alone there); alone, on a service of
// its own:
//
//   bun scripts/bench/growing.ts                               # embedded database
//   DATABASE_URL=postgres://... bun scripts/bench/growing.ts   # in a fresh database beside it
//   BENCH_ROOT=/path/to/tree bun scripts/bench/growing.ts      # that tree's service (a before and after)
//   GROWING_SECONDS=60 GROWING_WINDOW=15 bun scripts/bench/growing.ts
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuSeconds, machineBusySeconds, postgresCpuSeconds } from "./proc.ts";
import { scenarios } from "./scenarios.ts";
import { type Account, insecure, startWithTenants, stopService, toolDatabase } from "./service.ts";
import { ensureWrk, wrk } from "./wrk.ts";

const SECONDS = Number(process.env.GROWING_SECONDS ?? 180);
const WINDOW = Number(process.env.GROWING_WINDOW ?? 30);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const THREADS = Number(process.env.BENCH_THREADS ?? 2);
/** The last window's throughput may be this much below the first's. */
const TOLERANCE = 0.1;

export interface GrowingWindow {
  /** Seconds since the first window started, at this one's end. */
  end_s: number;
  rps: number;
  errors: number;
  /** The tenant's log at the window's end. */
  receipts: number;
  /**
   * CPU per request in µs: the service's process (the embedded database's thread included), and
   * the PostgreSQL server's processes (all of them: other work on the server counts too). Flat
   * while req/s falls: the machine got busier, not the requests dearer.
   */
  service_us: number;
  postgres_us: number;
  /** Cores busy on the whole machine, of its cores. */
  machine_cores: number;
}

export interface GrowingResult {
  database: string;
  connections: number;
  window_s: number;
  windows: GrowingWindow[];
  /** The last window's throughput over the first's. */
  last_to_first: number;
  holds: boolean;
}

async function logSize(url: string, account: Account): Promise<number> {
  const res = await fetch(`${url}/customer/receipts/checkpoint`, { ...insecure, headers: { authorization: `Bearer ${account.token}` } });
  if (!res.ok) throw new Error(`checkpoint: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { tree_size: number }).tree_size;
}

/** The scenario on the tree in `root` with `dbEnv` (DATABASE_URL: a new database; "" the embedded one in a new DATA_DIR). */
export async function growingScenario(root: string, database: string, dbEnv: Record<string, string>): Promise<GrowingResult> {
  const dataDir = mkdtempSync(join(tmpdir(), "warden-growing-"));
  const env = { ...dbEnv, DATA_DIR: dataDir, LOG_LEVEL: "warn", BCRYPT_COST: "4" };
  const password = "growing passphrase, long enough";
  const { service, accounts } = await startWithTenants(root, env, { tenants: 1, name: "growing", password });
  try {
    const shape = scenarios(accounts, password).protect_one_tenant;
    await wrk(service.url, shape, { seconds: WARMUP, connections: CONNECTIONS, threads: THREADS }); // warm-up, not counted
    const windows: GrowingWindow[] = [];
    let elapsed = 0;
    while (elapsed < SECONDS) {
      const seconds = Math.min(WINDOW, SECONDS - elapsed);
      const cpu0 = { service: cpuSeconds(service.proc.pid), pg: postgresCpuSeconds(), machine: machineBusySeconds() };
      const r = await wrk(service.url, shape, { seconds, connections: CONNECTIONS, threads: THREADS });
      const us = (cpu: number) => (r.requests > 0 ? Math.round((cpu * 1e6) / r.requests) : 0);
      const window = {
        end_s: (elapsed += seconds),
        rps: Math.round(r.requests / (r.duration_us / 1e6)),
        errors: Object.values(r.errors).reduce((a, b) => a + b, 0),
        receipts: await logSize(service.url, accounts[0]),
        service_us: us(cpuSeconds(service.proc.pid) - cpu0.service),
        postgres_us: database === "postgres" ? us(postgresCpuSeconds() - cpu0.pg) : 0,
        machine_cores: Math.round(((machineBusySeconds() - cpu0.machine) / (r.duration_us / 1e6)) * 100) / 100,
      };
      windows.push(window);
      console.log(
        `bench: ${database} protect_growing ${elapsed} s: ${window.rps} req/s, ${window.errors} errors, the log at ${window.receipts} receipts; ` +
          `µs CPU per request: service ${window.service_us}, PostgreSQL ${window.postgres_us}; machine ${window.machine_cores} cores busy`,
      );
    }
    const last_to_first = Math.round((windows.at(-1)!.rps / windows[0].rps) * 1000) / 1000;
    return { database, connections: CONNECTIONS, window_s: WINDOW, windows, last_to_first, holds: last_to_first >= 1 - TOLERANCE };
  } finally {
    await stopService(service);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function growingTable(results: GrowingResult[]): string {
  const windows = results[0]?.windows.map((w) => w.end_s) ?? [];
  return [
    `protect_growing: one tenant on a new database protecting at saturation (wrk, ${results[0]?.connections} connections) while its log grows; ` +
      `req/s of each ${results[0]?.window_s} s window (the log's size at its end); it holds when the last window is within ${TOLERANCE * 100}% of the first. ` +
      "Then each window's µs of CPU per request, the service's / PostgreSQL's (the server's processes, others' work included), and the machine's busy cores: " +
      "flat CPU per request while req/s falls means the machine got busier, not the requests dearer.",
    "",
    `| database | ${windows.map((s) => `to ${s} s`).join(" | ")} | last / first | verdict |`,
    `|---|${windows.map(() => "---:").join("|")}|---:|---|`,
    ...results.map(
      (r) =>
        `| ${r.database} | ${r.windows.map((w) => `${w.rps} (${w.receipts.toLocaleString("en-US")})${w.errors ? `, ${w.errors} errors` : ""}`).join(" | ")} | ${r.last_to_first} | ${r.holds ? "holds" : "decays"} |`,
    ),
    ...results.map((r) => `| ${r.database}: µs CPU per request, service / PostgreSQL; machine cores | ${r.windows.map((w) => `${w.service_us} / ${w.postgres_us}; ${w.machine_cores}`).join(" | ")} | | |`),
  ].join("\n");
}

if (import.meta.main) {
  ensureWrk();
  const root = process.env.BENCH_ROOT ?? join(import.meta.dir, "../..");
  const db = await toolDatabase("warden_growing");
  const result = await growingScenario(root, db.url ? "postgres" : "embedded", { DATABASE_URL: db.url }).finally(() => db.drop());
  const stamp = new Date().toISOString().replace(/[:]/g, "-").replace(/\..+/, "");
  const dir = join(import.meta.dir, "../../bench/results/scratch");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `growing-${result.database}-${stamp}.json`), JSON.stringify({ date: new Date().toISOString(), root, seconds: SECONDS, result }, null, 2) + "\n");
  const md = growingTable([result]);
  writeFileSync(join(dir, `growing-${result.database}-${stamp}.md`), md + "\n");
  console.log("\n" + md);
}
