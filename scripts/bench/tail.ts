// Where the tail at a fixed rate comes from. For each scenario: its throughput at saturation (wrk),
// one caller's latency (wrk, 1 connection), then the open-loop generator (fixed-rate.ts) at a
// fraction of that throughput, sampled (sampled.ts: the scheduler's counters of every thread of
// the service and of the generator, PostgreSQL's and the machine's), and the same generator at
// the same rate against a bare Bun.serve TLS server (ceiling.ts): the floor that the generator and
// the machine put under any server's percentiles. Optionally the service also runs with a
// preloaded timer that records how late its event loop ran (TAIL_PROBE=1, tail-probe.ts), with
// JavaScriptCore's collection log (TAIL_GC=1, BUN_JSC_logGC: each collection's pause, per heap:
// the service's thread and PGlite's), and with its access log kept (TAIL_LOG=1), whose
// duration_ms is the service's own view of each request. Each of those costs a little.
//
//   bun scripts/bench/tail.ts                           # embedded database
//   DATABASE_URL=postgres://... bun scripts/bench/tail.ts
//   TAIL_PROBE=1 TAIL_GC=1 TAIL_LOG=1 TAIL_SCENARIOS=simulate bun scripts/bench/tail.ts
//
// TAIL_SCENARIOS (simulate,protect), TAIL_FRACTION (0.5), TAIL_RATES (none; simulate=12000,protect=2800 fixes the rates), TAIL_SECONDS (12: each fixed-rate run),
// TAIL_WRK_SECONDS (10), TAIL_TENANTS (16), TAIL_CONNECTIONS (64), TAIL_LOG_LEVEL (info),
// TAIL_FLOOR (1: 0 skips the bare server), TAIL_KEEP (1 keeps the service's folder with its
// output), TAIL_ENV (NAME=VALUE,... for the service), TAIL_BUN_FLAGS (for the service's bun),
// BENCH_GENERATOR (socket; fetch: fixed-rate.ts). Writes bench/results/scratch/tail-<date>.{json,md}.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../free-port.ts";
import { quantile, round, sampledFixedRate, type Sample, type SampledRun, type SchedSummary } from "./sampled.ts";
import type { ThreadSched } from "./proc.ts";
import { scenarios } from "./scenarios.ts";
import { startWithTenants, stopService, toolDatabase } from "./service.ts";
import { ensureWrk, wrk } from "./wrk.ts";

const ROOT = join(import.meta.dir, "../..");
const SCENARIOS = (process.env.TAIL_SCENARIOS ?? "simulate,protect").split(",");
const FRACTION = Number(process.env.TAIL_FRACTION ?? 0.5);
const SECONDS = Number(process.env.TAIL_SECONDS ?? 12);
const WRK_SECONDS = Number(process.env.TAIL_WRK_SECONDS ?? 10);
const TENANTS = Number(process.env.TAIL_TENANTS ?? 16);
const CONNECTIONS = Number(process.env.TAIL_CONNECTIONS ?? 64);
const PROBE = process.env.TAIL_PROBE === "1";
const GC = process.env.TAIL_GC === "1";
const LOG = process.env.TAIL_LOG === "1";
const FLOOR = process.env.TAIL_FLOOR !== "0";
const WARMUP = 2;
/** TAIL_RATES=simulate=12000,protect=2800: these rates instead of a fraction of each run's own throughput (to compare two services at one rate). */
const RATES: Record<string, number> = Object.fromEntries((process.env.TAIL_RATES ?? "").split(",").filter(Boolean).map((p) => [p.split("=")[0], Number(p.split("=")[1])]));

const extraEnv = Object.fromEntries(
  (process.env.TAIL_ENV ?? "")
    .split(",")
    .filter(Boolean)
    .map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]),
);

/** Each JavaScriptCore collection's pause, per heap, from the BUN_JSC_logGC lines in `text`. */
function gcPauses(text: string, seconds: number) {
  const heaps = new Map<string, { pauses: number[]; kinds: Record<string, number> }>();
  for (const m of text.matchAll(/\[GC<(0x[0-9a-f]+)>: START M \d+kb => (\w+)(.*?)END\]/gs)) {
    const h = heaps.get(m[1]) ?? { pauses: [], kinds: {} };
    const pauses = [...m[3].matchAll(/p=([\d.]+)ms/g)].map((p) => Number(p[1]));
    h.pauses.push(...pauses);
    h.kinds[m[2]] = (h.kinds[m[2]] ?? 0) + 1;
    heaps.set(m[1], h);
  }
  return [...heaps.entries()].map(([heap, { pauses, kinds }]) => {
    const s = [...pauses].sort((x, y) => x - y);
    return {
      heap,
      kinds,
      pauses_per_s: round(s.length / seconds, 1),
      pause_ms_per_s: round(s.reduce((x, y) => x + y, 0) / seconds, 2),
      p50_ms: round(quantile(s, 0.5), 2),
      p99_ms: round(quantile(s, 0.99), 2),
      max_ms: round(s[s.length - 1] ?? 0, 2),
    };
  });
}

/** The service's own duration_ms of each request on `route` logged between from and to (epoch ms). */
function loggedDurations(text: string, route: string, from: number, to: number) {
  const ms: number[] = [];
  for (const line of text.split("\n")) {
    if (!line.includes('"event":"request"') || !line.includes(`"route":"${route}"`)) continue;
    const r = JSON.parse(line) as { time: string; duration_ms: number };
    const t = Date.parse(r.time);
    if (t >= from && t <= to) ms.push(r.duration_ms);
  }
  ms.sort((x, y) => x - y);
  return { requests: ms.length, p50_ms: quantile(ms, 0.5), p99_ms: quantile(ms, 0.99), p999_ms: quantile(ms, 0.999), max_ms: ms[ms.length - 1] };
}

function probeSummary(file: string) {
  if (!existsSync(file)) return undefined;
  const p = JSON.parse(readFileSync(file, "utf8")) as { step_ms: number; samples: number; max_ms: number; buckets: number[]; appends_ms?: number[] };
  const at = (q: number) => {
    let seen = 0;
    for (let i = 0; i < p.buckets.length; i++) {
      seen += p.buckets[i];
      if (seen >= q * p.samples) return round((i + 1) * p.step_ms, 1);
    }
    return NaN;
  };
  const over = (ms: number) => p.buckets.slice(Math.round(ms / p.step_ms)).reduce((x, y) => x + y, 0);
  const a = [...(p.appends_ms ?? [])].sort((x, y) => x - y);
  const appends = a.length ? { calls: a.length, p50_ms: round(quantile(a, 0.5), 2), p99_ms: round(quantile(a, 0.99), 2), p999_ms: round(quantile(a, 0.999), 2), max_ms: round(a[a.length - 1], 2), over_20ms: a.filter((x) => x > 20).length } : undefined;
  return { timer_samples: p.samples, late_p50_ms: at(0.5), late_p99_ms: at(0.99), late_p999_ms: at(0.999), late_max_ms: round(p.max_ms, 1), late_over_5ms: over(5), late_over_10ms: over(10), appends };
}

/** The worst 100 ms of a run (by the worst latency of the requests due in it) beside what the threads did in the 100 ms sample that ends after it. */
function worstWindows(run: SampledRun, serverPid: number) {
  const d = (a: Sample, b: Sample, m: (s: Sample) => Map<number, ThreadSched>, pick: (tid: number, t: ThreadSched) => boolean, f: "run_ns" | "wait_ns") => {
    let x = 0;
    for (const [tid, t] of m(b)) if (pick(tid, t)) x += t[f] - (m(a).get(tid)?.[f] ?? 0);
    return round(x / 1e6, 1);
  };
  const rows = run.fixed.worst_ms_per_100ms.map((worst, i) => {
    const at = run.fixed.window_start_epoch_ms + i * 100;
    const k = run.samples.findIndex((s) => s.epoch >= at + 100);
    if (k < 1) return undefined;
    const [a, b] = [run.samples[k - 1], run.samples[k]];
    const main = (tid: number) => tid === serverPid;
    const worker = (_: number, t: ThreadSched) => t.name === "Worker";
    return {
      at_s: round(i / 10, 1),
      worst_ms: worst,
      main: `${d(a, b, (s) => s.server, main, "run_ns")} / ${d(a, b, (s) => s.server, main, "wait_ns")}`,
      worker: `${d(a, b, (s) => s.server, worker, "run_ns")} / ${d(a, b, (s) => s.server, worker, "wait_ns")}`,
      generator: `${d(a, b, (s) => s.generator, () => true, "run_ns")} / ${d(a, b, (s) => s.generator, () => true, "wait_ns")}`,
      machine_busy_ms: round((b.machine_busy_s - a.machine_busy_s) * 1000, 0),
    };
  });
  return rows.filter((r) => r !== undefined).sort((x, y) => y!.worst_ms - x!.worst_ms).slice(0, 6) as NonNullable<(typeof rows)[number]>[];
}

const schedLine = (s: SchedSummary) =>
  `machine ${s.machine_cores} cores busy: server ${s.server_cores}, generator ${s.generator_cores}, PostgreSQL ${s.postgres_cores}, other work ${s.other_cores}; ` +
  `run-queue wait ms/s: server's main thread ${s.server_main_wait_ms_per_s} (per 100 ms: p50 ${s.server_main_wait_per_100ms.p50_ms}, p90 ${s.server_main_wait_per_100ms.p90_ms}, max ${s.server_main_wait_per_100ms.max_ms}), ` +
  `all its threads ${s.server_wait_ms_per_s}, generator ${s.generator_wait_ms_per_s}, PostgreSQL ${s.postgres_wait_ms_per_s}`;

/** A bare Bun.serve TLS server (ceiling.ts): its URL, its pid, and how to stop it. */
async function bareServer() {
  const certDir = mkdtempSync(join(tmpdir(), "warden-tail-bare-"));
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "ceiling.ts"), certDir], { stdout: "pipe", stderr: "inherit" });
  const port = Number(new TextDecoder().decode((await proc.stdout.getReader().read()).value).trim());
  return {
    url: `https://127.0.0.1:${port}`,
    pid: proc.pid,
    stop: async () => {
      proc.kill();
      await proc.exited;
      rmSync(certDir, { recursive: true, force: true });
    },
  };
}

ensureWrk();
const loadBefore = readFileSync("/proc/loadavg", "utf8").trim();
const dir = mkdtempSync(join(tmpdir(), "warden-tail-"));
const database = await toolDatabase("warden_tail");
const label = database.url ? "postgres" : "embedded";
const metricsPort = freePort();
const env = { METRICS_ADDR: `127.0.0.1:${metricsPort}`, DATA_DIR: join(dir, "data"), DATABASE_URL: database.url, LOG_LEVEL: process.env.TAIL_LOG_LEVEL ?? "info", BCRYPT_COST: "4", ...extraEnv };
const password = "tail passphrase, long enough";
const stdoutFile = join(dir, "stdout.log");
const stderrFile = join(dir, "stderr.log");
const probeFile = join(dir, "probe.json");
const flags = [...(process.env.TAIL_BUN_FLAGS?.split(" ").filter(Boolean) ?? []), ...(PROBE ? ["--preload", join(import.meta.dir, "tail-probe.ts")] : [])];

/** The receipt batch-size histogram's count and sum from the service's /metrics (group commit: receipts per append call). */
async function batches(): Promise<{ count: number; sum: number }> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  return {
    count: Number(/^warden_receipt_batch_size_count (\S+)$/m.exec(text)?.[1] ?? 0),
    sum: Number(/^warden_receipt_batch_size_sum (\S+)$/m.exec(text)?.[1] ?? 0),
  };
}
const perBatch = (a: { count: number; sum: number }, b: { count: number; sum: number }) => (b.count > a.count ? round((b.sum - a.sum) / (b.count - a.count), 1) : null);

const { service, accounts } = await startWithTenants(ROOT, env, {
  tenants: TENANTS,
  name: "tail",
  password,
  flags,
  output: { stdout: LOG ? stdoutFile : undefined, stderr: stderrFile },
  startEnv: { ...(GC ? { BUN_JSC_logGC: "1" } : {}), ...(PROBE ? { TAIL_PROBE_OUT: probeFile } : {}) },
});
const shapes = scenarios(accounts, password);
const results: Record<string, unknown>[] = [];
const lines: string[] = [];
try {
  for (const name of SCENARIOS) {
    const shape = shapes[name];
    await wrk(service.url, shape, { seconds: 3, connections: CONNECTIONS, threads: 2 });
    const b0 = await batches();
    const saturated = await wrk(service.url, shape, { seconds: WRK_SECONDS, connections: CONNECTIONS, threads: 2 });
    const b1 = await batches();
    const capacity = Math.round(saturated.requests / (saturated.duration_us / 1e6));
    const one = await wrk(service.url, { ...shape, connections: 1 }, { seconds: WRK_SECONDS, connections: 1, threads: 1 });
    const oneCaller = { rps: Math.round(one.requests / (one.duration_us / 1e6)), p50_ms: one.p50 / 1000, p99_ms: one.p99 / 1000, p999_ms: one.p999 / 1000 };
    console.log(`tail: ${label} ${name}: ${capacity} req/s at saturation; one caller p50 ${oneCaller.p50_ms} p99 ${oneCaller.p99_ms} p99.9 ${oneCaller.p999_ms} ms`);

    const rate = RATES[name] ?? Math.max(1, Math.round(capacity * FRACTION));
    let gcFrom = 0;
    let windowBatches: Promise<{ count: number; sum: number }> = Promise.resolve({ count: 0, sum: 0 });
    const run = await sampledFixedRate(service.url, shape, {
      rate,
      seconds: SECONDS,
      warmup: WARMUP,
      connections: CONNECTIONS,
      serverPid: service.proc.pid,
      postgres: Boolean(database.url),
      onWindowStart: () => {
        gcFrom = statSync(stderrFile).size;
        windowBatches = batches();
        if (PROBE) service.proc.kill("SIGUSR2");
      },
    });
    const fixed = run.fixed;
    const batch = { at_saturation: perBatch(b0, b1), at_fixed_rate: perBatch(await windowBatches, await batches()) };
    if (PROBE) {
      service.proc.kill("SIGUSR2");
      await Bun.sleep(200);
    }
    const gc = GC ? gcPauses(readFileSync(stderrFile, "utf8").slice(gcFrom), SECONDS) : undefined;
    const logged = LOG ? loggedDurations(readFileSync(stdoutFile, "utf8"), shape.path, run.window_start_epoch_ms, run.window_start_epoch_ms + SECONDS * 1000) : undefined;
    const probe = PROBE ? probeSummary(probeFile) : undefined;
    const worst = worstWindows(run, service.proc.pid);

    // The same generator at the same rate against a server that does nothing: the floor.
    let floor: SampledRun | undefined;
    if (FLOOR) {
      const bare = await bareServer();
      try {
        floor = await sampledFixedRate(bare.url, { path: "/", method: "GET" }, { rate, seconds: SECONDS, warmup: WARMUP, connections: CONNECTIONS, serverPid: bare.pid, postgres: false });
      } finally {
        await bare.stop();
      }
    }

    const { samples: _s, ...kept } = run;
    const result = {
      database: label,
      scenario: name,
      capacity_rps: capacity,
      receipts_per_batch: batch,
      one_caller: oneCaller,
      ...kept,
      ratio_p99: round(fixed.p99_ms / oneCaller.p99_ms, 2),
      ratio_p999: round(fixed.p999_ms / oneCaller.p99_ms, 2),
      worst_windows: worst,
      gc,
      logged,
      probe,
      floor: floor && { fixed: floor.fixed, sched: floor.sched },
    };
    results.push(result);
    const s = run.sched;
    const text = [
      `## ${label} ${name}`,
      "",
      `Saturation ${capacity} req/s; one caller p50 ${oneCaller.p50_ms} / p99 ${oneCaller.p99_ms} / p99.9 ${oneCaller.p999_ms} ms.`,
      `At ${rate} req/s offered (${fixed.achieved_rps} achieved): p50 ${fixed.p50_ms}, p99 ${fixed.p99_ms} (${result.ratio_p99}x one caller's p99), p99.9 ${fixed.p999_ms} (${result.ratio_p999}x), max ${fixed.max_ms} ms; ${fixed.errors} errors; generator send lag p99 ${fixed.send_lag_p99_ms} ms.`,
      ...(batch.at_saturation ? [`Receipts per append call (group commit): ${batch.at_saturation} at saturation, ${batch.at_fixed_rate} at the fixed rate.`] : []),
      `Scheduler: ${schedLine(s)}.`,
      ...(floor
        ? [
            `Floor (the same generator and rate against a bare Bun.serve TLS server): p50 ${floor.fixed.p50_ms}, p99 ${floor.fixed.p99_ms}, p99.9 ${floor.fixed.p999_ms}, max ${floor.fixed.max_ms} ms; ${schedLine(floor.sched)}.`,
          ]
        : []),
      "",
      "| process | thread | cores | run-queue wait ms/s | wait per timeslice ms |",
      "|---|---|---:|---:|---:|",
      ...s.server_threads.map((r) => `| service | ${r.thread} | ${r.cores} | ${r.wait_ms_per_s} | ${r.wait_per_slice_ms} |`),
      ...s.generator_threads.map((r) => `| generator | ${r.thread} | ${r.cores} | ${r.wait_ms_per_s} | ${r.wait_per_slice_ms} |`),
      ...(gc
        ? ["", "Collections (BUN_JSC_logGC), per heap (each pause of a collection counted):", "", "| heap | collections | pauses per s | pause ms/s | p50 ms | p99 ms | max ms |", "|---|---|---:|---:|---:|---:|---:|", ...gc.map((g) => `| ${g.heap} | ${JSON.stringify(g.kinds)} | ${g.pauses_per_s} | ${g.pause_ms_per_s} | ${g.p50_ms} | ${g.p99_ms} | ${g.max_ms} |`)]
        : []),
      ...(logged ? ["", `The service's own duration_ms (access log, ${logged.requests} requests): p50 ${logged.p50_ms}, p99 ${logged.p99_ms}, p99.9 ${logged.p999_ms}, max ${logged.max_ms} ms.`] : []),
      ...(probe ? ["", `Event-loop lateness (a 1 ms timer, ${probe.timer_samples} firings): p50 ${probe.late_p50_ms}, p99 ${probe.late_p99_ms}, p99.9 ${probe.late_p999_ms}, max ${probe.late_max_ms} ms; over 5 ms ${probe.late_over_5ms} times, over 10 ms ${probe.late_over_10ms}.` + (probe.appends ? ` receipt_append() calls to PGlite's thread, message to answer (${probe.appends.calls}): p50 ${probe.appends.p50_ms}, p99 ${probe.appends.p99_ms}, p99.9 ${probe.appends.p999_ms}, max ${probe.appends.max_ms} ms; over 20 ms ${probe.appends.over_20ms}.` : "")] : []),
      "",
      "The worst 100 ms (by the worst latency of the requests due in them), with the 100 ms sample of the threads that ends after each (run / run-queue wait, ms):",
      "",
      "| at s | worst ms | service main thread | PGlite's thread | generator (all threads) | machine busy ms (of 200) |",
      "|---:|---:|---|---|---|---:|",
      ...worst.map((w) => `| ${w.at_s} | ${w.worst_ms} | ${w.main} | ${w.worker} | ${w.generator} | ${w.machine_busy_ms} |`),
      "",
    ].join("\n");
    lines.push(text);
    console.log(text);
  }
} finally {
  await stopService(service);
  await database.drop();
}
const stamp = new Date().toISOString().replace(/[:]/g, "-").replace(/\..+/, "");
const out = join(ROOT, "bench/results/scratch");
mkdirSync(out, { recursive: true });
const head = `tail.ts, ${label}, ${new Date().toISOString()}; load average before: ${loadBefore}; generator ${process.env.BENCH_GENERATOR || "socket"}; probe ${PROBE ? "on" : "off"}, GC log ${GC ? "on" : "off"}, access log ${LOG ? "kept" : "dropped"}${Object.keys(extraEnv).length ? `; service env ${JSON.stringify(extraEnv)}` : ""}.\n\n`;
writeFileSync(join(out, `tail-${label}-${stamp}.json`), JSON.stringify(results, null, 2) + "\n");
writeFileSync(join(out, `tail-${label}-${stamp}.md`), head + lines.join("\n"));
console.log(`(${join(out, `tail-${label}-${stamp}.md`)})`);
if (process.env.TAIL_KEEP === "1") console.log(`kept ${dir} (the service's data, stdout.log, stderr.log)`);
else rmSync(dir, { recursive: true, force: true });
