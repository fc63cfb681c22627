// A/B: two checkouts of the service (or one, with an environment variable set for B: an
// ablation) in alternating runs, A,B,B,A,A,B..., so that the machine's drift falls on both alike.
// Each run starts the service from its own tree on a fresh embedded data directory or a fresh
// PostgreSQL database (created, then dropped), sets up the bench's tenants through that tree's API
// and CLI, and drives every scenario with this tree's wrk settings and request shapes: only the
// service under test differs. Prints a markdown table of requests/s (each run, the medians, B/A),
// also written to bench/results/scratch/ab-<date>.md.
//
//   npm run bench:ab                                        # A = /work/base, B = this tree
//   npm run bench:ab -- --b-env SOME_CACHE=off              # ablation: B = this tree, one variable set
//   npm run bench:ab -- --a ../other --b . --pairs 5 --scenarios simulate,protect,protect_execute
//   npm run bench:ab -- --seconds 3 --warmup 1 --pairs 1 --databases embedded
//
// --a DIR (/work/base; when missing, made as a git worktree of --a-commit, for /work/base c9c24a6),
// --b DIR (this tree), --a-env/--b-env NAME=VALUE (repeatable, for that side's service only),
// --pairs N (3), --seconds S (10), --warmup S (3), --connections N (64), --threads N (2),
// --tenants N (16), --scenarios (simulate,protect), --databases (embedded,postgres),
// --postgres URL (DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres: where the
// fresh databases are made).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { scenarios } from "./scenarios.ts";
import { freshPostgresDatabase, startWithTenants, stopService } from "./service.ts";
import { ensureWrk, wrk } from "./wrk.ts";

const ROOT = resolve(import.meta.dir, "../..");

const { values: args } = parseArgs({
  options: {
    a: { type: "string", default: "/work/base" },
    "a-commit": { type: "string" },
    b: { type: "string", default: ROOT },
    "a-env": { type: "string", multiple: true, default: [] },
    "b-env": { type: "string", multiple: true, default: [] },
    pairs: { type: "string", default: "3" },
    seconds: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    connections: { type: "string", default: "64" },
    threads: { type: "string", default: "2" },
    tenants: { type: "string", default: "16" },
    scenarios: { type: "string", default: "simulate,protect" },
    databases: { type: "string", default: "embedded,postgres" },
    postgres: { type: "string", default: process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres" },
    "log-level": { type: "string", default: "info" },
  },
  strict: true,
});

const PAIRS = Number(args.pairs);
const WRK = { seconds: Number(args.seconds), connections: Number(args.connections), threads: Number(args.threads) };
const WARMUP = Number(args.warmup);
const SCENARIOS = args.scenarios.split(",");
const DATABASES = args.databases.split(",");

/** NAME=VALUE pairs as an environment. */
function envOf(pairs: string[]): Record<string, string> {
  return Object.fromEntries(
    pairs.map((p) => {
      const at = p.indexOf("=");
      if (at <= 0) throw new Error(`expected NAME=VALUE, got ${p}`);
      return [p.slice(0, at), p.slice(at + 1)];
    }),
  );
}

/** The tree ready to run: made as a worktree of `commit` when missing, its node_modules installed. */
function prepare(dir: string, commit?: string): string {
  const root = resolve(dir);
  if (!existsSync(root)) {
    if (!commit) throw new Error(`${root} does not exist`);
    console.log(`ab: making ${root}, a git worktree of ${commit}`);
    const r = spawnSync("git", ["-C", ROOT, "worktree", "add", root, commit], { stdio: "inherit" });
    if (r.status !== 0) throw new Error(`git worktree add ${root} ${commit} failed`);
  }
  if (!existsSync(join(root, "node_modules"))) {
    console.log(`ab: npm ci in ${root}`);
    if (spawnSync("npm", ["ci"], { cwd: root, stdio: "inherit" }).status !== 0) throw new Error(`npm ci in ${root} failed`);
  }
  return root;
}

/** "path @ commit" and whether its work tree differs from the commit, for the table's heading. */
function describe(root: string, env: Record<string, string>): string {
  const git = (...a: string[]) => spawnSync("git", ["-C", root, ...a], { encoding: "utf8" }).stdout.trim();
  const dirty = git("status", "--porcelain", "--untracked-files=no") !== "";
  const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`).join(" ");
  return `${root} @ ${git("rev-parse", "--short", "HEAD")}${dirty ? " + uncommitted changes" : ""}${vars ? `, with ${vars}` : ""}`;
}

interface Side {
  name: "A" | "B";
  root: string;
  env: Record<string, string>;
}

interface RunResult {
  rps: number;
  errors: number;
}

/** One run: the side's service on a fresh database, every scenario in turn. */
async function runOnce(side: Side, database: string): Promise<Map<string, RunResult>> {
  const dataDir = mkdtempSync(join(tmpdir(), "warden-ab-"));
  const pg = database === "postgres" ? await freshPostgresDatabase(args.postgres, "warden_ab") : undefined;
  const env = { DATA_DIR: dataDir, DATABASE_URL: pg?.url ?? "", LOG_LEVEL: args["log-level"], BCRYPT_COST: "4", ...side.env };
  const results = new Map<string, RunResult>();
  try {
    const password = "ab passphrase, long enough";
    const { service, accounts } = await startWithTenants(side.root, env, { tenants: Number(args.tenants), name: "ab", password });
    try {
      const shapes = scenarios(accounts, password);
      for (const name of SCENARIOS) {
        const shape = shapes[name];
        if (!shape) throw new Error(`unknown scenario ${name}: ${Object.keys(shapes).join(", ")}`);
        if (WARMUP > 0) await wrk(service.url, shape, { ...WRK, seconds: WARMUP });
        const r = await wrk(service.url, shape, WRK);
        const rps = Math.round(r.requests / (r.duration_us / 1e6));
        const errors = Object.values(r.errors).reduce((x, y) => x + y, 0);
        results.set(name, { rps, errors });
        console.log(`ab: ${database} ${side.name} ${name}: ${rps} req/s${errors ? `, ${errors} errors` : ""}`);
      }
    } finally {
      await stopService(service);
    }
  } finally {
    await pg?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return results;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

ensureWrk();
const A: Side = { name: "A", root: prepare(args.a, args["a-commit"] ?? (args.a === "/work/base" ? "c9c24a6" : undefined)), env: envOf(args["a-env"]) };
const B: Side = { name: "B", root: prepare(args.b), env: envOf(args["b-env"]) };
const started = performance.now();
// runs[database][scenario][side]: requests/s of each run, in run order.
const runs = new Map<string, Map<string, Record<"A" | "B", RunResult[]>>>();
for (const database of DATABASES) {
  const byScenario = new Map(SCENARIOS.map((s) => [s, { A: [] as RunResult[], B: [] as RunResult[] }]));
  runs.set(database, byScenario);
  for (let pair = 0; pair < PAIRS; pair++) {
    for (const side of pair % 2 === 0 ? [A, B] : [B, A]) {
      for (const [name, r] of await runOnce(side, database)) byScenario.get(name)![side.name].push(r);
    }
  }
}

const fmt = (rs: RunResult[]) => rs.map((r) => `${r.rps}${r.errors ? ` (${r.errors} err.)` : ""}`).join(", ");
const lines = [
  `A: ${describe(A.root, A.env)}`,
  `B: ${describe(B.root, B.env)}`,
  "",
  `${PAIRS} pair(s) per database, run order A,B,B,A,...; each run a fresh service and database; wrk ${WRK.connections} connections, ${WRK.threads} threads, ` +
    `${WRK.seconds} s after ${WARMUP} s of warm-up per scenario; ${args.tenants} tenants; ${Math.round((performance.now() - started) / 1000)} s in all.`,
  "",
  "| database | scenario | A req/s (each run) | B req/s (each run) | A median | B median | B/A |",
  "|---|---|---|---|---:|---:|---:|",
];
for (const [database, byScenario] of runs) {
  for (const [name, { A: a, B: b }] of byScenario) {
    const ma = median(a.map((r) => r.rps));
    const mb = median(b.map((r) => r.rps));
    lines.push(`| ${database} | ${name} | ${fmt(a)} | ${fmt(b)} | ${ma} | ${mb} | ${ma > 0 ? ((mb / ma) * 100).toFixed(1) : "—"}% |`);
  }
}
const md = lines.join("\n");
const dir = join(ROOT, "bench/results/scratch");
mkdirSync(dir, { recursive: true });
const file = join(dir, `ab-${new Date().toISOString().replace(/[:]/g, "-").replace(/\..+/, "")}.md`);
writeFileSync(file, md + "\n");
console.log(`\n${md}\n\n(${file})`);
