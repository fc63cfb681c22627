import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { BASE62, newId, randomBase62 } from "../../src/ids.ts";
import { crc32, hashSecret, isWellFormedSecret, newSecret, SECRET_PREFIX, secretHint } from "../../src/keys/secret.ts";

const SHAPE = /^warden_live_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}$/;
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Decodes base62 here rather than trusting the module's own encoder.
function fromBase62(text: string): number {
  let n = 0;
  for (const ch of text) n = n * 62 + ALPHABET.indexOf(ch);
  return n;
}

// The 6-character base62 CRC-32 a secret ends with, built here independently.
function checksumOf(body: string): string {
  let out = "";
  for (let n = crc32(body), i = 0; i < 6; i++, n = Math.floor(n / 62)) out = ALPHABET[n % 62] + out;
  return out;
}

const replaceAt = (s: string, i: number, ch: string) => s.slice(0, i) + ch + s.slice(i + 1);

describe("crc32", () => {
  test("matches the standard check values", () => {
    expect(crc32("123456789")).toBe(0xcbf43926);
    expect(crc32("")).toBe(0);
    expect(crc32("a")).toBe(0xe8b7be43);
    expect(crc32("The quick brown fox jumps over the lazy dog")).toBe(0x414fa339);
  });

  test("is an unsigned 32-bit value", () => {
    // 0xCBF43926 has the top bit set: a signed result would be negative.
    const value = crc32("123456789");
    expect(value).toBeGreaterThan(0x7fffffff);
    expect(Number.isInteger(value)).toBe(true);
  });
});

describe("newSecret", () => {
  test("has the documented shape and passes its own check", () => {
    const secret = newSecret();
    expect(secret).toMatch(SHAPE);
    expect(secret.startsWith(SECRET_PREFIX)).toBe(true);
    expect(SECRET_PREFIX).toBe("warden_live_");
    expect(isWellFormedSecret(secret)).toBe(true);
  });

  test("the checksum is the base62 CRC-32 of everything before the last underscore", () => {
    for (let i = 0; i < 50; i++) {
      const secret = newSecret();
      const body = secret.slice(0, -7);
      expect(secret[secret.length - 7]).toBe("_");
      expect(fromBase62(secret.slice(-6))).toBe(crc32(body));
    }
  });

  test("1,000 secrets are distinct", () => {
    const secrets = new Set(Array.from({ length: 1000 }, () => newSecret()));
    expect(secrets.size).toBe(1000);
    // The random parts alone are distinct too (not only the checksums).
    expect(new Set([...secrets].map((s) => s.slice(12, 44))).size).toBe(1000);
  });
});

describe("isWellFormedSecret", () => {
  test("any single-character change of the random part or the checksum is refused", () => {
    const accepted: string[] = [];
    for (let round = 0; round < 5; round++) {
      const secret = newSecret();
      const randomStart = SECRET_PREFIX.length; // 12
      const checksumStart = secret.length - 6; // 45
      const positions = [
        ...Array.from({ length: 32 }, (_, i) => randomStart + i),
        ...Array.from({ length: 6 }, (_, i) => checksumStart + i),
      ];
      for (const i of positions) {
        for (const ch of ALPHABET) {
          if (ch === secret[i]) continue;
          const changed = replaceAt(secret, i, ch);
          if (isWellFormedSecret(changed)) accepted.push(changed);
        }
      }
    }
    expect(accepted).toEqual([]);
  });

  test("any single-character change of the prefix or the separator is refused", () => {
    const secret = newSecret();
    const accepted: string[] = [];
    for (const i of [...Array.from({ length: 12 }, (_, i) => i), secret.length - 7]) {
      for (const ch of ALPHABET + "_-. ") {
        if (ch === secret[i]) continue;
        const changed = replaceAt(secret, i, ch);
        if (isWellFormedSecret(changed)) accepted.push(changed);
      }
    }
    expect(accepted).toEqual([]);
  });

  test("two swapped neighbouring characters are refused", () => {
    const secret = newSecret();
    const accepted: string[] = [];
    for (let i = 12; i < 43; i++) {
      if (secret[i] === secret[i + 1]) continue;
      const swapped = secret.slice(0, i) + secret[i + 1] + secret[i] + secret.slice(i + 2);
      if (isWellFormedSecret(swapped)) accepted.push(swapped);
    }
    expect(accepted).toEqual([]);
  });

  test("wrong prefix, even with a checksum computed over it, is refused", () => {
    const random = randomBase62(32);
    for (const prefix of ["warden_test_", "Warden_live_", "WARDEN_LIVE_", "warden-live-", "sk_live_", ""]) {
      const body = prefix + random;
      expect(isWellFormedSecret(`${body}_${checksumOf(body)}`)).toBe(false);
    }
    // Sanity check of the forging helper: with the right prefix it does produce a valid secret.
    const body = SECRET_PREFIX + random;
    expect(isWellFormedSecret(`${body}_${checksumOf(body)}`)).toBe(true);
  });

  test("extra or missing characters are refused", () => {
    const secret = newSecret();
    const variants = [
      secret + "a",
      "a" + secret,
      secret.slice(0, -1),
      secret.slice(1),
      secret.slice(0, 20) + secret.slice(21), // 31 random characters
      secret.slice(0, 20) + "x" + secret.slice(20), // 33 random characters
      secret.slice(0, -7) + secret.slice(-6), // no separator
      secret + "_",
      secret.slice(0, -7), // no checksum at all
      "",
      SECRET_PREFIX,
    ];
    for (const v of variants) expect(isWellFormedSecret(v)).toBe(false);
  });

  test("whitespace and other characters are refused", () => {
    const secret = newSecret();
    const variants = [
      ` ${secret}`,
      `${secret} `,
      `${secret}\n`,
      `\t${secret}`,
      replaceAt(secret, 20, " "),
      secret.slice(0, 20) + " " + secret.slice(20, -1), // same length, a space inside
      replaceAt(secret, 20, "é"),
      replaceAt(secret, 20, "０"), // fullwidth digit zero
    ];
    for (const v of variants) expect(isWellFormedSecret(v)).toBe(false);
  });
});

describe("secretHint", () => {
  test("is the last 4 characters", () => {
    expect(secretHint("warden_live_0123456789ABCDEFGHIJKLMNOPQRSTUV_abcdef")).toBe("cdef");
    const secret = newSecret();
    const hint = secretHint(secret);
    expect(hint).toHaveLength(4);
    expect(secret.endsWith(hint)).toBe(true);
  });
});

describe("hashSecret", () => {
  test("is lowercase hex SHA-256, equal to node:crypto's", async () => {
    // FIPS 180-2 test vector.
    expect(await hashSecret("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    for (const text of ["warden_live_0123456789ABCDEFGHIJKLMNOPQRSTUV_abcdef", newSecret(), "", "naïve ☃"]) {
      const expected = createHash("sha256").update(text, "utf8").digest("hex");
      const actual = await hashSecret(text);
      expect(actual).toMatch(/^[0-9a-f]{64}$/);
      expect(actual).toBe(expected);
    }
  });

  test("different secrets give different hashes", async () => {
    const a = newSecret();
    const b = replaceAt(a, 20, a[20] === "A" ? "B" : "A");
    expect(await hashSecret(a)).not.toBe(await hashSecret(b));
  });
});

describe("randomBase62", () => {
  test("has the asked length and only base62 characters", () => {
    expect(BASE62).toBe(ALPHABET);
    for (const length of [0, 1, 6, 22, 32, 100, 1000]) {
      const s = randomBase62(length);
      expect(s).toHaveLength(length);
      expect(s).toMatch(/^[0-9A-Za-z]*$/);
    }
  });

  test("uses every character, without favouring the first ones", () => {
    const sample = randomBase62(62 * 10_000);
    const counts = new Map<string, number>();
    for (const ch of sample) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect([...counts.keys()].sort().join("")).toBe([...ALPHABET].sort().join(""));
    // `byte % 62` over all 256 byte values would make the first 8 characters 25% likelier
    // (expected ~12,400 vs ~10,000 here, standard deviation ~100).
    const first8 = [...ALPHABET.slice(0, 8)].reduce((sum, ch) => sum + counts.get(ch)!, 0) / 8;
    const rest = [...ALPHABET.slice(8)].reduce((sum, ch) => sum + counts.get(ch)!, 0) / 54;
    expect(first8 / rest).toBeGreaterThan(0.95);
    expect(first8 / rest).toBeLessThan(1.05);
  });
});

describe("newId", () => {
  test("is the prefix plus 22 base62 characters, and distinct", () => {
    for (const prefix of ["cust_", "key_", "upgr_", "req_", "rcpt_"] as const) {
      const ids = Array.from({ length: 200 }, () => newId(prefix));
      for (const id of ids) {
        expect(id.startsWith(prefix)).toBe(true);
        expect(id.slice(prefix.length)).toMatch(/^[0-9A-Za-z]{22}$/);
      }
      expect(new Set(ids).size).toBe(ids.length);
    }
  });
});
