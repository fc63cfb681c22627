// wrk, the load generator of the bench at saturation: installed from Debian when missing, and run
// with scripts/bench/request.lua on one request shape.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { Subprocess } from "bun";

/** One request shape: `keys` ("tenant_id=secret") are taken in turn, one per request; `pair` executes each protect's receipt. */
export interface Shape {
  path: string;
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  keys?: string[];
  pair?: boolean;
  /** Connections for wrk, when not the run's default. */
  connections?: number;
  timeout?: string;
}

/** wrk's summary, latencies in microseconds. */
export interface WrkResult {
  requests: number;
  duration_us: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  errors: Record<string, number>;
}

export function ensureWrk(): void {
  if (spawnSync("wrk", ["--version"]).error === undefined) return;
  console.log("bench: installing wrk from Debian");
  let r = spawnSync("apt-get", ["install", "-y", "wrk"], { stdio: "inherit" });
  if (r.status !== 0) {
    spawnSync("apt-get", ["update"], { stdio: "inherit" });
    r = spawnSync("apt-get", ["install", "-y", "wrk"], { stdio: "inherit" });
  }
  if (r.status !== 0) throw new Error("could not install wrk");
}

/** The headers of a shape, as sent (a JSON body brings its Content-Type). */
export function shapeHeaders(shape: Pick<Shape, "body" | "headers">): Record<string, string> {
  return { ...(shape.body !== undefined ? { "Content-Type": "application/json" } : {}), ...shape.headers };
}

/** wrk with `connections` connections (closed loop: each sends its next request on an answer) on `baseUrl` + shape.path. */
export function startWrk(baseUrl: string, shape: Shape, opts: { seconds: number; connections: number; threads: number }): { proc: Subprocess; result: Promise<WrkResult> } {
  const env = {
    ...process.env,
    BENCH_METHOD: shape.method ?? "GET",
    BENCH_BODY: shape.body === undefined ? "" : JSON.stringify(shape.body),
    BENCH_HEADERS: Object.entries(shapeHeaders(shape))
      .map(([k, v]) => `${k}: ${v}`)
      .join("\n"),
    BENCH_PAIR: shape.pair ? "1" : "0",
    BENCH_KEYS: (shape.keys ?? []).join(","),
  };
  const connections = shape.connections ?? opts.connections;
  const args = ["-t", String(Math.min(opts.threads, connections)), "-c", String(connections), "-d", `${opts.seconds}s`, "--timeout", shape.timeout ?? "2s", "--latency"];
  const proc = Bun.spawn(["wrk", ...args, "-s", join(import.meta.dir, "request.lua"), baseUrl + shape.path], { env, stdout: "pipe", stderr: "pipe" });
  const result = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]).then(([out, err]) => {
    const line = out.split("\n").find((l) => l.startsWith("BENCH_JSON "));
    if (!line) throw new Error(`wrk gave no summary: ${out} ${err}`);
    return JSON.parse(line.slice("BENCH_JSON ".length)) as WrkResult;
  });
  return { proc, result };
}

export const wrk = (baseUrl: string, shape: Shape, opts: { seconds: number; connections: number; threads: number }): Promise<WrkResult> => startWrk(baseUrl, shape, opts).result;
