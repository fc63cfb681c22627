// wrk, the load generator of the bench and the profiler: installed from Debian when missing.
import { spawnSync } from "node:child_process";

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
