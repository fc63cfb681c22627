// npm run bench:peers (and a section of npm run bench): warden next to its peers on this machine in
// one run. The same decision, docs/policy.md's payment-limit policy translated into each peer's
// language (bench/peers/), is asked of Cerbos's own PDP server, of Cedar and of Casbin each behind a
// minimal HTTPS server (scripts/bench/peers/), and of warden's simulate (decision and signature)
// and protect (decision, signature and the durable log). The peers are installed on demand into
// bench/.peers (not dependencies of warden) and their versions printed. Before anything is timed,
// every target must give warden's decision for each preset and each edge of the policy, asked by
// each of its keys (scripts/bench/peers/cases.ts); a difference stops the run. Then rounds in
// alternating order (forward, backward, ...): per target wrk at saturation (requests/s, and CPU per
// decision from /proc: the server's process, plus PostgreSQL's when warden runs on it, and the
// whole machine's), then one caller (wrk, 1 connection: p50 and p99). Medians of the rounds.
// Writes bench/results/peers-<date>.{json,md}.
//
//   npm run bench:peers
//   PEERS_ROUNDS=3 PEERS_SECONDS=10 npm run bench:peers
//   PEERS_DATABASE=postgres DATABASE_URL=postgres://... npm run bench:peers   # warden on PostgreSQL
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { type Caller, type Case, cases, EDGE_COUNT, cerbosBody, DOC_KEYS, OTHER_KEY, TIMED, wrapperBody } from "./peers/cases.ts";
import { PRESETS } from "../../src/simulation/presets.ts";
import { installPeers } from "./peers/install.ts";
import { type PeerServer, startCerbos, startWrapped } from "./peers/servers.ts";
import { cpuSeconds, machineBusySeconds, postgresCpuSeconds } from "./proc.ts";
import { type Account, freshPostgresDatabase, insecure, startWithTenants, stopService } from "./service.ts";
import { ensureWrk, type Shape, wrk } from "./wrk.ts";

const ROOT = join(import.meta.dir, "../..");
const PEERS_DIR = join(ROOT, "bench/.peers");

export interface PeersOptions {
  rounds: number;
  seconds: number;
  warmup: number;
  oneCallerSeconds: number;
  connections: number;
  threads: number;
  tenants: number;
  database: "embedded" | "postgres";
}

export function peersOptions(env = process.env): PeersOptions {
  return {
    rounds: Number(env.PEERS_ROUNDS ?? 2),
    seconds: Number(env.PEERS_SECONDS ?? 6),
    warmup: Number(env.PEERS_WARMUP ?? 2),
    oneCallerSeconds: Number(env.PEERS_ONE_CALLER_SECONDS ?? 5),
    connections: Number(env.BENCH_CONNECTIONS ?? 64),
    threads: Number(env.BENCH_THREADS ?? 2),
    tenants: Number(env.PEERS_TENANTS ?? 16),
    database: env.PEERS_DATABASE === "postgres" ? "postgres" : "embedded",
  };
}

type Decision = "ALLOWED" | "DENIED";

interface Target {
  name: string;
  /** What one request does there. */
  does: string;
  version: string;
  url: string;
  pid: number;
  /** PostgreSQL's CPU counts as this target's (warden on a PostgreSQL server). */
  postgres: boolean;
  /** The timed request. */
  shape: Shape;
  decide(c: Case): Promise<Decision>;
}

interface Run {
  rps: number;
  errors: number;
  /** CPU time per decision, µs: the server's process (and PostgreSQL's), and the whole machine's. */
  server_us: number;
  machine_us: number;
  /** One caller, one request at a time. */
  p50_ms: number;
  p99_ms: number;
  one_caller_errors: number;
}

export interface PeerRow extends Omit<Run, "one_caller_errors"> {
  target: string;
  does: string;
  version: string;
  runs: Run[];
}

export interface PeersResult {
  date: string;
  database: string;
  options: PeersOptions;
  versions: Record<string, string>;
  cases: { total: number; allowed: number; presets: number; edges: number };
  rows: PeerRow[];
  goals: { simulate_ahead_of_every_peer: boolean; protect_within_2x_of_every_peer: boolean; best_peer: string; best_peer_rps: number };
}

async function send(url: string, method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, { ...insecure, method, headers: { "content-type": "application/json", ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

async function must(url: string, method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const r = await send(url, method, path, body, headers);
  if (r.status >= 300) throw new Error(`peers: ${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** docs/policy.md's payment-limit policy, as bench/peers/warden/ holds it: the two must not drift apart. */
function paymentLimitPolicy(): string {
  const text = readFileSync(join(ROOT, "bench/peers/warden/payment-limits.json"), "utf8");
  const doc = readFileSync(join(ROOT, "docs/policy.md"), "utf8");
  const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => {
    try {
      return JSON.parse(m[1]);
    } catch {
      return undefined;
    }
  });
  if (!blocks.some((b) => isDeepStrictEqual(b, JSON.parse(text)))) throw new Error("peers: bench/peers/warden/payment-limits.json is not the payment-limit policy of docs/policy.md");
  return text;
}

/** A tenant's three keys by caller, with the payment-limit policy published naming its own two. */
interface WardenTenant {
  secrets: Record<Caller, string>;
  tenant_id: string;
}

async function publishPolicy(url: string, account: Account, policy: string): Promise<WardenTenant> {
  const auth = { authorization: `Bearer ${account.token}` };
  const [first] = (await must(url, "GET", "/customer/keys", undefined, auth)).keys;
  const support = await must(url, "POST", "/customer/keys", { label: "support-bot" }, auth);
  const other = await must(url, "POST", "/customer/keys", { label: "other-bot" }, auth);
  const document = JSON.parse(policy.replaceAll(DOC_KEYS.invoicing, first.key_id).replaceAll(DOC_KEYS.support, support.key_id));
  await must(url, "PUT", "/customer/policy", { document }, auth);
  return { tenant_id: account.tenant_id, secrets: { invoicing: account.api_key, support: support.secret, other: other.secret } };
}

function wardenTargets(url: string, pid: number, postgres: boolean, tenants: WardenTenant[], version: string): Target[] {
  const [first] = tenants;
  const keys = tenants.map((t) => `${t.tenant_id}=${t.secrets[TIMED.caller]}`);
  const decision = async (path: string, body: unknown, caller: Caller): Promise<Decision> => (await must(url, "POST", path, body, { "x-api-key": first.secrets[caller] })).decision;
  return [
    {
      name: "warden simulate",
      does: "decision, Ed25519-signed result",
      version,
      url,
      pid,
      postgres,
      shape: { path: "/v1/simulate", method: "POST", body: { input: TIMED.input }, keys },
      decide: (c) => decision("/v1/simulate", c.preset !== undefined ? { preset: c.preset } : { input: c.input }, c.caller),
    },
    {
      name: "warden protect",
      does: "decision, Ed25519-signed receipt appended to the tenant's hash-chained log, committed",
      version,
      url,
      pid,
      postgres,
      shape: { path: "/v1/protect", method: "POST", body: TIMED.input, keys },
      decide: (c) => decision("/v1/protect", c.input, c.caller),
    },
  ];
}

const PEER_KEYS: Record<Caller, string> = { invoicing: DOC_KEYS.invoicing, support: DOC_KEYS.support, other: OTHER_KEY };

function cerbosTarget(server: PeerServer): Target {
  const path = "/api/check/resources";
  return {
    name: "Cerbos",
    does: "decision (its PDP's own HTTP API)",
    version: server.version,
    url: server.url,
    pid: server.proc.pid,
    postgres: false,
    shape: { path, method: "POST", body: cerbosBody(PEER_KEYS[TIMED.caller], TIMED.input) },
    decide: async (c) => {
      const body = await must(server.url, "POST", path, cerbosBody(PEER_KEYS[c.caller], c.input));
      const effect = body.results?.[0]?.actions?.[c.input.action];
      if (effect !== "EFFECT_ALLOW" && effect !== "EFFECT_DENY") throw new Error(`peers: Cerbos answered ${JSON.stringify(body)}`);
      return effect === "EFFECT_ALLOW" ? "ALLOWED" : "DENIED";
    },
  };
}

function wrappedTarget(name: string, server: PeerServer, version: string): Target {
  return {
    name,
    does: "decision (library behind a minimal HTTPS server)",
    version: server.version || version,
    url: server.url,
    pid: server.proc.pid,
    postgres: false,
    shape: { path: "/check", method: "POST", body: wrapperBody(PEER_KEYS[TIMED.caller], TIMED.input) },
    decide: async (c) => (await must(server.url, "POST", "/check", wrapperBody(PEER_KEYS[c.caller], c.input))).decision,
  };
}

/** Every target gives warden simulate's decision for every case, or the run stops here. */
async function checkDecisions(targets: Target[], all: Case[]): Promise<PeersResult["cases"]> {
  const [reference, ...others] = targets;
  const expected: Decision[] = [];
  for (const c of all) expected.push(await reference.decide(c));
  const allowed = expected.filter((d) => d === "ALLOWED").length;
  // A check where everything is DENIED (or ALLOWED) would pass an engine that ignores the policy.
  if (allowed === 0 || allowed === all.length) throw new Error(`peers: warden gave one decision for all ${all.length} cases`);
  const timed = all.findIndex((c) => c.caller === TIMED.caller && c.preset === undefined && isDeepStrictEqual(c.input, TIMED.input));
  if (expected[timed] !== "ALLOWED") throw new Error("peers: the timed input is not ALLOWED by warden");
  for (const target of others) {
    const wrong: string[] = [];
    for (let i = 0; i < all.length; i++) {
      const got = await target.decide(all[i]);
      if (got !== expected[i]) wrong.push(`${all[i].name} by the ${all[i].caller} key: warden ${expected[i]}, ${target.name} ${got}`);
    }
    if (wrong.length > 0) throw new Error(`peers: ${target.name} differs from warden on ${wrong.length} of ${all.length} cases:\n  ${wrong.join("\n  ")}`);
    console.log(`peers: ${target.name} agrees with warden on all ${all.length} cases (${allowed} ALLOWED)`);
  }
  return { total: all.length, allowed, presets: Object.keys(PRESETS).length, edges: EDGE_COUNT };
}

async function measure(t: Target, o: PeersOptions): Promise<Run> {
  const load = { connections: o.connections, threads: o.threads };
  if (o.warmup > 0) await wrk(t.url, t.shape, { ...load, seconds: o.warmup });
  const cpu = () => cpuSeconds(t.pid) + (t.postgres ? postgresCpuSeconds() : 0);
  const server0 = cpu();
  const machine0 = machineBusySeconds();
  const r = await wrk(t.url, t.shape, { ...load, seconds: o.seconds });
  const server = cpu() - server0;
  const machine = machineBusySeconds() - machine0;
  const one = await wrk(t.url, { ...t.shape, connections: 1 }, { seconds: o.oneCallerSeconds, connections: 1, threads: 1 });
  const sum = (e: Record<string, number>) => Object.values(e).reduce((a, b) => a + b, 0);
  return {
    rps: Math.round(r.requests / (r.duration_us / 1e6)),
    errors: sum(r.errors),
    server_us: r.requests > 0 ? Math.round((server * 1e6) / r.requests) : 0,
    machine_us: r.requests > 0 ? Math.round((machine * 1e6) / r.requests) : 0,
    p50_ms: one.p50 / 1000,
    p99_ms: one.p99 / 1000,
    one_caller_errors: sum(one.errors),
  };
}

const ms3 = (ms: number) => Math.round(ms * 1000) / 1000;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function runPeers(o: PeersOptions): Promise<PeersResult> {
  ensureWrk();
  const policy = paymentLimitPolicy();
  const versions = installPeers(PEERS_DIR);
  for (const [name, version] of Object.entries(versions)) console.log(`peers: ${name} ${version}`);
  const work = mkdtempSync(join(tmpdir(), "warden-peers-"));
  const started: PeerServer[] = [];
  let warden: Awaited<ReturnType<typeof startWithTenants>>["service"] | undefined;
  const pg = o.database === "postgres" ? await freshPostgresDatabase(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres", "warden_peers") : undefined;
  try {
    const env = { DATA_DIR: join(work, "data"), DATABASE_URL: pg?.url ?? "", LOG_LEVEL: "info", BCRYPT_COST: "4" };
    const password = "peers passphrase, long enough";
    const set = await startWithTenants(ROOT, env, { tenants: o.tenants, name: "peers", password });
    warden = set.service;
    const tenants: WardenTenant[] = [];
    for (const account of set.accounts) tenants.push(await publishPolicy(warden.url, account, policy));
    const commit = Bun.spawnSync(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.toString().trim();
    const cerbos = await startCerbos(PEERS_DIR, work);
    started.push(cerbos);
    const cedar = await startWrapped("cedar", PEERS_DIR, work);
    started.push(cedar);
    const casbin = await startWrapped("casbin", PEERS_DIR, work);
    started.push(casbin);
    const targets = [
      ...wardenTargets(warden.url, warden.proc.pid, pg !== undefined, tenants, `warden ${commit} (${o.database} database)`),
      cerbosTarget(cerbos),
      wrappedTarget("Cedar", cedar, `@cedar-policy/cedar-wasm ${versions["@cedar-policy/cedar-wasm"]}`),
      wrappedTarget("Casbin", casbin, `casbin ${versions.casbin} (node-casbin)`),
    ];
    for (const t of targets) console.log(`peers: ${t.name}: ${t.version}`);
    const checked = await checkDecisions(targets, cases());

    const runs = new Map<string, Run[]>(targets.map((t) => [t.name, []]));
    for (let round = 0; round < o.rounds; round++) {
      for (const t of round % 2 === 0 ? targets : [...targets].reverse()) {
        const r = await measure(t, o);
        runs.get(t.name)!.push(r);
        console.log(
          `peers: round ${round + 1} ${t.name}: ${r.rps} req/s${r.errors ? ` (${r.errors} errors)` : ""}, ${r.server_us} µs CPU per decision (machine ${r.machine_us}); one caller p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms`,
        );
      }
    }
    const rows: PeerRow[] = targets.map((t) => {
      const rs = runs.get(t.name)!;
      return {
        target: t.name,
        does: t.does,
        version: t.version,
        runs: rs,
        rps: Math.round(median(rs.map((r) => r.rps))),
        errors: rs.reduce((a, r) => a + r.errors + r.one_caller_errors, 0),
        server_us: Math.round(median(rs.map((r) => r.server_us))),
        machine_us: Math.round(median(rs.map((r) => r.machine_us))),
        p50_ms: ms3(median(rs.map((r) => r.p50_ms))),
        p99_ms: ms3(median(rs.map((r) => r.p99_ms))),
      };
    });
    const [simulate, protect, ...peers] = rows;
    const best = peers.reduce((a, b) => (b.rps > a.rps ? b : a));
    return {
      date: new Date().toISOString(),
      database: o.database,
      options: o,
      versions: Object.fromEntries(targets.map((t) => [t.name, t.version])),
      cases: checked,
      rows,
      goals: {
        simulate_ahead_of_every_peer: peers.every((p) => simulate.rps > p.rps),
        protect_within_2x_of_every_peer: peers.every((p) => protect.rps * 2 >= p.rps),
        best_peer: best.target,
        best_peer_rps: best.rps,
      },
    };
  } finally {
    for (const s of started) {
      s.proc.kill();
      await s.proc.exited;
    }
    if (warden) await stopService(warden);
    await pg?.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

export function peersTable(r: PeersResult): string {
  const o = r.options;
  const [simulate, protect, ...peers] = r.rows;
  const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : "—");
  return [
    `Warden beside its peers, the same decision in each (docs/policy.md's payment-limit policy, translated in bench/peers/: the invoicing bot pays 250 EUR, ALLOWED by the first rule); ` +
      `warden on the ${r.database} database with ${o.tenants} tenants, each on that policy naming its own keys. Before timing, every target gave warden's decision in all ${r.cases.total} cases ` +
      `(${r.cases.presets} presets and ${r.cases.edges} inputs at the policy's edges, each asked by the policy's two keys and a third; ${r.cases.allowed} ALLOWED). ` +
      `${o.rounds} rounds in alternating order; per target wrk at saturation (${o.connections} connections, ${o.threads} threads, ${o.seconds} s after ${o.warmup} s of warm-up) and one caller (1 connection, ${o.oneCallerSeconds} s); medians of the rounds; ${cpus().length} cores shared by all.`,
    "",
    "| target | what one request does | version | req/s at saturation (each round) | req/s | µs CPU per decision: server / machine | one caller p50 / p99 ms | errors |",
    "|---|---|---|---|---:|---:|---:|---:|",
    ...r.rows.map(
      (row) => `| ${row.target} | ${row.does} | ${row.version} | ${row.runs.map((x) => x.rps).join(", ")} | ${row.rps} | ${row.server_us} / ${row.machine_us} | ${row.p50_ms} / ${row.p99_ms} | ${row.errors} |`,
    ),
    "",
    `Warden's simulate ahead of every peer's throughput: ${r.goals.simulate_ahead_of_every_peer ? "met" : "not met"} (simulate's req/s ${peers.map((p) => `${ratio(simulate.rps, p.rps)} ${p.target}'s`).join(", ")}). ` +
      `Protect within 2x of every peer: ${r.goals.protect_within_2x_of_every_peer ? "met" : "not met"} (protect's req/s ${peers.map((p) => `${ratio(protect.rps, p.rps)} ${p.target}'s${protect.rps * 2 >= p.rps ? "" : ", beyond 2x"}`).join("; ")}).`,
  ].join("\n");
}

if (import.meta.main) {
  const result = await runPeers(peersOptions());
  const md = peersTable(result);
  const stamp = result.date.replace(/[:]/g, "-").replace(/\..+/, "");
  const dir = join(ROOT, "bench/results");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `peers-${stamp}.json`), JSON.stringify(result, null, 2) + "\n");
  writeFileSync(join(dir, `peers-${stamp}.md`), md + "\n");
  console.log(`\n${md}\n\n(bench/results/peers-${stamp}.md)`);
}
