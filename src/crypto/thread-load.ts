// Whether this thread is saturated: the share of wall time it spent on the CPU over the last
// window, from process.threadCpuUsage() (Bun, Node, Deno). Work that can run elsewhere at a small
// extra cost (a receipt's signature on the thread pool) goes there only while this thread is the
// bound: on an idle or half-busy thread it costs a lone caller a thread hop and the machine more
// CPU, for nothing.
import { availableParallelism } from "node:os";

export interface ThreadLoadOptions {
  /** Length of a measuring window. */
  windowMs: number;
  /** Saturated from this share of a window on... */
  on: number;
  /** ...until a window's share falls under this one. */
  off: number;
  /** This thread's CPU time in µs, or undefined where the runtime cannot tell. */
  cpuMicros: () => number | undefined;
  now: () => number;
  /** Cores the process may use; with one, there is no other core to give work to. */
  cores: number;
}

function threadCpuMicros(): number | undefined {
  const usage = (process as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage?.();
  return usage ? usage.user + usage.system : undefined;
}

export class ThreadLoad {
  private readonly opts: ThreadLoadOptions;
  private saturatedNow = false;
  private windowStart: number;
  private cpuAtStart: number | undefined;

  constructor(opts: Partial<ThreadLoadOptions> = {}) {
    this.opts = { windowMs: 100, on: 0.9, off: 0.75, cpuMicros: threadCpuMicros, now: () => performance.now(), cores: availableParallelism(), ...opts };
    this.windowStart = this.opts.now();
    this.cpuAtStart = this.opts.cpuMicros();
  }

  /** True while the thread is saturated; measured once a window has passed since the last measure. */
  saturated(): boolean {
    if (this.opts.cores < 2 || this.cpuAtStart === undefined) return false;
    const now = this.opts.now();
    const wall = now - this.windowStart;
    if (wall < this.opts.windowMs) return this.saturatedNow;
    const cpu = this.opts.cpuMicros()!;
    const share = (cpu - this.cpuAtStart) / 1000 / wall;
    this.saturatedNow = this.saturatedNow ? share >= this.opts.off : share >= this.opts.on;
    this.windowStart = now;
    this.cpuAtStart = cpu;
    return this.saturatedNow;
  }
}
