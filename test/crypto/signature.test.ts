import { beforeAll, describe, expect, test } from "bun:test";
import { CompactSign, base64url, calculateJwkThumbprint } from "jose";
import { canonicalJson, contentHash } from "../../src/crypto/canonical.ts";
import {
  generateSigningKey,
  importSigningKey,
  signCanonical,
  signedBeforeCompromise,
  verifyCanonical,
  type SigningJwk,
} from "../../src/crypto/signature.ts";
import { receiptClaims, type ReceiptClaims } from "../../src/receipts/claims.ts";
import { claimTampered } from "../helpers/claims.ts";
import { verifyResult } from "../../src/receipts/verify.ts";
import { decide } from "../../src/decide/engine.ts";
import { buildPayload } from "../../src/decide/payload.ts";
import { DEFAULT_POLICY, DEFAULT_POLICY_REF, policyHash } from "../../src/decide/policy.ts";
import { PRESETS } from "../../src/simulation/presets.ts";

type Signer = { kid: string; privateKey: CryptoKey; publicJwk: SigningJwk };

let signer: Signer;
let other: Signer;
let jwks: { keys: JsonWebKey[] };

async function newSigner(): Promise<Signer> {
  const { kid, privateJwk, publicJwk } = await generateSigningKey();
  return { kid, privateKey: await importSigningKey(privateJwk), publicJwk };
}

beforeAll(async () => {
  signer = await newSigner();
  other = await newSigner();
  jwks = { keys: [signer.publicJwk] };
});

const text = new TextDecoder();
const b64json = (v: unknown) => base64url.encode(JSON.stringify(v));
const parts = (jws: string) => jws.split(".") as [string, string, string];

describe("signCanonical / verifyCanonical", () => {
  const claims = { timestamp: "2025-01-01T00:00:00.000Z", content_hash: "0xab", kind: "protect", n: 1.5 };

  test("round trip returns the payload and kid", async () => {
    const jws = await signCanonical(claims, signer);
    expect(await verifyCanonical(jws, jwks)).toEqual({ valid: true, payload: claims, kid: signer.kid });
  });

  test("signs exactly the canonical bytes under an EdDSA header with kid", async () => {
    const [header, payload] = parts(await signCanonical(claims, signer));
    expect(text.decode(base64url.decode(payload))).toBe(canonicalJson(claims));
    expect(JSON.parse(text.decode(base64url.decode(header)))).toEqual({ alg: "EdDSA", kid: signer.kid });
  });

  test("finds the key by kid among several", async () => {
    const jws = await signCanonical(claims, other);
    expect((await verifyCanonical(jws, { keys: [signer.publicJwk, other.publicJwk] })).kid).toBe(other.kid);
  });

  test("a tampered payload is invalid", async () => {
    const [h, , s] = parts(await signCanonical(claims, signer));
    const forged = `${h}.${b64json({ ...claims, kind: "execute" })}.${s}`;
    expect(await verifyCanonical(forged, jwks)).toEqual({ valid: false });
  });

  test("a tampered signature is invalid", async () => {
    const [h, p, s] = parts(await signCanonical(claims, signer));
    const sig = base64url.decode(s);
    sig[10] ^= 0x01;
    expect((await verifyCanonical(`${h}.${p}.${base64url.encode(sig)}`, jwks)).valid).toBe(false);
  });

  test("an unknown kid is invalid", async () => {
    const jws = await signCanonical(claims, other);
    expect((await verifyCanonical(jws, jwks)).valid).toBe(false);
    expect((await verifyCanonical(jws, { keys: [] })).valid).toBe(false);
  });

  test("a signature by another key under our kid is invalid", async () => {
    const jws = await signCanonical(claims, { kid: signer.kid, privateKey: other.privateKey });
    expect((await verifyCanonical(jws, jwks)).valid).toBe(false);
  });

  test("alg none is refused", async () => {
    const unsigned = `${b64json({ alg: "none", kid: signer.kid })}.${b64json(claims)}.`;
    expect((await verifyCanonical(unsigned, jwks)).valid).toBe(false);
  });

  test("HS256 with the public key as the secret is refused (alg confusion)", async () => {
    const payload = new TextEncoder().encode(canonicalJson(claims));
    const secrets = [
      base64url.decode(signer.publicJwk.x!),
      new TextEncoder().encode(JSON.stringify(signer.publicJwk)),
    ];
    for (const secret of secrets) {
      const jws = await new CompactSign(payload).setProtectedHeader({ alg: "HS256", kid: signer.kid }).sign(secret);
      expect((await verifyCanonical(jws, jwks)).valid).toBe(false);
      // Even a JWKS that offers a matching symmetric key under that kid must not be used.
      const oct = { kty: "oct", k: base64url.encode(secret), kid: signer.kid } as JsonWebKey;
      expect((await verifyCanonical(jws, { keys: [oct, signer.publicJwk] })).valid).toBe(false);
    }
  });

  test("garbage never throws", async () => {
    const junk: unknown[] = ["", "a.b.c", "...", "x", null, undefined, 42, {}, "e30.e30.", "a".repeat(100_000)];
    for (const j of junk) expect(await verifyCanonical(j as string, jwks)).toEqual({ valid: false });
    const jws = await signCanonical(claims, signer);
    for (const bad of [null, {}, { keys: null }, { keys: [null, 1, "x"] }]) {
      expect(await verifyCanonical(jws, bad as { keys: JsonWebKey[] })).toEqual({ valid: false });
    }
  });

  test("generateSigningKey: thumbprint kid, public JWK without private part", async () => {
    const { kid, privateJwk, publicJwk } = await generateSigningKey();
    expect(kid).toBe(await calculateJwkThumbprint({ kty: "OKP", crv: "Ed25519", x: publicJwk.x! }, "sha256"));
    expect(publicJwk).toEqual({ kty: "OKP", crv: "Ed25519", x: publicJwk.x!, kid, alg: "EdDSA", use: "sig" });
    expect(typeof privateJwk.d).toBe("string");
    expect(privateJwk.x).toBe(publicJwk.x);
  });

  test("importSigningKey refuses keys that are not Ed25519 private keys", async () => {
    await expect(importSigningKey(signer.publicJwk)).rejects.toThrow();
    await expect(importSigningKey({ kty: "oct", k: "AAAA" })).rejects.toThrow();
  });
});

describe("verifyResult", () => {
  const claimsOf = (r: Record<string, any>): ReceiptClaims => receiptClaims(r as ReceiptClaims);

  // A simulation result as the server returns it, every signed claim among its fields.
  async function makeResult(): Promise<Record<string, any>> {
    const preset = "small_payment";
    const input = PRESETS[preset].input;
    const { decision, reasons, rule } = decide(input, DEFAULT_POLICY);
    const policy = { ...DEFAULT_POLICY_REF, hash: await policyHash(DEFAULT_POLICY) };
    const payload = buildPayload({ kind: "simulation", input, policy, decision, reasons, rule, preset });
    const result: Record<string, any> = {
      ok: true,
      verified: false,
      decision,
      request_id: "req_0001",
      content_hash: await contentHash(payload),
      timestamp: "2025-06-01T12:00:00.000Z",
      preset,
      reasons,
      payload,
      tenant_id: "ten_a",
      key_id: "key_a",
      receipt_id: null,
      protect_receipt_id: null,
      kind: "simulation",
    };
    result.signature = await signCanonical(claimsOf(result), signer);
    // Round trip through JSON, as a client would receive it.
    return JSON.parse(JSON.stringify(result));
  }

  const ok = { verified: true, checks: { content_hash: true, signature: true } };
  const badHash = { verified: false, checks: { content_hash: false, signature: true } };
  const badSig = { verified: false, checks: { content_hash: true, signature: false } };
  const bothBad = { verified: false, checks: { content_hash: false, signature: false } };

  test("a genuine result verifies", async () => {
    expect(await verifyResult(await makeResult(), jwks)).toEqual(ok);
  });

  test("a changed decision fails the content hash", async () => {
    const r = await makeResult();
    r.decision = "DENIED";
    expect(await verifyResult(r, jwks)).toEqual(badHash);
  });

  test("a changed payload fails the content hash", async () => {
    const r = await makeResult();
    r.payload.input.amount = 999;
    expect(await verifyResult(r, jwks)).toEqual(badHash);
  });

  test("a changed payload with a recomputed hash fails the signature", async () => {
    const r = await makeResult();
    r.payload.decision = r.decision = "DENIED";
    r.content_hash = await contentHash(r.payload);
    expect(await verifyResult(r, jwks)).toEqual(badSig);
  });

  test("a changed kind with a recomputed hash fails the signature", async () => {
    const r = await makeResult();
    r.payload.kind = "protect";
    r.content_hash = await contentHash(r.payload);
    expect(await verifyResult(r, jwks)).toEqual(badSig);
  });

  test("a changed content_hash fails both checks", async () => {
    const r = await makeResult();
    r.content_hash = `0x${"0".repeat(64)}`;
    expect(await verifyResult(r, jwks)).toEqual(bothBad);
  });

  test("a changed request_id fails the signature", async () => {
    const r = await makeResult();
    r.request_id = "req_0002";
    expect(await verifyResult(r, jwks)).toEqual(badSig);
  });

  test("a changed timestamp fails the signature", async () => {
    const r = await makeResult();
    r.timestamp = "2025-06-01T12:00:00.001Z";
    expect(await verifyResult(r, jwks)).toEqual(badSig);
  });

  test("every signed claim is covered: changing any one fails the signature", async () => {
    const r = await makeResult();
    for (const [claim, tampered] of claimTampered(r)) {
      const expected = claim === "content_hash" ? bothBad : badSig;
      expect({ claim, outcome: await verifyResult(tampered, jwks) }).toEqual({ claim, outcome: expected });
    }
  });

  test("a result that leaves out a claim, or shows one its kind forbids, is refused", async () => {
    const r = await makeResult();
    for (const claim of ["tenant_id", "key_id", "receipt_id", "protect_receipt_id", "kind"]) {
      const { [claim]: _dropped, ...rest } = r;
      expect(await verifyResult(rest, jwks)).toEqual(badSig);
    }
    // Signed as shown, yet a simulation with a receipt id (or a protect naming a protect receipt) is not a result we issue.
    const stored: Record<string, any> = { ...r, receipt_id: "rcpt_" + "A".repeat(22) };
    stored.signature = await signCanonical(claimsOf(stored), signer);
    expect(await verifyResult(stored, jwks)).toEqual(badSig);
  });

  test("a key marked compromised_since vouches only for earlier timestamps", async () => {
    const r = await makeResult();
    const marked = (since: unknown) => ({ keys: [{ ...signer.publicJwk, compromised_since: since } as JsonWebKey] });
    const at = Date.parse(r.timestamp);
    expect(await verifyResult(r, marked(new Date(at + 1).toISOString()))).toEqual(ok);
    expect(await verifyResult(r, marked(r.timestamp))).toEqual(badSig);
    expect(await verifyResult(r, marked(new Date(at - 86_400_000).toISOString()))).toEqual(badSig);
    // A mark that does not parse fails closed.
    for (const junk of ["soon", null, 5, ""]) expect(await verifyResult(r, marked(junk))).toEqual(badSig);
    // Another key's mark does not touch this one.
    expect(await verifyResult(r, { keys: [signer.publicJwk, { ...other.publicJwk, compromised_since: r.timestamp } as JsonWebKey] })).toEqual(ok);
  });

  test("a signature from another result is refused", async () => {
    const a = await makeResult();
    const b = await makeResult();
    b.request_id = "req_0002";
    b.signature = await signCanonical(claimsOf(b), signer);
    expect(await verifyResult({ ...a, signature: b.signature }, jwks)).toEqual(badSig);
  });

  test("a signature with extra claims is refused", async () => {
    const r = await makeResult();
    r.signature = await signCanonical({ ...claimsOf(r), admin: true }, signer);
    expect(await verifyResult(r, jwks)).toEqual(badSig);
  });

  test("a key missing from the JWKS fails the signature", async () => {
    expect(await verifyResult(await makeResult(), { keys: [other.publicJwk] })).toEqual(badSig);
  });

  test("garbage never throws and never verifies", async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const junk: unknown[] = [
      "a string",
      null,
      undefined,
      42,
      [],
      {},
      { payload: null, content_hash: "0x", signature: "a.b.c" },
      { payload: "x", content_hash: 1 },
      { payload: circular, content_hash: "0x", signature: "x" },
      { payload: { kind: 5 }, signature: 7 },
    ];
    for (const j of junk) expect(await verifyResult(j, jwks)).toEqual(bothBad);
    expect(await verifyResult(await makeResult(), null as unknown as { keys: JsonWebKey[] })).toEqual(badSig);
  });
});

describe("signedBeforeCompromise", () => {
  test("no mark: always; a mark: strictly before it; anything unparsable: never", () => {
    expect(signedBeforeCompromise(undefined, "2025-01-01T00:00:00.000Z")).toBe(true);
    expect(signedBeforeCompromise("2025-01-01T00:00:00.001Z", "2025-01-01T00:00:00.000Z")).toBe(true);
    expect(signedBeforeCompromise("2025-01-01T00:00:00.000Z", "2025-01-01T00:00:00.000Z")).toBe(false);
    expect(signedBeforeCompromise("2025-01-01T00:00:00.000Z", "2025-01-01T00:00:00.001Z")).toBe(false);
    expect(signedBeforeCompromise("2025-01-01T00:00:00.000Z", "not a time")).toBe(false);
    expect(signedBeforeCompromise("not a time", "2025-01-01T00:00:00.000Z")).toBe(false);
    expect(signedBeforeCompromise(null, "2025-01-01T00:00:00.000Z")).toBe(false);
  });
});
