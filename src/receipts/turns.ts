// Fair turns for the reads of a tenant's receipt log (checkpoints and proofs): one at a time per
// tenant, in arrival order, and at most `perSecond` a second once a burst of as many is spent
// (GCRA, the virtual-schedule form of a token bucket). Nothing is refused: a read beyond the
// budget waits its turn. A tenant asking in a tight loop then holds a bounded slice of the service,
// and other tenants' requests pass between its reads.
interface Turn {
  /** Settles when the tenant's latest read has ended: the next one starts after it. */
  last: Promise<void>;
  /** Reads of the tenant running or waiting. */
  queued: number;
  /** The theoretical time of the tenant's next read at the sustained rate (performance.now()). */
  due: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class TenantTurns {
  private readonly tenants = new Map<string, Turn>();
  /** Time between reads at the sustained rate, and how far a tenant may run ahead of it (ms). */
  private readonly interval: number;
  private readonly tolerance: number;

  constructor(perSecond: number) {
    this.interval = 1000 / perSecond;
    this.tolerance = perSecond * this.interval;
  }

  async run<T>(tenantId: string, work: () => Promise<T>): Promise<T> {
    let turn = this.tenants.get(tenantId);
    if (!turn) this.tenants.set(tenantId, (turn = { last: Promise.resolve(), queued: 0, due: 0 }));
    turn.queued++;
    const previous = turn.last;
    let ended!: () => void;
    turn.last = new Promise((resolve) => (ended = resolve));
    try {
      await previous;
      const now = performance.now();
      const start = Math.max(now, turn.due - this.tolerance);
      if (start > now) await sleep(start - now);
      turn.due = Math.max(turn.due, start) + this.interval;
      return await work();
    } finally {
      ended();
      if (--turn.queued === 0) this.forgetWhenRested(tenantId, turn);
    }
  }

  /** Drops an idle tenant once its budget is whole again (a new entry starts whole). */
  private forgetWhenRested(tenantId: string, turn: Turn): void {
    const forget = () => {
      if (turn.queued === 0 && this.tenants.get(tenantId) === turn) this.tenants.delete(tenantId);
    };
    const rest = turn.due - performance.now();
    if (rest <= 0) return forget();
    (setTimeout(forget, rest) as { unref?: () => void }).unref?.();
  }

  /** Tenants whose reads are running, waiting or still count against their budget (for tests). */
  get busy(): number {
    return this.tenants.size;
  }
}
