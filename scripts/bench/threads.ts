// Where a scenario's CPU goes by thread: the service runs as in profile.ts (no profiler), wrk drives
// it, and /proc/<pid>/task/*/stat is read before and after, so that the service's own threads (the
// HTTP thread, the embedded database's thread, JavaScriptCore's collector and compiler), wrk and,
// on PostgreSQL, each server process (the sessions, the WAL writer, ...) show apart, in cores.
//
//   bun scripts/bench/threads.ts protect            # embedded database
//   DATABASE_URL=postgres://... bun scripts/bench/threads.ts protect
import { readdirSync, readFileSync } from "node:fs";
import { runScenario } from "./one-scenario.ts";
import { parseStat, postgresTicks, TICKS_PER_SECOND } from "./proc.ts";

const scenario = process.argv[2] ?? "protect";
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 8);

const run = await runScenario(scenario, { seconds: SECONDS, name: "threads" });
const proc = run.service;
const wrk = run.wrk;

/** CPU ticks (user + system) per thread of a process, keyed by "tid name". */
function ticks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const { name, ticks } = parseStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8"));
      out.set(`${tid} ${name}`, ticks);
    } catch {} // a thread that ended between the listing and the read
  }
  return out;
}
await Bun.sleep(2000); // warm-up
const before = ticks(proc.pid);
const wrkBefore = ticks(wrk.pid);
const pgBefore = postgresTicks();
const t0 = performance.now();
await Bun.sleep((SECONDS - 3) * 1000);
const after = ticks(proc.pid);
const wrkAfter = ticks(wrk.pid);
const pgAfter = postgresTicks();
const seconds = (performance.now() - t0) / 1000;
console.log(await run.requestsPerSecond());
const show = (label: string, a: Map<string, number>, b: Map<string, number>) => {
  let sum = 0;
  for (const [k, v] of b) {
    const cores = (v - (a.get(k) ?? 0)) / TICKS_PER_SECOND / seconds;
    sum += cores;
    if (cores >= 0.01) console.log(`${label} ${cores.toFixed(2)} cores  ${k}`);
  }
  console.log(`${label} ${sum.toFixed(2)} cores in all`);
};
show("service", before, after);
show("wrk    ", wrkBefore, wrkAfter);
if (process.env.DATABASE_URL) show("pg     ", pgBefore, pgAfter);
await run.stop();
