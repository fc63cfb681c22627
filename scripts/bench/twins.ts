// The entity twins (a *_entities scenario and its *_no_entities twin, scripts/bench/scenarios.ts)
// in alternating pairs on one service: for scripts/bench.ts and scripts/bench/twins-cpu.ts.
import { cpuSeconds } from "./proc.ts";
import type { Shape, WrkResult } from "./wrk.ts";

/** One run: its throughput, and the service's CPU (all its threads) a request, in µs. */
export interface TwinRun {
  rps: number;
  us: number;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * pairs alternating pairs (plain, entities, entities, plain, ...): whichever runs first on a
 * service pays for its warm-up, an order effect larger than the entities' cost, so each goes first
 * as often. run drives one shape under load; pid is the service's process.
 */
export async function alternateTwins(
  pid: number,
  run: (shape: Shape) => Promise<WrkResult>,
  twins: { plain: Shape; entities: Shape },
  pairs: number,
  onRun?: (which: "plain" | "entities", r: TwinRun) => void,
): Promise<{ plain: TwinRun[]; entities: TwinRun[] }> {
  const out = { plain: [] as TwinRun[], entities: [] as TwinRun[] };
  for (let pair = 0; pair < pairs; pair++) {
    for (const which of pair % 2 === 0 ? (["plain", "entities"] as const) : (["entities", "plain"] as const)) {
      const before = cpuSeconds(pid);
      const r = await run(twins[which]);
      const got = { rps: r.requests / (r.duration_us / 1e6), us: ((cpuSeconds(pid) - before) / r.requests) * 1e6 };
      out[which].push(got);
      onRun?.(which, got);
    }
  }
  return out;
}

/** The entities' cost from the medians: throughput with over without, and CPU without over with. */
export function twinRatios(runs: { plain: TwinRun[]; entities: TwinRun[] }) {
  const m = (xs: TwinRun[], k: keyof TwinRun) => median(xs.map((r) => r[k]));
  return {
    rps: m(runs.entities, "rps") / m(runs.plain, "rps"),
    cpu: m(runs.plain, "us") / m(runs.entities, "us"),
    us: { plain: m(runs.plain, "us"), entities: m(runs.entities, "us") },
    medianRps: { plain: m(runs.plain, "rps"), entities: m(runs.entities, "rps") },
  };
}
