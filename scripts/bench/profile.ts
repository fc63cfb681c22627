// Profile one scenario under wrk: the service runs under `bun --cpu-prof`, wrk drives it over TLS
// for a few seconds, and the profile is summarised by self time (functions and files).
//
//   bun scripts/bench/profile.ts simulate            # embedded database
//   DATABASE_URL=postgres://... bun scripts/bench/profile.ts protect
//
// PROFILE_SECONDS (8), PROFILE_TOP (30). The raw .cpuprofile stays in the printed directory.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../free-port.ts";
import { ensureWrk } from "./wrk.ts";

const ROOT = join(import.meta.dir, "../..");
const scenario = process.argv[2] ?? "simulate";
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 8);
const TOP = Number(process.env.PROFILE_TOP ?? 30);
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

ensureWrk();
const dir = mkdtempSync(join(tmpdir(), "warden-profile-"));
const port = freePort();
const env = { ...process.env, DATA_DIR: join(dir, "data"), PORT: String(port), LOG_LEVEL: "warn", BCRYPT_COST: "4" };
const url = `https://127.0.0.1:${port}`;
const start = (flags: string[]) => {
  const proc = Bun.spawn([process.execPath, ...flags, "src/cli/main.ts", "serve"], { cwd: ROOT, env, stdout: "ignore", stderr: "inherit" });
  return proc;
};
const healthy = async () => {
  for (let i = 0; ; i++) {
    if (await fetch(`${url}/health`, insecure).then((r) => r.ok, () => false)) return;
    if (i > 1500) throw new Error("service did not start");
    await Bun.sleep(20);
  }
};
const post = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
  (await (await fetch(url + path, { ...insecure, method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })).json()) as Record<string, any>;

// Set-up without the profiler: a tenant on enterprise (no quota in the way), approved by the
// operator CLI with the service stopped (on the embedded database one process holds the data).
let proc = start([]);
await healthy();
const signup = (await post("/auth/signup", { email: `profile.${Date.now()}@example.com`, password: "profile passphrase, long enough" })) as { api_key: string; token: string };
const upgrade = await post("/customer/upgrades/request", { requested_plan: "enterprise", reason: "profile" }, { authorization: `Bearer ${signup.token}` });
proc.kill("SIGTERM");
await proc.exited;
const approved = Bun.spawnSync([process.execPath, "src/cli/main.ts", "ops", "upgrades", "approve", upgrade.request_id, "--reviewer", "profile"], { cwd: ROOT, env });
if (approved.exitCode !== 0) throw new Error(`approve: ${approved.stderr}`);
proc = start(["--cpu-prof", `--cpu-prof-dir=${dir}`]);
await healthy();

const shapes: Record<string, { path: string; method: string; body?: unknown; headers: Record<string, string> }> = {
  simulate: { path: "/v1/simulate", method: "POST", body: { preset: "small_payment" }, headers: { "X-API-Key": signup.api_key } },
  protect: { path: "/v1/protect", method: "POST", body: { action: "document.read", resource: "docs/a" }, headers: { "X-API-Key": signup.api_key } },
  key_list: { path: "/customer/keys", method: "GET", headers: { Authorization: `Bearer ${signup.token}` } },
};
const shape = shapes[scenario];
if (!shape) throw new Error(`unknown scenario ${scenario}: ${Object.keys(shapes).join(", ")}`);
const wrkEnv = {
  ...process.env,
  BENCH_METHOD: shape.method,
  BENCH_BODY: shape.body === undefined ? "" : JSON.stringify(shape.body),
  BENCH_HEADERS: Object.entries({ ...(shape.body ? { "Content-Type": "application/json" } : {}), ...shape.headers }).map(([k, v]) => `${k}: ${v}`).join("\n"),
  BENCH_PAIR: "0",
  BENCH_KEYS: "",
};
const wrk = Bun.spawn(["wrk", "-t", "2", "-c", "64", "-d", `${SECONDS}s`, "-s", join(ROOT, "scripts/bench/request.lua"), url + shape.path], { env: wrkEnv, stdout: "pipe" });
const out = await new Response(wrk.stdout).text();
console.log(out.split("\n").find((l) => l.includes("Requests/sec")));
proc.kill("SIGTERM");
await proc.exited;

// Summarise: self time per function and per file (samples are evenly spaced).
const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
if (!file) throw new Error(`no profile in ${dir}`);
const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
};
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const fn = new Map<string, number>();
const files = new Map<string, number>();
for (const id of profile.samples) {
  const { functionName, url: u, lineNumber } = byId.get(id)!.callFrame;
  const where = u.replace(/^.*node_modules\//, "~/").replace(ROOT + "/", "");
  fn.set(`${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`, (fn.get(`${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`) ?? 0) + 1);
  const bucket = u === "" ? functionName : where.startsWith("~/") ? where.split("/").slice(0, where.startsWith("~/@") ? 3 : 2).join("/") : where;
  files.set(bucket, (files.get(bucket) ?? 0) + 1);
}
const total = profile.samples.length;
const show = (m: Map<string, number>) =>
  [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP).forEach(([k, v]) => console.log(`${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`));
console.log(`\n${total} samples; by function (self):`);
show(fn);
console.log("\nby file or package (self):");
show(files);
console.log(`\nprofile: ${join(dir, file)}`);
