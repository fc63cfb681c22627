import { CompactSign, calculateJwkThumbprint, compactVerify } from "jose";
import { canonicalJson } from "./canonical.ts";

export type SigningJwk = JsonWebKey & { kid: string };

// Receipts are small; refusing huge tokens early keeps a verifier cheap to call with junk.
const MAX_JWS_LENGTH = 65_536;
const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

// The signed bytes are the JCS form, so anyone can rebuild them from the claims and compare.
export async function signCanonical(
  value: unknown,
  key: { kid: string; privateKey: CryptoKey },
): Promise<string> {
  return new CompactSign(utf8.encode(canonicalJson(value)))
    .setProtectedHeader({ alg: "EdDSA", kid: key.kid })
    .sign(key.privateKey);
}

// Pinned to EdDSA over Ed25519 keys: the header's alg is attacker-chosen, so `none` or HS256
// (with the public key as an HMAC secret) must never select how we verify.
export async function verifyCanonical(
  jws: string,
  jwks: { keys: JsonWebKey[] },
): Promise<{ valid: boolean; payload?: unknown; kid?: string; compromised_since?: unknown }> {
  try {
    if (typeof jws !== "string" || jws.length > MAX_JWS_LENGTH) return { valid: false };
    let kid: string | undefined;
    let compromised: { since: unknown } | undefined;
    const { payload } = await compactVerify(
      jws,
      async (header) => {
        if (header.alg !== "EdDSA" || typeof header.kid !== "string") throw new Error("unsupported header");
        const jwk = findEd25519Key(jwks, header.kid);
        if (!jwk) throw new Error("unknown kid");
        kid = header.kid;
        if ("compromised_since" in jwk) compromised = { since: (jwk as { compromised_since?: unknown }).compromised_since };
        // Import only the public coordinates so stray fields (d, key_ops, alg) cannot interfere.
        return crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: jwk.x }, { name: "Ed25519" }, false, [
          "verify",
        ]);
      },
      { algorithms: ["EdDSA"] },
    );
    const verified = { valid: true, payload: JSON.parse(strictUtf8.decode(payload)), kid };
    return compromised ? { ...verified, compromised_since: compromised.since } : verified;
  } catch {
    return { valid: false };
  }
}

/**
 * Whether a signature counts for what it says it signed at signedAt: a key the JWKS marks
 * `compromised_since` vouches only for instants strictly before it (anyone may have signed later
 * ones). A mark or time that does not parse counts as compromised: fail closed.
 */
export function signedBeforeCompromise(compromisedSince: unknown, signedAt: unknown): boolean {
  if (compromisedSince === undefined) return true;
  if (typeof compromisedSince !== "string" || typeof signedAt !== "string") return false;
  const since = Date.parse(compromisedSince);
  const at = Date.parse(signedAt);
  return Number.isFinite(since) && Number.isFinite(at) && at < since;
}

function findEd25519Key(jwks: { keys: JsonWebKey[] }, kid: string): JsonWebKey | undefined {
  const keys: unknown = jwks?.keys;
  if (!Array.isArray(keys)) return undefined;
  return keys.find(
    (k): k is JsonWebKey =>
      k !== null &&
      typeof k === "object" &&
      k.kid === kid &&
      k.kty === "OKP" &&
      k.crv === "Ed25519" &&
      typeof k.x === "string" &&
      (k.alg === undefined || k.alg === "EdDSA") &&
      (k.use === undefined || k.use === "sig"),
  );
}

export async function generateSigningKey(): Promise<{
  kid: string;
  privateJwk: SigningJwk;
  publicJwk: SigningJwk;
}> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const exported = await crypto.subtle.exportKey("jwk", pair.privateKey);
  if (typeof exported.x !== "string" || typeof exported.d !== "string") throw new Error("Ed25519 export failed");
  const base = { kty: "OKP", crv: "Ed25519", x: exported.x };
  // RFC 7638 thumbprint: the kid is derived from the key, so it can never name another key.
  const kid = await calculateJwkThumbprint(base, "sha256");
  return {
    kid,
    privateJwk: { ...base, d: exported.d, kid, alg: "EdDSA" },
    publicJwk: { ...base, kid, alg: "EdDSA", use: "sig" },
  };
}

export async function importSigningKey(privateJwk: JsonWebKey): Promise<CryptoKey> {
  const { kty, crv, x, d } = privateJwk;
  if (kty !== "OKP" || crv !== "Ed25519" || typeof x !== "string" || typeof d !== "string") {
    throw new TypeError("importSigningKey: expected an Ed25519 private JWK");
  }
  // Not extractable: once loaded, the private key cannot be exported again by mistake.
  return crypto.subtle.importKey("jwk", { kty, crv, x, d }, { name: "Ed25519" }, false, ["sign"]);
}
