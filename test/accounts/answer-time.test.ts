// The floor a taken email's signup refusal waits for (src/accounts/answer-time.ts): the median of
// the recent successes, forgetting the oldest. The timing itself is held by
// test/security/enumeration.test.ts on every database CI runs, a Citus cluster among them.
import { describe, expect, test } from "bun:test";
import { AnswerTime } from "../../src/accounts/answer-time.ts";

describe("AnswerTime", () => {
  test("no floor before the first success", () => {
    expect(new AnswerTime().floor()).toBe(0);
  });

  test("the median of the successes recorded", () => {
    const time = new AnswerTime();
    for (const ms of [30, 2, 25, 4, 20]) time.record(ms);
    expect(time.floor()).toBe(20);
  });

  test("only the last 31 count", () => {
    const time = new AnswerTime();
    for (let i = 0; i < 31; i++) time.record(100);
    for (let i = 0; i < 16; i++) time.record(5);
    expect(time.floor()).toBe(5);
  });

});
