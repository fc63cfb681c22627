// Password rules (spec 5.6, contract sections 2 and 12) and bcrypt hashing (spec 5.7) under a
// global cap on concurrent hashes.
import { AppError } from "../http/errors.ts";
import { lazily } from "../lazily.ts";
import { bcryptHash, bcryptVerify } from "../runtime.ts";

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;
export const COMMON_PASSWORD_COUNT = 10_000;

// zxcvbn-ts's common-password dictionary, ranked most common first (docs/security.md). Imported
// statically by name, so the bundler puts it into the binary; loaded at the first check.
const commonPasswords = lazily(async () => {
  const { dictionary } = await import("@zxcvbn-ts/language-common");
  return new Set(dictionary["passwords-common"].slice(0, COMMON_PASSWORD_COUNT));
});

// Words of this service's own context (ASVS 6.1.2): the name with digits or symbols around it.
const CONTEXT_WORDS: ReadonlySet<string> = new Set(["warden", "wardenpassword", "wardenlogin"]);

/** True when the password, lower-cased, is among the 10,000 most common, or the service's name dressed up. */
export async function isCommonPassword(password: string): Promise<boolean> {
  const lower = password.toLowerCase();
  return (await commonPasswords.get()).has(lower) || CONTEXT_WORDS.has(lower.replace(/[^a-z]/g, ""));
}

/** Throws the contract's error for a password that may not be set. Lengths count characters. */
export async function assertAcceptablePassword(password: string): Promise<void> {
  const length = [...password].length;
  if (length < PASSWORD_MIN) throw new AppError("password_too_short", `The password must be at least ${PASSWORD_MIN} characters.`);
  if (length > PASSWORD_MAX) throw new AppError("password_too_long", `The password must be at most ${PASSWORD_MAX} characters.`);
  if (await isCommonPassword(password)) {
    throw new AppError("password_too_common", "This password is one of the most common ones; choose another.");
  }
}

// Bun's bcrypt pre-hashes inputs over 72 bytes with SHA-512, so long passwords keep all their
// characters significant instead of being cut at bcrypt's 72-byte limit (src/runtime.ts does the
// same on Deno).
export function hashPassword(password: string, cost: number): Promise<string> {
  return bcryptHash(password, cost);
}

/**
 * bcrypt for requests, at most `concurrency` at once. A request beyond it gets 503 at once
 * rather than a place in a queue: a flood of hashes then costs the attacker as much as us, and
 * answers stay fast for everyone else.
 */
export class PasswordHasher {
  private running = 0;

  constructor(private readonly cost: number, private readonly concurrency: number) {}

  hash(password: string): Promise<string> {
    return this.gated(() => bcryptHash(password, this.cost));
  }

  verify(password: string, hash: string): Promise<boolean> {
    return this.gated(() => bcryptVerify(password, hash));
  }

  private async gated<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      throw new AppError("unavailable", "Too many password checks at once. Retry in a second.", { headers: { "retry-after": "1" }, fields: { retry_after: 1 } });
    }
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
    }
  }
}
