// A refusal must not come sooner than the success it stands beside: signup refuses a taken email
// (409 email_taken, docs/api.md) inside the transaction that would create the account, after one
// insert, while a free email goes on to write the member, its key, the audit event, the
// verification mail and a session. On one server the difference is a few milliseconds; on a Citus
// cluster, where the account is a reference table written on every node, it is tens of them, and a
// stopwatch would tell a taken address without reading the answer (docs/security.md, "Password
// reset request and enumeration"). So the refusal waits until the time a success of late has taken.

/** How many recent successes the time to wait is taken from. */
const RECENT = 31;

/** Durations of the successful path, and a floor for the refusals beside it: their median. */
export class AnswerTime {
  private readonly recent: number[] = [];
  private next = 0;

  /** A success took `ms` (from the same starting point the refusals measure from). */
  record(ms: number): void {
    if (this.recent.length < RECENT) this.recent.push(ms);
    else this.recent[this.next] = ms;
    this.next = (this.next + 1) % RECENT;
  }

  /** The median of recent successes; 0 before the first. */
  floor(): number {
    if (this.recent.length === 0) return 0;
    const sorted = [...this.recent].sort((a, b) => a - b);
    return sorted[sorted.length >> 1];
  }

  /** Waits until `startedAt` (a `performance.now()` reading) plus the floor. */
  async pad(startedAt: number): Promise<void> {
    const wait = startedAt + this.floor() - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
