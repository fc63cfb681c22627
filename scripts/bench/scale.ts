// The receipt log at scale: one tenant's log grown through the real append path (POST /v1/protect
// from many connections, so the group commit batches them) to SCALE_RECEIPTS receipts, with its
// checkpoint and proof latency at 1,000 receipts and at full size (consistency proofs and tiles at
// full size), the CPU a log read costs, another tenant's simulate p99 quiet and while checkpoints
// and proofs of the big log run in a loop, the whole log exported (the service's RSS sampled while
// it streams), and the service's RSS after.
// Part of `npm run bench` (BENCH_SCALE=0 leaves it out); alone, on a service of its own:
//
//   SCALE_RECEIPTS=20000 bun scripts/bench/scale.ts                      # embedded database
//   SCALE_RECEIPTS=20000 DATABASE_URL=postgres://... bun scripts/bench/scale.ts     # in a fresh database beside it
//
// SCALE_RECEIPTS (1,000,000), SCALE_SAMPLES (200 requests per latency), SCALE_CONNECTIONS (64 to
// fill the log), SCALE_LOOPS (6 checkpoint/proof loops), SCALE_SIMULATE_RATE (200 req/s offered),
// SCALE_PAIRS (3 alternations of the simulate measured quiet, then beside the loops).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixedRate } from "./fixed-rate.ts";
import { cpuSeconds, postgresCpuSeconds, rssMb } from "./proc.ts";
import { loadConfig } from "../../src/config.ts";
import { TILE_WIDTH, tilePath } from "../../src/receipts/tiles.ts";
import { type Account, insecure, type Service, startWithTenants, stopService, toolDatabase } from "./service.ts";

const RECEIPTS = Number(process.env.SCALE_RECEIPTS ?? 1_000_000);
const SMALL = 1_000;
const SAMPLES = Number(process.env.SCALE_SAMPLES ?? 200);
const CONNECTIONS = Number(process.env.SCALE_CONNECTIONS ?? 64);
const LOOPS = Number(process.env.SCALE_LOOPS ?? 6);
const SIMULATE_RATE = Number(process.env.SCALE_SIMULATE_RATE ?? 200);
const SIMULATE_SECONDS = Number(process.env.SCALE_SIMULATE_SECONDS ?? 10);
const PAIRS = Number(process.env.SCALE_PAIRS ?? 3);
const CPU_SECONDS = 5;

export interface LatencyMs {
  p50: number;
  p99: number;
}

export interface ScaleResult {
  receipts: number;
  fill_rps: number;
  checkpoint_small: LatencyMs;
  proof_small: LatencyMs;
  checkpoint_large: LatencyMs;
  proof_large: LatencyMs;
  consistency_large: LatencyMs;
  /** GET /customer/log/tile/0/N: a full tile of leaf hashes. */
  tile_large: LatencyMs;
  /** CPU of the service (and PostgreSQL's processes) per checkpoint or proof, the loops running alone. */
  log_read_cpu_ms: number;
  /** Medians over the pairs. */
  simulate_quiet: LatencyMs;
  simulate_busy: LatencyMs;
  /** Checkpoints and proofs of the big log answered while the other tenant's simulate was measured (median over the pairs). */
  busy_requests: number;
  /** Each pair: the other tenant's simulate quiet, then beside the loops. */
  simulate_pairs: { quiet: LatencyMs; busy: LatencyMs; log_requests: number }[];
  /** GET /customer/receipts/export of the whole big log: seconds, and the service's highest RSS while it streamed. */
  export_seconds: number;
  export_rss_peak_mb: number;
  rss_mb: number;
}

const round = (ms: number) => Math.round(ms * 100) / 100;

async function get(url: string, token: string): Promise<Record<string, any>> {
  const res = await fetch(url, { ...insecure, headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as Record<string, any>;
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** Protects of `account` until its log holds `target` receipts; requests per second. */
async function fill(url: string, account: Account, target: number): Promise<number> {
  const start = (await get(`${url}/customer/receipts/checkpoint`, account.token)).tree_size as number;
  let sent = start;
  const t0 = performance.now();
  const headers = { "content-type": "application/json", "x-api-key": account.api_key };
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (sent < target) {
        const n = sent++;
        const res = await fetch(`${url}/v1/protect`, { ...insecure, method: "POST", headers, body: JSON.stringify({ action: "document.read", resource: `docs/${n}` }) });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`protect ${n}: ${res.status}`);
      }
    }),
  );
  const size = (await get(`${url}/customer/receipts/checkpoint`, account.token)).tree_size;
  if (size !== target) throw new Error(`the log holds ${size} receipts, not ${target}`);
  return Math.round((target - start) / ((performance.now() - t0) / 1000));
}

/**
 * p50 and p99 of `SAMPLES` requests made one at a time, paced within the tenant's log-read budget
 * (the service's LOG_READS_PER_SECOND, read as it reads it), so that each figure is a request's own
 * time, never its wait.
 */
async function latency(request: (i: number) => Promise<unknown>): Promise<LatencyMs> {
  const gapMs = 1000 / loadConfig().logReadsPerSecond;
  /** The request's own time in ms; the next one starts no sooner than gapMs after this one did. */
  const timed = async (i: number) => {
    const t0 = performance.now();
    await request(i);
    const ms = performance.now() - t0;
    if (ms < gapMs) await new Promise((resolve) => setTimeout(resolve, gapMs - ms));
    return ms;
  };
  await new Promise((resolve) => setTimeout(resolve, 1100));
  for (let i = 0; i < 10; i++) await timed(i); // warm-up, not counted
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) times.push(await timed(i));
  times.sort((a, b) => a - b);
  return { p50: round(times[Math.floor(times.length * 0.5)]), p99: round(times[Math.min(times.length - 1, Math.floor(times.length * 0.99))]) };
}

/** Checkpoint, inclusion proofs of receipts old and new, consistency proofs and level-0 tiles of the big log. */
function logRequests(url: string, account: Account, receiptIds: string[]) {
  const base = `${url}/customer/receipts`;
  return {
    // A full level-0 tile (256 receipts' leaf hashes): the largest tile to answer.
    tile: (size: number) => async (i: number) => {
      const path = tilePath({ level: 0, index: (i * 7919) % Math.floor(size / TILE_WIDTH), width: TILE_WIDTH });
      const res = await fetch(`${url}/customer/log/tile/${path}`, { ...insecure, headers: { authorization: `Bearer ${account.token}` } });
      const bytes = await res.arrayBuffer();
      if (!res.ok || bytes.byteLength !== TILE_WIDTH * 32) throw new Error(`tile ${path}: ${res.status}, ${bytes.byteLength} bytes`);
    },
    checkpoint: () => get(`${base}/checkpoint`, account.token),
    proof: (i: number) => get(`${base}/${receiptIds[i % receiptIds.length]}/proof`, account.token),
    consistency: (size: number) => (i: number) => get(`${base}/consistency?from=${1 + ((i * 7919) % size)}`, account.token),
  };
}

/** The whole log through GET /customer/receipts/export, read as it streams, with the service's RSS sampled meanwhile. */
async function exportLog(url: string, account: Account, pid: number, expected: number) {
  let peak = rssMb(pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
  const t0 = performance.now();
  try {
    const res = await fetch(`${url}/customer/receipts/export`, { ...insecure, headers: { authorization: `Bearer ${account.token}` } });
    if (!res.ok || !res.body) throw new Error(`export: ${res.status}`);
    let lines = 0;
    const reader = res.body.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) for (const byte of read.value) if (byte === 10) lines++;
    if (lines !== expected) throw new Error(`export gave ${lines} receipts, not ${expected}`);
    return { export_seconds: round((performance.now() - t0) / 1000), export_rss_peak_mb: Math.round(Math.max(peak, rssMb(pid))) };
  } finally {
    clearInterval(sampler);
  }
}

/** Receipt ids of the newest `count` receipts of the log. */
async function newestIds(url: string, account: Account, count = 100): Promise<string[]> {
  return ((await get(`${url}/customer/receipts?limit=${count}`, account.token)).receipts as { receipt_id: string }[]).map((r) => r.receipt_id);
}

/** The scenario on a running service: `big` gets the big log, `other` is the tenant whose simulate is timed. */
export async function scaleScenario(service: Service, big: Account, other: Account, label: "embedded" | "postgres"): Promise<ScaleResult> {
  const { url } = service;
  let fill_rps = await fill(url, big, SMALL);
  const early = await newestIds(url, big);
  let requests = logRequests(url, big, early);
  const checkpoint_small = await latency(requests.checkpoint);
  const proof_small = await latency(requests.proof);
  console.log(`bench: ${label} scale: at ${SMALL} receipts checkpoint p50 ${checkpoint_small.p50} ms, proof p50 ${proof_small.p50} ms`);

  if (RECEIPTS > SMALL) fill_rps = await fill(url, big, RECEIPTS);
  console.log(`bench: ${label} scale: ${RECEIPTS} receipts appended at ${fill_rps} req/s`);
  // Proofs of the first receipts (the longest paths) and of the newest.
  requests = logRequests(url, big, [...early, ...(await newestIds(url, big))]);
  const checkpoint_large = await latency(requests.checkpoint);
  const proof_large = await latency(requests.proof);
  const consistency_large = await latency(requests.consistency(RECEIPTS));
  const tile_large = await latency(requests.tile(RECEIPTS));
  console.log(`bench: ${label} scale: at ${RECEIPTS} receipts checkpoint p50 ${checkpoint_large.p50} ms, proof p50 ${proof_large.p50} ms`);

  const simulate = { path: "/v1/simulate", method: "POST", body: { preset: "small_payment" }, headers: { "X-API-Key": other.api_key } };
  const offered = () => fixedRate(url, simulate, { rate: SIMULATE_RATE, seconds: SIMULATE_SECONDS, connections: 16 });
  /** Checkpoints and proofs of the big log from LOOPS loops until `during` settles, and how many were answered. */
  const loops = async <T>(during: Promise<T>) => {
    let done = 0;
    let stop = false;
    const lanes = Array.from({ length: LOOPS }, async (_, lane) => {
      for (let i = lane; !stop; i += LOOPS) {
        await (i % 2 === 0 ? requests.checkpoint() : requests.proof(i));
        done++;
      }
    });
    const result = await during;
    stop = true;
    await Promise.all(lanes);
    return { result, done };
  };
  // What one log read costs the machine: CPU of the service's threads (and of the PostgreSQL
  // server's processes) while the loops run alone, per read answered.
  const cpu = () => cpuSeconds(service.proc.pid) + (label === "postgres" ? postgresCpuSeconds() : 0);
  const cpu0 = cpu();
  const alone = await loops(new Promise((resolve) => setTimeout(resolve, CPU_SECONDS * 1000)));
  const log_read_cpu_ms = round(((cpu() - cpu0) / alone.done) * 1000);
  console.log(`bench: ${label} scale: a log read costs ${log_read_cpu_ms} ms of CPU (${alone.done} reads in ${CPU_SECONDS} s)`);
  // Quiet and busy in alternation, PAIRS times: the machine's drift falls on both alike.
  const pairs: { quiet: LatencyMs; busy: LatencyMs; log_requests: number }[] = [];
  for (let p = 0; p < PAIRS; p++) {
    const quiet = await offered();
    const { result: busy, done } = await loops(offered());
    pairs.push({ quiet: { p50: quiet.p50_ms, p99: quiet.p99_ms }, busy: { p50: busy.p50_ms, p99: busy.p99_ms }, log_requests: done });
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const simulate_quiet = { p50: median(pairs.map((x) => x.quiet.p50)), p99: median(pairs.map((x) => x.quiet.p99)) };
  const simulate_busy = { p50: median(pairs.map((x) => x.busy.p50)), p99: median(pairs.map((x) => x.busy.p99)) };
  const busy_requests = median(pairs.map((x) => x.log_requests));
  const exported = await exportLog(url, big, service.proc.pid, RECEIPTS);
  console.log(`bench: ${label} scale: ${RECEIPTS} receipts exported in ${exported.export_seconds} s, RSS at most ${exported.export_rss_peak_mb} MB meanwhile`);
  const result: ScaleResult = {
    receipts: RECEIPTS,
    fill_rps,
    checkpoint_small,
    proof_small,
    checkpoint_large,
    proof_large,
    consistency_large,
    tile_large,
    log_read_cpu_ms,
    simulate_quiet,
    simulate_busy,
    busy_requests,
    simulate_pairs: pairs,
    ...exported,
    rss_mb: Math.round(rssMb(service.proc.pid)),
  };
  const each = pairs.map((x) => `${x.quiet.p99} → ${x.busy.p99}`).join(", ");
  console.log(`bench: ${label} scale: other tenant's simulate p99 quiet → beside the loops, ${PAIRS} pairs: ${each} ms (median ${simulate_quiet.p99} → ${simulate_busy.p99}); RSS ${result.rss_mb} MB`);
  return result;
}

/** The rows of docs/performance.md's scale table. */
export function scaleTable(results: Record<string, ScaleResult>): string {
  const lines = [
    "| database | receipts | filled at req/s | checkpoint p50 / p99 ms (1,000 → full) | proof p50 / p99 ms (1,000 → full) | consistency p50 / p99 ms (full) | level-0 tile p50 / p99 ms (full) | CPU ms per log read | other tenant's simulate p99 ms: quiet → beside the loops (median of pairs) | export s / peak RSS MB | RSS MB after |",
    "|---|---:|---:|---|---|---|---|---:|---|---|---:|",
  ];
  for (const [db, r] of Object.entries(results)) {
    const l = (x: LatencyMs) => `${x.p50} / ${x.p99}`;
    lines.push(
      `| ${db} | ${r.receipts} | ${r.fill_rps} | ${l(r.checkpoint_small)} → ${l(r.checkpoint_large)} | ${l(r.proof_small)} → ${l(r.proof_large)} | ${l(r.consistency_large)} | ${l(r.tile_large)} | ${r.log_read_cpu_ms} | ` +
        `${r.simulate_quiet.p99} → ${r.simulate_busy.p99} (${r.busy_requests} log requests) | ${r.export_seconds} / ${r.export_rss_peak_mb} | ${r.rss_mb} |`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const dir = mkdtempSync(join(tmpdir(), "warden-scale-"));
  const database = await toolDatabase("warden_scale");
  const env = { DATA_DIR: join(dir, "data"), DATABASE_URL: database.url, LOG_LEVEL: "warn", BCRYPT_COST: "4" };
  const { service, accounts } = await startWithTenants(join(import.meta.dir, "../.."), env, { tenants: 2, name: "scale", healthTimeoutMs: 180_000 });
  try {
    const label = process.env.DATABASE_URL ? "postgres" : "embedded";
    console.log("\n" + scaleTable({ [label]: await scaleScenario(service, accounts[0], accounts[1], label) }));
  } finally {
    await stopService(service);
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
