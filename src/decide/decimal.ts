// Exact decimal sums for usage counters. The database keeps a counter as numeric, the exact sum
// of the amounts added (each as JSON spells it, the shortest text of its number); a decision
// compares the total as a number. To decide on a total it knows rather than one it read, the
// service must arrive at the very same number: the exact sum rounded once, never a running float
// sum (0.1 + 0.2 is not 0.3). BigInt is all it takes; only addition is needed.

/** An exact decimal: digits × 10^-scale. */
interface Exact {
  digits: bigint;
  scale: number;
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

function parse(text: string): Exact {
  const m = DECIMAL.exec(text);
  if (!m) throw new RangeError(`not a decimal: ${text}`);
  const [, sign, whole, fraction = "", exponent = "0"] = m;
  let digits = BigInt(`${sign}${whole}${fraction}`);
  let scale = fraction.length - Number(exponent);
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { digits, scale };
}

function format({ digits, scale }: Exact): string {
  const negative = digits < 0n;
  let text = (negative ? -digits : digits).toString();
  if (scale > 0) {
    text = text.padStart(scale + 1, "0");
    text = `${text.slice(0, -scale)}.${text.slice(-scale)}`.replace(/\.?0+$/, "");
  }
  return negative && text !== "0" ? `-${text}` : text;
}

/** `total` (decimal text, as the database prints a numeric) plus `add` (a number, as JSON spells it), exactly. */
export function addDecimal(total: string, add: number): string {
  const a = parse(total);
  const b = parse(String(add));
  const scale = Math.max(a.scale, b.scale);
  const digits = a.digits * 10n ** BigInt(scale - a.scale) + b.digits * 10n ** BigInt(scale - b.scale);
  return format({ digits, scale });
}
