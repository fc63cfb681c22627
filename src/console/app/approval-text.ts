// Words for the Approvals pages: time left, a term's duration, the amount of a request. Pure,
// unit-tested in test/console/approval-text.test.ts.

const UNITS: [string, number][] = [
  ["d", 86_400],
  ["h", 3_600],
  ["min", 60],
  ["s", 1],
];

/** The two largest units of a number of seconds: "2 d 3 h", "4 min 05 s", "59 s". */
function twoUnits(seconds: number): string {
  const parts: string[] = [];
  let rest = Math.max(0, Math.floor(seconds));
  for (const [unit, size] of UNITS) {
    if (parts.length === 0 && rest < size && size > 1) continue;
    const n = Math.floor(rest / size);
    rest -= n * size;
    // Seconds and minutes after a larger unit keep two digits, so a countdown does not jump in width.
    parts.push(`${parts.length > 0 && size < 3_600 ? String(n).padStart(2, "0") : n} ${unit}`);
    if (parts.length === 2) break;
  }
  return parts.join(" ");
}

/** Time left before `until` at `now` (both in ms): "4 min 05 s", or undefined once it has passed. */
export function timeLeft(until: number, now: number): string | undefined {
  const ms = until - now;
  // Rounded up: "1 s" is shown until the very end, never "0 s" while time is left.
  return ms > 0 ? twoUnits(Math.ceil(ms / 1000)) : undefined;
}

/** A term in seconds for people: "10 minutes", "1 hour 30 minutes", "7 days", "90 seconds". */
export function duration(seconds: number): string {
  const names: Record<string, string> = { d: "day", h: "hour", min: "minute", s: "second" };
  const parts: string[] = [];
  let rest = Math.max(0, Math.floor(seconds));
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n} ${names[unit]}${n === 1 ? "" : "s"}`);
  }
  return parts.length === 0 ? "0 seconds" : parts.join(" ");
}

/** The amount of a request exactly as asked, with its currency: "250 EUR", "0.5", or undefined without one. */
export function amountOf(input: { amount?: number; currency?: string }): string | undefined {
  if (input.amount === undefined) return input.currency;
  return input.currency ? `${input.amount} ${input.currency}` : String(input.amount);
}
