import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import canonicalizeReference from "canonicalize";
import { canonicalize } from "json-canonicalize";
import { bytesToHex, canonicalJson, contentHash, flatScalarsJson, hexToBytes, plainJson, sha256Hex } from "../../src/crypto/canonical.ts";

describe("canonicalJson (RFC 8785)", () => {
  test("sorts object keys recursively and drops whitespace", () => {
    expect(canonicalJson([56, { d: true, "10": null, "1": [] }])).toBe('[56,{"1":[],"10":null,"d":true}]');
  });

  test("RFC 8785 section 3.2.2 sample", () => {
    const text = String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`;
    // Bun rewrites non-ASCII inside String.raw, so the euro sign is joined in separately.
    const expected =
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"` +
      "\u20ac" +
      String.raw`$\u000f\nA'B\"\\\\\"/"}`;
    expect(canonicalJson(JSON.parse(text))).toBe(expected);
  });

  test.each([
    [1e30, "1e+30"],
    [4.5, "4.5"],
    [0.002, "0.002"],
    [-0, "0"],
    [1e-7, "1e-7"],
    [1e21, "1e+21"],
    [1e20, "100000000000000000000"],
    [9007199254740991, "9007199254740991"],
    [-1.5, "-1.5"],
  ])("number %p serialises as %s", (n, text) => {
    expect(canonicalJson(n)).toBe(text);
  });

  test("JSON source text 4.50 becomes 4.5", () => {
    expect(canonicalJson(JSON.parse("[4.50]"))).toBe("[4.5]");
  });

  test("sorts keys by UTF-16 code units (RFC 8785 section 3.2.3)", () => {
    const value = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis",
    };
    const expected =
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
      '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}';
    expect(canonicalJson(value)).toBe(expected);
  });

  test("escapes control characters, leaves U+2028 and non-ASCII as they are", () => {
    expect(canonicalJson("\u000f")).toBe('"\\u000f"');
    expect(canonicalJson("a\nb\tc\b\f\r")).toBe('"a\\nb\\tc\\b\\f\\r"');
    expect(canonicalJson("\u2028\u2029")).toBe('"\u2028\u2029"');
    expect(canonicalJson("é€😀")).toBe('"é€😀"');
    expect(canonicalJson('"\\/')).toBe('"\\"\\\\/"');
  });

  test("refuses values JSON cannot carry", () => {
    expect(() => canonicalJson(NaN)).toThrow();
    expect(() => canonicalJson({ a: Infinity })).toThrow();
    expect(() => canonicalJson(undefined)).toThrow();
    expect(() => canonicalJson(10n)).toThrow();
  });
});

describe("sha256Hex", () => {
  test("known vectors", async () => {
    expect(await sha256Hex("")).toBe("0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(await sha256Hex("abc")).toBe("0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(await sha256Hex(new TextEncoder().encode("abc"))).toBe(
      "0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });

  test("hashes strings as UTF-8", async () => {
    expect(await sha256Hex("€")).toBe(await sha256Hex(new Uint8Array([0xe2, 0x82, 0xac])));
  });
});

describe("contentHash", () => {
  test("does not depend on key order", async () => {
    const a = await contentHash({ b: 1, a: { y: [1, 2], x: "s" } });
    const b = await contentHash({ a: { x: "s", y: [1, 2] }, b: 1 });
    expect(a).toBe(b);
    expect(a).toMatch(/^0x[0-9a-f]{64}$/);
  });

  test("is the SHA-256 of the canonical text", async () => {
    expect(await contentHash({ b: 2, a: 1 })).toBe(await sha256Hex('{"a":1,"b":2}'));
  });

  test("changes when a value changes", async () => {
    expect(await contentHash({ a: 1 })).not.toBe(await contentHash({ a: 2 }));
    expect(await contentHash({ a: 1 })).not.toBe(await contentHash({ a: "1" }));
  });
});

describe("hex", () => {
  test("round trips with and without 0x", () => {
    const bytes = new Uint8Array([0, 1, 0xab, 0xff]);
    expect(bytesToHex(bytes)).toBe("0x0001abff");
    expect(hexToBytes("0x0001abff")).toEqual(bytes);
    expect(hexToBytes("0001ABFF")).toEqual(bytes);
    expect(hexToBytes("0x")).toEqual(new Uint8Array(0));
  });

  test("rejects malformed hex", () => {
    expect(() => hexToBytes("0x123")).toThrow();
    expect(() => hexToBytes("0xzz")).toThrow();
    expect(() => hexToBytes("0x+1")).toThrow();
  });
});

describe("flat records of strings, nulls and integers (the signed claims) take a shortcut that gives the same bytes", () => {
  test("agrees with json-canonicalize and the independent implementation on arbitrary keys and values", () => {
    // Full Unicode, lone surrogates, control characters, keys that sort differently by code unit
    // than by code point.
    const text = fc.string({ unit: "binary", maxLength: 12 });
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(text, fc.constantFrom("\u{1F600}", "\uFB33", "a", "A", "__proto__", "")), fc.oneof(text, fc.constant(null), fc.integer(), fc.maxSafeInteger(), fc.constant(-0))), (record) => {
        const plain = Object.fromEntries(Object.entries(record));
        expect(flatScalarsJson(plain)).toBe(canonicalize(plain));
        expect(canonicalJson(plain)).toBe(canonicalizeReference(plain) as string);
      }),
      { numRuns: 2000 },
    );
  });

  test("anything but a plain object of strings, nulls and safe integers goes the general way", () => {
    for (const value of [{ a: 1.5 }, { a: 2 ** 53 }, { a: true }, { a: "x", b: undefined }, { a: ["x"] }, ["a"], "a", null, Object.assign(Object.create(null), { a: "x" })]) {
      expect(flatScalarsJson(value)).toBeUndefined();
    }
    expect(canonicalJson({ b: "x", a: 1 })).toBe('{"a":1,"b":"x"}');
  });
});

describe("plainJson: nested plain values through the engine's JSON.stringify", () => {
  test("keys in UTF-16 order at every depth, undefined members left out, undefined items null", () => {
    // Through JSON.parse: "__proto__" is then an own member, as in any parsed request body.
    const value = { ...JSON.parse('{"b":[3,null,{"z":1,"\\u00e9":2,"e":3}],"__proto__":true}'), a: { y: undefined, x: "\u2028" } };
    value.b[1] = undefined;
    expect(plainJson(value)).toBe(canonicalize(value));
    expect(plainJson(value)).toBe('{"__proto__":true,"a":{"x":"\u2028"},"b":[3,null,{"e":3,"z":1,"\u00e9":2}]}');
  });

  test("a key that is an array index, a Date, a toJSON, a non-finite number: left to the library", () => {
    for (const value of [{ "10": 1, "9": 2 }, { a: { "0": 1 } }, { d: new Date(0) }, { j: { toJSON: () => 1 } }, [Number.NaN], { n: Infinity }]) {
      expect(plainJson(value)).toBeUndefined();
    }
    // Written by JCS's order, not the engine's (which puts array indices first, in numeric order).
    expect(canonicalJson({ "10": 1, "9": 2, a: 3 })).toBe('{"10":1,"9":2,"a":3}');
  });
});

describe("canonicalJson agrees with an independent implementation", () => {
  test("on arbitrary JSON values: nested objects and arrays, numbers, full Unicode", () => {
    const text = fc.string({ unit: "binary", maxLength: 8 });
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.constant(null),
        fc.boolean(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer(),
        text,
        fc.array(tie("value"), { maxLength: 4 }),
        fc.dictionary(fc.oneof(text, fc.constantFrom("__proto__", "", "\u{1F600}", "\uFB33")), tie("value"), { maxKeys: 4 }),
      ),
    }));
    fc.assert(
      fc.property(value, (v) => {
        const plain = JSON.parse(JSON.stringify(v));
        expect(canonicalJson(plain)).toBe(canonicalize(plain));
        expect(canonicalJson(plain)).toBe(canonicalizeReference(plain) as string);
      }),
      { numRuns: 3000 },
    );
  });

  test("refuses cycles, accepts a value shared by two members", () => {
    const loop: Record<string, unknown> = { a: 1 };
    loop.self = { back: loop };
    expect(() => canonicalJson(loop)).toThrow(/circular/i);
    const shared = { x: [1, 2] };
    expect(canonicalJson({ b: shared, a: shared, c: [shared, shared] })).toBe('{"a":{"x":[1,2]},"b":{"x":[1,2]},"c":[{"x":[1,2]},{"x":[1,2]}]}');
  });
});

