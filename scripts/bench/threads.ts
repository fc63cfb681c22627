// Where a scenario's CPU goes by thread: the service runs as in profile.ts (no profiler), wrk drives
// it, and /proc/<pid>/task/*/stat is read before and after, so that the service's own threads (the
// HTTP thread, the embedded database's thread, JavaScriptCore's collector and compiler) and wrk
// show apart, in cores.
//
//   bun scripts/bench/threads.ts protect            # embedded database
//   DATABASE_URL=postgres://... bun scripts/bench/threads.ts protect
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../free-port.ts";
import { ensureWrk } from "./wrk.ts";

const ROOT = join(import.meta.dir, "../..");
const scenario = process.argv[2] ?? "protect";
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 8);
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;
const TICK = 100; // USER_HZ

ensureWrk();
const dir = mkdtempSync(join(tmpdir(), "warden-threads-"));
const port = freePort();
const env = { ...process.env, DATA_DIR: join(dir, "data"), PORT: String(port), LOG_LEVEL: "warn", BCRYPT_COST: "4" };
const url = `https://127.0.0.1:${port}`;
const start = () => Bun.spawn([process.execPath, "src/cli/main.ts", "serve"], { cwd: ROOT, env, stdout: "ignore", stderr: "inherit" });
const healthy = async () => {
  for (let i = 0; ; i++) {
    if (await fetch(`${url}/health`, insecure).then((r) => r.ok, () => false)) return;
    if (i > 1500) throw new Error("service did not start");
    await Bun.sleep(20);
  }
};
const post = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
  (await (await fetch(url + path, { ...insecure, method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })).json()) as Record<string, any>;

let proc = start();
await healthy();
const signup = (await post("/auth/signup", { email: `threads.${Date.now()}@example.com`, password: "threads passphrase, long enough" })) as { api_key: string; token: string };
const upgrade = await post("/customer/upgrades/request", { requested_plan: "enterprise", reason: "threads" }, { authorization: `Bearer ${signup.token}` });
proc.kill("SIGTERM");
await proc.exited;
const approved = Bun.spawnSync([process.execPath, "src/cli/main.ts", "ops", "upgrades", "approve", upgrade.request_id, "--reviewer", "threads"], { cwd: ROOT, env });
if (approved.exitCode !== 0) throw new Error(`approve: ${approved.stderr}`);
proc = start();
await healthy();

const shapes: Record<string, { path: string; method: string; body?: unknown; headers: Record<string, string> }> = {
  simulate: { path: "/v1/simulate", method: "POST", body: { preset: "small_payment" }, headers: { "X-API-Key": signup.api_key } },
  protect: { path: "/v1/protect", method: "POST", body: { action: "document.read", resource: "docs/a" }, headers: { "X-API-Key": signup.api_key } },
  key_list: { path: "/customer/keys", method: "GET", headers: { Authorization: `Bearer ${signup.token}` } },
};
const shape = shapes[scenario];
if (!shape) throw new Error(`unknown scenario ${scenario}: ${Object.keys(shapes).join(", ")}`);

/** CPU ticks (user + system) per thread of a process, keyed by "tid name". */
function ticks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(`${tid} ${name}`, Number(f[11]) + Number(f[12]));
    } catch {} // a thread that ended between the listing and the read
  }
  return out;
}
const wrkEnv = {
  ...process.env,
  BENCH_METHOD: shape.method,
  BENCH_BODY: shape.body === undefined ? "" : JSON.stringify(shape.body),
  BENCH_HEADERS: Object.entries({ ...(shape.body ? { "Content-Type": "application/json" } : {}), ...shape.headers }).map(([k, v]) => `${k}: ${v}`).join("\n"),
  BENCH_PAIR: "0",
  BENCH_KEYS: "",
};
const wrk = Bun.spawn(["wrk", "-t", "2", "-c", "64", "-d", `${SECONDS}s`, "-s", join(ROOT, "scripts/bench/request.lua"), url + shape.path], { env: wrkEnv, stdout: "pipe" });
await Bun.sleep(2000); // warm-up
const before = ticks(proc.pid);
const wrkBefore = ticks(wrk.pid);
const t0 = performance.now();
await Bun.sleep((SECONDS - 3) * 1000);
const after = ticks(proc.pid);
const wrkAfter = ticks(wrk.pid);
const seconds = (performance.now() - t0) / 1000;
const out = await new Response(wrk.stdout).text();
console.log(out.split("\n").find((l) => l.includes("Requests/sec")));
const show = (label: string, a: Map<string, number>, b: Map<string, number>) => {
  let sum = 0;
  for (const [k, v] of b) {
    const cores = (v - (a.get(k) ?? 0)) / TICK / seconds;
    sum += cores;
    if (cores >= 0.01) console.log(`${label} ${cores.toFixed(2)} cores  ${k}`);
  }
  console.log(`${label} ${sum.toFixed(2)} cores in all`);
};
show("service", before, after);
show("wrk    ", wrkBefore, wrkAfter);
proc.kill("SIGTERM");
await proc.exited;
