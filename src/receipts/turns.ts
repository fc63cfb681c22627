// Fair turns for the reads of a tenant's receipt log: at most `limit` of one tenant's checkpoints
// and proofs run at once, the rest wait in arrival order. A tenant asking in a tight loop then
// holds one slice of the service at a time, and other tenants' requests pass between its reads.
export class TenantTurns {
  private readonly tenants = new Map<string, { running: number; waiting: (() => void)[] }>();

  constructor(private readonly limit: number) {}

  async run<T>(tenantId: string, work: () => Promise<T>): Promise<T> {
    let turn = this.tenants.get(tenantId);
    if (!turn) this.tenants.set(tenantId, (turn = { running: 0, waiting: [] }));
    // A waiter is handed the slot of the read that finished, so `running` never passes the limit.
    if (turn.running < this.limit) turn.running++;
    else await new Promise<void>((resolve) => turn.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = turn.waiting.shift();
      if (next) next();
      else if (--turn.running === 0) this.tenants.delete(tenantId);
    }
  }

  /** Tenants with a read running or waiting (for tests). */
  get busy(): number {
    return this.tenants.size;
  }
}
