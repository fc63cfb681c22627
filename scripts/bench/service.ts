// The service under load, started from a tree of its own (this checkout, or another one for an A/B
// comparison: scripts/bench/ab.ts), and the set-up every load run starts with: tenants on
// enterprise (no quota in the way) signed up through the public API, their upgrades approved by
// that tree's operator CLI with the service stopped (on the embedded database one process holds
// the data), then the service started again.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "../free-port.ts";

export const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

export interface Service {
  proc: Subprocess;
  url: string;
}

export interface Account {
  email: string;
  token: string;
  api_key: string;
  tenant_id: string;
}

/** The tree's own Bun (its package.json pins one), else the one running this script. */
function bunOf(root: string): string {
  const own = join(root, "node_modules/.bin/bun");
  return existsSync(own) ? own : process.execPath;
}

/** Where the service's standard output (its log) and error go: files for a tool that reads them, else none and this process's. */
export interface ServiceOutput {
  stdout?: string;
  stderr?: string;
}

/** `bun [flags] src/cli/main.ts serve` in `root` on a free port; env is added to this process's. */
export function startService(root: string, env: Record<string, string>, flags: string[] = [], output: ServiceOutput = {}): Service {
  const port = freePort();
  const proc = Bun.spawn([bunOf(root), ...flags, "src/cli/main.ts", "serve"], {
    cwd: root,
    env: { ...process.env, METRICS_ADDR: "off", ...env, PORT: String(port) },
    stdout: output.stdout ? Bun.file(output.stdout) : "ignore",
    stderr: output.stderr ? Bun.file(output.stderr) : "inherit",
  });
  return { proc, url: `https://127.0.0.1:${port}` };
}

/** Milliseconds until /health answers 200 (BENCH_HEALTH_TIMEOUT_MS, default 30 s: a busy machine starts slower). */
export async function waitHealthy(service: Service, timeoutMs = Number(process.env.BENCH_HEALTH_TIMEOUT_MS ?? 30_000)): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if (service.proc.exitCode !== null) throw new Error(`the service exited with ${service.proc.exitCode} before it was healthy`);
    if (await fetch(`${service.url}/health`, insecure).then((r) => r.ok, () => false)) return performance.now() - started;
    await Bun.sleep(20);
  }
  // Not left running behind the error (it would hold the data directory and a port).
  service.proc.kill();
  throw new Error(`${service.url} not healthy after ${timeoutMs} ms`);
}

export async function stopService(service: Service): Promise<void> {
  service.proc.kill("SIGTERM");
  await service.proc.exited;
}

export async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url + path, { ...insecure, method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const json = (await res.json()) as Record<string, any>;
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** `warden ops ...` of the tree in `root`, its JSON answer. */
export function cliOps(root: string, args: string[], env: Record<string, string>) {
  const r = spawnSync(bunOf(root), ["src/cli/main.ts", "ops", ...args], { cwd: root, env: { ...process.env, ...env }, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`ops ${args.join(" ")}: ${r.stdout} ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * `tenants` enterprise tenants, and the service started again on them (its start-up in ms: an
 * existing data directory to a ready /health). `flags`, `output` and `startEnv` are for that second
 * start only, the one measured (a profiler's flags, a probe's settings, where its log goes).
 */
export async function startWithTenants(
  root: string,
  env: Record<string, string>,
  opts: { tenants: number; name: string; password?: string; flags?: string[]; healthTimeoutMs?: number; output?: ServiceOutput; startEnv?: Record<string, string> },
): Promise<{ service: Service; accounts: Account[]; startup_ms: number }> {
  let service = startService(root, env);
  await waitHealthy(service, opts.healthTimeoutMs);
  const password = opts.password ?? `${opts.name} passphrase, long enough`;
  const accounts: Account[] = [];
  const upgrades: string[] = [];
  try {
    for (let i = 0; i < opts.tenants; i++) {
      const email = `${opts.name}.${Date.now()}.${i}@example.com`;
      const account = await post(service.url, "/auth/signup", { email, password });
      accounts.push({ email, token: account.token, api_key: account.api_key, tenant_id: account.tenant_id });
      const upgrade = await post(service.url, "/customer/upgrades/request", { requested_plan: "enterprise", reason: opts.name }, { authorization: `Bearer ${account.token}` });
      upgrades.push(upgrade.request_id);
    }
  } finally {
    await stopService(service);
  }
  for (const id of upgrades) cliOps(root, ["upgrades", "approve", id, "--reviewer", opts.name], env);
  service = startService(root, { ...env, ...opts.startEnv }, opts.flags, opts.output);
  const startup_ms = Math.round(await waitHealthy(service, opts.healthTimeoutMs));
  return { service, accounts, startup_ms };
}

/** DATABASE_URL for a tool's own service: a fresh database beside DATABASE_URL's, or "" (embedded) without one. */
export async function toolDatabase(name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = process.env.DATABASE_URL;
  return adminUrl ? freshPostgresDatabase(adminUrl, name) : { url: "", drop: async () => {} };
}

/** A database of its own on the PostgreSQL server of `adminUrl`, dropped by `drop()`. */
export async function freshPostgresDatabase(adminUrl: string, name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const { default: postgres } = await import("postgres");
  const database = `${name}_${process.pid}_${Date.now()}`.replace(/[^a-z0-9_]/gi, "_").toLowerCase();
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${database}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return {
    url: url.toString(),
    drop: async () => {
      const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await sql.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await sql.end();
    },
  };
}
