// Password hashing under a cap with a short, fair wait: a burst waits its turn and succeeds, one
// address flooding the hasher gets one slot in as many as there are addresses waiting, and past a
// bounded wait (or too many waiting from one address) the answer is 503 with Retry-After.
import { describe, expect, test } from "bun:test";
import { PasswordHasher, type HashWork } from "../../src/accounts/passwords.ts";
import { AppError } from "../../src/http/errors.ts";

/** Hash work that finishes only when the test says so, recording the order it started in. */
function controlled() {
  const started: string[] = [];
  const pending: (() => void)[] = [];
  const work: HashWork = {
    hash: (password) =>
      new Promise((resolve) => {
        started.push(password);
        pending.push(() => resolve(`$2b$${password}`));
      }),
    verify: async () => true,
  };
  /** Finishes the oldest running hash and lets the hasher hand its slot on. */
  const finishOne = async () => {
    pending.shift()!();
    await Bun.sleep(1);
  };
  return { started, work, finishOne };
}

describe("PasswordHasher", () => {
  test("a burst beyond the cap waits its turn, in order, and every request succeeds", async () => {
    const { started, work, finishOne } = controlled();
    const hasher = new PasswordHasher(4, 1, 5_000, 20, work);
    const all = Array.from({ length: 10 }, (_, i) => hasher.hash(`p${i}`, `10.0.0.${i}`));
    await Bun.sleep(1);
    for (let i = 0; i < 10; i++) await finishOne();
    expect(await Promise.all(all)).toEqual(Array.from({ length: 10 }, (_, i) => `$2b$p${i}`));
    expect(started).toEqual(Array.from({ length: 10 }, (_, i) => `p${i}`));
  });

  test("an address flooding the hasher takes turns with another address, which is served next", async () => {
    const { started, work, finishOne } = controlled();
    const hasher = new PasswordHasher(4, 1, 5_000, 20, work);
    const flood = Array.from({ length: 8 }, (_, i) => hasher.hash(`flood${i}`, "203.0.113.9"));
    await Bun.sleep(1);
    const other = hasher.hash("other", "198.51.100.7");
    await finishOne(); // flood0 done: the other address's line is next, before flood1 .. flood7
    expect(started).toEqual(["flood0", "other"]);
    for (let i = 0; i < 8; i++) await finishOne();
    expect(await other).toBe("$2b$other");
    await Promise.all(flood);
  });

  test("past the bounded wait: 503 unavailable with Retry-After; too many waiting from one address: 503 at once", async () => {
    const { work, finishOne } = controlled();
    const hasher = new PasswordHasher(4, 1, 30, 2, work);
    const running = hasher.hash("first", "a");
    const late = hasher.hash("late", "b").then(() => undefined, (e: unknown) => e);
    const failure = (await late) as AppError;
    expect(failure).toBeInstanceOf(AppError);
    expect(failure.code).toBe("unavailable");
    expect(failure.options.headers?.["retry-after"]).toBe("1");
    // Address c may have two waiting; the third is refused without waiting.
    const waitingC = [hasher.hash("c1", "c"), hasher.hash("c2", "c")].map((p) => p.catch((e: unknown) => e));
    const third = await hasher.hash("c3", "c").then(() => undefined, (e: unknown) => e);
    expect((third as AppError).code).toBe("unavailable");
    await finishOne(); // "first": c1 takes the slot
    await running;
    await finishOne(); // c1: c2 takes the slot
    await finishOne(); // c2
    expect(await Promise.all(waitingC)).toEqual(["$2b$c1", "$2b$c2"]);
  });
});
