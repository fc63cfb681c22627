// The words of the Approvals pages (src/console/app/approval-text.ts): a countdown that never says
// "0 s" while time is left and keeps its width, terms in plain units, amounts exactly as asked.
import { describe, expect, test } from "bun:test";
import { amountOf, duration, timeLeft } from "../../src/console/app/approval-text.ts";

describe("timeLeft", () => {
  const at = (seconds: number) => timeLeft(1_000_000 + seconds * 1000, 1_000_000);
  test("the two largest units, later ones in two digits", () => {
    expect(at(59)).toBe("59 s");
    expect(at(60)).toBe("1 min 00 s");
    expect(at(245)).toBe("4 min 05 s");
    expect(at(3_665)).toBe("1 h 01 min");
    expect(at(3 * 86_400 + 3 * 3_600 + 59)).toBe("3 d 3 h");
  });
  test("rounds up to the second, and is undefined once the time has passed", () => {
    expect(timeLeft(1_000_001, 1_000_000)).toBe("1 s");
    expect(timeLeft(1_000_000, 1_000_000)).toBeUndefined();
    expect(timeLeft(999_000, 1_000_000)).toBeUndefined();
  });
});

describe("duration", () => {
  test("every unit that is not zero, singular and plural", () => {
    expect(duration(60)).toBe("1 minute");
    expect(duration(900)).toBe("15 minutes");
    expect(duration(3_600)).toBe("1 hour");
    expect(duration(5_400)).toBe("1 hour 30 minutes");
    expect(duration(604_800)).toBe("7 days");
    expect(duration(90)).toBe("1 minute 30 seconds");
    expect(duration(0)).toBe("0 seconds");
  });
});

describe("amountOf", () => {
  test("the number as sent, with its currency", () => {
    expect(amountOf({ amount: 250, currency: "EUR" })).toBe("250 EUR");
    expect(amountOf({ amount: 0.5 })).toBe("0.5");
    expect(amountOf({ currency: "USD" })).toBe("USD");
    expect(amountOf({})).toBeUndefined();
  });
});
