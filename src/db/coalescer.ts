// Coalescing of concurrent database calls of one kind into one call (group commit, batched
// lookups). A call goes out once the event loop has read what has arrived (setImmediate), so the
// requests that came in together share it; items that arrive while calls are in flight wait for
// the next call, which takes them all. (Going out at once made batches of one on the embedded
// database: its queries run on this thread, so the first request's query blocked the reading of
// the others.) Every item's call starts after the item arrived, so a batched read sees every write
// committed before its request came in, exactly as its own query would.

export interface CoalescerOptions {
  /** Items in one call at most. */
  maxBatch: number;
  /** Calls in flight at once at most. */
  maxInFlight: number;
  /**
   * Up to this many milliseconds, a call waits for as many items as the last call had, when fewer
   * are queued (0: never waits). For a database whose calls run on this thread (PGlite): the
   * callers answered by the last call are usually about to come back, and one call for all of them
   * pays the call's fixed cost once instead of twice (docs/performance.md section 24). A single
   * caller, whose last call had one item, never waits.
   */
  lingerMs?: number;
}

interface Waiting<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

/**
 * `run` gets the items of one call and gives one result per item, in order: a value, or an Error
 * that rejects that item alone. When `run` throws, every item of its call is rejected with it.
 */
export class Coalescer<I, R> {
  private queue: Waiting<I, R>[] = [];
  private inFlight = 0;
  private scheduled = false;
  /** Items of the last call, the count a lingering call waits for. */
  private lastSize = 0;
  private lingering: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly run: (items: I[]) => Promise<(R | Error)[]>,
    private readonly opts: CoalescerOptions,
  ) {}

  submit(item: I): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.lingering !== undefined && this.queue.length >= this.lastSize) this.stopLingering();
      this.schedule();
    });
  }

  private stopLingering(): void {
    clearTimeout(this.lingering);
    this.lingering = undefined;
  }

  private schedule(): void {
    if (this.scheduled || this.lingering !== undefined) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    const linger = this.opts.lingerMs ?? 0;
    if (linger > 0 && this.inFlight === 0 && this.queue.length > 0 && this.queue.length < this.lastSize) {
      // Wait for the rest of the last call's callers (submit() ends the wait when they are all
      // here); after lingerMs the call goes with those that came.
      this.lingering = setTimeout(() => {
        this.lingering = undefined;
        this.send();
      }, linger);
      return;
    }
    this.send();
  }

  private send(): void {
    while (this.inFlight < this.opts.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.opts.maxBatch);
      this.lastSize = batch.length;
      this.inFlight++;
      this.call(batch).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0) this.schedule();
      });
    }
  }

  private async call(batch: Waiting<I, R>[]): Promise<void> {
    let results: (R | Error)[];
    try {
      results = await this.run(batch.map((w) => w.item));
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => {
      const result = results[i];
      if (result === undefined) w.reject(new Error("a coalesced call returned no result for an item"));
      else if (result instanceof Error) w.reject(result);
      else w.resolve(result);
    });
  }
}

/** One coalescer per database handle and purpose (tests with several databases stay apart). */
export function perDb<D extends object, T>(make: (db: D) => T): (db: D) => T {
  const made = new WeakMap<D, T>();
  return (db) => {
    let value = made.get(db);
    if (value === undefined) made.set(db, (value = make(db)));
    return value;
  };
}
