// The server's synchronous node:crypto hashing and signing give exactly the bytes of the WebCrypto/jose code that
// clients and the offline verifier use.
import fc from "fast-check";
import { describe, expect, test } from "bun:test";
import { canonicalJson, sha256Hex } from "../../src/crypto/canonical.ts";
import { sha256HexSync, sha256PlainHexSync, signCanonicalPooled, signCanonicalSync, syncSigner } from "../../src/crypto/sync.ts";
import { generateSigningKey, verifyCanonical } from "../../src/crypto/signature.ts";

describe("synchronous node:crypto", () => {
  test("sha256HexSync equals the WebCrypto digest, ASCII and not", async () => {
    for (const text of ["", "abc", "caf\u00e9 \u{1F512}", JSON.stringify({ a: [1, 2, { b: "\u2028" }] }), "x".repeat(100_000)]) {
      expect(sha256HexSync(text)).toBe(await sha256Hex(text));
      expect("0x" + sha256PlainHexSync(text)).toBe(await sha256Hex(text));
    }
    expect(sha256HexSync("abc")).toBe("0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  test("a fast signature verifies with jose against the JWKS and carries the JCS bytes", async () => {
    const key = await generateSigningKey();
    const signer = syncSigner(key.kid, key.privateJwk);
    const claims = { timestamp: "2026-01-01T00:00:00.000Z", content_hash: "0x" + "a".repeat(64), kind: "protect", request_id: "r\"1\\", tenant_id: "cust_x" };
    const jws = signCanonicalSync(claims, signer);
    const result = await verifyCanonical(jws, { keys: [key.publicJwk] });
    expect(result.valid).toBe(true);
    expect(result.payload).toEqual(claims);
    expect(Buffer.from(jws.split(".")[1], "base64url").toString("utf8")).toBe(canonicalJson(claims));
    expect(JSON.parse(Buffer.from(jws.split(".")[0], "base64url").toString())).toEqual({ alg: "EdDSA", kid: key.kid });
    // Signed on the thread pool: the same bytes (Ed25519 is deterministic), for many at once.
    const many = Array.from({ length: 50 }, (_, i) => ({ ...claims, request_id: `r${i}` }));
    expect(await Promise.all(many.map((c) => signCanonicalPooled(c, signer)))).toEqual(many.map((c) => signCanonicalSync(c, signer)));
    // Another key's JWKS refuses it.
    const other = await generateSigningKey();
    expect((await verifyCanonical(jws, { keys: [{ ...other.publicJwk, kid: key.kid } as JsonWebKey] })).valid).toBe(false);
  });
});
