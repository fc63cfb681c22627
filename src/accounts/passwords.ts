// Password rules (the spec's Limits; docs/security.md, Common passwords) and bcrypt hashing under
// a global cap on concurrent hashes.
import { AppError } from "../http/errors.ts";
import { lazily } from "../lazily.ts";
import { bcryptHash, bcryptVerify } from "../runtime.ts";

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;
export const COMMON_PASSWORD_COUNT = 10_000;

// Words of this service's own context (ASVS 6.1.2): the name with digits or symbols around it.
const CONTEXT_WORDS: ReadonlySet<string> = new Set(["warden", "wardenpassword", "wardenlogin"]);

/** Which passwords may be set: lengths, and not one of the most common. */
export class PasswordRules {
  /**
   * zxcvbn-ts's common-password dictionary, ranked most common first (docs/security.md), loaded at
   * the first check. Imported statically by name, so the bundler puts it into the binary.
   */
  private readonly common = lazily(async () => {
    const { dictionary } = await import("@zxcvbn-ts/language-common");
    return new Set(dictionary["passwords-common"].slice(0, COMMON_PASSWORD_COUNT));
  });

  /** True when the password, lower-cased, is among the 10,000 most common, or the service's name dressed up. */
  async isCommon(password: string): Promise<boolean> {
    const lower = password.toLowerCase();
    return (await this.common.get()).has(lower) || CONTEXT_WORDS.has(lower.replace(/[^a-z]/g, ""));
  }

  /** Throws the error of docs/api.md for a password that may not be set. Lengths count characters. */
  async assertAcceptable(password: string): Promise<void> {
    const length = [...password].length;
    if (length < PASSWORD_MIN) throw new AppError("password_too_short", `The password must be at least ${PASSWORD_MIN} characters.`);
    if (length > PASSWORD_MAX) throw new AppError("password_too_long", `The password must be at most ${PASSWORD_MAX} characters.`);
    if (await this.isCommon(password)) {
      throw new AppError("password_too_common", "This password is one of the most common ones; choose another.");
    }
  }
}

// Bun's bcrypt pre-hashes inputs over 72 bytes with SHA-512, so long passwords keep all their
// characters significant instead of being cut at bcrypt's 72-byte limit (src/runtime.ts does the
// same on Deno).
export function hashPassword(password: string, cost: number): Promise<string> {
  return bcryptHash(password, cost);
}

/** How the hasher hashes and checks; bcrypt unless a test hands in another. */
export interface HashWork {
  hash(password: string, cost: number): Promise<string>;
  verify(password: string, hash: string): Promise<boolean>;
}

const BCRYPT: HashWork = { hash: bcryptHash, verify: bcryptVerify };

interface Waiter {
  start: () => void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * bcrypt for requests, at most `concurrency` at once, with a short, fair wait beyond it: each
 * requester (a client address) waits in a line of its own, and a freed slot goes to the lines in
 * turn, so a burst of ordinary requests is served in order while one address flooding the service
 * gets one slot in as many as there are addresses waiting. A request that would wait more than
 * `maxWaitMs`, or whose address already has `maxQueuedPerRequester` waiting, gets 503 with
 * Retry-After: the wait is bounded, and a flood costs its sender, not everyone else.
 */
export class PasswordHasher {
  private running = 0;
  /** Waiting requests by requester, in the order the requesters' turns come (Map keeps insertion order). */
  private readonly lines = new Map<string, Waiter[]>();
  /** Slots each requester holds now (only requesters holding one). */
  private readonly holding = new Map<string, number>();

  constructor(
    private readonly cost: number,
    private readonly concurrency: number,
    private readonly maxWaitMs = 2_000,
    private readonly maxQueuedPerRequester = 4 * concurrency,
    private readonly work: HashWork = BCRYPT,
  ) {}

  /** `from`: who asks (the client address), for the fair share of the wait. */
  hash(password: string, from = ""): Promise<string> {
    return this.gated(from, () => this.work.hash(password, this.cost));
  }

  verify(password: string, hash: string, from = ""): Promise<boolean> {
    return this.gated(from, () => this.work.verify(password, hash));
  }

  private async gated<T>(from: string, work: () => Promise<T>): Promise<T> {
    if (this.running < this.concurrency && this.lines.size === 0) this.running++;
    else await this.turn(from);
    this.holding.set(from, (this.holding.get(from) ?? 0) + 1);
    try {
      return await work();
    } finally {
      this.release(from);
    }
  }

  /** Waits for a slot in `from`'s line; the slot is counted as running when it resolves. */
  private turn(from: string): Promise<void> {
    const line = this.lines.get(from) ?? [];
    if (line.length >= this.maxQueuedPerRequester) return Promise.reject(busy());
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: resolve,
        timer: setTimeout(() => {
          const waiting = this.lines.get(from);
          const at = waiting?.indexOf(waiter) ?? -1;
          if (at < 0) return;
          waiting!.splice(at, 1);
          if (waiting!.length === 0) this.lines.delete(from);
          reject(busy());
        }, this.maxWaitMs),
      };
      line.push(waiter);
      this.lines.set(from, line);
    });
  }

  /**
   * `from`'s slot is free: it goes to the waiting requester holding the fewest slots now (`from`
   * still counted, so a flooding address yields to another), the longest waiting line first among
   * equals; a line served goes to the back.
   */
  private release(from: string): void {
    let chosen: string | undefined;
    for (const requester of this.lines.keys()) {
      if (chosen === undefined || (this.holding.get(requester) ?? 0) < (this.holding.get(chosen) ?? 0)) chosen = requester;
    }
    const held = (this.holding.get(from) ?? 1) - 1;
    if (held === 0) this.holding.delete(from);
    else this.holding.set(from, held);
    if (chosen === undefined) {
      this.running--;
      return;
    }
    const line = this.lines.get(chosen)!;
    const waiter = line.shift()!;
    this.lines.delete(chosen);
    if (line.length > 0) this.lines.set(chosen, line);
    clearTimeout(waiter.timer);
    waiter.start(); // the slot passes on: running stays as it is
  }
}

function busy(): AppError {
  return new AppError("unavailable", "Too many password checks at once. Retry in a second.", { headers: { "retry-after": "1" }, fields: { retry_after: 1 } });
}
