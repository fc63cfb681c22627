// Preloaded into the service by scripts/bench/tail.ts (`bun --preload`), never by the service
// itself: a timer due every millisecond records how late it fired, which is how long the service's
// thread could not run a callback (its own work, a collection, or no core to run on). On SIGUSR2
// it writes what it saw since the last SIGUSR2 to TAIL_PROBE_OUT and starts again.
import { writeFileSync } from "node:fs";

const out = process.env.TAIL_PROBE_OUT;
// Lateness in steps of 0.1 ms up to 100 ms, the last bucket everything beyond.
const STEP_MS = 0.1;
let buckets = new Uint32Array(1001);
let max = 0;
let samples = 0;
let due = performance.now() + 1;

function tick(): void {
  const now = performance.now();
  const late = Math.max(0, now - due);
  buckets[Math.min(buckets.length - 1, Math.floor(late / STEP_MS))]++;
  if (late > max) max = late;
  samples++;
  due = now + 1;
  (setTimeout(tick, 1) as { unref?: () => void }).unref?.();
}
(setTimeout(tick, 1) as { unref?: () => void }).unref?.();

if (out) {
  process.on("SIGUSR2", () => {
    writeFileSync(out, JSON.stringify({ step_ms: STEP_MS, samples, max_ms: max, buckets: Array.from(buckets) }));
    buckets = new Uint32Array(buckets.length);
    max = 0;
    samples = 0;
  });
}
