// A constant offered load, open loop (what wrk2 does, which Debian does not ship): request i is due
// at start + i / rate whether or not the earlier ones have been answered, and its latency counts
// from that due time. A stall of the service then shows in the latency of every request it held
// back, instead of holding back the requests themselves (coordinated omission, as in wrk's
// closed loop). Runs in a process of its own, so that its CPU is not the caller's event loop. It
// speaks HTTP/1.1 on TLS sockets of its own event loop (http1.ts), about half the CPU a request of
// Bun's fetch() (BENCH_GENERATOR=fetch), which the service's cores would otherwise lend it.
//
//   const r = await fixedRate("https://127.0.0.1:8443", shape, { rate: 1000, seconds: 10, warmup: 2 });
import { connectionPool, requestBytes } from "./http1.ts";
import { shapeHeaders, type Shape } from "./wrk.ts";

export interface FixedRateResult {
  offered_rps: number;
  /** Answers (any status) over the time from the first due request to the last answer. */
  achieved_rps: number;
  sent: number;
  errors: number;
  p50_ms: number;
  p99_ms: number;
  p999_ms: number;
  max_ms: number;
  /** How late this generator's timer fired for a request, at the 99th percentile: when large, it, not the service, was behind. */
  send_lag_p99_ms: number;
  /** Cores this generator used while it ran, on the same machine as the service. */
  generator_cores: number;
  /** When the first counted request was due (ms since the epoch), and the worst latency of the requests due in each 100 ms from then: when the tail happened. */
  window_start_epoch_ms: number;
  worst_ms_per_100ms: number[];
}

interface Spec {
  url: string;
  method: string;
  body?: string;
  headers: Record<string, string>;
  keys: string[];
  rate: number;
  seconds: number;
  warmup: number;
  timeoutMs: number;
  connections: number;
  client: Client;
}

/**
 * How the generator speaks HTTP: "socket" (http1.ts: TLS sockets on its own event loop, the
 * default) or "fetch" (Bun's fetch(), whose TLS and HTTP run on a thread of their own: about twice
 * the CPU per request, taken from the cores the service runs on).
 */
export type Client = "socket" | "fetch";

/** `rate` requests a second of `shape` for `warmup` s (not counted), then for `seconds`. */
export async function fixedRate(
  baseUrl: string,
  shape: Shape,
  opts: { rate: number; seconds: number; warmup?: number; timeoutMs?: number; connections?: number; client?: Client; onStart?: (pid: number) => void },
): Promise<FixedRateResult> {
  const spec: Spec = {
    url: baseUrl + shape.path,
    method: shape.method ?? "GET",
    body: shape.body === undefined ? undefined : JSON.stringify(shape.body),
    headers: shapeHeaders(shape),
    keys: (shape.keys ?? []).map((k) => k.slice(k.indexOf("=") + 1)),
    rate: opts.rate,
    seconds: opts.seconds,
    warmup: opts.warmup ?? 2,
    timeoutMs: opts.timeoutMs ?? 10_000,
    connections: opts.connections ?? 64,
    client: opts.client ?? ((process.env.BENCH_GENERATOR as Client | undefined) || "socket"),
  };
  const proc = Bun.spawn([process.execPath, import.meta.path, JSON.stringify(spec)], { stdout: "pipe", stderr: "pipe" });
  opts.onStart?.(proc.pid);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const line = out.split("\n").find((l) => l.startsWith("FIXED_RATE_JSON "));
  if (code !== 0 || !line) throw new Error(`fixed-rate generator failed (${code}): ${out} ${err}`);
  return JSON.parse(line.slice("FIXED_RATE_JSON ".length));
}

/** The q-quantile of sorted values (nearest rank). */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

const ms2 = (ms: number) => Math.round(ms * 100) / 100;

async function run(spec: Spec): Promise<FixedRateResult> {
  const interval = 1000 / spec.rate;
  const warm = Math.floor(spec.rate * spec.warmup);
  const total = warm + Math.floor(spec.rate * spec.seconds);
  const latency = new Float64Array(total - warm);
  const lag = new Float64Array(total - warm);
  let errors = 0;
  let lastAnswer = 0;
  let inflight = 0;
  // At most `connections` requests in flight (so as many kept-alive connections, as wrk2 keeps):
  // a request due while all are busy waits here, and the wait counts in its latency.
  const waiting: number[] = [];
  let drained = () => {};
  const start = performance.now() + 20;
  const cpu0 = process.cpuUsage();

  const schedule = (i: number) => {
    if (i >= warm) lag[i - warm] = performance.now() - (start + i * interval);
    if (inflight >= spec.connections) waiting.push(i);
    else send(i);
  };
  const answered = (i: number, status: number) => {
    const now = performance.now();
    if (i >= warm) {
      latency[i - warm] = now - (start + i * interval);
      if (status === 0 || status >= 400) errors++;
    }
    lastAnswer = now;
    inflight--;
    const next = waiting.shift();
    if (next !== undefined) send(next);
    else if (inflight === 0) drained();
  };
  // The socket client (http1.ts): each key's request made once.
  const url = new URL(spec.url);
  const pool = spec.client === "socket" ? connectionPool(url, spec.connections, spec.timeoutMs) : undefined;
  const requests = (spec.keys.length ? spec.keys : [undefined]).map((key) => requestBytes(url, spec.method, key ? { ...spec.headers, "X-API-Key": key } : spec.headers, spec.body));
  const send = (i: number) => {
    inflight++;
    if (pool) return pool.send(requests[i % requests.length], (status) => answered(i, status));
    const headers = spec.keys.length ? { ...spec.headers, "X-API-Key": spec.keys[i % spec.keys.length] } : spec.headers;
    fetch(spec.url, { method: spec.method, headers, body: spec.body, signal: AbortSignal.timeout(spec.timeoutMs), tls: { rejectUnauthorized: false } } as RequestInit)
      .then(
        async (res) => {
          await res.arrayBuffer();
          return res.status;
        },
        () => 0,
      )
      .then((status) => answered(i, status));
  };

  // Every request already due goes now; then sleep to the next due time. Timers count whole
  // milliseconds (a shorter sleep returns at once, and the loop would spin on a core the service
  // needs), so a request may go up to ~1 ms late: that counts in its latency (send_lag_p99_ms says how much).
  for (let i = 0; i < total; ) {
    const dueNow = Math.min(total, Math.floor((performance.now() - start) / interval) + 1);
    for (; i < dueNow; i++) schedule(i);
    if (i < total) await Bun.sleep(Math.max(1, Math.ceil(start + i * interval - performance.now())));
  }
  if (inflight > 0) await new Promise<void>((resolve) => (drained = resolve));
  pool?.close();

  const cpu = process.cpuUsage(cpu0);
  const wall = (performance.now() - start) / 1000;
  const worst = new Array<number>(Math.ceil(spec.seconds * 10)).fill(0);
  for (let j = 0; j < latency.length; j++) {
    const b = Math.min(worst.length - 1, Math.floor((j * interval) / 100));
    if (latency[j] > worst[b]) worst[b] = ms2(latency[j]);
  }
  latency.sort();
  lag.sort();
  const counted = latency.length;
  const window = (lastAnswer - (start + warm * interval)) / 1000;
  return {
    offered_rps: spec.rate,
    achieved_rps: Math.round(counted / window),
    sent: counted,
    errors,
    p50_ms: ms2(quantile(latency, 0.5)),
    p99_ms: ms2(quantile(latency, 0.99)),
    p999_ms: ms2(quantile(latency, 0.999)),
    max_ms: ms2(latency[counted - 1]),
    send_lag_p99_ms: ms2(quantile(lag, 0.99)),
    generator_cores: Math.round(((cpu.user + cpu.system) / 1e6 / wall) * 100) / 100,
    window_start_epoch_ms: Math.round(performance.timeOrigin + start + warm * interval),
    worst_ms_per_100ms: worst,
  };
}

if (import.meta.main) {
  const result = await run(JSON.parse(process.argv[2]) as Spec);
  console.log(`FIXED_RATE_JSON ${JSON.stringify(result)}`);
}
