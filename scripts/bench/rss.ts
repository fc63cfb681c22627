// The service's resident memory second by second, during a scenario under wrk and for 15 s after
// it: whether what the bench reports "after the run" is held for good or is garbage on its way
// out.
//
//   bun scripts/bench/rss.ts key_list            # embedded database
//   DATABASE_URL=postgres://... bun scripts/bench/rss.ts protect
import { runScenario } from "./one-scenario.ts";
import { rssMb } from "./proc.ts";

const scenario = process.argv[2] ?? "key_list";
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 20);
const AFTER = 15;

const run = await runScenario(scenario, { seconds: SECONDS, name: "rss" });
for (let s = 1; s <= SECONDS + AFTER; s++) {
  await Bun.sleep(1000);
  console.log(`${String(s).padStart(3)} s${s === SECONDS ? " (wrk ends)" : ""}: ${rssMb(run.service.pid).toFixed(0)} MB`);
}
console.log(await run.requestsPerSecond());
await run.stop();
