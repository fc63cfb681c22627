// src/runtime.ts: the stand-ins used off Bun must agree with Bun byte for byte. Above all bcrypt:
// a hash written by one runtime must verify on the other, also past bcrypt's 72-byte limit,
// where Bun first hashes the password with SHA-512.
import { describe, expect, test } from "bun:test";
import { bcryptKey, wasmBcrypt } from "../src/runtime.ts";
import { hasDeno, runDeno } from "./helpers/deno.ts";

const PASSWORDS: Record<string, string> = {
  short: "correct horse",
  "72 bytes": "a".repeat(72),
  "73 bytes (pre-hashed)": "a".repeat(73),
  "72 bytes of two-byte characters": "é".repeat(36),
  "74 bytes of two-byte characters": "é".repeat(37),
  "256 emoji (1 KiB)": "🔑".repeat(256),
};

describe("bcrypt off Bun (hash-wasm) matches Bun.password", () => {
  for (const [name, password] of Object.entries(PASSWORDS)) {
    test(name, async () => {
      const bunHash = await Bun.password.hash(password, { algorithm: "bcrypt", cost: 4 });
      const wasmHash = await wasmBcrypt.hash(password, 4);
      expect(wasmHash).toStartWith("$2b$04$");
      expect(await wasmBcrypt.verify(password, bunHash)).toBe(true);
      expect(await Bun.password.verify(password, wasmHash, "bcrypt")).toBe(true);
      // Past 72 bytes every character still counts: change only the last one.
      const other = password.slice(0, -1) + (password.endsWith("b") ? "c" : "b");
      expect(await wasmBcrypt.verify(other, bunHash)).toBe(false);
      expect(await Bun.password.verify(other, wasmHash, "bcrypt")).toBe(false);
    });
  }

  test("keys past 72 bytes are their SHA-512 digest, whose zero bytes count", async () => {
    expect(bcryptKey("a".repeat(72))).toHaveLength(72);
    expect(bcryptKey("a".repeat(73))).toHaveLength(64);
    // A digest with a zero byte in it: a C-string implementation would stop there.
    const password = Array.from({ length: 400 }, (_, i) => `${"p".repeat(73)}${i}`).find((p) => bcryptKey(p).includes(0))!;
    const bunHash = await Bun.password.hash(password, { algorithm: "bcrypt", cost: 4 });
    expect(await wasmBcrypt.verify(password, bunHash)).toBe(true);
    expect(await Bun.password.verify(password, await wasmBcrypt.hash(password, 4), "bcrypt")).toBe(true);
  });
});

describe.skipIf(!hasDeno)("bcrypt across runtimes", () => {
  test("Deno verifies Bun's hash and Bun verifies Deno's, for a long password", async () => {
    const password = "a passphrase well past bcrypt's seventy-two byte limit, with ünïcödé 🔑 in it";
    const bunHash = await Bun.password.hash(password, { algorithm: "bcrypt", cost: 4 });
    const deno = await runDeno(["--allow-read", "--allow-env", "test/runtime/deno-bcrypt.ts", password, bunHash]);
    expect(deno).toMatchObject({ runtime: "deno", verifiesBunHash: true, rejectsOtherPassword: true });
    expect(await Bun.password.verify(password, deno.hash, "bcrypt")).toBe(true);
    expect(await Bun.password.verify(password + "!", deno.hash, "bcrypt")).toBe(false);
  }, 30_000);
});
