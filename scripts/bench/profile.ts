// Profile one scenario under wrk: the service runs under `bun --cpu-prof`, wrk drives it over TLS
// for a few seconds, and the profile is summarised by self time (functions and files).
//
//   bun scripts/bench/profile.ts simulate            # embedded database
//   DATABASE_URL=postgres://... bun scripts/bench/profile.ts protect
//
// PROFILE_SECONDS (8), PROFILE_TOP (30). The raw .cpuprofile stays in the printed directory.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runScenario } from "./one-scenario.ts";

const ROOT = join(import.meta.dir, "../..");
const scenario = process.argv[2] ?? "simulate";
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 8);
const TOP = Number(process.env.PROFILE_TOP ?? 30);

const run = await runScenario(scenario, { seconds: SECONDS, name: "profile", flags: (dir) => ["--cpu-prof", `--cpu-prof-dir=${dir}`] });
const dir = run.dir;
console.log(await run.requestsPerSecond());
await run.stop();

// Summarise: self time per function and per file (samples are evenly spaced).
const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
if (!file) throw new Error(`no profile in ${dir}`);
const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
};
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const fn = new Map<string, number>();
const files = new Map<string, number>();
for (const id of profile.samples) {
  const { functionName, url: u, lineNumber } = byId.get(id)!.callFrame;
  const where = u.replace(/^.*node_modules\//, "~/").replace(ROOT + "/", "");
  fn.set(`${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`, (fn.get(`${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`) ?? 0) + 1);
  const bucket = u === "" ? functionName : where.startsWith("~/") ? where.split("/").slice(0, where.startsWith("~/@") ? 3 : 2).join("/") : where;
  files.set(bucket, (files.get(bucket) ?? 0) + 1);
}
const total = profile.samples.length;
const show = (m: Map<string, number>) =>
  [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP).forEach(([k, v]) => console.log(`${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`));
console.log(`\n${total} samples; by function (self):`);
show(fn);
console.log("\nby file or package (self):");
show(files);
console.log(`\nprofile: ${join(dir, file)}`);
