// Each operator of the policy language, with strict types: "5" is not 5, and a missing value
// fails everything but `exists: false`.
import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { holds } from "../../src/decide/engine.ts";
import { AmountOp, ContextOp, CurrencyOp, type Op } from "../../src/decide/policy.ts";

type Row = [value: string | number | boolean | undefined, expected: boolean];

const CASES: [name: string, op: Op, rows: Row[]][] = [
  ["eq", { eq: 5 }, [[5, true], ["5", false], [6, false], [undefined, false]]],
  ["eq boolean", { eq: true }, [[true, true], ["true", false], [1, false], [undefined, false]]],
  ["ne", { ne: "ops" }, [["dev", true], ["ops", false], [undefined, false]]],
  ["ne across types", { ne: 5 }, [["5", true], [5, false]]],
  ["in", { in: ["a", 1] }, [["a", true], [1, true], ["1", false], [undefined, false]]],
  ["not_in", { not_in: ["a", 1] }, [["b", true], ["1", true], [1, false], [undefined, false]]],
  ["gt", { gt: 10 }, [[11, true], [10, false], ["11", false], [true, false], [undefined, false]]],
  ["gte", { gte: 10 }, [[10, true], [9.99, false], ["10", false], [undefined, false]]],
  ["lt", { lt: 10 }, [[9, true], [10, false], ["9", false], [undefined, false]]],
  ["lte", { lte: 10 }, [[10, true], [10.01, false], ["10", false], [undefined, false]]],
  ["prefix", { prefix: "TKT-" }, [["TKT-12", true], ["tkt-12", false], [12, false], [undefined, false]]],
  ["exists true", { exists: true }, [["", true], [false, true], [0, true], [undefined, false]]],
  ["exists false", { exists: false }, [[undefined, true], [false, false], ["", false]]],
  ["several operators all hold", { gte: 1, lt: 5, ne: 3 }, [[1, true], [3, false], [5, false]]],
  ["exists with another operator", { exists: true, prefix: "x" }, [["xy", true], ["y", false], [undefined, false]]],
];

describe("operators", () => {
  for (const [name, op, rows] of CASES) {
    test.each(rows)(`${name}: %p -> %p`, (value, expected) => {
      expect(holds(op, value)).toBe(expected);
    });
  }
});

describe("operator schemas are typed by their field", () => {
  test("amount: numbers only, no prefix", () => {
    expect(Value.Check(AmountOp, { gt: 1, lte: 5, in: [1, 2], exists: true })).toBe(true);
    for (const bad of [{ eq: "5" }, { in: ["1"] }, { prefix: "1" }, { gt: "1" }, {}, { eq: -1 }, { like: 1 }]) {
      expect([bad, Value.Check(AmountOp, bad)]).toEqual([bad, false]);
    }
  });

  test("currency: ISO codes only, no bounds", () => {
    expect(Value.Check(CurrencyOp, { in: ["USD"], ne: "EUR", prefix: "U" })).toBe(true);
    for (const bad of [{ eq: 5 }, { eq: "usd" }, { gt: 1 }, { in: [] }, { not_in: ["US"] }]) {
      expect([bad, Value.Check(CurrencyOp, bad)]).toEqual([bad, false]);
    }
  });

  test("context: scalar operands; bounds need numbers, prefix a string, exists a boolean", () => {
    expect(Value.Check(ContextOp, { eq: "x", in: [1, "a", true], gt: 1, prefix: "a", exists: true })).toBe(true);
    for (const bad of [{ gt: "1" }, { prefix: 1 }, { exists: "yes" }, { eq: null }, { eq: { a: 1 } }, { in: [[1]] }, {}]) {
      expect([bad, Value.Check(ContextOp, bad)]).toEqual([bad, false]);
    }
  });
});
