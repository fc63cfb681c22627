// Agents waiting on an approval (GET /v1/approvals/{id}?wait=N) hold no database connection: they
// wait here until the commit that changes their approval is announced (approval_announce(),
// channel approval), or their wait ends; then the route reads the approval once. One subscription
// serves every waiter of the process, so a thousand waiting agents cost a thousand timers.
import type { Db } from "../db/index.ts";

export class ApprovalWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();

  private constructor() {}

  static async open(db: Pick<Db, "subscribe">): Promise<ApprovalWaiters> {
    const waiters = new ApprovalWaiters();
    await db.subscribe("approval", (payload) => waiters.wake(payload));
    return waiters;
  }

  /** How many agents wait right now (a gauge of /metrics would read it). */
  get size(): number {
    let n = 0;
    for (const set of this.waiting.values()) n += set.size;
    return n;
  }

  /** Resolves when the approval changes (true) or after `ms` (false). */
  until(tenantId: string, approvalId: string, ms: number, signal?: AbortSignal): Promise<boolean> {
    const key = `${tenantId}:${approvalId}`;
    return new Promise((resolve) => {
      let set = this.waiting.get(key);
      if (!set) this.waiting.set(key, (set = new Set()));
      const done = (changed: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", aborted);
        set!.delete(wake);
        if (set!.size === 0 && this.waiting.get(key) === set) this.waiting.delete(key);
        resolve(changed);
      };
      const wake = () => done(true);
      const aborted = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      signal?.addEventListener("abort", aborted, { once: true });
      set.add(wake);
    });
  }

  private wake(key: string): void {
    for (const wake of [...(this.waiting.get(key) ?? [])]) wake();
  }
}

/** Expires due approvals every `everyMs` (the sweeper); stop() waits for a sweep in flight, up to 2 s. */
export function startApprovalSweeper(expireDue: () => Promise<number>, everyMs: number, onError: (err: unknown) => void): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;
  const sweep = () => {
    if (busy) return;
    busy = true;
    running = expireDue()
      .catch(onError)
      .finally(() => (busy = false));
  };
  const timer = setInterval(sweep, everyMs);
  // A timer alone never keeps the process up.
  (timer as { unref?: () => void }).unref?.();
  return {
    async stop() {
      clearInterval(timer);
      // A sweep stuck on a database that hangs must not hold the shutdown: wait a little, then go.
      await Promise.race([running, new Promise((resolve) => setTimeout(resolve, 2_000).unref?.())]);
    },
  };
}
