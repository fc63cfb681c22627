// Coalescing of concurrent database calls of one kind into one call (group commit, batched
// lookups). A call goes out once the event loop has read what has arrived (setImmediate), so the
// requests that came in together share it; items that arrive while calls are in flight wait for
// the next call, which takes them all. (Going out at once made batches of one on the embedded
// database: the first request's query kept the others from being read.) Every item's call starts
// after the item arrived, so a batched read sees every write committed before its request came
// in, exactly as its own query would.

export interface CoalescerOptions<I = unknown> {
  /** Items in one call at most. */
  maxBatch: number;
  /** Calls in flight at once at most. */
  maxInFlight: number;
  /**
   * While a call is in flight, how long (ms) the items that arrive wait for others before the next
   * call takes them; the end of a call sends them at once, and a full batch goes at once. A lone
   * item (nothing in flight) never waits. 0 or absent: never wait.
   */
  linger?: number;
  /** Items of one call share their key: a call takes the oldest item's key and the items waiting with it, in order. */
  key?: (item: I) => string;
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
  private lingering: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly run: (items: I[]) => Promise<(R | Error)[]>,
    private readonly opts: CoalescerOptions<I>,
  ) {}

  submit(item: I): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.send();
    });
  }

  private send(lingered = false): void {
    if (!lingered && this.opts.linger && this.inFlight > 0 && this.queue.length < this.opts.maxBatch) {
      this.lingering ??= setTimeout(() => {
        this.lingering = undefined;
        this.send(true);
      }, this.opts.linger);
      return;
    }
    clearTimeout(this.lingering);
    this.lingering = undefined;
    while (this.inFlight < this.opts.maxInFlight && this.queue.length > 0) {
      const batch = this.take();
      this.inFlight++;
      this.call(batch).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0) this.schedule();
      });
    }
  }

  /** The next call's items: the oldest and, up to maxBatch, those waiting with its key (all when unkeyed). */
  private take(): Waiting<I, R>[] {
    const key = this.opts.key;
    if (!key) return this.queue.splice(0, this.opts.maxBatch);
    const first = key(this.queue[0]!.item);
    const batch: Waiting<I, R>[] = [];
    const rest: Waiting<I, R>[] = [];
    for (const w of this.queue) (batch.length < this.opts.maxBatch && key(w.item) === first ? batch : rest).push(w);
    this.queue = rest;
    return batch;
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
