// A fixed-rate run (fixed-rate.ts) with the scheduler's view of it: every 100 ms, the counters of
// every thread of the server and of the generator (/proc/<pid>/task/*/schedstat: time on a CPU,
// and time ready to run but waiting for one), of PostgreSQL's processes and of the whole machine.
// A thread that waits on a run queue had work and no core: on a machine whose cores are all
// taken, that wait lands in the latency of whatever it was about to answer. So the percentiles
// come with the cores each side used, the waits, and the cores other work took meanwhile.
import { readdirSync, readFileSync } from "node:fs";
import { fixedRate, quantile, type FixedRateResult } from "./fixed-rate.ts";
import { machineBusySeconds, threadSched, type ThreadSched } from "./proc.ts";
import type { Shape } from "./wrk.ts";

export interface Sample {
  /** performance.now() and Date.now() when taken. */
  t: number;
  epoch: number;
  server: Map<number, ThreadSched>;
  generator: Map<number, ThreadSched>;
  postgres: { run_ns: number; wait_ns: number };
  machine_busy_s: number;
}

export interface ThreadRow {
  /** The thread's name, digits at its end replaced by # (threads of a pool summed). */
  thread: string;
  cores: number;
  /** Time ready to run but without a core, per second of wall time (ms/s). */
  wait_ms_per_s: number;
  /** That wait per timeslice run (ms): how long a wake-up waited for a core on average. */
  wait_per_slice_ms: number;
}

export interface SchedSummary {
  /** Cores of the whole machine busy, and the part of them neither the server, the generator nor PostgreSQL used: other work. */
  machine_cores: number;
  other_cores: number;
  server_cores: number;
  /** Run-queue wait of the server's main thread (the one answering HTTP), ms per second. */
  server_main_wait_ms_per_s: number;
  /** The same for all the server's threads. */
  server_wait_ms_per_s: number;
  generator_cores: number;
  generator_wait_ms_per_s: number;
  postgres_cores: number;
  postgres_wait_ms_per_s: number;
  /** The main thread's run-queue wait in each 100 ms sample of the window: median, 90th percentile, the most. */
  server_main_wait_per_100ms: { p50_ms: number; p90_ms: number; max_ms: number };
  server_threads: ThreadRow[];
  generator_threads: ThreadRow[];
}

export const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The q-quantile of sorted values (nearest rank), as the generator computes its own. */
export { quantile };

/** Run and wait (ns) of every PostgreSQL server process on the machine, summed. */
function postgresSched(): { run_ns: number; wait_ns: number } {
  let run_ns = 0;
  let wait_ns = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/comm`, "utf8").startsWith("postgres")) continue;
      const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, "utf8").trim().split(" ").map(Number);
      run_ns += run;
      wait_ns += wait;
    } catch {} // a process that ended between the listing and the read
  }
  return { run_ns, wait_ns };
}

/** Per-thread rows between two samples of one process, threads of one name summed. */
export function threadRows(a: Map<number, ThreadSched>, b: Map<number, ThreadSched>, seconds: number): ThreadRow[] {
  const byName = new Map<string, { run: number; wait: number; slices: number }>();
  for (const [tid, after] of b) {
    const before = a.get(tid) ?? { run_ns: 0, wait_ns: 0, slices: 0 };
    const name = after.name.replace(/\d+$/, "#");
    const r = byName.get(name) ?? { run: 0, wait: 0, slices: 0 };
    r.run += after.run_ns - before.run_ns;
    r.wait += after.wait_ns - before.wait_ns;
    r.slices += after.slices - before.slices;
    byName.set(name, r);
  }
  return [...byName.entries()]
    .filter(([, r]) => r.run / 1e9 / seconds >= 0.005 || r.wait / 1e6 / seconds >= 1)
    .sort((x, y) => y[1].run - x[1].run)
    .map(([thread, r]) => ({
      thread,
      cores: round(r.run / 1e9 / seconds, 3),
      wait_ms_per_s: round(r.wait / 1e6 / seconds, 1),
      wait_per_slice_ms: round(r.slices ? r.wait / 1e6 / r.slices : 0, 3),
    }));
}

/** What the scheduler saw between the first and the last of `samples`; `serverPid`'s own thread is its main one. */
export function summarize(samples: Sample[], serverPid: number): SchedSummary {
  const first = samples[0];
  const last = samples[samples.length - 1];
  const seconds = (last.t - first.t) / 1000;
  const server_threads = threadRows(first.server, last.server, seconds);
  const generator_threads = threadRows(first.generator, last.generator, seconds);
  const sum = (rows: ThreadRow[], k: "cores" | "wait_ms_per_s") => rows.reduce((x, r) => x + r[k], 0);
  const ns = (a: ThreadSched | undefined, b: ThreadSched | undefined, k: "run_ns" | "wait_ns") => (a && b ? b[k] - a[k] : 0);
  const mainWait = ns(first.server.get(serverPid), last.server.get(serverPid), "wait_ns") / 1e6 / seconds;
  const perInterval: number[] = [];
  for (let i = 1; i < samples.length; i++) perInterval.push(ns(samples[i - 1].server.get(serverPid), samples[i].server.get(serverPid), "wait_ns") / 1e6);
  perInterval.sort((x, y) => x - y);
  const machine = (last.machine_busy_s - first.machine_busy_s) / seconds;
  const postgres = (last.postgres.run_ns - first.postgres.run_ns) / 1e9 / seconds;
  return {
    machine_cores: round(machine, 2),
    other_cores: round(Math.max(0, machine - sum(server_threads, "cores") - sum(generator_threads, "cores") - postgres), 2),
    server_cores: round(sum(server_threads, "cores"), 2),
    server_main_wait_ms_per_s: round(mainWait, 1),
    server_wait_ms_per_s: round(sum(server_threads, "wait_ms_per_s"), 1),
    generator_cores: round(sum(generator_threads, "cores"), 2),
    generator_wait_ms_per_s: round(sum(generator_threads, "wait_ms_per_s"), 1),
    postgres_cores: round(postgres, 2),
    postgres_wait_ms_per_s: round((last.postgres.wait_ns - first.postgres.wait_ns) / 1e6 / seconds, 1),
    server_main_wait_per_100ms: { p50_ms: round(quantile(perInterval, 0.5), 2), p90_ms: round(quantile(perInterval, 0.9), 2), max_ms: round(perInterval[perInterval.length - 1] ?? 0, 2) },
    server_threads,
    generator_threads,
  };
}

export interface SampledRun {
  fixed: FixedRateResult;
  sched: SchedSummary;
  /** Every sample taken, the counted window's and the rest. */
  samples: Sample[];
  /** Date.now() when the counted window began (the generator's warm-up over). */
  window_start_epoch_ms: number;
}

/**
 * fixedRate() against a server whose process is `serverPid`, sampled every 100 ms; the summary is
 * of the counted window (after the generator's warm-up). `onWindowStart` runs when it begins.
 * `postgres`: PostgreSQL's processes are read too.
 */
export async function sampledFixedRate(
  url: string,
  shape: Shape,
  opts: { rate: number; seconds: number; warmup: number; connections: number; serverPid: number; postgres: boolean; onWindowStart?: () => void; onGenerator?: (pid: number) => void },
): Promise<SampledRun> {
  const samples: Sample[] = [];
  let generator = 0;
  let started = 0;
  let windowStart = 0;
  const take = () =>
    samples.push({
      t: performance.now(),
      epoch: Date.now(),
      server: threadSched(opts.serverPid),
      generator: generator ? threadSched(generator) : new Map(),
      postgres: opts.postgres ? postgresSched() : { run_ns: 0, wait_ns: 0 },
      machine_busy_s: machineBusySeconds(),
    });
  const sampler = setInterval(() => {
    take();
    if (started && !windowStart && performance.now() - started >= opts.warmup * 1000) {
      windowStart = Date.now();
      opts.onWindowStart?.();
    }
  }, 100);
  let fixed: FixedRateResult;
  try {
    fixed = await fixedRate(url, shape, {
      rate: opts.rate,
      seconds: opts.seconds,
      warmup: opts.warmup,
      connections: opts.connections,
      onStart: (pid) => {
        generator = pid;
        started = performance.now();
        opts.onGenerator?.(pid);
      },
    });
  } finally {
    clearInterval(sampler);
  }
  // The counted window: from the generator's warm-up's end to its last due request, while it ran.
  const end = started + (opts.warmup + opts.seconds) * 1000;
  const inWindow = samples.filter((s) => s.t >= started + opts.warmup * 1000 && s.t <= end && s.generator.size > 0);
  if (inWindow.length < 2) throw new Error("the fixed-rate run was too short to sample");
  return { fixed, sched: summarize(inWindow, opts.serverPid), samples: inWindow, window_start_epoch_ms: windowStart };
}
