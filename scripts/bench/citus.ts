// This tree's service on plain PostgreSQL against the same on a Citus cluster (docs/performance.md,
// "On a Citus cluster"), in alternating runs, P,C,C,P,...: each run a fresh database (on the
// server at --postgres, or on every node of the cluster by scripts/citus.sh), the bench's tenants
// set up through the API and CLI, then simulate and protect driven by wrk. Prints requests/s of
// each run, the medians and Citus/PostgreSQL, and where a request's CPU went (the service, each
// PostgreSQL server's sessions of the run's database, the rest of the machine), also written to
// bench/results/scratch/citus-<date>.md.
//
//   npm run bench:citus                       # cluster from scripts/citus.sh start (CITUS_PORT, 9700)
//   npm run bench:citus -- --pairs 3 --seconds 10 --scenarios simulate,protect
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { scenarios } from "./scenarios.ts";
import { freshPostgresDatabase, startWithTenants, stopService } from "./service.ts";
import { cpuSeconds, machineBusySeconds, parseStat, TICKS_PER_SECOND } from "./proc.ts";
import { ensureWrk, wrk } from "./wrk.ts";

const ROOT = resolve(import.meta.dir, "../..");
const { values: args } = parseArgs({
  options: {
    pairs: { type: "string", default: "2" },
    seconds: { type: "string", default: "8" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "64" },
    tenants: { type: "string", default: "16" },
    scenarios: { type: "string", default: "simulate,protect" },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
  },
});
const WRK = { seconds: Number(args.seconds), connections: Number(args.connections), threads: 2 };
const SCENARIOS = args.scenarios.split(",");

/** A fresh database on every node of the cluster scripts/citus.sh runs; its URL and how to drop it. */
function freshCitusDatabase(): { url: string; drop: () => void } {
  const name = `warden_bench_${process.pid}_${Date.now()}`;
  const made = spawnSync("bash", [join(ROOT, "scripts/citus.sh"), "db", name], { encoding: "utf8" });
  if (made.status !== 0) throw new Error(`scripts/citus.sh db failed (start a cluster with scripts/citus.sh start): ${made.stderr}`);
  return { url: made.stdout.trim().split("\n").pop()!, drop: () => void spawnSync("bash", [join(ROOT, "scripts/citus.sh"), "drop", name]) };
}

/**
 * CPU seconds of the PostgreSQL sessions of `database` on this machine, by server: each session's
 * postmaster named by its data directory's last folder (the coordinator's and each worker's on a
 * cluster; on one server, its cluster name).
 */
function sessionSeconds(database: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      if (!title.startsWith("postgres:") || !title.includes(` ${database} `)) continue;
      const ppid = /PPid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1];
      const server = readFileSync(`/proc/${ppid}/cmdline`, "utf8").split("\0");
      const dir = server[server.indexOf("-D") + 1] ?? server.find((a) => a.startsWith("config_file=")) ?? ppid;
      const name = dir.replace(/\/+$/, "").split("/").pop()!.replace(/\.conf$/, "");
      out.set(name, (out.get(name) ?? 0) + parseStat(readFileSync(`/proc/${pid}/stat`, "utf8")).ticks / TICKS_PER_SECOND);
    } catch {} // a session that ended between the listing and the read
  }
  return out;
}

/** Where a run's CPU went, in microseconds a request: by process, and the machine's whole. */
type CpuShare = Map<string, number>;
const cpu = { postgres: new Map<string, CpuShare[]>(), citus: new Map<string, CpuShare[]>() };

async function runOnce(kind: "postgres" | "citus"): Promise<Map<string, number>> {
  const dataDir = mkdtempSync(join(tmpdir(), "warden-bench-citus-"));
  const db = kind === "postgres" ? await freshPostgresDatabase(args.postgres, "warden_bench") : freshCitusDatabase();
  const results = new Map<string, number>();
  try {
    const password = "bench passphrase, long enough";
    const env = { DATA_DIR: dataDir, DATABASE_URL: db.url, LOG_LEVEL: "warn", BCRYPT_COST: "4" };
    const { service, accounts } = await startWithTenants(ROOT, env, { tenants: Number(args.tenants), name: "citus", password });
    try {
      const shapes = scenarios(accounts, password);
      for (const name of SCENARIOS) {
        const shape = shapes[name];
        if (!shape) throw new Error(`unknown scenario ${name}`);
        if (Number(args.warmup) > 0) await wrk(service.url, shape, { ...WRK, seconds: Number(args.warmup) });
        const database = new URL(db.url).pathname.slice(1);
        const before = { service: cpuSeconds(service.proc.pid), sessions: sessionSeconds(database), machine: machineBusySeconds() };
        const r = await wrk(service.url, shape, WRK);
        const after = { service: cpuSeconds(service.proc.pid), sessions: sessionSeconds(database), machine: machineBusySeconds() };
        const errors = Object.values(r.errors).reduce((x, y) => x + y, 0);
        const rps = Math.round(r.requests / (r.duration_us / 1e6));
        results.set(name, rps);
        const us = (seconds: number) => Math.round((seconds / r.requests) * 1e6);
        const share: CpuShare = new Map([["service", us(after.service - before.service)]]);
        let sessions = 0;
        for (const [server, seconds] of [...after.sessions].sort()) {
          const used = seconds - (before.sessions.get(server) ?? 0);
          sessions += used;
          share.set(`sessions on ${server}`, us(used));
        }
        share.set("rest of the machine (wrk, other work)", us(after.machine - before.machine - (after.service - before.service) - sessions));
        share.set("machine", us(after.machine - before.machine));
        cpu[kind].set(name, [...(cpu[kind].get(name) ?? []), share]);
        console.log(`bench:citus: ${kind} ${name}: ${rps} req/s${errors ? `, ${errors} errors` : ""}`);
      }
    } finally {
      await stopService(service);
    }
  } finally {
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return results;
}

ensureWrk();
const runs = { postgres: [] as Map<string, number>[], citus: [] as Map<string, number>[] };
for (let pair = 0; pair < Number(args.pairs); pair++) {
  for (const kind of pair % 2 === 0 ? (["postgres", "citus"] as const) : (["citus", "postgres"] as const)) runs[kind].push(await runOnce(kind));
}
const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const lines = [
  `${args.pairs} pair(s), order P,C,C,P,...; each run a fresh service and database; wrk ${WRK.connections} connections, ${WRK.seconds} s after ${args.warmup} s of warm-up; ${args.tenants} tenants.`,
  "",
  "| scenario | PostgreSQL req/s (each run) | Citus req/s (each run) | PostgreSQL median | Citus median | Citus/PostgreSQL |",
  "|---|---|---|---:|---:|---:|",
];
for (const name of SCENARIOS) {
  const p = runs.postgres.map((m) => m.get(name)!);
  const c = runs.citus.map((m) => m.get(name)!);
  lines.push(`| ${name} | ${p.join(", ")} | ${c.join(", ")} | ${median(p)} | ${median(c)} | ${((median(c) / median(p)) * 100).toFixed(1)}% |`);
}
lines.push("", "CPU a request (µs, medians of the runs; sessions: the run's database's on each server):", "");
for (const name of SCENARIOS) {
  for (const kind of ["postgres", "citus"] as const) {
    const shares = cpu[kind].get(name) ?? [];
    const parts = [...new Set(shares.flatMap((s) => [...s.keys()]))];
    lines.push(`- ${name}, ${kind === "postgres" ? "PostgreSQL" : "Citus"}: ${parts.map((p) => `${p} ${median(shares.map((s) => s.get(p) ?? 0))}`).join(", ")}`);
  }
}
const md = lines.join("\n");
const dir = join(ROOT, "bench/results/scratch");
mkdirSync(dir, { recursive: true });
const file = join(dir, `citus-${new Date().toISOString().replace(/[:]/g, "-").replace(/\..+/, "")}.md`);
writeFileSync(file, md + "\n");
console.log(`\n${md}\n\n(${file})`);
