// Preloaded into the service by scripts/bench/tail.ts (`bun --preload`), never by the service
// itself: a timer due every millisecond records how late it fired, which is how long the service's
// thread could not run a callback (its own work, a collection, or no core to run on). It also
// times each receipt_append() call sent to the embedded database's thread, from the message to its
// answer as this thread sees it (the wait behind the call ahead of it included). On SIGUSR2 it
// writes what it saw since the last SIGUSR2 to TAIL_PROBE_OUT and starts again.
import { writeFileSync } from "node:fs";

const out = process.env.TAIL_PROBE_OUT;
// Lateness in steps of 0.1 ms up to 100 ms, the last bucket everything beyond.
const STEP_MS = 0.1;
let buckets = new Uint32Array(1001);
let max = 0;
let samples = 0;
let appends: number[] = [];

// The embedded database's thread is a Worker (src/db/pglite.ts): its messages carry an id, its answers the same id.
const RealWorker = globalThis.Worker;
if (typeof RealWorker === "function") {
  globalThis.Worker = class extends RealWorker {
    constructor(...args: ConstructorParameters<typeof Worker>) {
      super(...args);
      const sent = new Map<number, number>();
      const post = this.postMessage.bind(this);
      this.postMessage = ((message: { id?: unknown; text?: unknown }, ...rest: unknown[]) => {
        if (typeof message?.id === "number" && typeof message.text === "string" && message.text.includes("receipt_append(")) sent.set(message.id, performance.now());
        return (post as (...a: unknown[]) => void)(message, ...rest);
      }) as Worker["postMessage"];
      this.addEventListener("message", (ev: MessageEvent) => {
        const at = sent.get(ev.data?.id);
        if (at === undefined) return;
        sent.delete(ev.data.id);
        appends.push(performance.now() - at);
      });
    }
  } as typeof Worker;
}
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
    writeFileSync(out, JSON.stringify({ step_ms: STEP_MS, samples, max_ms: max, buckets: Array.from(buckets), appends_ms: appends }));
    appends = [];
    buckets = new Uint32Array(buckets.length);
    max = 0;
    samples = 0;
  });
}
