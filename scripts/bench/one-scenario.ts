// One scenario under wrk against a service of its own (for scripts/bench/profile.ts and
// threads.ts): an enterprise tenant set up through the public API (no quota in the way), approved
// by the operator CLI with the service stopped (on the embedded database one process holds the
// data), then the service started again with the given flags and wrk started against it.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "../free-port.ts";
import { ensureWrk } from "./wrk.ts";

const ROOT = join(import.meta.dir, "../..");
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

/** The service (started with flags, e.g. a profiler's) and wrk driving `scenario` for `seconds`. */
export async function runScenario(scenario: string, opts: { seconds: number; flags?: (dir: string) => string[]; name: string }) {
  ensureWrk();
  const dir = mkdtempSync(join(tmpdir(), `warden-${opts.name}-`));
  const port = freePort();
  const env = { ...process.env, DATA_DIR: join(dir, "data"), PORT: String(port), LOG_LEVEL: "warn", BCRYPT_COST: "4" };
  const url = `https://127.0.0.1:${port}`;
  const start = (flags: string[]) => Bun.spawn([process.execPath, ...flags, "src/cli/main.ts", "serve"], { cwd: ROOT, env, stdout: "ignore", stderr: "inherit" });
  const healthy = async () => {
    for (let i = 0; ; i++) {
      if (await fetch(`${url}/health`, insecure).then((r) => r.ok, () => false)) return;
      if (i > 1500) throw new Error("service did not start");
      await Bun.sleep(20);
    }
  };
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
    (await (await fetch(url + path, { ...insecure, method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })).json()) as Record<string, any>;

  let proc: Subprocess = start([]);
  await healthy();
  const signup = (await post("/auth/signup", { email: `${opts.name}.${Date.now()}@example.com`, password: `${opts.name} passphrase, long enough` })) as { api_key: string; token: string };
  const upgrade = await post("/customer/upgrades/request", { requested_plan: "enterprise", reason: opts.name }, { authorization: `Bearer ${signup.token}` });
  proc.kill("SIGTERM");
  await proc.exited;
  const approved = Bun.spawnSync([process.execPath, "src/cli/main.ts", "ops", "upgrades", "approve", upgrade.request_id, "--reviewer", opts.name], { cwd: ROOT, env });
  if (approved.exitCode !== 0) throw new Error(`approve: ${approved.stderr}`);
  proc = start(opts.flags?.(dir) ?? []);
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
  const wrk = Bun.spawn(["wrk", "-t", "2", "-c", "64", "-d", `${opts.seconds}s`, "-s", join(ROOT, "scripts/bench/request.lua"), url + shape.path], { env: wrkEnv, stdout: "pipe" });
  /** wrk's line of requests per second, once it has finished. */
  const requestsPerSecond = async () => (await new Response(wrk.stdout).text()).split("\n").find((l) => l.includes("Requests/sec"));
  const stop = async () => {
    proc.kill("SIGTERM");
    await proc.exited;
  };
  return { dir, service: proc, wrk, requestsPerSecond, stop };
}
